"""Self-check questions of Lesson 6 (Infomax ICA on the GPU)."""

from ..predict import Prediction, prediction_dict
from ..quiz import Quiz, quiz_dict

QUIZ = quiz_dict({
    "parallel_minibatches": Quiz(
        "Can the minibatches of one Infomax step run in parallel on different SMs?",
        ("yes, they use different samples", "no, each starts from the weights the previous one produced",
         "only with atomics on W"), 1,
        "W after minibatch t is the input of minibatch t + 1: the minibatches are a sequential chain. The "
        "parallelism is inside a minibatch (C x B and C x C products), which is small.",
    ),
    "cublas_no_gain": Quiz(
        "Replacing every BLAS call by the same cuBLAS call gave no speed-up in the thesis. Why?",
        ("double precision is slow on GPUs", "each small matrix-vector product kept few warps active and "
         "streamed its operands from device memory (DRAM)", "PCIe transfers of W every minibatch"), 1,
        "The thesis's profiler measured cuBLAS's matrix-vector products at < 12 % active warps, with heavy DRAM "
        "reads and little use of shared memory: one C x C by one vector per call is too little work to fill the "
        "GPU or to reuse what it loads. (One launch per sample also costs a few microseconds each.)",
    ),
    "broadcast": Quiz(
        "In the custom GEMV all threads of a block read sample[k] from shared memory at the same time. This is...",
        ("a 32-way bank conflict", "a broadcast: one wavefront", "a race"), 1,
        "Lanes reading the same 4-byte word of shared memory are served together (a broadcast); only different "
        "words in the same bank conflict. The profiler measures a bank-conflict degree of 1.",
    ),
    "occupancy_32": Quiz(
        "With 32 channels the custom kernel runs blocks of 32 threads. On the thesis's Fermi GPU (8 blocks and 48 "
        "warps per SM) its occupancy is at most...",
        ("100 %", "67 %", "17 %"), 2,
        "8 resident blocks of 1 warp = 8 of 48 warps = 17 %: the block limit, not registers or shared memory, "
        "caps it. With 128 channels 8 blocks of 4 warps give 67 %.",
    ),
})

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
