"""Scoring, feedback messages and hidden-test secrecy of the grading core."""

import numpy as np
import pytest

from course_lib import device
from course_lib.grading import Question, Test, TestFailure, compare_arrays, get_question, run_tests
from course_lib.grading.catalog import manifest
from course_lib.grading.core import HIDDEN_FAILURE


def _no_inputs(rng, info):
    return {}


def _the_answer(answer, data):
    return answer


def _must_be_positive(data, got, info):
    if got <= 0:
        raise TestFailure(f"{got} is not positive")


def _secret_input(rng, info):
    return {"secret": int(rng.integers(1000, 2000))}


def _secret(data, got, info):
    if got != data["secret"]:
        raise TestFailure(f"expected {data['secret']}")


def _test(name, produce=_the_answer, judge=_must_be_positive, inputs=_no_inputs, **kwargs):
    return Test(name, inputs=inputs, produce=produce, judge=judge, **kwargs)


QUESTION = Question("ps0.q1", "demo", 4, (
    _test("positive", hint="think positive"),
    _test("hidden secret", inputs=_secret_input, judge=_secret, hidden=True),
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
    def student_function():
        return 1 / 0

    q = Question("ps0.q2", "raises", 1, (_test("calls it", produce=lambda answer, data: answer()),))
    result = run_tests(q, student_function)
    assert "ZeroDivisionError" in result.outcomes[0].message
    assert "1 / 0" in result.outcomes[0].message


def test_not_implemented_is_reported_as_unanswered():
    def unanswered(answer, data):
        raise NotImplementedError()

    result = run_tests(Question("ps0.q3", "todo", 1, (_test("t", produce=unanswered),)), None)
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


def _double_inputs(rng, info):
    return {"x": int(rng.integers(1, 100)) * info.get("scale", 1)}


def _double_judge(data, got, info):
    if got != 2 * data["x"]:
        raise TestFailure(f"double({data['x']}) = {got}, expected {2 * data['x']}")


SPLIT = Question("ps0.q4", "split", 2, (
    Test("visible", inputs=_double_inputs, produce=lambda f, data: f(data["x"]), judge=_double_judge),
    Test("hidden", hidden=True, inputs=_double_inputs, produce=lambda f, data: f(data["x"]), judge=_double_judge),
), describe=lambda f: {"scale": 3}, tolerance="exact")


def test_split_tests_run_in_one_process_for_check():
    assert run_tests(SPLIT, lambda x: 2 * x, hidden=True, seed=3).points == 2
    wrong = run_tests(SPLIT, lambda x: x, hidden=True, seed=3)
    assert wrong.points == 0 and "expected" in wrong.outcomes[0].message
    assert wrong.outcomes[1].message == HIDDEN_FAILURE
    assert "(results compared with exact)" in str(wrong)


def test_split_outputs_are_plain_data_even_in_the_notebook():
    class Rigged:
        def __eq__(self, other):
            return True

    result = run_tests(SPLIT, lambda x: Rigged())
    assert result.points == 0 and "<Rigged object>" in result.outcomes[0].message


def test_public_failure_message_is_shown_for_hidden_tests():
    def race(data, got, info):
        raise TestFailure("race on tile[0] at line 3", public=True)

    result = run_tests(Question("ps0.q5", "race", 1, (_test("hidden race", judge=race, hidden=True),)), None,
                       hidden=True)
    assert result.outcomes[0].message == "race on tile[0] at line 3"


def test_a_test_needs_all_three_steps_by_keyword():
    with pytest.raises(ValueError, match="needs inputs, produce and judge"):
        Test("t", inputs=_double_inputs, produce=None, judge=_double_judge)
    with pytest.raises(TypeError):
        Test("t", inputs=_double_inputs)
    with pytest.raises(TypeError):  # the steps are keyword arguments: no test made of one positional function
        Test("t", _double_inputs)


@pytest.mark.parametrize("problem_set", sorted(manifest()))
def test_problem_set_tests_are_split_for_isolated_grading(problem_set):
    from course_lib.grading import questions_of

    assert all(callable(t.inputs) and callable(t.produce) and callable(t.judge) for q in questions_of(problem_set) for t in q.tests)


def test_check_stops_a_test_that_runs_too_long():
    def forever(answer, data):
        while True:
            pass

    q = Question("ps0.q6", "loops", 2, (_test("loops", produce=forever, hint="h"), _test("after")))
    result = run_tests(q, 1, time_limit=0.5)
    assert result.points == 0
    assert result.outcomes[0].message.startswith("timed out after 0.5 s (an infinite loop or a deadlock?)")
    assert "Hint" not in result.outcomes[0].message and result.outcomes[1].message.startswith("not run: timed out")


@pytest.mark.skipif(not device.is_simulator(), reason="the kernel spins forever on a GPU; the simulator stops it")
def test_a_kernel_that_hangs_ends_its_question_as_a_gpus_timeout_would(monkeypatch):
    """The simulator stops a launch in which no block progresses (HangError); on a GPU it never returns and the
    grader's time limit stops the process: either way the question's later tests are not run."""
    from numba import cuda

    from course_lib.grading.core import HUNG_REASON
    from course_lib.sim import HangError, _engine

    monkeypatch.setattr(_engine, "HANG_SECONDS", 0.5)

    @cuda.jit
    def spins(flag):
        while flag[0] == 0:  # no thread ever sets it
            pass

    def launch(answer, data):
        answer[1, 1](np.zeros(1, np.int32))

    calls = []
    q = Question("ps0.q6", "hangs", 2, (_test("hangs", produce=launch), _test("after", produce=lambda a, d: calls.append(1))))
    result = run_tests(q, spins)
    assert result.points == 0 and calls == []
    assert "HangError" in result.outcomes[0].message
    assert " ".join(result.outcomes[1].message.split()) == f"not run: {HUNG_REASON}"
    assert issubclass(HangError, RuntimeError)


def test_package_exports_every_public_name_of_core():
    import course_lib.grading as grading

    assert all(hasattr(grading, name) for name in grading.__all__)


def test_hidden_failure_names_only_builtin_exceptions():
    from course_lib.grading.core import failed_outcome

    hidden = _test("hidden", hidden=True)
    assert failed_outcome(hidden, "details", exception="IndexError").message == "IndexError raised"
    leaky = failed_outcome(hidden, "details", exception="inputs_were_1_2_3")
    assert leaky.message == "an exception was raised" and "1_2_3" not in leaky.message
