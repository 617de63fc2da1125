"""Problem set 3 in one process: the grader's rules, and what the feedback says about typical kernels.

The instructor grader's verdict on every fixture is asserted in tests/grading/test_problem_sets.py.
"""

import sys
from pathlib import Path

import numpy as np
from numba import cuda

from course_lib import bfs
from course_lib.bfs.questions import examined_edges, measure_graph, one_level, run_bottom_up
from course_lib.grading import get_question, run_tests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grading"))
import make_fixtures  # noqa: E402


def _kernel(fixture):
    namespace = {"cuda": cuda, "np": np, "bfs": bfs}
    exec(make_fixtures.answer_cell("ps3", fixture, "ps3_q1_answer"), namespace)
    return namespace["bottom_up_step"]


def grade(answer):
    return run_tests(get_question("ps3.q1"), answer, hidden=True, seed=7)


def test_right_and_different_steps_get_full_marks():
    for fixture in ("right", "right_but_different"):
        assert grade(_kernel(fixture)).points == 6


def test_the_host_loop_reports_each_level():
    out = run_bottom_up(_kernel("right"), *bfs.as_graph(bfs.chain(4), directed=False).in_edges, 0)
    assert out["counts"] == [1, 1, 1, 0] and [list(r) for r in out["reached"]] == [[1], [2], [3], []]


def test_no_early_exit_is_capped_with_the_bytes_measured():
    result = grade(_kernel("no_early_exit"))
    assert result.points == 3 and "expected technique: each unvisited vertex stops" in str(result)


def test_check_then_act_is_caught_by_the_count_and_the_checker():
    result = grade(_kernel("racy"))
    failed = {o.name: o.message for o in result.outcomes if not o.passed}
    assert "Likely cause: race" in failed["next_count equals the vertices reached"]
    assert "[race]" in failed["race check of one level"]
    assert result.points <= 3


def test_examined_edges_model():
    c = one_level(measure_graph(), 0, 2)
    assert examined_edges(c["in_indptr"], c["in_indices"], c["flags"], c["depth"]) == 21
    chain = one_level(bfs.chain(5), 0, 1)  # vertex 2 finds vertex 1 first; 3 and 4 scan their lists
    assert examined_edges(chain["in_indptr"], chain["in_indices"], chain["flags"], chain["depth"]) == 1 + 2 + 1


def test_chain_counts_are_measured_and_not_the_lessons():
    """q3's counts are what the profiler measures on the kernels (and traverse reports), and the lesson's printed
    ones do not pass."""
    from course_lib.bfs.profiling import measure_search
    from course_lib.bfs.questions import frontier_on_chain, quadratic_on_chain

    for n in (2, 3, 4, 7, 10):
        chain = bfs.chain(n, directed=True)
        for method, expected in (("edge_quadratic", quadratic_on_chain(n)), ("frontier_atomic", frontier_on_chain(n)),
                                 ("frontier_scan", frontier_on_chain(n))):
            run, measured = measure_search(chain, n // 2, method)
            assert expected == sum(m.edges_examined for m in measured) == run.total_edges_examined
    assert quadratic_on_chain(10) != 10 * 9 and frontier_on_chain(10) != 2 * 9  # V (V - 1) and 2E, lesson 3
