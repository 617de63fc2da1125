"""Problem set 8 in one process: the grader's references, and what the feedback says about typical kernels.

The instructor grader's verdict on every fixture is asserted in tests/grading/test_problem_sets.py.
"""

import math
import sys
from pathlib import Path

import numpy as np
from numba import cuda, float32

from course_lib import colocation as co
from course_lib.colocation import questions
from course_lib.grading import get_question, run_tests
from course_lib.sim import record

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


def test_the_graders_measurement_matches_the_lessons_model():
    counts = questions.measured_counts()
    n_features = questions.MEASURE_FEATURES
    assert counts["per_candidate_filter_launches"] == co.filter_launches(n_features, 2, batched=False) == 20
    assert counts["batched_filter_launches"] == co.filter_launches(n_features, 2, batched=True) == 2
    assert counts["per_candidate_htod_copies"] > counts["batched_htod_copies"]
    # The same numbers a student gets with record() (and the cache is a copy).
    data = questions.measure_data()
    with record() as log:
        co.mine(data.points, data.features, 1.0, 0.2, method="gpu", batched=True, max_size=2)
    assert log.summary()["HtoD_count"] == counts["batched_htod_copies"]
    counts["batched_htod_copies"] = -1
    assert questions.measured_counts()["batched_htod_copies"] == log.summary()["HtoD_count"]


def test_q2_wrong_prediction_and_one_kernel_counted():
    namespace = {}
    exec(make_fixtures._solution_cell("ps8", "ps8_setup"), namespace)
    exec(make_fixtures.answer_cell("ps8", "swapped_axes", "ps8_q2_answer"), namespace)
    answer = {k: namespace[k] for k in ("predicted_filter_launches", "per_candidate_filter_launches",
                                        "per_candidate_htod_copies", "batched_filter_launches",
                                        "batched_htod_copies")}
    result = grade(answer, "ps8.q2")
    assert result.points == 1.5
    assert "the grader measures 20 with record()" in _failed(result, "measured: per candidate filter").message
