"""The grader's answer keys of ps6 (``course_lib/ica/questions.py`` judges with them): read by
``course_lib.grading.resources.answer_key`` in the grader's process, never importable from the library."""

import numpy as np

from course_lib.ica._questions_q2 import _arch, step_launches
from course_lib.ica.model import occupancy
from course_lib.ica.questions import tiled_load_bytes


def predicted_load_bytes(n_channels, batch):
    """The tiled model of q1's loads for C channels and B samples (:func:`tiled_load_bytes`)."""
    return tiled_load_bytes({"Wt": np.empty((n_channels, 0)), "batch": batch})


def smallest_batch_key(method, n_samples, max_launches):
    """The smallest B in ``1..N`` whose step launches at most ``max_launches`` kernels; 0 if none.

    The B sharing one count of minibatches m = floor(N / B) form a run ``N // (m + 1) + 1 .. N // m``; a minibatch's
    launches never fall as B grows, so the first B of a run launches the fewest of it. The first run (by B) whose
    first B fits gives the answer.
    """
    batch = 1
    while batch <= n_samples:
        minibatches = n_samples // batch
        if step_launches(method, n_samples, batch) <= max_launches:
            return batch
        batch = n_samples // minibatches + 1  # the first B of the next run
    return 0


def register_budget_key(threads_per_block, shared_bytes_per_block, warps_wanted, limits):
    """The most registers per thread (1 to ``max_thread_registers``) whose resident warps per SM, by the library's
    forward rule, reach ``warps_wanted``; 0 if none does. Every count is tried, from the most down."""
    arch = _arch(limits)
    for registers in range(int(limits["max_thread_registers"]), 0, -1):
        resident = occupancy(threads_per_block, registers, shared_bytes_per_block, arch)["warps_per_sm"]
        if resident >= warps_wanted:
            return registers
    return 0
