"""Scoring, feedback messages and hidden-test secrecy of the grading core."""

import numpy as np
import pytest

from course_lib.grading import Question, Test, TestFailure, compare_arrays, get_question, run_tests
from course_lib.grading.core import HIDDEN_FAILURE


def _must_be_positive(answer, rng):
    if answer <= 0:
        raise TestFailure(f"{answer} is not positive")


def _secret(answer, rng):
    secret_input = int(rng.integers(1000, 2000))
    if answer != secret_input:
        raise TestFailure(f"expected {secret_input}")


QUESTION = Question("ps0.q1", "demo", 4, (
    Test("positive", _must_be_positive, hint="think positive"),
    Test("hidden secret", _secret, hidden=True),
))


def test_visible_tests_only_by_default():
    result = run_tests(QUESTION, 5)
    assert result.passed and result.points == 4 and len(result.outcomes) == 1


def test_points_split_among_tests_and_hidden_message_reveals_nothing():
    result = run_tests(QUESTION, 5, hidden=True, seed=1)
    assert result.points == 2 and result.status == "partial"
    failed = result.outcomes[1]
    assert failed.hidden and not failed.passed
    assert failed.message == HIDDEN_FAILURE
    assert "expected" not in str(result)


def test_failure_message_and_hint_are_shown():
    result = run_tests(QUESTION, -1)
    assert result.points == 0 and result.status == "failed"
    assert "-1 is not positive" in str(result) and "Hint: think positive" in str(result)
    assert "positive" in result._repr_html_()


def test_student_exception_names_its_line():
    def broken(answer, rng):
        answer()

    def student_function():
        return 1 / 0

    q = Question("ps0.q2", "raises", 1, (Test("calls it", broken),))
    result = run_tests(q, student_function)
    assert "ZeroDivisionError" in result.outcomes[0].message
    assert "1 / 0" in result.outcomes[0].message


def test_not_implemented_is_reported_as_unanswered():
    def unanswered(answer, rng):
        raise NotImplementedError()

    result = run_tests(Question("ps0.q3", "todo", 1, (Test("t", unanswered),)), None)
    assert result.outcomes[0].message == "not answered yet (NotImplementedError)"


def test_compare_arrays_names_worst_element_and_tolerance():
    expected = np.array([1.0, 2.0, 4.0])
    compare_arrays(expected + 1e-6, expected, rtol=1e-5)
    with pytest.raises(TestFailure, match=r"1 of 3 values are wrong; max error 0.5 at index \(2,\).*tolerance"):
        compare_arrays([1.0, 2.0, 4.5], expected, rtol=1e-5)
    with pytest.raises(TestFailure, match="shape"):
        compare_arrays([1.0], expected, rtol=1e-5)
    with pytest.raises(TestFailure, match="NaN"):
        compare_arrays([1.0, np.nan, 4.0], expected, rtol=1e-5)


def test_unknown_ids_are_clear_errors():
    with pytest.raises(ValueError, match="unknown problem set 'ps99'"):
        get_question("ps99.q1")
    with pytest.raises(ValueError, match="unknown question 'ps1.q9'"):
        get_question("ps1.q9")


def _library_sum(values):
    return float(np.sum(values))


def test_as_student_function_rejects_the_library_and_thin_calls_of_it():
    import functools

    from course_lib.grading import as_student_function

    def own(values):
        total = 0.0
        for v in values:
            total += v
        return total

    library_alias = _library_sum

    def calls_by_name(values):
        return _library_sum(values) + 0.0

    def calls_by_alias(values):
        return library_alias(values)

    def calls_in_a_comprehension(values):
        return [_library_sum([v]) for v in values]

    assert as_student_function(own, "total", forbidden=[_library_sum]) is own
    assert as_student_function(np.sum, "total", forbidden=[_library_sum]) is np.sum  # no code to inspect
    for fn in (_library_sum, functools.partial(_library_sum)):
        with pytest.raises(TestFailure, match="course's own _library_sum"):
            as_student_function(fn, "total", forbidden=[_library_sum])
    for fn in (calls_by_name, calls_by_alias, calls_in_a_comprehension, lambda v: _library_sum(v)):
        with pytest.raises(TestFailure, match="total calls the course's own _library_sum"):
            as_student_function(fn, "total", forbidden=[_library_sum])
    with pytest.raises(TestFailure, match="must be a function"):
        as_student_function(3, "total", forbidden=[_library_sum])
