"""Problem set 8 in one process: the grader's references, and what the feedback says about typical kernels.

The instructor grader's verdict on every fixture is asserted in tests/grading/test_problem_sets.py.
"""

import math
import sys
from pathlib import Path

import numpy as np
from numba import cuda, float32

from course_lib.colocation import questions
from course_lib.grading import get_question, run_tests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grading"))
import make_fixtures  # noqa: E402


def _kernel(fixture):
    namespace = {"cuda": cuda, "float32": float32, "np": np, "math": math}
    exec(make_fixtures.answer_cell("ps8", fixture, "ps8_q1_answer"), namespace)
    return namespace["cell_count_kernel"]


def grade(answer, question="ps8.q1"):
    return run_tests(get_question(question), answer, hidden=True, seed=7)


def _failed(result, start):
    return next(o for o in result.outcomes if o.name.startswith(start))


def test_right_and_different_kernels_get_full_marks():
    for fixture in ("right", "right_but_different"):
        assert grade(_kernel(fixture)).points == 6


def test_a_plain_increment_is_a_race_named_by_the_checker_and_capped():
    result = grade(_kernel("not_atomic"))
    race = _failed(result, "race check")
    assert "[race]" in race.message and "count_map" in race.message and "Likely cause: race" in race.message
    assert result.points == 3 and result.capped


def test_uncoalesced_and_serial_kernels_are_capped_at_half():
    for fixture in ("strided", "serial"):
        result = grade(_kernel(fixture))
        assert result.points == 3 and result.capped, fixture
        assert "global load sectors" in _failed(result, "coalesced loads").message


def test_cell_edges_catch_float32_arithmetic():
    result = grade(_kernel("float32"))
    assert result.points == 5
    assert "Likely cause: value" in _failed(result, "points on cell edges").message


def test_swapped_axes_are_diagnosed():
    result = grade(_kernel("swapped_axes"))
    assert "Likely cause: axes" in _failed(result, "points on cell edges").message


def test_boundary_case_puts_points_exactly_on_edges_where_the_formulas_disagree():
    d = questions.on_boundaries(None, {})
    x = np.asarray(d["x"]) - d["x0"]
    exact = np.floor(x / d["cell"])
    assert np.any(exact != np.floor(x * (1.0 / d["cell"])))  # a multiplication by 1 / cell moves some points
    assert np.any(exact != np.floor(np.float32(x) / np.float32(d["cell"])))  # and so does float32
    expected = questions.expect_grid(d)
    assert expected["count_map"].sum() == len(x) and expected["count_map"].shape[1] == 3


def test_coalesced_limit_holds_the_model_and_rejects_a_strided_mapping():
    d = questions.coalesced_case(None, {})
    low, high = questions.coalesced_sectors(d)
    assert low == 0 and 3 * 20 <= high < 3 * 32 * 3  # 3 warps: 20 sectors each coalesced, 96 each strided


def _q2_answer(fixture):
    """The q2 answer of a fixture, with the q1 kernel it measures."""
    namespace = {}
    exec(make_fixtures._solution_cell("ps8", "ps8_setup"), namespace)
    exec(make_fixtures.answer_cell("ps8", fixture, "ps8_q1_answer"), namespace)
    exec(make_fixtures.answer_cell("ps8", fixture, "ps8_q2_answer"), namespace)
    return {k: namespace[k] for k in ("cell_count_kernel", "predicted_load_sectors", "measure_load_sectors")}


def test_the_q2_model_is_what_the_profiler_measures_for_the_solution():
    answer = _q2_answer("right")
    for n in (1, 31, 32, 33, 97, 200):
        assert questions.predicted_load_sectors(n) == answer["measure_load_sectors"](n)
    assert questions.predicted_load_sectors(96) == 3 * 20  # three full warps: 8 + 8 + 4 sectors each


def test_q2_measurements_are_drawn_at_grading_time_and_never_a_multiple_of_32():
    sizes = [questions._measure_inputs(np.random.default_rng(seed), {})["params"] for seed in range(20)]
    assert len({tuple(s) for s in sizes}) > 10
    assert all(len(s) == 2 and all(n % 32 for n in s) for s in sizes)


def test_q2_right_answers_written_differently_get_full_marks():
    for fixture in ("right", "right_but_different", "strided"):
        result = grade(_q2_answer(fixture), "ps8.q2")
        assert result.points == 4, [o.message for o in result.outcomes if not o.passed]


def test_q2_full_warps_and_an_unmeasured_number_lose_their_part():
    result = grade(_q2_answer("swapped_axes"), "ps8.q2")
    assert result.points == 2
    assert "predicted_load_sectors(1) = 20, expected 3" in _failed(result, "the prediction").message
    result = grade(_q2_answer("strided_not_measured"), "ps8.q2")
    assert result.points == 2
    assert "the course's profiler measures" in _failed(result, "your measurements").message
