"""Build step that ships the solution notebooks and the grader's hints and keys inside the package (configuration:
pyproject.toml).

Grading reads each problem set's solution notebook (its ``check(...)`` cells say how
answers are written). In a checkout they are ``solutions/*.ipynb``; a built package
carries copies in ``course_lib/_shipped/solutions/`` so that an installed ``course``
command grades from any folder (see ``course_lib/grading/catalog.py``). The hints of the
feedback and the answer keys (``grading_resources/hints/*.json``, ``grading_resources/keys/*.py``,
read by ``course_lib/grading/resources.py``) go to ``course_lib/_shipped/grading_resources/`` the
same way; the grader's sandbox hides ``_shipped/`` from the submissions.
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
        for kind, pattern in (("hints", "ps*_*.json"), ("keys", "ps*_*.py")):
            resources = Path(self.build_lib) / "course_lib" / "_shipped" / "grading_resources" / kind
            resources.mkdir(parents=True, exist_ok=True)
            for data in sorted((ROOT / "grading_resources" / kind).glob(pattern)):
                shutil.copyfile(data, resources / data.name)


setup(cmdclass={"build_py": BuildWithSolutions})
