"""Self-check questions of lesson 4 (seamless cloning), shown with :func:`course_lib.quiz.show`."""

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
        "One iteration moves about 2 MB: under a microsecond at 3 TB/s, less than the few microseconds a launch "
        "costs. Doing several iterations per launch (the fused kernel) or CUDA graphs attack exactly that.",
    ),
})
