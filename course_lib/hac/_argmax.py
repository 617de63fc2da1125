"""Matching kernels of Unit 5: the argmax of the weights, struct-of-arrays or array-of-structs.

Each is made by a factory for a block size (the shared scratch holds one (value, index)
pair per thread) and reduces to one partial per block; a second pass in one block reduces
the partials. Ties go to the lowest index, as ``numpy.argmax``. The three kernels differ
only in how a thread reads its (value, index) pairs; each is written out in full, so that
a kernel reads whole and the layouts compare line by line.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numba import cuda

from ..registry import register_kernel
from .._docs import fill_doc
from ._kernel_base import (BLOCK_FACTORY_DOC, INDEX_SENTINEL, LESSON, REGISTERED_BLOCK, _check_power_of_two, better,
                           jit_for_block, register_factory)


def _reduce_in_shared(shared_value, shared_index, value, index, t, block):
    """Tree reduction of one (value, index) per thread; the winner ends in slot 0."""
    shared_value[t] = value
    shared_index[t] = index
    cuda.syncthreads()
    half = block // 2
    while half > 0:  # every thread runs every step: the barriers are uniform
        if t < half and better(shared_value[t + half], shared_index[t + half], shared_value[t], shared_index[t]):
            shared_value[t] = shared_value[t + half]
            shared_index[t] = shared_index[t + half]
        cuda.syncthreads()
        half //= 2


_reduce_in_shared = cuda.jit(device=True, inline=True)(_reduce_in_shared)


@lru_cache(maxsize=None)
@fill_doc(factory=BLOCK_FACTORY_DOC)
def argmax_soa_kernel(block: int):
    """Matching, struct-of-arrays: the largest weight and its index, one partial per block.

    {factory}
        ``kernel[grid, block](weights, part_value, part_index)``: ``weights`` of shape
        (M,); ``part_value`` (weight dtype) and ``part_index`` (int32) of shape (grid,).
        Each thread walks the entries with a grid-sized stride (consecutive threads
        read consecutive floats: coalesced) keeping its best (value, index), then the
        block reduces the ``block`` candidates in shared memory. Finish with
        :func:`argmax_pairs_kernel` on the partials, in one block.
    """
    block = _check_power_of_two(block)

    def argmax_soa(weights, part_value, part_index):
        shared_value = cuda.shared.array(block, weights.dtype)
        shared_index = cuda.shared.array(block, np.int32)
        t = cuda.threadIdx.x
        best_value = weights.dtype.type(-math.inf)
        best_index = INDEX_SENTINEL
        for e in range(cuda.grid(1), weights.shape[0], cuda.gridsize(1)):
            value = weights[e]
            if better(value, e, best_value, best_index):
                best_value = value
                best_index = e
        _reduce_in_shared(shared_value, shared_index, best_value, best_index, t, block)
        if t == 0:
            part_value[cuda.blockIdx.x] = shared_value[0]
            part_index[cuda.blockIdx.x] = shared_index[0]

    return jit_for_block(argmax_soa, block)


@lru_cache(maxsize=None)
def argmax_pairs_kernel(block: int):
    """The best of (value, index) pairs held in two arrays: the second pass of the argmax.

    Returns
    -------
    numba.cuda kernel
        ``kernel[grid, block](values, indices, out_value, out_index)``: launched with one
        block over the partials of :func:`argmax_soa_kernel`, it leaves the winner in
        ``out_value[0]``, ``out_index[0]``.
    """
    block = _check_power_of_two(block)

    # argmax_soa's body with pairs from two arrays, written out on purpose: each kernel reads whole, alone.
    def argmax_pairs(values, indices, out_value, out_index):
        shared_value = cuda.shared.array(block, values.dtype)
        shared_index = cuda.shared.array(block, np.int32)
        t = cuda.threadIdx.x
        best_value = values.dtype.type(-math.inf)
        best_index = INDEX_SENTINEL
        for p in range(cuda.grid(1), values.shape[0], cuda.gridsize(1)):
            value = values[p]
            index = indices[p]
            if better(value, index, best_value, best_index):
                best_value = value
                best_index = index
        _reduce_in_shared(shared_value, shared_index, best_value, best_index, t, block)
        if t == 0:
            out_value[cuda.blockIdx.x] = shared_value[0]
            out_index[cuda.blockIdx.x] = shared_index[0]

    return jit_for_block(argmax_pairs, block)


@lru_cache(maxsize=None)
def argmax_aos_kernel(block: int):
    """Matching, array-of-structs (the thesis's layout): each entry is a {value, index} struct.

    Returns
    -------
    numba.cuda kernel
        ``kernel[grid, block](pair_values, pair_indices, out_values, out_indices)``.
        ``pair_values`` (weight dtype) and ``pair_indices`` (int32 for float32 weights,
        int64 for float64) are two views, shape (M, 2), of the same interleaved memory:
        struct e is ``pair_values[e, 0]`` (its value) followed by ``pair_indices[e, 1]``
        (its index). A warp reading the values of 32 consecutive structs touches twice
        the bytes it uses, and then reads the indices from the same sectors again.
        The outputs are structs too, shape (grid, 2): run the kernel once over the M
        entries, then again in one block over the partials.
    """
    block = _check_power_of_two(block)

    # argmax_soa's body with pairs from structs, written out on purpose: the layouts compare line by line.
    def argmax_aos(pair_values, pair_indices, out_values, out_indices):
        shared_value = cuda.shared.array(block, pair_values.dtype)
        shared_index = cuda.shared.array(block, np.int32)
        t = cuda.threadIdx.x
        best_value = pair_values.dtype.type(-math.inf)
        best_index = INDEX_SENTINEL
        for e in range(cuda.grid(1), pair_values.shape[0], cuda.gridsize(1)):
            value = pair_values[e, 0]
            index = pair_indices[e, 1]
            if better(value, index, best_value, best_index):
                best_value = value
                best_index = index
        _reduce_in_shared(shared_value, shared_index, best_value, best_index, t, block)
        if t == 0:
            out_values[cuda.blockIdx.x, 0] = shared_value[0]
            out_indices[cuda.blockIdx.x, 1] = shared_index[0]

    return jit_for_block(argmax_aos, block)


def _example_argmax_soa():
    w = np.random.default_rng(1).random(77).astype(np.float32)
    w[[5, 60]] = 2.0  # a tie: index 5 must win
    w[10] = -np.inf
    return 2, 32, (w, np.zeros(2, np.float32), np.zeros(2, np.int32))


def _example_argmax_pairs():
    values = np.array([0.5, 2.0, 2.0, -np.inf, 1.0], np.float32)
    return 1, 32, (values, np.array([4, 9, 3, 0, 7], np.int32), np.zeros(1, np.float32), np.zeros(1, np.int32))


def _example_argmax_aos():
    from numba import cuda

    m = 77
    buffer = np.zeros((m, 2), np.float32)
    buffer[:, 0] = np.random.default_rng(2).random(m)
    buffer.view(np.int32)[:, 1] = np.arange(m)
    d_buffer = cuda.to_device(buffer)  # one buffer, two views: the struct array
    d_out = cuda.to_device(np.zeros((2, 2), np.float32))
    return 2, 32, (d_buffer, d_buffer.view(np.int32), d_out, d_out.view(np.int32))


register_factory("argmax_soa_kernel", argmax_soa_kernel, "void(float32[::1], float32[::1], int32[::1])", 32,
                 _example_argmax_soa, example_at_registered=True)
register_factory("argmax_pairs_kernel", argmax_pairs_kernel, "void(float32[::1], int32[::1], float32[::1], int32[::1])",
                 32, _example_argmax_pairs)
register_factory("argmax_aos_kernel", argmax_aos_kernel,
                 "void(float32[:, ::1], int32[:, ::1], float32[:, ::1], int32[:, ::1])", 32, _example_argmax_aos)
register_kernel(f"hac.argmax_soa_kernel[block={REGISTERED_BLOCK},float64]",
                "void(float64[::1], float64[::1], int32[::1])",
                lambda: argmax_soa_kernel(REGISTERED_BLOCK).py_func, LESSON)
