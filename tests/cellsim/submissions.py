"""Answers to problem set 7 for the grader tests: the solution, a wrong technique and typical bugs."""

from numba import cuda


@cuda.jit
def solution_kernel(flags, offsets, phis, types, out_phis, out_types):
    """Right: recorded cell i goes to slot offsets[i]."""
    i = cuda.grid(1)
    if i < flags.shape[0] and flags[i] == 1:
        out_phis[offsets[i]] = phis[i]
        out_types[offsets[i]] = types[i]


@cuda.jit
def recount_kernel(flags, offsets, phis, types, out_phis, out_types):
    """Wrong technique: right result, but each thread counts the flags before it instead of reading offsets."""
    i = cuda.grid(1)
    if i < flags.shape[0] and flags[i] == 1:
        slot = 0
        for j in range(i):
            slot += flags[j]
        out_phis[slot] = phis[i]
        out_types[slot] = types[i]


@cuda.jit
def unguarded_kernel(flags, offsets, phis, types, out_phis, out_types):
    """Bug: no flag test: every cell writes (unrecorded ones overwrite the next recorded one, and past the end)."""
    i = cuda.grid(1)
    if i < flags.shape[0]:
        out_phis[offsets[i]] = phis[i]
        out_types[offsets[i]] = types[i]


@cuda.jit
def inclusive_offset_kernel(flags, offsets, phis, types, out_phis, out_types):
    """Bug: treats the offsets as an inclusive scan (slot offsets[i] - 1)."""
    i = cuda.grid(1)
    if i < flags.shape[0] and flags[i] == 1:
        out_phis[offsets[i] - 1] = phis[i]
        out_types[offsets[i] - 1] = types[i]
