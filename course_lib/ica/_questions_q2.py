"""Problem set 6, question 2, parts 1 and 2 (``ps6.q2``): two decisions made with the lesson's rules, the grader's
keys for them and the cases it draws. Part of problem set 6 (:mod:`course_lib.ica.questions`, which declares the
question and its part 3, the loads of the student's q1 kernel).

The lesson counts a step's launches per method (``floor(N / B)`` minibatches of ``B + 5``, 6 or 2 launches) and works
out occupancy forwards, from a kernel's registers and shared memory to its resident warps. The question asks for the
inverse decisions, which nothing in the library computes:

1. ``smallest_batch(method, n_samples, max_launches)``: the smallest minibatch size B in ``1..n_samples`` whose step
   launches at most ``max_launches`` kernels, 0 when none does. For the drop-in method the launches are not monotone
   in B (one minibatch of just over N / 2 samples launches fewer kernels than two of N / 3), so a bisection is wrong.
   Key: :func:`smallest_batch_key`, over the distinct minibatch counts with the library's per-minibatch counts.
2. ``register_budget(threads_per_block, shared_bytes_per_block, warps_wanted, limits)``: the most registers per
   thread (at most ``limits["max_thread_registers"]``) at which an SM still holds ``warps_wanted`` resident warps of
   the kernel, 0 when no register count does (the block, warp or shared-memory limit stops it first): the cap to
   compile with (``cuda.jit(max_registers=...)``). Key: :func:`register_budget_key`, every register count tried with
   the library's forward rule, :func:`course_lib.ica.model.occupancy`.

The keys are written to be plainly right, not fast or short; the cases cover the whole stated range: every
method, N from 1 to :data:`MAX_SAMPLES`, budgets on both sides of every boundary; every block size from 1 to 1024
threads, shared memory from none to more than an SM holds, every warp target, the course's SM generations and
limits drawn at grading time.
"""

from __future__ import annotations

import math

from ..grading.resources import answer_key
from .model import Arch, launches_per_minibatch

# The answer keys are the grader's (grading_resources/keys/ps6_ica.py), read when a value is judged.
smallest_batch_key = answer_key("ps6", "smallest_batch_key")
register_budget_key = answer_key("ps6", "register_budget_key")

#: The methods whose launches part 1 counts, and the largest N it is asked for.
METHODS = ("blas", "custom", "fused")
MAX_SAMPLES = 200_000

#: The SM limits the question gives (the fields of course_lib.ica.model.Arch, less its name, and the most registers
#: a thread may have: 63 on Fermi, 255 from Kepler on).
LIMITS = {
    "fermi": {"max_warps": 48, "max_blocks": 8, "registers": 32768, "register_unit": 64, "shared_bytes": 48 * 1024,
              "shared_unit": 128, "shared_reserved": 0, "max_thread_registers": 63},
    "ampere": {"max_warps": 64, "max_blocks": 32, "registers": 65536, "register_unit": 256,
               "shared_bytes": 164 * 1024, "shared_unit": 128, "shared_reserved": 1024, "max_thread_registers": 255},
    "hopper": {"max_warps": 64, "max_blocks": 32, "registers": 65536, "register_unit": 256,
               "shared_bytes": 228 * 1024, "shared_unit": 128, "shared_reserved": 1024, "max_thread_registers": 255},
}


# ----------------------------------------------------------------------------- part 1: a batch size for a budget
def step_launches(method, n_samples, batch):
    """Launches of one step at batch size B: ``floor(N / B)`` minibatches of the library's count each."""
    return (n_samples // batch) * launches_per_minibatch(method, batch)


def _budget_around(rng, method, n_samples):
    """A budget at a boundary: the launches of a drawn B, or one less."""
    batch = int(rng.integers(1, n_samples + 1))
    return max(0, step_launches(method, n_samples, batch) - int(rng.integers(0, 2)))


def _samples(rng):
    """N from 1 to MAX_SAMPLES, log-uniform (small and large N alike)."""
    return min(MAX_SAMPLES, int(math.exp(rng.uniform(0.0, math.log(MAX_SAMPLES + 1)))))


#: Visible cases: the lesson's N = 180,000 for each method; a drop-in budget where a bisection lands on the wrong
#: side (100 samples, 80 launches: B = 34 fits, B = 50 does not, B = 51 does); budgets one under and at a boundary;
#: no B fits; every B fits.
BATCH_CASES = (("fused", 180_000, 1474), ("custom", 180_000, 4422), ("blas", 180_000, 95_000), ("blas", 100, 80),
               ("custom", 1000, 59), ("fused", 1000, 2000), ("fused", 1000, 1), ("blas", 1000, 505), ("blas", 7, 12))


def batch_cases(rng, info):
    """The visible cases."""
    return [tuple(c) for c in BATCH_CASES]


def drawn_batch_cases(rng, info):
    """Drawn at grading time over the whole range: each method at N from 1 to MAX_SAMPLES with budgets from 0 to the
    launches of B = 1 and more (uniform and log-uniform), at boundaries, and (drop-in) where its launches are not
    monotone in B, from N / 2 to 4 N / 3 launches."""
    cases = []
    for k in range(15):
        method, n_samples = METHODS[k % 3], _samples(rng)
        most = step_launches(method, n_samples, 1)
        kind = k // 3
        if method == "blas" and kind in (2, 4):
            budget = int(rng.integers(n_samples // 2, n_samples + 6 + n_samples // 3))
        elif kind == 0:
            budget = int(rng.integers(0, most + 3))
        elif kind in (1, 4):
            budget = _budget_around(rng, method, n_samples)
        else:
            budget = int(math.exp(rng.uniform(0.0, math.log(most + 2))))
        cases.append((method, n_samples, budget))
    return cases


# ----------------------------------------------------------------------------- part 2: a register cap for a target
def _arch(limits):
    return Arch("given", **{k: int(v) for k, v in limits.items() if k != "max_thread_registers"})


#: Visible cases: the lesson's kernel (2 KiB of shared memory) at 32 and 128 channels on Fermi (the block limit
#: stops 32 channels below 9 warps) and Hopper; warp targets that are not a whole number of blocks; block sizes that
#: are not a multiple of 32 (40 threads are two warps: 20 blocks of them, not 40); shared memory as the limit
#: (at 38,912 bytes a block, six fit in Hopper's 228 KiB, five once the reserved 1 KiB is added); the per-thread
#: maximum as the cap.
REGISTER_CASES = ((32, 2048, 8, "fermi"), (32, 2048, 9, "fermi"), (128, 2048, 30, "fermi"), (128, 2048, 64, "hopper"),
                  (96, 2048, 63, "ampere"), (40, 2048, 40, "ampere"), (200, 0, 42, "fermi"),
                  (64, 40 * 1024, 10, "hopper"), (64, 38_912, 12, "hopper"), (64, 40 * 1024, 12, "ampere"),
                  (256, 0, 16, "hopper"), (1024, 0, 32, "ampere"))


def register_cases(rng, info):
    """The visible cases with their limits."""
    return [(t, s, w, dict(LIMITS[g])) for t, s, w, g in REGISTER_CASES]


def drawn_limits(rng):
    """An SM's limits drawn at grading time (one of the course's generations, or a mix of their values)."""
    if rng.integers(2):
        return dict(LIMITS[("fermi", "ampere", "hopper")[int(rng.integers(3))]])
    pick = lambda *values: values[int(rng.integers(len(values)))]  # noqa: E731
    return {"max_warps": pick(32, 48, 64), "max_blocks": pick(8, 16, 24, 32), "registers": pick(32768, 65536),
            "register_unit": pick(64, 128, 256), "shared_bytes": 1024 * pick(48, 64, 100, 164, 228),
            "shared_unit": pick(128, 256), "shared_reserved": pick(0, 1024), "max_thread_registers": pick(63, 255)}


def drawn_register_cases(rng, info):
    """Drawn at grading time over the whole range: blocks of 1 to 1024 threads (log-uniform, so that small blocks,
    which the block limit stops, are as common as large ones; every other one a whole number of warps), shared
    memory from none to more than the SM holds, every warp target from 1 to the SM's maximum, on drawn limits."""
    cases = []
    for k in range(16):
        limits = drawn_limits(rng)
        if k % 2:
            threads = min(1024, int(2 ** rng.uniform(0.0, 10.0)))
        else:
            threads = 32 * min(32, int(2 ** rng.uniform(0.0, 5.0)))
        shared = (0, int(rng.integers(0, 4097)), int(rng.integers(0, limits["shared_bytes"] + 2049)))[k % 3]
        cases.append((threads, shared, int(rng.integers(1, limits["max_warps"] + 1)), limits))
    return cases
