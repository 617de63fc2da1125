"""Self-check questions of Lesson 6 (Infomax ICA on the GPU)."""

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
        ("double precision is slow on GPUs", "thousands of tiny launches (one GEMV per sample), few active warps",
         "PCIe transfers of W every minibatch"), 1,
        "One GEMV launch per permuted sample multiplies a C x C matrix by one vector: a few microseconds of launch "
        "for a few thousand flops, and too few warps to hide memory latency (< 12 % active warps measured).",
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
