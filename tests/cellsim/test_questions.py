"""Problem set 7: the solution gets full marks, typical wrong answers partial or 0 with the cause named.

The instructor grader's rows for whole notebooks are the ps7 fixtures of tests/grading/make_fixtures.py.
"""


import pytest

from course_lib.cellsim import model, questions
from course_lib.cellsim.kernels import scatter_daughters_kernel
from course_lib.grading import get_question, run_tests

from . import submissions as subs


def grade(question_id, answer):
    return run_tests(get_question(question_id), answer, hidden=True, seed=7)


def failures(result):
    return " | ".join(o.message for o in result.outcomes if not o.passed)


def test_every_test_is_split_and_points_add_up():
    for q in questions.QUESTIONS:
        assert all(callable(t.inputs) and callable(t.produce) and callable(t.judge) for t in q.tests)
        assert sum(t.points for t in q.tests) == q.points


def test_the_solution_kernel_gets_full_marks():
    result = grade("ps7.q1", subs.solution_kernel)
    assert result.points == 6, failures(result)


def test_recounting_the_flags_is_the_wrong_technique_and_earns_at_most_half():
    result = grade("ps7.q1", subs.recount_kernel)
    assert result.points <= 3
    assert "bytes loaded per cell" in failures(result) and "quadratic work" in failures(result)


def test_inclusive_offsets_lose_the_result_tests_with_the_cause():
    result = grade("ps7.q1", subs.inclusive_offset_kernel)
    assert result.points < 2
    assert "exclusive prefix sum" in failures(result)


def test_no_flag_test_writes_past_the_end():
    result = grade("ps7.q1", subs.unguarded_kernel)
    assert result.points < 3
    assert "write only where flags[i] == 1" in failures(result)


def test_the_course_kernel_is_not_an_answer():
    assert "course" in grade("ps7.q1", scatter_daughters_kernel).error


@pytest.fixture(scope="module")
def measured():
    return {"tree_dtoh_bytes": questions.measured_dtoh_bytes("tree"),
            "compact_dtoh_bytes": questions.measured_dtoh_bytes("compact", questions.Q2_BUDGET)}


def _q2(measured, **changes):
    answer = {"tree_step_bytes": lambda n, g: 72 * n * 2**g,
              "first_level_over": lambda n, b: next(g for g in range(200) if 72 * n * 2**g > b), **measured}
    answer.update(changes)
    return grade("ps7.q2", answer)


def test_q2_constants_are_what_record_measures(measured):
    assert measured == {"tree_dtoh_bytes": questions.Q2_TREE_DTOH_BYTES,
                        "compact_dtoh_bytes": questions.Q2_COMPACT_DTOH_BYTES}


def test_q2_right_answers_get_full_marks(measured):
    result = _q2(measured)
    assert result.points == 4, failures(result)
    # the measured transfers: the tree copies every level back, compaction a few bytes per batch
    assert measured["tree_dtoh_bytes"] > 100 * measured["compact_dtoh_bytes"]


def test_q2_counting_one_level_only_is_explained(measured):
    result = _q2(measured, tree_step_bytes=lambda n, g: 48 * n * 2**g)
    assert result.points == 3 and "count both levels" in failures(result)


def test_q2_calling_the_course_model_earns_nothing(measured):
    result = _q2(measured, tree_step_bytes=lambda n, g: model.tree_peak_bytes(n, g + 1))
    assert result.points == 0 and "course's own" in result.error


def test_q2_unmeasured_or_wrong_numbers_fail(measured):
    result = _q2(measured, tree_dtoh_bytes=None)
    assert result.points == 0 and "must be an integer" in result.error
    result = _q2(measured, compact_dtoh_bytes=measured["compact_dtoh_bytes"] + 4)
    assert result.points == 3 and "record()" in failures(result)
