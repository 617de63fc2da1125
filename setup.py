"""Build step that ships the solution notebooks inside the package (configuration: pyproject.toml).

Grading reads each problem set's solution notebook (its ``check(...)`` cells say how
answers are written). In a checkout they are ``solutions/*.ipynb``; a built package
carries copies in ``course_lib/_shipped/solutions/`` so that an installed ``course``
command grades from any folder (see ``course_lib/grading/catalog.py``).
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


class BuildWithSolutions(build_py):
    """build_py, plus the solution notebooks copied into the built package."""

    def run(self):
        super().run()
        target = Path(self.build_lib) / "course_lib" / "_shipped" / "solutions"
        target.mkdir(parents=True, exist_ok=True)
        for notebook in sorted((ROOT / "solutions").glob("ps*_*.ipynb")):
            shutil.copyfile(notebook, target / notebook.name)


setup(cmdclass={"build_py": BuildWithSolutions})
