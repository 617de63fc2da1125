"""Fast CPU Infomax: whole minibatches through BLAS, the loop compiled by Numba (the strong baseline).

The algorithm and the random numbers are exactly those of the reference
(:mod:`course_lib.ica.reference`); what changes is how a step runs:

* the data live sample-major, ``(N, C)``, so a minibatch gathers ``B`` contiguous rows;
* every product is one BLAS-3 call on the whole minibatch (``U^T = X_b^T W^T`` is
  ``(B, C) x (C, C)``), never one GEMV per sample as the C code of the thesis did;
* the ``N / B`` minibatches of a step run in one compiled Numba function that calls BLAS
  directly and reuses preallocated buffers: no Python work and no allocation per
  minibatch (in NumPy that overhead is a large share of a minibatch of 64 x 245).

In the transposed form MNE also uses (``V = W^T``, ``u = U^T``): ``V += lrate V (u^T y + B I)``,
the same update as the reference's ``W += lrate (Y U^T + B I) W``.
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["CpuStepper"]


@numba.njit(cache=True, nogil=True)
def _infomax_step(xt, perm, v, bias, lrate, block, max_weight, xb, u, g, tmp):
    """One step (all minibatches of one permutation) of standard Infomax, in place.

    Parameters
    ----------
    xt : (N, C) float64, sphered data, sample-major
    perm : (N,) int64, this step's permutation
    v : (C, C) float64, W^T, updated in place
    bias : (C,) float64, updated in place
    xb, u : (B, C) float64 buffers; g, tmp : (C, C) float64 buffers

    Returns
    -------
    bool
        True if the weights blew up (then ``v`` is garbage and the caller restarts).
    """
    n_channels = v.shape[0]
    n_blocks = perm.shape[0] // block
    for blk in range(n_blocks):
        start = blk * block
        for r in range(block):  # gather the minibatch: B contiguous rows
            src = perm[start + r]
            for c in range(n_channels):
                xb[r, c] = xt[src, c]
        np.dot(xb, v, u)  # u = X_b^T W^T = U^T, (B, C)
        for r in range(block):
            for c in range(n_channels):
                u[r, c] += bias[c]
        np.dot(u.T, _neg_tanh_half(u, xb), g)  # g = u^T y = (Y U^T)^T; xb now holds y
        for c in range(n_channels):
            g[c, c] += block
            total = 0.0
            for r in range(block):
                total += xb[r, c]
            bias[c] += lrate * total
        np.dot(v, g, tmp)
        biggest = 0.0
        for i in range(n_channels):
            for j in range(n_channels):
                value = v[i, j] + lrate * tmp[i, j]
                v[i, j] = value
                magnitude = abs(value)
                if not magnitude <= biggest:  # NaN propagates to biggest
                    biggest = magnitude
        if not biggest <= max_weight:
            return True
    return False


@numba.njit(cache=True, nogil=True)
def _neg_tanh_half(u, out):
    """``out = -tanh(u / 2)`` elementwise, returned."""
    for r in range(u.shape[0]):
        for c in range(u.shape[1]):
            out[r, c] = -math.tanh(0.5 * u[r, c])
    return out


class CpuStepper:
    """Runs Infomax steps on the CPU for :func:`course_lib.ica.infomax` (``method="cpu"``).

    Parameters
    ----------
    Xs : ndarray of shape (C, N), float64
        Sphered data.
    block : int
    """

    name = "cpu"

    def __init__(self, Xs, block):
        self.xt = np.ascontiguousarray(Xs.T)
        n_channels = Xs.shape[0]
        self.block = block
        self.xb = np.empty((block, n_channels))
        self.u = np.empty((block, n_channels))
        self.g = np.empty((n_channels, n_channels))
        self.tmp = np.empty((n_channels, n_channels))

    def step(self, perm, W, bias, lrate, max_weight):
        """One step from ``W``, ``bias``; returns ``(W, bias, blown_up)`` (new arrays)."""
        v = np.ascontiguousarray(W.T)
        bias = bias.copy()
        blown = _infomax_step(self.xt, perm.astype(np.int64, copy=False), v, bias, float(lrate), self.block,
                              float(max_weight), self.xb, self.u, self.g, self.tmp)
        return np.ascontiguousarray(v.T), bias, bool(blown)


class ExtendedCpuStepper:
    """Extended Infomax steps on the CPU (``method="cpu", extended=True``).

    The kurtosis estimates between minibatches draw from the run's random stream, so the
    minibatch loop stays in Python here; each minibatch is still three BLAS-3 calls on
    contiguous ``(B, C)`` blocks, with the signs of the components from
    :class:`~course_lib.ica.reference` 's extended state.
    """

    name = "cpu"

    def __init__(self, Xs, block, ext, rng):
        self.Xs = Xs
        self.xt = np.ascontiguousarray(Xs.T)
        self.block, self.ext, self.rng = block, ext, rng
        self.eye_b = block * np.eye(Xs.shape[0])

    def step(self, perm, W, bias, lrate, max_weight):
        """One step from ``W``, ``bias``; returns ``(W, bias, blown_up)``."""
        block, ext = self.block, self.ext
        v = np.ascontiguousarray(W.T)
        bias = bias.copy()
        n_blocks = perm.size // block
        for blk in range(n_blocks):
            u = self.xt[perm[blk * block:(blk + 1) * block]] @ v  # (B, C) = U^T
            u += bias
            y = np.tanh(u)
            # V += lrate V (B I - (u^T y) diag(signs) - u^T u): the transpose of the reference's update
            v += lrate * (v @ (self.eye_b - (u.T @ y) * ext.signs[None, :] - u.T @ u))
            bias -= 2.0 * lrate * y.sum(axis=0)
            if not np.all(np.abs(v) <= max_weight):
                return v.T.copy(), bias, True
            ext.after_block(self.Xs, v.T, self.rng)
        return np.ascontiguousarray(v.T), bias, False
