"""Problem set 6 in one process: right answers get full marks, typical wrong ones partial or 0 with the cause named.

Solution: full marks; W read per sample (wrong technique): at most half of q1; the second sample unguarded:
partial, with the bounds hint. The instructor grader's verdict on every fixture (the same kernels, in notebooks)
is asserted in tests/grading/test_problem_sets.py.
"""

import functools
import sys
from pathlib import Path

import numpy as np
from numba import cuda, float64

from course_lib.grading import get_question, run_tests
from course_lib.ica import kernels

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grading"))
import make_fixtures  # noqa: E402


def _kernel(fixture):
    """The q1 kernel of a PS6 fixture (tests/grading/make_fixtures.py), compiled as the notebook does."""
    namespace = {"cuda": cuda, "float64": float64, "np": np}
    exec(make_fixtures.answer_cell("ps6", fixture, "ps6_q1_answer"), namespace)
    return namespace["two_sample_gemv"]


def _no_permutation():
    """Wrong: the solution with the permutation forgotten (reads samples start + b in order)."""
    namespace = {"cuda": cuda, "float64": float64, "np": np}
    exec(make_fixtures._edit("ps6", "ps6_q1_answer", ("Xt[perm[start + b], c]", "Xt[start + b, c]"),
                             ("Xt[perm[start + b + 1], c]", "Xt[start + b + 1, c]")), namespace)
    return namespace["two_sample_gemv"]


def grade(question_id, answer):
    return run_tests(get_question(question_id), answer, hidden=True, seed=7)


def test_solution_gets_full_marks():
    result = grade("ps6.q1", _kernel("right"))
    assert result.passed and result.points == 6, str(result)


def test_reading_w_per_sample_is_capped_at_half():
    result = grade("ps6.q1", _kernel("one_sample_at_a_time"))
    assert 0 < result.points <= 3, str(result)
    assert "expected technique" in str(result) and "Wt loaded once per block" in str(result)


def test_unguarded_odd_batch_fails_with_the_bounds_hint():
    result = grade("ps6.q1", _kernel("even_batch_only"))
    assert result.points < 6 and not result.outcomes[1].passed, str(result)
    assert "second sample" in str(result)


def test_forgotten_permutation_scores_nothing_but_hints():
    result = grade("ps6.q1", _no_permutation())
    assert result.points <= 1, str(result)
    assert "permutation" in str(result)


def test_the_lessons_kernel_is_not_an_answer():
    result = grade("ps6.q1", kernels.permuted_gemv_kernel)
    assert result.points < 6


@functools.lru_cache(maxsize=None)
def _q2():
    """The solution's q2 cell, run as the notebook runs it: launches_per_step, occupancy and the measured simt."""
    from course_lib import ica
    from course_lib.sim import profile

    namespace = {"np": np, "ica": ica, "profile": profile}
    exec(make_fixtures.answer_cell("ps6", "right", "ps6_q2_answer"), namespace)
    return namespace


def _answers(**replaced):
    q2 = _q2()
    answers = {"launches_per_step": q2["launches_per_step"], "occupancy": q2["occupancy"], "simt": dict(q2["simt"])}
    return {**answers, **replaced}


def test_q2_right_answers():
    result = grade("ps6.q2", _answers())
    assert result.passed and result.points == 4, str(result)


def test_q2_occupancy_without_the_block_limit_loses_its_points():
    def no_block_limit(t, r, s, limits):
        return occupancy(t, r, s, {**limits, "max_blocks": 10**6})

    occupancy = _q2()["occupancy"]
    result = grade("ps6.q2", _answers(occupancy=no_block_limit))
    assert result.points == 2, str(result)
    assert "block limit" in str(result)


def test_q2_guessed_simt_fails():
    result = grade("ps6.q2", _answers(simt={20: 1.0, 32: 1.0, 40: 1.0}))
    assert result.points == 3, str(result)


def test_q2_wrong_form():
    result = grade("ps6.q2", _answers(launches_per_step=3))
    assert result.points == 0 or not result.passed
