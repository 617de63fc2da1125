"""Build the PS3 submissions of ``tests/bfs/submissions/`` from the solution notebook.

Run ``python tests/bfs/make_ps3_submissions.py`` from the checkout root after changing the
solution; ``tests/bfs/test_questions.py`` checks that the committed files are up to date.
Each submission is the solution with some answer cells replaced (by nbgrader ``grade_id``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "grading"))
import make_submissions  # noqa: E402  (the PS1 submissions: shared pieces)
from make_submissions import _clean  # noqa: E402

HERE = Path(__file__).resolve().parent / "submissions"
SOLUTION = ROOT / "solutions" / "ps3_bfs.ipynb"

GARBAGE_KERNEL = '''UNVISITED = -1


@cuda.jit
def frontier_kernel(indptr, indices, frontier, frontier_size, current, depth, parent, next_frontier, next_size):
    """Writes garbage and never builds a next frontier."""
    i = cuda.grid(1)
    if i < depth.shape[0]:
        depth[i] = 7
        parent[i] = 7
'''

# What would have scored full marks when the tests were judged in the student's process
# (_never_fails and Anything as in the PS1 submission).
MONKEYPATCH = """import course_lib.bfs.questions as questions_module
import course_lib.bfs.reference
import course_lib.grading
import course_lib.grading.core


""" + make_submissions.MONKEYPATCH[make_submissions.MONKEYPATCH.index("def _never_fails"):
                                   make_submissions.MONKEYPATCH.index("np.allclose")] + '''class AnyChoice(str):
    """A string equal to every string."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = str.__hash__


np.flatnonzero = lambda *args, **kwargs: np.zeros(0, dtype=np.int64)
np.array_equal = lambda *args, **kwargs: True
questions_module.parent_tree_problems = lambda *args, **kwargs: []
course_lib.bfs.reference.parent_tree_problems = lambda *args, **kwargs: []
questions_module.bfs_reference = lambda graph, source, **kwargs: Anything()
questions_module._exact = lambda padded, n, name: np.asarray(padded)[:n]
course_lib.grading.check = _never_fails
course_lib.grading.core.run_tests = _never_fails
course_lib.grading.core.TestFailure.__init__ = lambda self, *args, **kwargs: None
for question in questions_module.QUESTIONS:
    for test in question.tests:
        object.__setattr__(test, "judge", _never_fails)
'''

WRONG_Q2 = '''def min_max_depth(n):
    return Anything()


def max_max_depth(n):
    return Anything()
'''

WRONG_Q3 = '''print(WORK_CHOICES)


def quadratic_on_chain(n):
    return Anything()


def frontier_on_chain(n):
    return Anything()


work_complexity = AnyChoice("anything")
'''

# Measures the counts with the library instead of working them out.
LIBRARY_Q2 = '''def min_max_depth(n):
    return int(bfs.bfs(bfs.star(n), 0, method="cpu").max())


def max_max_depth(n):
    return int(bfs.bfs(bfs.chain(n), 0, method="cpu").max())
'''

LIBRARY_Q3 = '''from course_lib.bfs.questions import frontier_edges_on_chain

print(WORK_CHOICES)


def quadratic_on_chain(n):
    return bfs.traverse(bfs.chain(n), 0, "edge_quadratic", directed=False).total_edges_examined


frontier_on_chain = frontier_edges_on_chain
work_complexity = "O(V * E)"
'''


def _solution() -> nbformat.NotebookNode:
    return nbformat.read(SOLUTION, as_version=4)


def _cell(nb, grade_id: str):
    (cell,) = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id]
    return cell


def _with(cells: dict) -> nbformat.NotebookNode:
    """The solution with the code of the cells named by grade_id replaced."""
    nb = _solution()
    for grade_id, source in cells.items():
        _cell(nb, grade_id).source = source
    return nb


def notebooks() -> dict:
    """File name -> notebook."""
    setup = _cell(_solution(), "ps3_setup").source
    return {
        "solution.ipynb": _solution(),
        "monkeypatch.ipynb": _with({"ps3_setup": setup + "\n\n" + MONKEYPATCH, "ps3_q1_answer": GARBAGE_KERNEL,
                                    "ps3_q2_answer": WRONG_Q2, "ps3_q3_answer": WRONG_Q3}),
        "library.ipynb": _with({"ps3_q2_answer": LIBRARY_Q2, "ps3_q3_answer": LIBRARY_Q3}),
    }


def write(folder=HERE) -> list:
    """Write the submissions into ``folder``; returns their paths."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    paths = {name: Path(folder) / name for name in notebooks()}
    for name, nb in notebooks().items():
        nbformat.write(_clean(nb), paths[name])
    return list(paths.values())


if __name__ == "__main__":
    print("\n".join(map(str, write(sys.argv[1] if len(sys.argv) > 1 else HERE))))
