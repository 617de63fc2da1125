"""Problem set 3: right answers get full marks, typical wrong ones partial or 0 with a reason."""


import numpy as np
import pytest
from numba import cuda

from course_lib import bfs, device
from course_lib.bfs import kernels
from course_lib.bfs import questions
from course_lib.bfs.questions import (GUARD_VALUE, frontier_edges_on_chain, quadratic_edges_on_chain,
                                      run_frontier_kernel)
from course_lib.grading import TestFailure, get_question, run_tests



@cuda.jit
def benign_race_kernel(indptr, indices, frontier, frontier_size, current, depth, parent, next_frontier, next_size):
    """Correct but different: no compare-and-swap, so a vertex may be listed twice (the try #1 race)."""
    i = cuda.grid(1)
    if i < frontier_size:
        u = frontier[i]
        for k in range(indptr[u], indptr[u + 1]):
            v = indices[k]
            if depth[v] == -1 or depth[v] == current + 1 and parent[v] != u:
                if depth[v] == -1:
                    depth[v] = current + 1
                    parent[v] = u
                    next_frontier[cuda.atomic.add(next_size, 0, 1)] = v


@cuda.jit
def unclaimed_kernel(indptr, indices, frontier, frontier_size, current, depth, parent, next_frontier, next_size):
    """Wrong: sets the depth of every neighbour, visited or not."""
    i = cuda.grid(1)
    if i < frontier_size:
        u = frontier[i]
        for k in range(indptr[u], indptr[u + 1]):
            v = indices[k]
            depth[v] = current + 1
            parent[v] = u
            next_frontier[cuda.atomic.add(next_size, 0, 1)] = v


@cuda.jit(device=True)
def claim_neighbours(indptr, indices, frontier, frontier_size, current, depth, parent, next_frontier, next_size,
                     record_parents):
    """A right expansion of one level (parents only if ``record_parents``), for the kernels below to add a bug to."""
    i = cuda.grid(1)
    if i < frontier_size:
        u = frontier[i]
        for k in range(indptr[u], indptr[u + 1]):
            v = indices[k]
            if cuda.atomic.cas(depth, v, -1, current + 1) == -1:
                if record_parents:
                    parent[v] = u
                next_frontier[cuda.atomic.add(next_size, 0, 1)] = v


@cuda.jit
def no_parent_kernel(indptr, indices, frontier, frontier_size, current, depth, parent, next_frontier, next_size):
    """Wrong in part: right depths, parents never written."""
    claim_neighbours(indptr, indices, frontier, frontier_size, current, depth, parent, next_frontier, next_size, False)


@cuda.jit
def overrun_kernel(indptr, indices, frontier, frontier_size, current, depth, parent, next_frontier, next_size):
    """Right, but thread 0 also stores one past the end of depth (an off-by-one bound)."""
    if cuda.grid(1) == 0:
        depth[depth.shape[0]] = current
    claim_neighbours(indptr, indices, frontier, frontier_size, current, depth, parent, next_frontier, next_size, True)


@cuda.jit
def counter_overrun_kernel(indptr, indices, frontier, frontier_size, current, depth, parent, next_frontier,
                           next_size):
    """Right, but keeps a second count in next_size[1], which does not exist."""
    claim_neighbours(indptr, indices, frontier, frontier_size, current, depth, parent, next_frontier, next_size, True)
    if cuda.grid(1) < frontier_size:
        cuda.atomic.add(next_size, 1, 1)


def grade(question_id, answer):
    return run_tests(get_question(question_id), answer, hidden=True, seed=7)


def test_a_kernel_that_lists_vertices_twice_still_gets_full_marks():
    """Any correct next-frontier construction is accepted, duplicates included."""
    result = grade("ps3.q1", benign_race_kernel)
    assert result.passed and result.points == 6, str(result)


def test_claiming_visited_vertices_scores_zero_with_a_reason():
    result = grade("ps3.q1", unclaimed_kernel)
    assert result.points < 2, str(result)  # only the directed chain, which has no edge back, passes
    messages = "\n".join(o.message for o in result.outcomes if not o.passed and not o.hidden)
    # The simulator stops the overflowing store, a GPU lets it land in the guard elements: both say so.
    assert "next_frontier" in messages and "overflowed" in messages and "never empties" in messages
    assert "Hint: claim a neighbour only while it is unvisited" in messages


def test_missing_parents_lose_only_the_parent_test():
    result = grade("ps3.q1", no_parent_kernel)
    assert 0 < result.points < 6, str(result)
    (failed,) = [o for o in result.outcomes if not o.passed]
    assert failed.name == "a valid BFS parent tree" and "without a valid parent id" in failed.message


def test_writing_past_the_end_of_an_output_scores_zero():
    """The simulator raises on the store; a GPU lets it land in a guard element, which the judge checks."""
    for kernel, array in ((overrun_kernel, "depth"), (counter_overrun_kernel, "next_size")):
        result = grade("ps3.q1", kernel)
        assert result.points == 0, str(result)
        visible = [o.message for o in result.outcomes if not o.hidden]
        assert all("past the end" in m for m in visible), visible
        if not device.is_simulator():
            assert f"wrote past the end of {array}" in visible[0]


def test_outputs_are_exact_views_of_guarded_buffers():
    """What produce returns is padded with the guard value, and the judge refuses a changed guard."""
    (test,) = [t for t in get_question("ps3.q1").tests if t.name.startswith("a chain")]
    data = test.inputs(None, {})
    got = test.produce(benign_race_kernel, data)
    n = len(data["indptr"]) - 1
    assert got["depth"].shape == (n + questions.GUARD_ELEMENTS,)
    assert (got["depth"][n:] == GUARD_VALUE).all() and (got["parent"][n:] == GUARD_VALUE).all()
    test.judge(data, got, {})
    for name in ("depth", "parent"):
        touched = {k: v.copy() for k, v in got.items()}
        touched[name][n + 3] = 0
        with pytest.raises(TestFailure, match=f"wrote past the end of {name} \\(index {n + 3} of an array of {n}\\)"):
            test.judge(data, touched, {})
    with pytest.raises(TestFailure, match="expected the depth and parent arrays"):
        test.judge(data, [1, 2], {})


def test_run_frontier_kernel_returns_exact_arrays():
    graph = bfs.grid_2d(3, 4)
    depth, parent = run_frontier_kernel(benign_race_kernel, graph, 0)
    assert depth.shape == parent.shape == (12,) and depth.dtype == np.int32
    np.testing.assert_array_equal(depth, bfs.bfs_reference(graph, 0, directed=False))
    assert bfs.parent_tree_problems(graph, 0, parent, directed=False) == []


def test_analysis_answers_that_call_the_library_are_rejected():
    right = {"quadratic_on_chain": lambda n: n * (n - 1), "frontier_on_chain": lambda n: 2 * (n - 1),
             "complexity": "O(V * E)"}
    own = grade("ps3.q3", dict(right, quadratic_on_chain=quadratic_edges_on_chain))
    assert own.points == 0 and "uses the course's own quadratic_edges_on_chain" in own.error
    measured = grade("ps3.q3", dict(right, frontier_on_chain=lambda n: bfs.traverse(
        bfs.chain(n), 0, "frontier_atomic", directed=False).total_edges_examined))
    assert measured.points == 0 and "uses the course's own" in measured.error and "traverse" in measured.error

    def nested(n):
        def count():
            return questions.frontier_edges_on_chain(n)
        return count()

    error = grade("ps3.q3", dict(right, frontier_on_chain=nested)).error
    assert "uses the course's own frontier_edges_on_chain" in error
    depth_quiz = {"min_max_depth": lambda n: 1, "max_max_depth": lambda n: int(bfs.bfs(bfs.chain(n), 0).max())}
    assert "uses the course's own bfs" in grade("ps3.q2", depth_quiz).error
    assert "must be a function" in grade("ps3.q2", dict(depth_quiz, max_max_depth=3)).error
    # Plain formulas, NumPy included, are fine.
    assert grade("ps3.q3", dict(right, quadratic_on_chain=lambda n: int(np.int64(n) * (n - 1)))).passed


def test_answers_that_are_not_plain_numbers_fail():
    class Anything(int):
        def __eq__(self, other):
            return True

        __hash__ = int.__hash__

    result = grade("ps3.q2", {"min_max_depth": lambda n: Anything(0), "max_max_depth": lambda n: n - 1})
    assert result.points == 1 and "<Anything object>" in str(result)

    class AnyChoice(str):
        def __eq__(self, other):
            return True

        __hash__ = str.__hash__

    right = {"quadratic_on_chain": lambda n: n * (n - 1), "frontier_on_chain": lambda n: 2 * (n - 1)}
    assert "must be one of" in str(grade("ps3.q3", dict(right, complexity=AnyChoice("O(V + E)"))))


def test_reference_kernel_and_non_kernels_are_rejected():
    assert "course's own reference kernel" in grade("ps3.q1", kernels.bfs_frontier_atomic_kernel).error
    assert "must be a @cuda.jit kernel" in grade("ps3.q1", lambda *a: None).error


def test_depth_quiz():
    assert grade("ps3.q2", {"min_max_depth": lambda n: 1, "max_max_depth": lambda n: n - 1}).points == 2
    wrong = grade("ps3.q2", {"min_max_depth": lambda n: 1, "max_max_depth": lambda n: n})
    assert wrong.points == 1 and "count hops, not vertices" in str(wrong)
    assert "lacks" in grade("ps3.q2", {"min_max_depth": lambda n: 1}).error


def test_work_counts_match_what_the_kernels_measure():
    """Are the graded formulas what traverse() counts? They must be, or the grader would be wrong."""
    for n in (2, 5, 9):
        chain = bfs.chain(n)
        assert bfs.traverse(chain, 0, "edge_quadratic", directed=False).total_edges_examined == \
            quadratic_edges_on_chain(n)
        for method in ("frontier_atomic", "frontier_scan"):
            assert bfs.traverse(chain, 0, method, directed=False).total_edges_examined == frontier_edges_on_chain(n)


def test_work_question():
    right = {"quadratic_on_chain": lambda n: n * (n - 1), "frontier_on_chain": lambda n: 2 * (n - 1),
             "complexity": "O(V * E)"}
    assert grade("ps3.q3", right).passed
    forgot_last_iteration = dict(right, quadratic_on_chain=lambda n: (n - 1) ** 2)
    result = grade("ps3.q3", forgot_last_iteration)
    assert 0 < result.points < 2 and "one more iteration than the maximum depth" in str(result)
    assert "not the worst case" in str(grade("ps3.q3", dict(right, complexity="O(V + E)")))
    assert "must be one of" in str(grade("ps3.q3", dict(right, complexity="quadratic")))


# ---- from test_ps3_grader.py

import csv


import os


import subprocess


import sys


from pathlib import Path


import nbformat


from course_lib.bfs.questions import QUESTIONS


sys.path.insert(0, str(Path(__file__).resolve().parent))


import make_ps3_submissions  # noqa: E402


ROOT = Path(__file__).resolve().parents[2]


SUBMISSIONS = Path(__file__).resolve().parent / "submissions"


def test_committed_submissions_are_up_to_date(tmp_path):
    make_ps3_submissions.write(tmp_path)
    for fresh in sorted(tmp_path.iterdir()):
        committed = SUBMISSIONS / fresh.name
        assert committed.exists(), f"run python tests/bfs/make_ps3_submissions.py ({fresh.name} missing)"
        sources = [[c.source for c in nbformat.read(p, as_version=4).cells] for p in (fresh, committed)]
        assert sources[0] == sources[1], f"run python tests/bfs/make_ps3_submissions.py ({fresh.name} is stale)"


def test_every_test_is_judged_in_the_grader():
    """A test that is not split would be judged in the student's process, which can rig it."""
    assert [f"{q.id} {t.name}" for q in QUESTIONS for t in q.tests if not t.split] == []


def test_patching_the_judgement_in_the_notebook_scores_zero(tmp_path):
    out = tmp_path / "grades.csv"
    command = [sys.executable, "-m", "course_lib.grading", "grade", "ps3", *sorted(map(str, SUBMISSIONS.iterdir())),
               "--out", str(out), "--jobs", "2", "--timeout", "60", "--quiet"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert "not split" not in done.stdout + done.stderr
    with open(out, newline="") as f:
        rows = {(r["student"], r["question"]): r for r in csv.DictReader(f)}

    def points(student):
        return [float(rows[student, q]["points"]) for q in ("ps3.q1", "ps3.q2", "ps3.q3")]

    assert points("solution") == [6, 2, 2], [rows["solution", q]["reason"] for q in ("ps3.q1", "ps3.q2", "ps3.q3")]
    # A garbage kernel, answers equal to everything, and the references, the parent-tree check, NumPy
    # and the judges replaced in the notebook: the judgement runs in the grader, so nothing counts.
    assert points("monkeypatch") == [0, 0, 0]
    assert "depths differ from SciPy's" in rows["monkeypatch", "ps3.q1"]["reason"]
    assert "<Anything object>" in rows["monkeypatch", "ps3.q2"]["reason"]
    # Counting the work with the library's own code earns nothing.
    assert points("library") == [6, 0, 0]
    assert "uses the course's own bfs" in rows["library", "ps3.q2"]["reason"]
