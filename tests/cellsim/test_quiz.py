"""The lesson's self-check questions: each right answer is acknowledged, a wrong one explained."""

import pytest

from course_lib import cellsim as cs


def test_quiz_answers():
    for quiz in cs.QUIZ.values():
        assert quiz.answer(quiz.correct).startswith("Right.")


def test_a_wrong_answer_is_explained_and_a_bad_choice_refused():
    quiz = cs.QUIZ["tree_memory"]
    assert quiz.answer(0).startswith("Not quite")
    with pytest.raises(ValueError):
        quiz.answer(7)
