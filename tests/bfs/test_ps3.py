"""Problem set 3: right answers get full marks, typical wrong ones partial or 0 with a reason."""

from pathlib import Path

import pytest
from numba import cuda

from course_lib import bfs, device
from course_lib.bfs import kernels
from course_lib.bfs.questions import frontier_edges_on_chain, quadratic_edges_on_chain
from course_lib.grading import get_question, run_tests

ROOT = Path(__file__).resolve().parents[2]


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


@cuda.jit
def no_parent_kernel(indptr, indices, frontier, frontier_size, current, depth, parent, next_frontier, next_size):
    """Wrong in part: right depths, parents never written."""
    i = cuda.grid(1)
    if i < frontier_size:
        u = frontier[i]
        for k in range(indptr[u], indptr[u + 1]):
            v = indices[k]
            if cuda.atomic.cas(depth, v, -1, current + 1) == -1:
                next_frontier[cuda.atomic.add(next_size, 0, 1)] = v


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
    assert "next_frontier, it overflowed" in messages and "never empties" in messages
    assert "Hint: claim a neighbour only while it is unvisited" in messages


def test_missing_parents_lose_only_the_parent_test():
    result = grade("ps3.q1", no_parent_kernel)
    assert 0 < result.points < 6, str(result)
    (failed,) = [o for o in result.outcomes if not o.passed]
    assert failed.name == "a valid BFS parent tree" and "without a valid parent id" in failed.message


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


def test_untouched_problem_set_runs_to_the_end_and_scores_zero(notebooks):
    nb, errors = notebooks.execute(ROOT / "problem_sets" / "ps3_bfs.ipynb")
    assert not errors, [e["ename"] + ": " + e["evalue"] for e in errors]
    assert "ps3 total: 0/10" in notebooks.score(nb)
    assert any("frontier_kernel is not written yet" in o.get("text", "")
               for c in nb.cells if c.cell_type == "code" for o in c.outputs)


@pytest.mark.skipif(device.is_simulator(), reason="nbval runs the solution notebook in the simulator already")
def test_solution_scores_full_marks_on_gpu(notebooks):
    nb, errors = notebooks.execute(ROOT / "solutions" / "ps3_bfs.ipynb")
    assert not errors and "ps3 total: 10/10" in notebooks.score(nb)
