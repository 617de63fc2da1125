"""Problem set 3 in one process: the grader's rules, and what the feedback says about typical kernels.

The instructor grader's verdict on every fixture is asserted in tests/grading/test_problem_sets.py.
"""

import sys
from pathlib import Path

import numpy as np
from numba import cuda

from course_lib import bfs
from course_lib.bfs.questions import examined_edges, measure_graph, one_level, pack_bits, run_bottom_up, unpack_bits
from course_lib.grading import get_question, run_tests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grading"))
import make_fixtures  # noqa: E402


def _kernel(fixture):
    namespace = {"cuda": cuda, "np": np, "bfs": bfs}
    make_fixtures.run_cell(make_fixtures.answer_cell("ps3", fixture, "ps3_q1_answer"), namespace)
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
    said = " ".join(str(result).split())
    assert result.points == 3 and "global bytes loaded: measured" in said
    assert "stops scanning its in-neighbours at the first one in the frontier" in said


def test_an_early_exit_kept_only_at_some_levels_is_capped_on_every_seed():
    """The step profiled at the first, the widest past the third and the deepest level of graphs drawn at grading
    time: an early exit kept only at the levels the other tests profile (1 and 2), or dropped at one band of levels,
    shows there."""
    import dataclasses

    question = get_question("ps3.q1")
    levels = next(t for t in question.tests if t.name.startswith("hidden: the bottom-up technique at the first"))
    small = dataclasses.replace(question, tests=(dataclasses.replace(levels, points=1),), points=1)
    source = make_fixtures.answer_cell("ps3", "right", "ps3_q1_answer")
    for keep in ("current >= 1 and current <= 2", "current < 3"):
        namespace = {"cuda": cuda, "np": np, "bfs": bfs}
        make_fixtures.run_cell(source.replace("while k < end and not reached:",
                                              f"while k < end and not (reached and {keep}):"), namespace)
        for seed in (7, 12):
            result = run_tests(small, namespace["bottom_up_step"], hidden=True, seed=seed)
            assert result.points == 0 and "technique" in str(result), (keep, seed, str(result))


def test_a_plain_read_modify_write_of_the_shared_word_is_caught_by_the_checker():
    result = grade(_kernel("racy"))
    failed = {o.name: o.message for o in result.outcomes if not o.passed}
    assert "[race]" in failed["race check of one level"] and "next_bits" in failed["race check of one level"]
    assert result.points <= 3


def test_a_bit_and_an_atomic_per_vertex_is_capped_with_the_atomics_measured():
    result = grade(_kernel("atomic_per_vertex"))
    said = " ".join(str(result).split())
    assert result.points == 3 and "atomic operations on global memory: measured" in said


def test_bits_pack_and_unpack_as_the_question_says():
    flags = np.zeros(70, np.uint8)
    flags[[0, 31, 32, 69]] = 1
    words = pack_bits(flags)
    assert words.dtype == np.uint32 and words.shape == (3,)
    assert list(words) == [1 | (1 << 31), 1, 1 << 5]
    assert np.array_equal(unpack_bits(words, 70), flags)


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


def _q2_function(name):
    from course_lib.sim import profile

    namespace = {"cuda": cuda, "np": np, "bfs": bfs, "profile": profile, "pack_bits": pack_bits}
    make_fixtures.run_cell(make_fixtures.answer_cell("ps3", "right", "ps3_q2_answer"), namespace)
    return namespace[name]


def test_only_a_measure_that_runs_the_step_it_is_given_passes():
    """measure(kernel, graph, level) is called on the grader's own steps and on graphs drawn at grading time."""
    step, predict, measure = _kernel("right"), _q2_function("predicted_edges"), _q2_function("measure")
    answer = {"kernel": step, "predicted_edges": predict}
    assert run_tests(get_question("ps3.q2"), {**answer, "measure": measure}, hidden=True, seed=2).points == 2
    fixed = bfs.random_graph(120, 12, seed=4)
    cheats = {"pasted": lambda kernel, graph, level: {1: 3000, 2: 1500, 3: 900}.get(level, 1000),
              "always its own step on the fixed graph": lambda kernel, graph, level: measure(step, fixed, level),
              "the step given, always on the fixed graph": lambda kernel, graph, level: measure(kernel, fixed, level)}
    for what, cheat in cheats.items():
        result = run_tests(get_question("ps3.q2"), {**answer, "measure": cheat}, hidden=True, seed=2)
        said = " ".join(str(result).split())
        # The measurement part scores 0, and the question at most half: a number not measured is not the work.
        assert result.points == 1 and any(o.technique and not o.passed for o in result.outcomes), (what, said)
        assert "but the course's profiler measures" in said, (what, said)
