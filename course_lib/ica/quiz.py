"""Self-check questions of Lesson 6 (Infomax ICA on the GPU)."""

from ..predict import Prediction, prediction_dict
from ..quiz import quiz_file

#: The lesson's multiple-choice questions, written as prose in quiz.md.
QUIZ = quiz_file(__package__)

#: The lesson's "predict, then measure" exercises (see :mod:`course_lib.predict`).
PREDICTIONS = prediction_dict({
    "sphered_variance": Prediction(
        "After centring and sphering (x <- 2 cov^(-1/2) x), what is the variance of each channel?",
        4.0,
        "cov^(-1/2) whitens: its output has the identity covariance (every channel variance 1, every pair "
        "uncorrelated). The factor 2 (runica's convention) doubles every value and so multiplies every variance "
        "by 4; the pairs stay uncorrelated.",
        rel_tol=0.01,
    ),
    "gemv_sectors_16": Prediction(
        "The drop-in GEMV (one thread per row of W, blocks of 32 threads) runs at 16 channels. How many 32-byte "
        "sectors does each of its load requests of W touch?",
        16,
        "At each k lane i reads W[i, k]: rows are 16 x 8 = 128 bytes apart, so every lane's double lies in a sector "
        "of its own, of which it uses 8 bytes out of 32. Only 16 lanes have a row (the other 16 are past the end): "
        "16 sectors per request. The custom kernel reads the same 16 doubles, consecutive in Wt, from 4 sectors.",
        rel_tol=0.0,
    ),
    "custom_sectors_48": Prediction(
        "The custom GEMV runs at 48 channels: blocks of 48 threads, one full warp and one half-full warp. What are "
        "its sectors per load request of Wt, averaged over all its requests?",
        6,
        "At each k the full warp reads 32 consecutive doubles (256 bytes: 8 sectors) and the second warp's 16 "
        "active lanes the next 16 (128 bytes: 4 sectors). Each warp makes one request per k, so the average is "
        "(8 + 4) / 2 = 6. Both are coalesced: every byte fetched is used; the half-empty warp just moves less.",
        rel_tol=0.0,
    ),
})
