"""Plots and the explorer widget build and show the right numbers."""


import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from course_lib import nbody  # noqa: E402

def test_quiz_answers():
    quiz = nbody.QUIZ["bigger_tile"]
    assert quiz.answer("less").startswith("Right.")
    assert quiz.answer(0).startswith("Not quite")
    with pytest.raises(ValueError):
        quiz.answer(7)
