"""Build the PS4 submissions of ``tests/poisson/submissions/`` from the solution notebook.

Run ``python tests/poisson/make_ps4_submissions.py`` from the checkout root after changing the
solution; ``tests/poisson/test_questions.py`` checks that the committed files are up to date.
Each submission is the solution with some cells replaced (by nbgrader ``grade_id``).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))
_spec = importlib.util.spec_from_file_location("_ps1_submissions", ROOT / "tests" / "grading" / "make_submissions.py")
_ps1_submissions = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_ps1_submissions)
_clean = _ps1_submissions._clean  # outputs and execution data dropped, as for PS1
SOLUTION = ROOT / "solutions" / "ps4_poisson.ipynb"
HERE = Path(__file__).resolve().parent / "submissions"

#: Writes garbage everywhere, past the image included (the simulator would fault: kept in bounds).
GARBAGE_KERNEL = '''INTERIOR = poisson.INTERIOR


@cuda.jit
def jacobi_kernel(prev, rhs, labels, nxt):
    x, y = cuda.grid(2)
    if x < labels.shape[1] and y < labels.shape[0]:
        for c in range(3):
            nxt[c, y, x] = 77.0
'''

#: Replaces every comparison, reference and judge the notebook's process can reach: PS1's helpers
#: (``_always``, ``_never_fails``, ``Anything``, equal to everything) aimed at PS4's module.
_PS1_HELPERS = _ps1_submissions.MONKEYPATCH.split("np.allclose = _always\n")[0]
MONKEYPATCH = _PS1_HELPERS.replace("import course_lib.nbody.questions as questions_module", """\
import course_lib.poisson.reference
import course_lib.poisson.questions as questions_module""") + '''class Passed:
    passed = True
    message = "images match"


np.allclose = _always
np.array_equal = _always
np.testing.assert_allclose = _never_fails
numpy.testing.assert_array_equal = _never_fails
course_lib.grading.check = _never_fails
course_lib.grading.core.run_tests = _never_fails
course_lib.grading.core.TestFailure.__init__ = lambda self, *args: None
course_lib.poisson.reference.compare_images = lambda *args, **kwargs: Passed()
questions_module.compare_images = lambda *args, **kwargs: Passed()
questions_module._compare = _never_fails
questions_module._check_guards = _never_fails
questions_module._judge_iterate = lambda target, labels, iterate: np.asarray(target)
questions_module.jacobi_reference = lambda source, target, mask, iterations: np.asarray(target)
questions_module.classify_mask = lambda mask: np.zeros(np.shape(mask), np.uint8)
questions_module.as_student_function = lambda func, *args, **kwargs: func
questions_module.BYTES_PER_PIXEL_ITERATION = 0
for question in questions_module.QUESTIONS:
    for test in question.tests:
        object.__setattr__(test, "judge", _never_fails)
        object.__setattr__(test, "run", _never_fails)
'''


def _cells_of(nb) -> dict:
    return {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}


def _with(cells: dict) -> nbformat.NotebookNode:
    """The solution with the code of the cells named by grade_id replaced."""
    nb = nbformat.read(SOLUTION, as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in cells:
            cell.source = cells[grade_id]
    return nb


def notebooks() -> dict:
    """File name -> notebook."""
    setup = _cells_of(nbformat.read(SOLUTION, as_version=4))["ps4_setup"].source
    return {
        "solution.ipynb": nbformat.read(SOLUTION, as_version=4),
        "monkeypatch.ipynb": _with({
            "ps4_setup": setup + "\n\n" + MONKEYPATCH,
            "ps4_q1_answer": GARBAGE_KERNEL,
            # all zeros: accepted only if the patched classify_mask were the judge's
            "ps4_q2_answer": "def classify(mask):\n    return np.zeros(mask.shape, np.uint8)\n",
            "ps4_q3_answer": ("def bytes_per_iteration(pixels):\n    return Anything()\n\n\n"
                              "def launch_bound(pixels, bandwidth, launch_seconds):\n    return Anything()\n"),
        }),
    }


def write(folder=HERE) -> list:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, content in notebooks().items():
        path = folder / name
        nbformat.write(_clean(content), path)
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write(sys.argv[1] if len(sys.argv) > 1 else HERE):
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
