"""Feedback a student can act on: each part of a dict answer graded on its own, causes in the
student's words, and points that add up (or a note saying how they were scaled or capped)."""

import numpy as np
import pytest

from course_lib.grading import questions_of
from course_lib.grading.core import (QuestionResult, TestOutcome, cause_of, get_question, run_tests, score)
from course_lib.grading.core import _problem_set_modules
from course_lib.grading.authoring.harness import calls_test, fail, function, integer, number_map, question, value_test
from course_lib.grading.results.report import feedback_markdown

PROBLEM_SETS = sorted(m.PROBLEM_SET for m in _problem_set_modules())


# --------------------------------------------------------------------------- parts of an answer
def _two_parts():
    return question("ps9.q1", "two parts", 3, answer={"double": function("double"), "count": integer("count")},
                    tests=[calls_test("double(x)", 2, key="double", args=lambda rng, info: [(1,), (-4,)],
                                      expect=lambda x: 2 * x),
                           value_test("the count", 1, key="count", expect=lambda answer_info: 7)])


def test_a_missing_part_names_itself_and_the_other_parts_are_still_graded():
    def double(x):
        return 2 * x

    result = run_tests(_two_parts(), {"double": double})
    assert not result.error and result.points == 2
    (failed,) = [o for o in result.outcomes if not o.passed]
    assert failed.name == "the count"
    assert "count is missing" in failed.message and "'count'" in failed.message
    assert "Likely cause: the part `count` of your answer" in failed.message
    assert "Likely cause: answer\n" not in failed.message + "\n"


def test_a_malformed_part_fails_only_its_own_tests():
    result = run_tests(_two_parts(), {"double": lambda x: 3 * x, "count": 7.5})
    by_name = {o.name: o for o in result.outcomes}
    assert not by_name["double(x)"].passed and "the part" not in by_name["double(x)"].message  # graded, just wrong
    assert "count must be an integer" in by_name["the count"].message
    assert "the part `count`" in by_name["the count"].message
    message, hint = by_name["the count"].message.split("\nHint: ")
    assert cause_of(message) == "answer" and "check the form of your answer" in hint  # that cause's hint


def test_problem_set_6_q2_grades_its_decisions_while_the_measurement_is_missing():
    """Parts not written yet do not hide the grading of the parts that are: each missing part is named."""
    def smallest_batch(method, n_samples, max_launches):
        per = {"blas": lambda b: b + 5, "custom": lambda b: 6, "fused": lambda b: 2}[method]
        return next((b for b in range(1, n_samples + 1) if (n_samples // b) * per(b) <= max_launches), 0)

    def register_budget(threads_per_block, shared_bytes_per_block, warps_wanted, limits):
        def warps_held(registers):
            warps = -(-threads_per_block // 32)
            unit = limits["register_unit"]
            per_warp = -(-registers * 32 // unit) * unit
            shared = shared_bytes_per_block + limits["shared_reserved"]
            shared = -(-shared // limits["shared_unit"]) * limits["shared_unit"]
            blocks = min(limits["max_blocks"], limits["max_warps"] // warps, limits["registers"] // (per_warp * warps),
                         limits["shared_bytes"] // shared if shared else limits["max_blocks"])
            return blocks * warps

        return next((r for r in range(limits["max_thread_registers"], 0, -1) if warps_held(r) >= warps_wanted), 0)

    q2 = get_question("ps6.q2")
    result = run_tests(q2, {"smallest_batch": smallest_batch, "register_budget": register_budget})
    by_name = {o.name: o for o in result.outcomes}
    assert not result.error
    assert [o.passed for o in result.outcomes] == [True, True, False, False], {n: o.message for n, o in by_name.items()}
    # The decisions' visible points (0.5 and 0.75) of the visible tests' 2.75, scaled to the question's 4.
    assert result.points == round(4 * 1.25 / 2.75, 2)
    for part, outcome in zip(("predicted_load_bytes", "measure_load_bytes"), result.outcomes[2:]):
        assert f"{part} is missing" in outcome.message and f"the part `{part}` of your answer" in outcome.message


def test_a_whole_answer_of_the_wrong_form_is_still_one_error_in_words():
    result = run_tests(_two_parts(), 42)
    assert result.error and "answer with a dict" in result.error
    assert result.error.rstrip().endswith("Likely cause: the form of your answer")
    assert cause_of(str(fail("x", "answer"))) == "answer" and cause_of(str(fail("x", "sign"))) == "sign"


# --------------------------------------------------------------------------- points that add up
def _outcomes(q, passed):
    return [TestOutcome(t.name, passed(t), hidden=t.hidden) for t in q.tests if not t.hidden]


def _shown_sum(result):
    return sum(o.points for o in result.outcomes)


@pytest.mark.parametrize("problem_set", PROBLEM_SETS)
@pytest.mark.parametrize("case", ["all visible pass", "technique fails", "first fails"])
def test_points_shown_add_up_or_the_feedback_says_how(problem_set, case):
    """For every question: the listed tests' points sum to the points shown, or a note explains the difference
    with the numbers (x points/available, or the cap), in the notebook and in the Markdown feedback."""
    for q in questions_of(problem_set):
        visible = [t for t in q.tests if not t.hidden]
        first = visible[0].name
        rule = {"all visible pass": lambda t: True, "technique fails": lambda t: not t.technique,
                "first fails": lambda t: t.name != first}[case]
        result = QuestionResult(q.id, q.title, 0.0, q.points, outcomes=_outcomes(q, rule))
        score(q, result, len(result.outcomes))
        text, markdown = str(result), feedback_markdown("s", problem_set, [result])
        if abs(_shown_sum(result) - result.points) > 1e-9:
            assert result.arithmetic(), (q.id, case, text)
            for note in result.arithmetic():
                assert note.split(":")[0] in text and note.split(":")[0] in markdown
        if result.capped:
            assert f"Capped at {result.points:g} points instead of" in text
        if abs(result.available - q.points) > 1e-9:
            assert (f"carry {result.available:g} points" in text
                    and f"x {q.points:g}/{result.available:g} = " in text), text


def test_a_scaled_check_spells_out_the_arithmetic():
    q = question("ps9.q2", "scaled", 6, answer=integer("n"),
                 tests=[value_test("visible a", 3, key=None, expect=lambda info: 1),
                        value_test("visible b", 2.5, key=None, expect=lambda info: 1),
                        value_test("hidden c", 0.5, key=None, expect=lambda info: 1, hidden=True)])
    result = run_tests(q, 1)
    assert result.points == 6 and _shown_sum(result) == 5.5
    assert ("Scaled: the tests above carry 5.5 points; you passed 5.5 of them, x 6/5.5 = 6 of the question's 6 "
            "points (the hidden tests, run when the problem set is graded, carry the other 0.5") in \
        str(result).replace("\n   ", "").replace("  ", " ")
    graded = run_tests(q, 1, hidden=True, seed=1)
    assert graded.points == 6 == _shown_sum(graded) and not graded.arithmetic()


def test_no_note_when_the_points_simply_add_up():
    result = run_tests(_two_parts(), {"double": lambda x: 2 * x, "count": 7})
    assert result.points == 3 == _shown_sum(result) and result.arithmetic() == []


def test_a_hidden_test_of_a_missing_part_says_so_without_showing_anything_else():
    from course_lib.grading.core import HIDDEN_PART_FAILURE, failed_outcome

    q = question("ps9.q3", "hidden part", 2, answer={"a": integer("a"), "b": integer("b")},
                 tests=[value_test("a", 1, key="a", expect=lambda info: 1),
                        value_test("hidden b", 1, key="b", expect=lambda info: 1, hidden=True)])
    result = run_tests(q, {"a": 1}, hidden=True, seed=3)
    assert result.points == 1 and " ".join(result.outcomes[1].message.split()) == HIDDEN_PART_FAILURE
    # The text is fixed: a message from the student's process that only looks like a part failure shows nothing.
    forged = failed_outcome(q.tests[1], "the hidden inputs are 4, 8, 15\nLikely cause: the part `b` of your answer")
    assert " ".join(forged.message.split()) == HIDDEN_PART_FAILURE


# --------------------------------------------------------------------------- the course's own code in a part
def test_a_part_that_uses_the_course_code_caps_the_question_at_half():
    """Not the student's work: the part's tests fail, and the other parts' points cannot lift the question above
    half (as a failed technique test caps it)."""
    from course_lib.grading.authoring.harness import measurement
    from course_lib.nbody import model as nbody_model

    q = question("ps9.q1", "own work", 4, answer={"double": function("double"), "count": integer("count"),
                                                 "measure": measurement("measure")},
                 tests=[calls_test("double(x)", 1, key="double", args=lambda rng, info: [(1,), (-4,)],
                                   expect=lambda x: 2 * x),
                        value_test("the count", 2, key="count", expect=lambda answer_info: 7),
                        calls_test("measure(x)", 1, key="measure", args=lambda rng, info: [(3,)],
                                   expect=lambda x: 3)])

    def borrowed(x):
        return 2 * x + 0 * nbody_model.global_fetches(4, "naive")

    def modelled(x):
        from course_lib.nbody import model  # imported inside the function: still the course's model
        return x + 0 * len(model.__name__)

    own = run_tests(q, {"double": lambda x: 2 * x, "count": 7, "measure": lambda x: x})
    assert own.points == 4 and not own.capped
    for answer in ({"double": borrowed, "count": 7, "measure": lambda x: x},
                   {"double": lambda x: 2 * x, "count": 7, "measure": modelled}):
        result = run_tests(q, answer, hidden=True, seed=5)
        assert result.capped and result.points == 2, result
        failed = [o for o in result.outcomes if not o.passed]
        assert len(failed) == 1 and failed[0].library and "course's own code" in failed[0].message
    # A part merely missing is not the course's code: the other parts keep their points.
    missing = run_tests(q, {"double": lambda x: 2 * x, "count": 7}, hidden=True, seed=5)
    assert missing.points == 3 and not missing.capped


def test_the_library_cause_survives_the_trip_from_the_students_process():
    from course_lib.grading.authoring.buffers import part_failure
    from course_lib.grading.core import HIDDEN_PART_FAILURE, failed_outcome

    message = str(part_failure("measure", "measure uses the course's own model", library=True))
    assert cause_of(message) == "library"
    import dataclasses

    test = _two_parts().tests[0]
    outcome = failed_outcome(test, message)
    assert outcome.library and not failed_outcome(test, "wrong value").library
    # A hidden test's message shows nothing of the part's message (it comes from the student's process).
    hidden = dataclasses.replace(test, hidden=True)
    assert " ".join(failed_outcome(hidden, message).message.split()) == HIDDEN_PART_FAILURE
