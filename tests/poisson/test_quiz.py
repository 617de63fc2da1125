"""Plots, widgets and the benchmark run without a display and without a GPU."""


import matplotlib
from course_lib import poisson

matplotlib.use("Agg")


def test_quiz_questions_have_explanations():
    for key, quiz in poisson.QUIZ.items():
        assert quiz.explanation and "Right." in quiz.answer(quiz.correct), key
