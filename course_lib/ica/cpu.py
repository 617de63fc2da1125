"""Fast CPU Infomax: whole minibatches through BLAS, vectorised nonlinearity, no allocation (the strong baseline).

The algorithm and the random numbers are exactly those of the reference
(:mod:`course_lib.ica.reference`); what changes is how a step runs:

* the data live sample-major, ``(N, C)``, and each step gathers the permuted samples once
  into a preallocated buffer, so every minibatch is a contiguous ``(B, C)`` slice;
* every product is one BLAS-3 call on the whole minibatch (``U^T = X_b^T W^T`` is
  ``(B, C) x (C, C)``), never one GEMV per sample as the C code of the thesis did;
* the nonlinearity is NumPy's SIMD ``tanh`` (a scalar ``tanh`` loop, compiled or not, is
  several times slower: it dominated a minibatch at 64 channels), and every operation
  writes into preallocated buffers (``out=``): no allocation per minibatch.

In the transposed form MNE also uses (``V = W^T``, ``u = U^T``): ``V += lrate V (u^T y + B I)``,
the same update as the reference's ``W += lrate (Y U^T + B I) W``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CpuStepper", "ExtendedCpuStepper"]


class CpuStepper:
    """Runs Infomax steps on the CPU for :func:`course_lib.ica.infomax` (``method="cpu"``).

    Parameters
    ----------
    Xs : ndarray of shape (C, N), float64
        Sphered data.
    batch : int
        Samples per minibatch.
    """

    name = "cpu"

    def __init__(self, Xs, batch):
        n_channels, n_samples = Xs.shape
        self.xt = np.ascontiguousarray(Xs.T)
        self.batch = batch
        self.xp = np.empty(((n_samples // batch) * batch, n_channels))  # this step's minibatches, in order
        self.u = np.empty((batch, n_channels))
        self.y = np.empty((batch, n_channels))
        self.g = np.empty((n_channels, n_channels))
        self.tmp = np.empty((n_channels, n_channels))
        self.ysum = np.empty(n_channels)
        self.diagonal = np.arange(n_channels) * (n_channels + 1)

    def step(self, perm, W, bias, lrate, max_weight):
        """One step from ``W``, ``bias``; returns ``(W, bias, blown_up)`` (new arrays)."""
        batch, u, y, g, tmp, ysum = self.batch, self.u, self.y, self.g, self.tmp, self.ysum
        v = np.ascontiguousarray(W.T)
        bias = bias.copy()
        np.take(self.xt, perm[:self.xp.shape[0]], axis=0, out=self.xp)  # one gather per step
        g_flat = g.reshape(-1)
        for start in range(0, self.xp.shape[0], batch):
            np.dot(self.xp[start:start + batch], v, out=u)  # u = U^T, (B, C)
            u += bias
            np.multiply(u, 0.5, out=y)
            np.tanh(y, out=y)
            np.negative(y, out=y)  # y = -tanh(u / 2)
            np.dot(u.T, y, out=g)  # g = u^T y = (Y U^T)^T
            g_flat[self.diagonal] += batch
            np.sum(y, axis=0, out=ysum)
            ysum *= lrate
            bias += ysum
            np.dot(v, g, out=tmp)
            tmp *= lrate
            v += tmp
            if not np.abs(v).max() <= max_weight:  # also catches NaN
                return np.ascontiguousarray(v.T), bias, True
        return np.ascontiguousarray(v.T), bias, False


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
