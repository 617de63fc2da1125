"""Problem set 2 in one process: the grader's rules, and what the feedback says about typical kernels.

The instructor grader's verdict on every fixture is asserted in tests/grading/test_problem_sets.py.
"""

import sys
from pathlib import Path

import numpy as np
import pytest
from numba import cuda, float32, int32

from course_lib import spmv
from course_lib.grading import get_question, run_tests
from course_lib.spmv.questions import best_cost, measured_ratio, modelled_cost, warp_steps

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grading"))
import make_fixtures  # noqa: E402


def _answer(fixture, grade_id="ps2_q1_answer", name="make_subwarp_kernel"):
    from course_lib.sim import profile

    namespace = {"cuda": cuda, "float32": float32, "int32": int32, "np": np, "spmv": spmv, "profile": profile}
    make_fixtures.run_cell(make_fixtures.answer_cell("ps2", fixture, grade_id), namespace)
    return namespace[name]


def grade(question_id, answer, **options):
    return run_tests(get_question(question_id), answer, hidden=True, seed=7, options=options)


def test_right_and_different_kernels_get_full_marks():
    for fixture in ("right", "right_but_different"):
        assert grade("ps2.q1", _answer(fixture)).points == 6


def test_thread_per_row_and_atomics_are_capped_at_half_with_what_was_measured():
    naive = grade("ps2.q1", _answer("naive"))
    said = " ".join(str(naive).split())
    assert naive.points == 3 and "warp shuffles: measured 0" in said and "thread span" in said
    atomics = grade("ps2.q1", _answer("atomics_only"))
    said = " ".join(str(atomics).split())
    assert atomics.points == 3 and "atomic operations: measured" in said and "no atomics" in said


def test_every_lane_reading_its_rows_bounds_is_capped_with_the_bytes_measured():
    result = grade("ps2.q1", _answer("bounds_per_lane"))
    said = " ".join(str(result).split())
    assert result.points == 3 and "global bytes loaded: measured" in said and "read once" in said


def test_groups_of_lanes_leaving_before_the_shuffle_are_right():
    # Exited lanes take no part in a shuffle (CUDA guide): whole groups past the last row may return early.
    result = grade("ps2.q1", _answer("early_exit"))
    race = next(o for o in result.outcomes if o.name.startswith("warp, race and bounds check"))
    assert race.passed and result.points == result.max_points


def test_the_library_kernels_are_refused():
    result = grade("ps2.q1", lambda lanes: spmv.kernels.csr_vector_kernel)
    assert result.points == 0 and "course's own" in result.error


def test_warp_steps_model():
    assert warp_steps([1] * 32, 1) == 1 and warp_steps([1] * 33, 1) == 2
    assert warp_steps([9, 1, 1, 1], 8) == 2  # four rows per warp: the longest needs two steps of 8
    assert warp_steps([], 4) == 0
    lengths = np.array([5, 0, 12, 3], np.int64)
    assert best_cost(lengths, 3.0, 0.0) == min(modelled_cost(lengths, k, 3.0, 0.0) for k in range(13))


def test_q3_model_the_launch_is_paid_only_with_coo_entries_and_can_make_pure_ell_best():
    lengths = np.array([5, 0, 12, 3], np.int64)
    assert modelled_cost(lengths, 12, 2.0, 100.0) == 48.0  # no entry left for COO: no launch
    assert modelled_cost(lengths, 5, 2.0, 100.0) == 20 + 2 * 7 + 100
    # Lesson 2's rule (at least R / 3 rows reach K) gives 5 here; a costly launch makes pure ELL (12) the best.
    pure_ell = modelled_cost(lengths, 12, 3.0, 100.0)
    assert best_cost(lengths, 3.0, 100.0) == pure_ell < modelled_cost(lengths, 5, 3.0, 100.0)


def test_only_a_measure_that_runs_the_kernel_it_is_given_passes():
    """measure(make_kernel, A, lanes) is called on the grader's own kernels and matrices drawn at grading time:
    pasted numbers, or measuring one's own kernel on the fixed matrix whatever is given, fail."""
    make = _answer("right")
    predict = _answer("right", "ps2_q2_answer", "predicted_steps")
    measure = _answer("right", "ps2_q2_answer", "measure")
    answer = {"kernel": make, "predicted_steps": predict, "best_lanes": 8}
    assert grade("ps2.q2", {**answer, "measure": measure}).points == 2
    fixed = spmv.as_csr(spmv.power_law_rows(48, 10.0, 2.0, seed=5), np.float32)
    pasted = {2: 300, 4: 250, 8: 240, 16: 260, 32: 330}
    cheats = {"pasted": lambda make_kernel, A, lanes: pasted[lanes],
              "always its own kernel on the fixed matrix": lambda make_kernel, A, lanes: measure(make, fixed, lanes),
              "the kernel given, always on the fixed matrix": lambda make_kernel, A, lanes: measure(make_kernel, fixed,
                                                                                                  lanes),
              "a model of its own (3 sectors per warp step)": lambda make_kernel, A, lanes: 3 * predict(
                  np.diff(A.indptr).astype(np.int64), lanes)}
    for what, cheat in cheats.items():
        result = grade("ps2.q2", {**answer, "measure": cheat})
        said = " ".join(str(result).split())
        # The measurement part scores 0, and the question at most half: a number not measured is not the work.
        assert result.points == 1 and result.capped and "but the course's profiler measures" in said, (what, said)


def test_q3_the_ratio_is_measured_on_the_matrix_given_and_k_follows_from_it():
    """measure_ratio(A) is called on matrices of one row length drawn at grading time and compared with the
    grader's own profile of the same two launches: the lesson's 3, a ratio pasted from one matrix, or one matrix
    measured whatever is given scores 0 there and caps q3 at half; choose_k at the measured ratio is judged at
    the grader's ratio. A matrix of uneven rows is refused by the grader's measurement (ELL would hold padding)."""
    measure = _answer("right", "ps2_q3_answer", "measure_ratio")
    answer = {"hyb_cost": _answer("right", "ps2_q3_answer", "hyb_cost"),
              "choose_k": _answer("right", "ps2_q3_answer", "choose_k")}
    result = grade("ps2.q3", {**answer, "measure_ratio": measure})
    assert result.points == 2, str(result)
    fixed = spmv.as_csr(spmv.random_balanced(60, 6, seed=1), np.float32)
    pasted = measure(fixed)
    cheats = {"the lesson's ratio": lambda A: 3.0, "pasted from one matrix": lambda A: pasted,
              "one matrix measured, whatever is given": lambda A: measure(fixed)}
    for what, cheat in cheats.items():
        result = grade("ps2.q3", {**answer, "measure_ratio": cheat})
        said = " ".join(str(result).split())
        assert result.points <= 1 and any(o.technique and not o.passed for o in result.outcomes), (what, said)
        assert "but the course's profiler measures" in said, (what, said)
    with pytest.raises(ValueError, match="one length"):
        measured_ratio(spmv.as_csr(spmv.power_law_rows(60, 8.0, 2.1, seed=1), np.float32))
