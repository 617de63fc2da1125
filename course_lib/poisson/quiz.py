"""Self-check questions of lesson 4 (seamless cloning), shown with :func:`course_lib.quiz.show`."""

from ..predict import Prediction, prediction_dict
from ..quiz import quiz_file

#: The lesson's multiple-choice questions, written as prose in quiz.md.
QUIZ = quiz_file(__package__)

#: The lesson's "predict, then measure" exercises (see :mod:`course_lib.predict`).
PREDICTIONS = prediction_dict({
    "untouched_after_3": Prediction(
        "A filled 12 x 12 square mask has a 10 x 10 strict interior. After 3 Jacobi iterations, how many "
        "strict-interior pixels still hold exactly their starting value?",
        16,
        "Each iteration carries the border's influence one pixel further in. The pixels more than 3 steps from "
        "the border, a 4 x 4 square in the middle (10 - 2 x 3 = 4), have seen only the source, for which the "
        "starting guess already satisfies the equations: 16 pixels are untouched.",
        rel_tol=0.0,
    ),
    "iterations_width_24": Prediction(
        "How many Jacobi iterations does a square region of width 24 need to converge, by the lesson's measurement?",
        480,
        "Iterations grow as the square of the width: width 16 needed 220, and (24 / 16)^2 = 2.25, so about "
        "2.25 x 220 = 495; the measurement gives 480 (about 0.83 w^2, like the other widths).",
        rel_tol=0.15,
    ),
})
