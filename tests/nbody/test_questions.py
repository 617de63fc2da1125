"""Problem set 1 in one process: the rules the grader uses, and what the feedback says about typical kernels.

The instructor grader's verdict on every fixture is asserted in tests/grading/test_problem_sets.py.
"""

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import cuda, float32

from course_lib import nbody
from course_lib.grading import get_question, run_tests
from course_lib.nbody.questions import predicted_bytes, two_body_tile

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grading"))
import make_fixtures  # noqa: E402


def _factory(fixture, grade_id="ps1_q1_answer", name="make_two_body_kernel"):
    from course_lib.sim import profile

    namespace = {"cuda": cuda, "float32": float32, "nbody": nbody, "np": np, "math": math, "profile": profile}
    if grade_id != "ps1_q1_answer":
        exec(make_fixtures.answer_cell("ps1", fixture, "ps1_q1_answer"), namespace)
    exec(make_fixtures.answer_cell("ps1", fixture, grade_id), namespace)
    return namespace[name]


def grade(question_id, answer, **options):
    return run_tests(get_question(question_id), answer, hidden=True, seed=7, options=options)


def test_right_and_different_kernels_get_full_marks_and_check_shows_every_test_with_its_points():
    for fixture in ("right", "right_but_different"):
        result = grade("ps1.q1", _factory(fixture))
        assert result.points == 6, str(result)
    visible = run_tests(get_question("ps1.q1"), _factory("right"))
    assert visible.points == 6 and not any(o.hidden for o in visible.outcomes)
    assert "[PASS] sources loaded once per block (profiler) (technique)  [2/2]" in str(visible)


def test_naive_kernel_is_capped_at_half_and_told_what_was_measured():
    result = grade("ps1.q1", _factory("naive"))
    assert result.points == 3 and result.capped
    technique = next(o for o in result.outcomes if o.technique and not o.passed)
    assert "expected technique: sources staged in shared memory" in technique.message
    assert "measured 1.75" in technique.message and "Hint: stage each source once per block" in technique.message
    assert result.reason.startswith("sources loaded once per block")


def test_each_bug_gets_the_hint_of_its_cause():
    sign = grade("ps1.q1", _factory("sign"))
    assert sign.points == 0
    visible = [o for o in sign.outcomes if not o.hidden and o.max_points]
    assert all("Likely cause: sign" in o.message and "Hint: r_ij = p_j - p_i" in o.message for o in visible)
    barrier = grade("ps1.q1", _factory("missing_barrier"))
    race = next(o for o in barrier.outcomes if o.name.startswith("race and barrier check"))
    assert "write-read race on shared array" in race.message and "Likely cause: barrier" in race.message
    unwritten = grade("ps1.q1", _factory("unwritten"))
    assert any("Likely cause: unwritten" in o.message for o in unwritten.outcomes)


def test_hidden_tests_show_only_their_name_and_result():
    result = grade("ps1.q1", _factory("sign"))
    hidden = [o for o in result.outcomes if o.hidden]
    assert hidden and all("N =" not in o.message and "Hint" not in o.message and "tile" not in o.message
                          for o in hidden)


def test_answers_that_are_not_the_students_own_are_refused():
    library = grade("ps1.q1", lambda tile: nbody.kernels.nbody_tiled_kernel(tile))
    assert library.points == 0 and "course's own" in library.error
    assert "must be a function returning a @cuda.jit kernel" in grade("ps1.q1", nbody.kernels.nbody_naive_kernel).error
    assert "unexpected option" in grade("ps1.q1", _factory("right"), tile=8).error
    assert "uses the course's own two_body_tile" in grade("ps1.q3", two_body_tile).error


def test_prediction_and_measurement():
    make = _factory("right")
    measure = _factory("right", "ps1_q2_answer", "measure")
    result = grade("ps1.q2", {"kernel": make, "predicted_bytes": lambda n, p: 12 * n + 16 * n * math.ceil(n / (2 * p)),
                              "measure": measure})
    assert result.points == 2, str(result)
    assert predicted_bytes(64, 4) == 8960 and measure(4) == pytest.approx(8960 / 64**2)
    predict = _factory("right", "ps1_q2_answer", "predicted_bytes")
    lying = grade("ps1.q2", {"kernel": make, "predicted_bytes": predict, "measure": lambda tile: 0.5})
    assert lying.points == 1 and "the course's profiler measures 2.188" in str(lying)
    library = grade("ps1.q2", {"kernel": make, "predicted_bytes": predicted_bytes, "measure": measure})
    assert "uses the course's own predicted_bytes" in library.error


def test_tile_rule_examples():
    assert two_body_tile(1 << 20, 132, 1024, 2048) == 1024
    assert two_body_tile(65536, 108, 1024, 2048) == 256
    assert two_body_tile(8192, 68, 1024, 1536) == 32
    for n in (5000 * 64, 1 << 16, 1 << 22):
        p = two_body_tile(n, 132, 1024, 2048)
        assert p == 2 ** int(math.log2(p)) and math.ceil(n / (2 * p)) >= 132
