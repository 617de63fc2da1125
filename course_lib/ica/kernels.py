"""Reference CUDA kernels of Unit 6 (Infomax ICA), taught in ``lessons/06_ica.ipynb``.

All arrays are float64 (the thesis's double precision) and C-contiguous. Layouts:

* ``Xt`` (N, C): the sphered data, *sample-major*: one sample's C channels are contiguous;
* ``W`` (C, C): the weights, row-major; ``Wt`` (C, C) its transpose, kept alongside so that
  a thread per channel reads a row of ``Wt`` with consecutive addresses;
* ``U``, ``Y`` (B, C): the activations of one minibatch, one row per sample;
* ``perm`` (N,) int32: the step's permutation; a minibatch is ``perm[start:start + B]``.

Three ways to run one minibatch, as the thesis's story goes:

1. **Drop-in BLAS** (``method="blas"``): general-purpose kernels called as the C code
   called BLAS: one :func:`gemv_kernel` launch per permuted sample (``B`` launches), then
   :func:`logistic_kernel`, :func:`gemm_tn_kernel`, :func:`gemm_kernel`,
   :func:`weights_update_kernel` and :func:`bias_update_kernel`: ``B + 5`` launches.
2. **Custom kernels** (``method="custom"``): :func:`permuted_gemv_kernel` computes all of
   ``U`` in one launch, one block per permuted sample, the permutation gather folded in,
   the sample staged in shared memory and broadcast, ``Wt`` read coalesced; the rest as
   above: 6 launches.
3. **Fused minibatch** (``method="fused"``): :func:`activations_kernel` (gather, GEMV,
   bias and ``-tanh(u/2)`` in one launch) and :func:`weight_update_kernel` (``Y U^T + B I``
   and the weight update, one block per row of ``W``): 2 launches. The step needs one
   grid-wide barrier (every ``U`` before any ``Y U^T``), and between ordinary launches a
   launch boundary is the only grid-wide barrier: two launches per multi-block minibatch.
4. **Persistent step** (``method="persistent"``): :func:`persistent_step_kernel` runs a
   whole step in one *cooperative* launch (all its blocks resident at once), where
   ``cuda.cg.this_grid().sync()`` is a grid-wide barrier: two barriers per minibatch
   replace the fused method's two launches, and ``W`` stays on the device.
5. **Split persistent step** (``method="persistent_split"``):
   :func:`~course_lib.ica._split_step.split_step_kernel` splits each minibatch across the blocks
   that own its samples, reduces their partial products once per row, keeps the
   permutations on the device and leaves the step after a minibatch that blew up.

Block-per-sample kernels use one thread per channel and a static shared array of
:data:`MAX_CHANNELS` doubles (2 KiB): at most 256 channels.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, float64

from ..registry import course_kernel

__all__ = [
    "LESSON",
    "MAX_CHANNELS",
    "activations_kernel",
    "bias_update_kernel",
    "gemm_kernel",
    "gemm_tn_kernel",
    "gemv_kernel",
    "logistic_kernel",
    "permuted_gemv_kernel",
    "persistent_step_kernel",
    "sample_activations",
    "weight_row_update",
    "weight_update_kernel",
    "weights_update_kernel",
]

LESSON = "lessons/06_ica.ipynb"
#: Largest channel count of the block-per-sample kernels (their shared array's length).
MAX_CHANNELS = 256

_M = "float64[:, ::1]"
_V = "float64[::1]"


# Small, awkward example launches for the race checker (channels not a multiple of 32).
def _example_data(n_channels=5, n_samples=13, block=7, seed=3):
    rng = np.random.default_rng(seed)
    W = np.eye(n_channels) + 0.1 * rng.normal(size=(n_channels, n_channels))
    Xt = rng.normal(size=(n_samples, n_channels))
    perm = rng.permutation(n_samples).astype(np.int32)
    U = rng.normal(size=(block, n_channels))
    Y = -np.tanh(U / 2)
    return W, Xt, perm, U, Y, rng.normal(size=n_channels)


def _gemv_example():
    W, Xt, *_ = _example_data()
    return 2, 4, (W, Xt[3].copy(), np.zeros(W.shape[0]))


def _logistic_example():
    W, Xt, perm, U, Y, bias = _example_data()
    return (2, 3), (4, 4), (U, bias, np.zeros_like(U))


def _gemm_tn_example():
    W, Xt, perm, U, Y, bias = _example_data()
    return (2, 2), (4, 4), (Y, U, np.zeros_like(W))


def _gemm_example():
    W, *_ = _example_data()
    return (2, 2), (4, 4), (W.copy(), W, np.zeros_like(W))


def _weights_update_example():
    W, *_ = _example_data()
    return (2, 2), (4, 4), (W.copy(), W.copy(), 0.01, 7.0, np.zeros_like(W))


def _bias_update_example():
    W, Xt, perm, U, Y, bias = _example_data()
    return 2, 4, (Y, 0.01, bias)


def _permuted_gemv_example():
    W, Xt, perm, U, Y, bias = _example_data()
    return U.shape[0], W.shape[0], (np.ascontiguousarray(W.T), Xt, perm, 4, np.zeros_like(U))


def _activations_example():
    W, Xt, perm, U, Y, bias = _example_data()
    return U.shape[0], W.shape[0], (np.ascontiguousarray(W.T), Xt, perm, 4, bias, np.zeros_like(U),
                                     np.zeros_like(U))


def _weight_update_example():
    W, Xt, perm, U, Y, bias = _example_data()
    return W.shape[0], W.shape[0], (W, U, Y, 0.01, np.zeros_like(W), np.ascontiguousarray(W.T), bias.copy())


# ----------------------------------------------------------------------------- drop-in BLAS
@course_kernel(f"void({_M}, {_V}, {_V})", lesson=LESSON, example=_gemv_example)
def gemv_kernel(A, x, y):
    """Row-per-thread ``y = A @ x``, the simplest GEMV: one thread per row of A, which it reads along the row.

    It stands for "one library call per sample" (the drop-in port's launch pattern), not for
    cuBLAS's own GEMV, which is tuned; the thesis measured *that* one with few active warps
    (< 12 %) and heavy DRAM traffic at its sizes.

    Parameters
    ----------
    A : float64 array of shape (M, K), row-major
    x : float64 array of shape (K,)
    y : float64 array of shape (M,), overwritten

    Launch with any 1-D grid covering M threads. Lanes of a warp read ``A[i, k]`` for
    consecutive i at the same k: addresses K * 8 bytes apart, one sector per lane
    (uncoalesced). As the C code did, one launch multiplies one sample.
    """
    i = cuda.grid(1)
    if i < y.shape[0]:
        total = 0.0
        for k in range(A.shape[1]):
            total += A[i, k] * x[k]
        y[i] = total


@course_kernel(f"void({_M}, {_V}, {_M})", lesson=LESSON, example=_logistic_example)
def logistic_kernel(U, bias, Y):
    """``U[b, c] += bias[c]`` and ``Y[b, c] = -tanh(U[b, c] / 2)`` (= 1 - 2 logistic(u)).

    Parameters
    ----------
    U : float64 array of shape (B, C), updated in place
    bias : float64 array of shape (C,)
    Y : float64 array of shape (B, C), overwritten

    Launch with a 2-D grid: x covers the C channels, y the B samples.
    """
    c, b = cuda.grid(2)
    if b < U.shape[0] and c < U.shape[1]:
        u = U[b, c] + bias[c]
        U[b, c] = u
        Y[b, c] = -math.tanh(0.5 * u)


@course_kernel(f"void({_M}, {_M}, {_M})", lesson=LESSON, example=_gemm_tn_example)
def gemm_tn_kernel(A, Bm, out):
    """``out = A^T @ Bm`` (here ``Y U^T`` from the (B, C) layouts): one thread per element.

    Parameters
    ----------
    A : float64 array of shape (K, M)
    Bm : float64 array of shape (K, N)
    out : float64 array of shape (M, N), overwritten

    Launch with a 2-D grid: x covers the N columns, y the M rows.
    """
    j, i = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        total = 0.0
        for k in range(A.shape[0]):
            total += A[k, i] * Bm[k, j]
        out[i, j] = total


@course_kernel(f"void({_M}, {_M}, {_M})", lesson=LESSON, example=_gemm_example)
def gemm_kernel(A, Bm, out):
    """``out = A @ Bm``: one thread per element of ``out``.

    Parameters
    ----------
    A : float64 array of shape (M, K)
    Bm : float64 array of shape (K, N)
    out : float64 array of shape (M, N), overwritten (must not alias A or Bm)

    Launch with a 2-D grid: x covers the N columns, y the M rows.
    """
    # gemm_tn_kernel with A read untransposed, written out on purpose: each kernel of the "custom" set is
    # profiled and read alone, and the two index orders compare line by line.
    j, i = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        total = 0.0
        for k in range(A.shape[1]):
            total += A[i, k] * Bm[k, j]
        out[i, j] = total


@course_kernel(f"void({_M}, {_M}, float64, float64, {_M})", lesson=LESSON, example=_weights_update_example)
def weights_update_kernel(W, P, lrate, block, Wt):
    """``W += lrate (P + block W)`` with ``P = (Y U^T) W``, and ``Wt = W^T``.

    Since ``(Y U^T + B I) W = P + B W``, this finishes the natural-gradient update.

    Parameters
    ----------
    W : float64 array of shape (C, C), updated in place
    P : float64 array of shape (C, C)
    lrate, block : float
    Wt : float64 array of shape (C, C), overwritten with the new W transposed

    Launch with a 2-D grid: x covers the columns, y the rows.
    """
    j, i = cuda.grid(2)
    if i < W.shape[0] and j < W.shape[1]:
        w = W[i, j] + lrate * (P[i, j] + block * W[i, j])
        W[i, j] = w
        Wt[j, i] = w


@course_kernel(f"void({_M}, float64, {_V})", lesson=LESSON, example=_bias_update_example)
def bias_update_kernel(Y, lrate, bias):
    """``bias[c] += lrate * sum_b Y[b, c]``: one thread per channel.

    Parameters
    ----------
    Y : float64 array of shape (B, C)
    lrate : float
    bias : float64 array of shape (C,), updated in place
    """
    c = cuda.grid(1)
    if c < bias.shape[0]:
        total = 0.0
        for b in range(Y.shape[0]):
            total += Y[b, c]
        bias[c] += lrate * total


# ----------------------------------------------------------------------------- custom (thesis)
@course_kernel(f"void({_M}, {_M}, int32[::1], int64, {_M})", lesson=LESSON, example=_permuted_gemv_example)
def permuted_gemv_kernel(Wt, Xt, perm, start, U):
    """``U[b, :] = W @ x_perm[start + b]``: one block per permuted sample, one thread per channel.

    Parameters
    ----------
    Wt : float64 array of shape (C, C), W transposed
    Xt : float64 array of shape (N, C), the data sample-major
    perm : int32 array of shape (N,)
    start : int
        First position of the minibatch in ``perm``.
    U : float64 array of shape (B, C), overwritten

    Launch as ``[B, C]`` (C <= 256). The block copies its sample ``Xt[perm[start + b]]``
    into shared memory (the permutation gather folded in: C consecutive doubles,
    coalesced), then thread c sums ``Wt[k, c] * sample[k]``: at each k the lanes read
    consecutive addresses of ``Wt`` (coalesced) and all read the same ``sample[k]``
    (a shared-memory broadcast, no bank conflict).
    """
    sample = cuda.shared.array(MAX_CHANNELS, float64)
    c = cuda.threadIdx.x
    b = cuda.blockIdx.x
    n_channels = Wt.shape[0]
    if c < n_channels:
        sample[c] = Xt[perm[start + b], c]
    cuda.syncthreads()
    if c < n_channels:
        total = 0.0
        for k in range(n_channels):
            total += Wt[k, c] * sample[k]
        U[b, c] = total


# ----------------------------------------------------------------------------- fused minibatch
# The fused and the persistent kernels do one sample's activations and one row's weight update the same way, so
# they share these two device functions (the persistent step's weights then equal the fused method's bit for bit).
@cuda.jit(device=True, inline=True)
def sample_activations(b, Wt, Xt, perm, start, bias, U, Y, sample):
    """Row b of ``U = W x + bias`` and ``Y = -tanh(U / 2)``: one block, one thread per channel.

    Parameters
    ----------
    b : int
        The sample's position in the minibatch; it is ``Xt[perm[start + b]]``.
    Wt, Xt, perm, start, bias, U, Y
        As for :func:`activations_kernel`.
    sample : float64 shared array of length :data:`MAX_CHANNELS`
        Where the block stages the sample (the caller syncs before restaging it).

    The block copies the sample into shared memory (C consecutive doubles, coalesced), then
    thread c sums ``Wt[k, c] * sample[k]``: consecutive addresses of ``Wt`` across the lanes,
    and a shared-memory broadcast of ``sample[k]``.
    """
    c = cuda.threadIdx.x
    n_channels = Wt.shape[0]
    if c < n_channels:
        sample[c] = Xt[perm[start + b], c]
    cuda.syncthreads()
    if c < n_channels:
        u = bias[c]
        for k in range(n_channels):
            u += Wt[k, c] * sample[k]
        U[b, c] = u
        Y[b, c] = -math.tanh(0.5 * u)


@cuda.jit(device=True, inline=True)
def weight_row_update(i, W, U, Y, lrate, W_next, Wt, bias, g):
    """Row i of ``W_next = W + lrate (Y U^T + B I) W``, and ``bias[i]``: one block, one thread per column.

    Parameters
    ----------
    i : int
        The row.
    W, U, Y, lrate, W_next, Wt, bias
        As for :func:`weight_update_kernel`.
    g : float64 shared array of length :data:`MAX_CHANNELS`
        Where the block stages row i of ``Y U^T + B I`` (the caller syncs before reusing it).

    Thread k first forms ``g[k] = sum_b Y[b, i] U[b, k]`` (plus B on the diagonal): the lanes
    read consecutive ``U[b, k]`` and all the same ``Y[b, i]``. Then thread j sums
    ``g[k] * W[k, j]``, reading rows of W coalesced and ``g[k]`` as a broadcast. The
    transposed copy costs one strided store per element, C^2 per minibatch, and makes the
    C^2 B reads of the next activations coalesced.
    """
    k = cuda.threadIdx.x
    n_channels = W.shape[0]
    n_block = U.shape[0]
    y_sum = 0.0
    if k < n_channels:
        total = 0.0
        for b in range(n_block):
            y = Y[b, i]
            total += y * U[b, k]
            y_sum += y
        if k == i:
            total += n_block
        g[k] = total
    cuda.syncthreads()
    if k < n_channels:
        acc = 0.0
        for m in range(n_channels):
            acc += g[m] * W[m, k]
        w = W[i, k] + lrate * acc
        W_next[i, k] = w
        Wt[k, i] = w
        if k == 0:
            bias[i] += lrate * y_sum


@course_kernel(f"void({_M}, {_M}, int32[::1], int64, {_V}, {_M}, {_M})", lesson=LESSON,
               example=_activations_example)
def activations_kernel(Wt, Xt, perm, start, bias, U, Y):
    """:func:`permuted_gemv_kernel` with the nonlinearity fused: ``U = W x + bias``, ``Y = -tanh(U / 2)``.

    Parameters
    ----------
    Wt, Xt, perm, start
        As for :func:`permuted_gemv_kernel`.
    bias : float64 array of shape (C,)
    U, Y : float64 arrays of shape (B, C), overwritten

    Launch as ``[B, C]`` (C <= 256). Block b runs :func:`sample_activations` for sample b.
    """
    sample = cuda.shared.array(MAX_CHANNELS, float64)
    sample_activations(cuda.blockIdx.x, Wt, Xt, perm, start, bias, U, Y, sample)


@course_kernel(f"void({_M}, {_M}, {_M}, float64, {_M}, {_M}, {_V})", lesson=LESSON, example=_weight_update_example)
def weight_update_kernel(W, U, Y, lrate, W_next, Wt, bias):
    """Row i of ``W_next = W + lrate (Y U^T + B I) W``, and the bias: one block per row, one thread per column.

    Parameters
    ----------
    W : float64 array of shape (C, C), read only
    U, Y : float64 arrays of shape (B, C)
    lrate : float
    W_next : float64 array of shape (C, C), overwritten (not W: other blocks still read W)
    Wt : float64 array of shape (C, C), overwritten with ``W_next`` transposed
    bias : float64 array of shape (C,), ``bias[i] += lrate * sum_b Y[b, i]`` (block i only)

    Launch as ``[C, C]`` (C <= 256). Block i runs :func:`weight_row_update` for row i, which
    says how the threads share the work and read memory.
    """
    g = cuda.shared.array(MAX_CHANNELS, float64)
    weight_row_update(cuda.blockIdx.x, W, U, Y, lrate, W_next, Wt, bias, g)


# ----------------------------------------------------------------------------- persistent step
def _persistent_example():
    W, Xt, perm, U, Y, bias = _example_data()
    n_minibatches = perm.shape[0] // U.shape[0]
    return 3, W.shape[0], (W.copy(), np.zeros_like(W), np.zeros_like(W), Xt, perm, n_minibatches, bias.copy(),
                           np.zeros_like(U), np.zeros_like(U), 0.01)


@course_kernel(f"void({_M}, {_M}, {_M}, {_M}, int32[::1], int64, {_V}, {_M}, {_M}, float64)", lesson=LESSON,
               example=_persistent_example)
def persistent_step_kernel(W, W_spare, Wt, Xt, perm, n_minibatches, bias, U, Y, lrate):
    """A whole step in one cooperative launch: every minibatch, chained by grid barriers.

    Parameters
    ----------
    W : float64 array of shape (C, C)
        In: the weights; out: the weights after the step (they stay on the device).
    W_spare, Wt : float64 arrays of shape (C, C)
        Scratch: the ping-pong partner of ``W``, and ``W`` transposed (rebuilt here).
    Xt, perm
        As for :func:`activations_kernel`; minibatch t is ``perm[t B:(t + 1) B]``.
    n_minibatches : int
    bias : float64 array of shape (C,), updated in place
    U, Y : float64 arrays of shape (B, C), scratch
    lrate : float

    Launch cooperatively as ``[G, C]`` (C <= 256, G at most the device's cooperative grid):
    blocks take samples ``b = blockIdx, blockIdx + G, ...`` in the activations stage and rows
    ``i = blockIdx, ...`` in the update stage, with the arithmetic of
    :func:`activations_kernel` and :func:`weight_update_kernel` in the same order, so the
    weights equal the fused method's bit for bit. Two grid barriers per minibatch replace
    its two launches: every ``U`` before any ``Y U^T``, every row of ``W_next`` before the
    next minibatch reads ``Wt``.
    """
    sample = cuda.shared.array(MAX_CHANNELS, float64)
    g = cuda.shared.array(MAX_CHANNELS, float64)
    grid = cuda.cg.this_grid()
    n_channels = W.shape[0]
    n_block = U.shape[0]
    for e in range(cuda.grid(1), n_channels * n_channels, cuda.gridsize(1)):
        Wt[e % n_channels, e // n_channels] = W[e // n_channels, e % n_channels]
    grid.sync()
    for t in range(n_minibatches):
        start = t * n_block
        for b in range(cuda.blockIdx.x, n_block, cuda.gridDim.x):
            sample_activations(b, Wt, Xt, perm, start, bias, U, Y, sample)
            cuda.syncthreads()  # sample is restaged for this block's next b
        grid.sync()
        for i in range(cuda.blockIdx.x, n_channels, cuda.gridDim.x):
            if t % 2 == 0:
                weight_row_update(i, W, U, Y, lrate, W_spare, Wt, bias, g)
            else:
                weight_row_update(i, W_spare, U, Y, lrate, W, Wt, bias, g)
            cuda.syncthreads()  # g is rewritten by this block's next row
        grid.sync()
    if n_minibatches % 2 == 1:  # the last update wrote W_spare: the result goes back to W
        for e in range(cuda.grid(1), n_channels * n_channels, cuda.gridsize(1)):
            W[e // n_channels, e % n_channels] = W_spare[e // n_channels, e % n_channels]
