"""A whole Infomax step in one cooperative launch, each minibatch split across the blocks that own its samples.

:func:`split_step_kernel` is the kernel of ``method="persistent_split"``. Like
:func:`~course_lib.ica.kernels.persistent_step_kernel` it runs every minibatch of a step in one
cooperative launch with two grid barriers per minibatch, but it divides the work differently:

* **Activations and partial products (stage A).** Minibatch ``t`` has ``B`` samples; block ``p``
  (``p < P = ceil(B / S)``) owns samples ``p S .. p S + S - 1``. It gathers them through the
  permutation into shared memory, forms their activations ``u = W x + bias`` and
  ``y = -tanh(u / 2)`` in shared memory (never in global memory), and writes its *partial
  products* ``sum_s y_s u_s^T`` (C x C) and ``sum_s y_s`` (C) to row ``p`` of ``partials``.
  Every thread of every owning block works: the old kernel's ``Y U^T`` was a B-long sum per
  thread on C of its blocks.
* **Grid barrier**, then **the update (stage B).** Block ``G - 1 - i`` (counting down, so that
  the row blocks are not the sample blocks when the grid has room for both) reduces row ``i`` of
  the ``P`` partials, once: ``g = sum_p partials[p, i] + B e_i``, then writes row ``i`` of
  ``W + lrate g W`` into the other weight buffer, column ``i`` of ``W^T``, and
  ``bias[i] + lrate sum_p partials[p, bias i]``. A weight outside ``[-max_weight, max_weight]``
  (or NaN) raises the step's blow-up flag (an atomic max): the reference's rule, on W only.
* **Grid barrier**; every block reads the flag: on a blow-up the whole grid leaves the step
  after this minibatch, so a restart costs only the minibatches run (the host step loop throws
  them away, as the reference does after each minibatch).

The permutations live on the device: ``perms`` (K, N) holds K steps' permutations, uploaded
K at a time; ``slot`` picks this step's. ``W``, ``bias`` and ``status`` are views of one device
array, downloaded in one copy per step.

Work split (a plan, :func:`plan_split_step`): ``S`` samples per owning block (default
:data:`SAMPLES_PER_BLOCK`), a grid of ``P + C`` blocks when the device holds that many at once
(fewer otherwise: blocks then loop over samples and rows, and the result is the same).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import cuda, float64

from ..registry import course_kernel
from .kernels import LESSON, MAX_CHANNELS

__all__ = ["MAX_THREADS", "SAMPLES_PER_BLOCK", "SAMPLE_DOUBLES", "SplitPlan", "grid_syncs_per_step",
           "plan_split_step", "split_step_kernel"]

#: Shared doubles per staged array (samples, activations, nonlinearity) of a block: a tile of
#: ``SAMPLE_DOUBLES // C`` samples (4 at 256 channels, 16 at 64).
SAMPLE_DOUBLES = 1024
#: Most threads per block of the kernel (its reduction buffer's length).
MAX_THREADS = 256
#: Samples each owning block takes of a minibatch by default: 61 blocks for runica's 244.
SAMPLES_PER_BLOCK = 4
_RED = MAX_THREADS + 32  # >= max(MAX_THREADS, MAX_CHANNELS + 1)
_ROW = MAX_CHANNELS + 1  # a row of the reduced product and its bias sum

_M = "float64[:, ::1]"
_V = "float64[::1]"


@dataclass(frozen=True)
class SplitPlan:
    """How a step is split: ``grid`` blocks of ``threads``, ``per_block`` samples per owning block.

    ``owners`` = ``ceil(batch / per_block)`` blocks hold a minibatch's samples (and a row of
    partial products each); ``partial_bytes`` is what they write per minibatch.
    """

    grid: int
    threads: int
    per_block: int
    owners: int
    n_channels: int
    batch: int

    @property
    def partial_bytes(self) -> int:
        return 8 * self.owners * (self.n_channels * self.n_channels + self.n_channels)


def plan_split_step(n_channels, batch, limit, threads=MAX_THREADS, per_block=SAMPLES_PER_BLOCK) -> SplitPlan:
    """The split of a step: owners of the samples, rows, grid within the cooperative ``limit``.

    Parameters
    ----------
    n_channels, batch : int
        C (2 .. 256) and samples per minibatch B.
    limit : int
        The device's cooperative grid limit for ``threads`` (``max_cooperative_grid_blocks``).
    threads : int
        Threads per block, 32 .. :data:`MAX_THREADS`, a multiple of 32.
    per_block : int
        Samples per owning block.
    """
    if not 2 <= n_channels <= MAX_CHANNELS:
        raise ValueError(f"n_channels must be in 2 .. {MAX_CHANNELS}, got {n_channels}")
    if not (32 <= threads <= MAX_THREADS and threads % 32 == 0):
        raise ValueError(f"threads must be a multiple of 32 in 32 .. {MAX_THREADS}, got {threads}")
    if batch < 1 or per_block < 1 or limit < 1:
        raise ValueError(f"batch, per_block and limit must be >= 1, got {batch}, {per_block}, {limit}")
    owners = -(-batch // per_block)
    return SplitPlan(grid=max(1, min(limit, owners + n_channels)), threads=threads, per_block=per_block,
                     owners=owners, n_channels=n_channels, batch=batch)


def grid_syncs_per_step(minibatches_run: int) -> int:
    """Grid barriers a step executes: one after the setup, then two per minibatch run."""
    return 1 + 2 * minibatches_run


def _example():
    rng = np.random.default_rng(4)
    n_channels, n_samples, batch, slots = 5, 23, 7, 2
    W = np.eye(n_channels) + 0.1 * rng.normal(size=(n_channels, n_channels))
    Xt = rng.normal(size=(n_samples, n_channels))
    perms = np.stack([rng.permutation(n_samples) for _ in range(slots)]).astype(np.int32)
    owners = -(-batch // 3)
    return 3, 32, (W, np.zeros_like(W), np.zeros_like(W), np.zeros(n_channels), np.zeros(2), Xt, perms, 1,
                   n_samples // batch, batch, 3, 0.01, 1e8, 0, np.zeros((owners, n_channels * n_channels + n_channels)))


@cuda.jit(device=True, inline=True)
def _activation(Wt, c, xs, row, u):
    """``u + sum_k Wt[k, c] xs[row + k]`` in order of k, eight loads of ``Wt`` in flight (lanes: consecutive c)."""
    n_channels = Wt.shape[0]
    k = 0
    while k + 8 <= n_channels:
        w0 = Wt[k, c]
        w1 = Wt[k + 1, c]
        w2 = Wt[k + 2, c]
        w3 = Wt[k + 3, c]
        w4 = Wt[k + 4, c]
        w5 = Wt[k + 5, c]
        w6 = Wt[k + 6, c]
        w7 = Wt[k + 7, c]
        u += w0 * xs[row + k]
        u += w1 * xs[row + k + 1]
        u += w2 * xs[row + k + 2]
        u += w3 * xs[row + k + 3]
        u += w4 * xs[row + k + 4]
        u += w5 * xs[row + k + 5]
        u += w6 * xs[row + k + 6]
        u += w7 * xs[row + k + 7]
        k += 8
    while k < n_channels:
        u += Wt[k, c] * xs[row + k]
        k += 1
    return u


@cuda.jit(device=True, inline=True)
def _stage_a(p, Wt, bias, Xt, perms, slot, start, batch, per_block, partials, xs, us, ys):
    """Block's owned samples of one minibatch -> row ``p`` of ``partials`` (tiles of shared memory)."""
    tid = cuda.threadIdx.x
    n_threads = cuda.blockDim.x
    n_channels = Wt.shape[0]
    n_square = n_channels * n_channels
    tile = SAMPLE_DOUBLES // n_channels
    first = p * per_block
    last = min(first + per_block, batch)
    for s0 in range(first, last, tile):
        ns = min(tile, last - s0)
        for e in range(tid, ns * n_channels, n_threads):  # gather: one sample's channels are contiguous
            s = e // n_channels
            xs[e] = Xt[perms[slot, start + s0 + s], e - s * n_channels]
        cuda.syncthreads()
        for e in range(tid, ns * n_channels, n_threads):
            s = e // n_channels
            c = e - s * n_channels
            row = s * n_channels
            u = _activation(Wt, c, xs, row, bias[c])
            us[e] = u
            ys[e] = -math.tanh(0.5 * u)
        cuda.syncthreads()
        for e in range(tid, n_square + n_channels, n_threads):  # partial y u^T, then sum y (coalesced stores)
            acc = 0.0
            if e < n_square:
                i = e // n_channels
                k = e - i * n_channels
                for s in range(ns):
                    acc += ys[s * n_channels + i] * us[s * n_channels + k]
            else:
                i = e - n_square
                for s in range(ns):
                    acc += ys[s * n_channels + i]
            if s0 == first:
                partials[p, e] = acc
            else:
                partials[p, e] += acc
        cuda.syncthreads()  # the tiles are restaged


@cuda.jit(device=True, inline=True)
def _column_sum(partials, col, q, n_groups, n_owners):
    """``sum_p partials[p, col]`` over ``p = q, q + n_groups, ...``, four loads in flight."""
    a0 = 0.0
    a1 = 0.0
    a2 = 0.0
    a3 = 0.0
    p = q
    while p + 3 * n_groups < n_owners:
        a0 += partials[p, col]
        a1 += partials[p + n_groups, col]
        a2 += partials[p + 2 * n_groups, col]
        a3 += partials[p + 3 * n_groups, col]
        p += 4 * n_groups
    while p < n_owners:
        a0 += partials[p, col]
        p += n_groups
    return (a0 + a1) + (a2 + a3)


@cuda.jit(device=True, inline=True)
def _stage_b(i, Wc, Wn, Wt, bias, batch, lrate, max_weight, status, partials, n_owners, g, red):
    """Row ``i`` of the update from the reduced partial products; raises the flag on a blow-up."""
    tid = cuda.threadIdx.x
    n_threads = cuda.blockDim.x
    n_channels = Wc.shape[0]
    width = n_channels + 1  # column n_channels: the bias sum
    groups = max(1, n_threads // width)
    for e in range(tid, width * groups, n_threads):
        q = e // width
        m = e - q * width
        col = i * n_channels + m if m < n_channels else n_channels * n_channels + i
        red[e] = _column_sum(partials, col, q, groups, n_owners)
    cuda.syncthreads()
    for m in range(tid, width, n_threads):
        total = 0.0
        for q in range(groups):
            total += red[q * width + m]
        if m == i:
            total += batch
        g[m] = total
    cuda.syncthreads()
    groups = max(1, n_threads // n_channels)
    for e in range(tid, n_channels * groups, n_threads):
        q = e // n_channels
        j = e - q * n_channels
        acc = 0.0
        m = q
        while m + 3 * groups < n_channels:  # rows of W read coalesced, four in flight; g[m] a broadcast
            w0 = Wc[m, j]
            w1 = Wc[m + groups, j]
            w2 = Wc[m + 2 * groups, j]
            w3 = Wc[m + 3 * groups, j]
            acc += g[m] * w0
            acc += g[m + groups] * w1
            acc += g[m + 2 * groups] * w2
            acc += g[m + 3 * groups] * w3
            m += 4 * groups
        while m < n_channels:
            acc += g[m] * Wc[m, j]
            m += groups
        red[e] = acc
    cuda.syncthreads()
    for j in range(tid, n_channels, n_threads):
        total = 0.0
        for q in range(groups):
            total += red[q * n_channels + j]
        w = Wc[i, j] + lrate * total
        Wn[i, j] = w
        Wt[j, i] = w
        if not abs(w) <= max_weight:  # also NaN
            cuda.atomic.max(status, 1, 1.0)
        if j == 0:
            bias[i] += lrate * g[n_channels]
    cuda.syncthreads()  # g and red serve the block's next row


@course_kernel(f"void({_M}, {_M}, {_M}, {_V}, {_V}, {_M}, int32[:, ::1], int64, int64, int64, int64, float64, "
               f"float64, int64, {_M})", lesson=LESSON, example=_example)
def split_step_kernel(W, W_spare, Wt, bias, status, Xt, perms, slot, n_minibatches, batch, per_block, lrate,
                      max_weight, reset, partials):
    """Every minibatch of one step, each split across the blocks that own its samples.

    Parameters
    ----------
    W : float64 array of shape (C, C)
        In: the weights (ignored when ``reset``); out: the weights after the minibatches run.
    W_spare, Wt : float64 arrays of shape (C, C)
        Scratch: the ping-pong partner of ``W``, and the current weights transposed.
    bias : float64 array of shape (C,), updated in place (zeroed first when ``reset``)
    status : float64 array of shape (2,)
        Out: ``[minibatches run, 1.0 if the weights blew up else 0.0]``.
    Xt : float64 array of shape (N, C)
        The sphered data, sample-major.
    perms : int32 array of shape (K, N)
        Permutations; this step uses row ``slot``, minibatch ``t`` is ``perms[slot, t B:(t + 1) B]``.
    slot, n_minibatches, batch, per_block : int
        Row of ``perms``; minibatches in the step; B; samples per owning block (S).
    lrate, max_weight : float
    reset : int
        1: start from ``W = I``, ``bias = 0`` (a fresh pass: nothing to upload).
    partials : float64 array of shape (P, C^2 + C), P >= ceil(B / S)
        Scratch: each owning block's ``sum y u^T`` and ``sum y``.

    Launch cooperatively as ``[G, T]`` (T a multiple of 32, at most :data:`MAX_THREADS`;
    G at most the cooperative limit; :func:`plan_split_step` gives ``P + C``). Grid
    barriers: one after the setup, two per minibatch run.
    """
    xs = cuda.shared.array(SAMPLE_DOUBLES, float64)
    us = cuda.shared.array(SAMPLE_DOUBLES, float64)
    ys = cuda.shared.array(SAMPLE_DOUBLES, float64)
    g = cuda.shared.array(_ROW, float64)
    red = cuda.shared.array(_RED, float64)
    grid = cuda.cg.this_grid()
    blk = cuda.blockIdx.x
    n_blocks = cuda.gridDim.x
    n_channels = W.shape[0]
    n_owners = (batch + per_block - 1) // per_block
    for e in range(cuda.grid(1), n_channels * n_channels, cuda.gridsize(1)):
        i = e // n_channels
        j = e - i * n_channels
        if reset != 0:
            w = 1.0 if i == j else 0.0
            W[i, j] = w
        else:
            w = W[i, j]
        Wt[j, i] = w
    if reset != 0:
        for c in range(cuda.grid(1), n_channels, cuda.gridsize(1)):
            bias[c] = 0.0
    if cuda.grid(1) == 0:
        status[1] = 0.0
    grid.sync()
    t = 0
    while t < n_minibatches:
        Wc = W if t % 2 == 0 else W_spare
        Wn = W_spare if t % 2 == 0 else W
        for p in range(blk, n_owners, n_blocks):
            _stage_a(p, Wt, bias, Xt, perms, slot, t * batch, batch, per_block, partials, xs, us, ys)
        grid.sync()  # every partial product before any row of the update
        for i in range(n_blocks - 1 - blk, n_channels, n_blocks):
            _stage_b(i, Wc, Wn, Wt, bias, batch, lrate, max_weight, status, partials, n_owners, g, red)
        grid.sync()  # the new W, W^T, bias and the flag before the next minibatch
        t += 1
        if status[1] != 0.0:  # the same value in every block: the grid leaves together
            break
    if t % 2 == 1:  # the last update wrote W_spare
        for e in range(cuda.grid(1), n_channels * n_channels, cuda.gridsize(1)):
            i = e // n_channels
            j = e - i * n_channels
            W[i, j] = W_spare[i, j]
    if cuda.grid(1) == 0:
        status[0] = t
