"""Build the PS1 submissions that ``tests/grading/test_grader.py`` grades, from the solution notebook.

Each submission is the solution with some answer cells replaced (by nbgrader ``grade_id``). They are
written at test time, never committed; to look at them::

    python tests/grading/make_submissions.py /tmp/ps1-submissions
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))
import course_lib  # noqa: E402,F401  (chooses the backend before test_ps1 imports numba.cuda)


# ------------------------------------------------------------------ answers used by several submissions
KERNEL_HEADER = '''TILE = course_lib.pick(sim=16, gpu=256)
interaction = nbody.kernels.interaction


'''



def _from_fixtures(name: str) -> str:
    """A PS1 answer cell of tests/grading/make_fixtures.py (the one generator of graded fixtures)."""
    sys.path.insert(0, str(ROOT / "tests" / "grading"))
    import make_fixtures

    return make_fixtures.answer_cell("ps1", name, "ps1_q1_answer")


SOA_KERNEL = _from_fixtures("right_but_different")
UNPADDED_KERNEL = _from_fixtures("sign")
#: The kernels below are written as ``tiled_kernel``; the question asks for a factory of kernels.
FACTORY = "\n\ndef make_split_kernel(tile, q):\n    return tiled_kernel\n"

ZERO_KERNEL = KERNEL_HEADER + '''@cuda.jit
def tiled_kernel(bodies, softening_sq, acc):
    i = cuda.grid(1)
    if i < bodies.shape[0]:
        for c in range(3):
            acc[i, c] = 1.0
''' + FACTORY

INFINITE_KERNEL = KERNEL_HEADER + '''@cuda.jit
def tiled_kernel(bodies, softening_sq, acc):
    """Forgets to advance its loop counter."""
    i = cuda.grid(1)
    start = 0
    while start < bodies.shape[0]:
        acc[min(i, bodies.shape[0] - 1), 0] = 0.0
''' + FACTORY

DEADLOCK_KERNEL = KERNEL_HEADER + '''@cuda.jit
def tiled_kernel(bodies, softening_sq, acc):
    """Thread 0 waits for a flag that the others only set after a barrier thread 0 never reaches."""
    flag = cuda.shared.array(1, float32)
    t = cuda.threadIdx.x
    if t == 0:
        flag[0] = 0.0
        while flag[0] == 0.0:
            pass
    cuda.syncthreads()
    flag[0] = 1.0
''' + FACTORY

RAISING_KERNEL = KERNEL_HEADER + '''@cuda.jit
def tiled_kernel(bodies, softening_sq, acc):
    tile_bodies = cuda.shared.array((TILE, 4), float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    # off by one: reads one row past the end of bodies
    for c in range(4):
        tile_bodies[t, c] = bodies[bodies.shape[0], c]
    cuda.syncthreads()
    acc[i, 0] = tile_bodies[0, 0]
''' + FACTORY

MONKEYPATCH = '''import numpy.testing
import course_lib.grading
import course_lib.grading.core
import course_lib.nbody.questions as questions_module


def _always(*args, **kwargs):
    return True


def _never_fails(*args, **kwargs):
    return None


class Anything:
    """Equal to everything."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__


np.allclose = _always
np.array_equal = _always
np.testing.assert_allclose = _never_fails
numpy.testing.assert_array_equal = _never_fails
course_lib.grading.compare_arrays = _never_fails
course_lib.grading.core.compare_arrays = _never_fails
questions_module.compare_arrays = _never_fails
questions_module.accelerations_reference = lambda pos, mass, softening: np.zeros((len(pos), 3))
questions_module.split_rule = lambda *args: Anything()
course_lib.grading.check = _never_fails
course_lib.grading.core.run_tests = _never_fails
course_lib.grading.core.TestFailure.__init__ = lambda self, *args: None
for test in questions_module.Q1.tests:
    object.__setattr__(test, "judge", _never_fails)
'''

SNOOP = '''import glob
import os

# Look for hidden tests or expected outputs on disk, then use whatever turns up as the answer.
stolen = []
places = [os.getcwd(), "/tmp", os.path.dirname(course_lib.__file__), os.path.expanduser("~")]
try:
    places.append(os.readlink(f"/proc/{os.getppid()}/cwd"))  # the grader's folder
except OSError:
    pass
for place in places:
    for pattern in ("**/*.npy", "**/*.npz", "**/*expected*", "**/*reference*", "**/*hidden*", "**/*.csv"):
        for path in glob.glob(os.path.join(place, pattern), recursive=True)[:50]:
            try:
                with open(path, "rb") as f:
                    stolen.append(f.read(1 << 16))
            except OSError:
                pass
with open(course_lib.nbody.questions.__file__) as f:
    hidden_source = f.read()  # the test code is no secret: the seed and the expected values are
'''


def _with(cells: dict) -> nbformat.NotebookNode:
    """The solution with the code of the cells named by grade_id replaced."""
    nb = nbformat.read(ROOT / "solutions" / "ps1_nbody.ipynb", as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in cells:
            cell.source = cells[grade_id]
    return nb


def _clean(nb) -> nbformat.NotebookNode:
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nb.metadata.pop("widgets", None)
    return nb


def _setup_plus(extra: str) -> str:
    nb = nbformat.read(ROOT / "solutions" / "ps1_nbody.ipynb", as_version=4)
    (setup,) = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "ps1_setup"]
    return setup.source + "\n\n" + extra


def notebooks() -> dict:
    """File name -> notebook (or bytes, for the files that are not notebooks)."""
    wrong_q2 = ("MEASURE_N = 64\nMEASURE_TILE = 16\nMEASURE_SPLITS = (1, 2, 4)\n\n\ndef predicted_bytes(n, tile, q):\n"
                "    return n * n * 16\n\n\ndef measure(make_kernel, n, tile, q):\n    return 16.0\n")
    wrong_q3 = ("def choose_split(n, tile, sm_count, max_threads_per_sm, warps_wanted):\n"
                "    return 32\n")
    solution_q2 = next(c.source for c in nbformat.read(ROOT / "solutions" / "ps1_nbody.ipynb", as_version=4).cells
                       if c.metadata.get("nbgrader", {}).get("grade_id") == "ps1_q2_answer")
    different_q2 = solution_q2.replace("return blocks * n * 16 + q * n * 12", "return 4 * n * (4 * blocks + 3 * q)")
    different_q3 = ("def choose_split(n, tile, sm_count, max_threads_per_sm, warps_wanted):\n"
                    "    per_block = -(-tile // 32)\n"
                    "    def reach(q):\n"
                    "        blocks = -(-n * q // tile)\n"
                    "        busy = min(blocks, sm_count)\n"
                    "        running = min(blocks, sm_count * (max_threads_per_sm // (32 * per_block)))\n"
                    "        return busy, running * per_block / busy\n"
                    "    qs = [q for q in (1, 2, 4, 8, 16, 32) if q <= tile and tile % q == 0]\n"
                    "    for q in qs:\n"
                    "        if reach(q)[0] == sm_count and reach(q)[1] >= warps_wanted:\n"
                    "            return q\n"
                    "    return min(qs, key=lambda q: (tuple(-x for x in reach(q)), q))\n")
    solution = nbformat.read(ROOT / "solutions" / "ps1_nbody.ipynb", as_version=4)
    race_kernel = next(c.source for c in solution.cells if c.metadata.get("nbgrader", {}).get("grade_id")
                       == "ps1_q1_answer")
    # keep the first barrier, drop the second one (the one before the tile is overwritten)
    head, _, tail = race_kernel.rpartition("            cuda.syncthreads()  # nobody overwrites")
    race_kernel = head + "            pass  # nobody overwrites" + tail
    looping_q3 = ("def choose_split(n, tile, sm_count, max_threads_per_sm, warps_wanted):\n"
                  "    q = 1\n    while q <= 32:\n        best = q  # forgot q *= 2\n"
                  "    return best\n")
    return {
        "solution.ipynb": solution,
        "untouched.ipynb": nbformat.read(ROOT / "problem_sets" / "ps1_nbody.ipynb", as_version=4),
        "different.ipynb": _with({"ps1_q1_answer": SOA_KERNEL, "ps1_q2_answer": different_q2,
                                  "ps1_q3_answer": different_q3}),
        "wrong.ipynb": _with({"ps1_q1_answer": UNPADDED_KERNEL, "ps1_q2_answer": wrong_q2,
                              "ps1_q3_answer": wrong_q3}),
        "race.ipynb": _with({"ps1_q1_answer": race_kernel}),
        "infinite_kernel.ipynb": _with({"ps1_q1_answer": INFINITE_KERNEL}),
        "deadlock.ipynb": _with({"ps1_q1_answer": DEADLOCK_KERNEL}),
        "infinite_python.ipynb": _with({"ps1_q3_answer": looping_q3}),
        "raises.ipynb": _with({"ps1_q1_answer": RAISING_KERNEL}),
        "crash.ipynb": _with({"ps1_q3_answer": "def choose_split(*args):\n    import os\n    os._exit(3)\n"}),
        "syntax_error.ipynb": _with({"ps1_q2_answer": "def predicted_bytes(n, tile, q)\n    return 2 * n\n"}),
        "missing_function.ipynb": _with({"ps1_q3_answer": "# choose_split: no time left\n"}),
        "monkeypatch.ipynb": _with({"ps1_setup": _setup_plus(MONKEYPATCH), "ps1_q1_answer": ZERO_KERNEL,
                                    "ps1_q2_answer": wrong_q2,
                                    "ps1_q3_answer": "def choose_split(*args):\n    return Anything()\n"}),
        # q2 is right only if the grader's environment (GRADER_SECRET_TOKEN, set by the test) did not leak
        "snoop.ipynb": _with({"ps1_setup": _setup_plus(SNOOP), "ps1_q1_answer": ZERO_KERNEL,
                              "ps1_q2_answer": solution_q2.replace(
                                  "return blocks * n * 16 + q * n * 12",
                                  "return blocks * n * 16 + q * n * 12 "
                                  "+ len(os.environ.get('GRADER_SECRET_TOKEN', ''))")}),
    }


def broken_files() -> dict:
    """Submissions that are not notebooks at all: written by the tests into a temporary folder,
    not committed (a repository should not hold broken .ipynb files)."""
    return {
        "corrupted.ipynb": b'{"cells": [{"cell_type": "code", "source": "x = 1", "metadata": {}, "outp',
        "not_a_notebook.ipynb": bytes(range(256)) * 4,
    }


def write(folder) -> list:
    """Write :func:`notebooks` into ``folder``; return their paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, content in notebooks().items():
        path = folder / name
        nbformat.write(_clean(content), path)
        written.append(path)
    return written


def write_broken(folder) -> list:
    """Write :func:`broken_files` into ``folder``; return their paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, content in broken_files().items():
        (folder / name).write_bytes(content)
        written.append(folder / name)
    return written


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/grading/make_submissions.py FOLDER")
    for path in write(sys.argv[1]):
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
