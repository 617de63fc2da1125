"""The "predict, then measure" exercises of ``lessons/00_seeing_the_gpu.ipynb``.

Each :class:`~course_lib.predict.Prediction` holds the value the lesson's launch
measures and why; the lesson's cell compares the student's number with the measurement.
"""

from ..predict import Prediction, prediction_dict
from ..quiz import quiz_dict

__all__ = ["PREDICTIONS", "QUIZ"]

#: Lesson 00 uses predictions only.
QUIZ = quiz_dict({})

PREDICTIONS = prediction_dict({
    "float64_sectors": Prediction(
        "The 32 lanes of a warp load 32 consecutive float64. How many 32-byte sectors does the request need?",
        8,
        "32 lanes x 8 bytes = 256 contiguous bytes = 8 sectors of 32 bytes. Every byte fetched is used: "
        "the load is coalesced, it just moves twice the bytes of a float32 load (4 sectors).",
    ),
    "padded_34_conflict": Prediction(
        "A warp reads column 3 of a 32 x 34 float32 shared tile (lane t reads tile[t, 3]). "
        "How many wavefronts (passes) does the request need? (1 = no bank conflict)",
        2,
        "Lane t reads word 34 t + 3, in bank (34 t + 3) % 32 = (2 t + 3) % 32: only the 16 odd banks are hit, "
        "lanes t and t + 16 share one, so every bank serves two words: a 2-way conflict. "
        "Padding by one word (33 columns) gives bank (t + 3) % 32: all different.",
    ),
    "triangle_loop_simt": Prediction(
        "In a one-warp block, lane i runs a loop body i times (for _ in range(i)). "
        "What is the SIMT efficiency of the loop body (active lanes / 32 per warp instruction)?",
        0.5,
        "The warp runs the body 31 times (for lane 31); in round k only the lanes i > k are active, "
        "31 - k of them: 496 active lane-steps out of 31 x 32 = 992 issued, an efficiency of 0.5.",
    ),
    "implicit_copies": Prediction(
        "A kernel taking two NumPy arrays is launched 5 times in a loop. How many host-to-device copies "
        "does record() log?",
        10,
        "Each launch with NumPy arguments copies every array to the device before it runs and back after "
        "it: 2 arrays x 5 launches = 10 copies to the device (and 10 back). With device arrays made once "
        "by cuda.to_device, the launches copy nothing.",
        rel_tol=0.0,
    ),
})
