"""Self-check questions of lesson 4 (seamless cloning), shown with :func:`course_lib.quiz.show`."""

from ..predict import Prediction, prediction_dict
from ..quiz import Quiz, quiz_dict

QUIZ = quiz_dict({
    "regions": Quiz(
        "Which pixels does the Jacobi iteration solve for?",
        ("every mask pixel", "the strict interior only", "the inside border only", "every pixel of the image"), 1,
        "Inside-border pixels are fixed to the target's values (they glue the clone to the scene); only the strict "
        "interior, whose four neighbours are all in the mask, is unknown.",
    ),
    "initial_guess": Quiz(
        "Zeros are an allowed initial guess I_0. Why does the classic method start from the source instead?",
        ("zeros would not converge", "the source already has the right gradients, so far fewer iterations are needed",
         "the source is the exact solution", "the clamp needs positive values"), 1,
        "Jacobi converges from any guess, but only slowly: information travels one pixel per iteration. The source "
        "already satisfies the equation away from the border, so only the border's influence has to spread.",
    ),
    "race": Quiz(
        "A kernel updates the image in place (one buffer). What goes wrong on a GPU?",
        ("nothing, it just converges faster", "threads read neighbours that other threads may already have "
         "overwritten: the result depends on scheduling", "it runs out of memory", "the clamp stops working"), 1,
        "That is a data race. Gauss-Seidel also uses new values, but in a fixed order (e.g. red-black); the in-place "
        "kernel uses whatever order the hardware happens to run threads in.",
    ),
    "launch_bound": Quiz(
        "800 iterations of a 500 x 333 clone on a modern GPU: what limits the one-launch-per-iteration kernel?",
        ("FP32 arithmetic", "memory bandwidth", "kernel launch overhead", "PCIe transfers"), 2,
        "One iteration moves about 0.2 MB (37 bytes for each of the ~6,000 strict-interior pixels): well under a "
        "microsecond at 3 TB/s, less than the few microseconds a launch costs. Doing several iterations per "
        "launch (the fused kernel) or CUDA graphs attack exactly that.",
    ),
})

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
