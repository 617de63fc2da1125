"""Fast CPU Infomax: one compiled call per step, the whole minibatch loop inside it (the strong baseline).

The algorithm and the random numbers are exactly those of the reference
(:mod:`course_lib.ica.reference`); what changes is how a step runs:

* the data live sample-major, ``(N, C)``, so a minibatch reads whole rows ``perm[t]``;
* one compiled call (Numba, cached on disk) runs every minibatch of a step. At the sizes of a
  lesson (16 channels, minibatches of ~80 samples) a minibatch is ~45,000 multiply-adds: the
  fifteen NumPy calls per minibatch of a Python loop cost more than that arithmetic (a profile of
  16 x 20,000: 17,466 minibatches, ~35 us each in Python against ~12 us in one compiled call);
* each product is one BLAS-3 call on the whole minibatch (``U^T = X_b^T W^T`` is
  ``(B, C) x (C, C)``), never one GEMV per sample as the C code of the thesis did; the
  minibatch's rows are gathered into a small buffer that stays in cache. (Plain compiled loops
  for the products were measured too: 2-3 times slower than BLAS even at 16 channels);
* the nonlinearity ``-tanh(u / 2) = (e^-|u| - 1) / (1 + e^-|u|)`` (sign of ``-u``) is computed
  from an exponential written with ``+ - * /`` and a shift only (:func:`_neg_tanh_half`): a
  call to the C library's ``tanh`` per element cannot be vectorised (measured: ~17 us per
  minibatch of 81 x 16, against ~3.6 us for NumPy's SIMD ``tanh`` and ~2.2 us for this loop,
  which the compiler puts on SIMD lanes). It differs from ``np.tanh`` by at most ~2e-16
  (absolute), far below the 1e-10 the tests allow between this version and the reference;
* nothing is allocated per minibatch: every buffer is made once per run.

In the transposed form MNE also uses (``V = W^T``, ``u = U^T``): ``V += lrate V (u^T y + B I)``,
the same update as the reference's ``W += lrate (Y U^T + B I) W``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._docs import fill_doc
from .reference import STEPPER_PARAMETERS

__all__ = ["CpuStepper", "ExtendedCpuStepper"]

# exp(-a) = 2^-k exp(r), r = k ln2 - a in [-ln2 / 2, ln2 / 2]: ln2 split in two (Cody-Waite) so that
# k * _LN2_HI is exact for the k used here (k <= 58), and a degree-13 Taylor polynomial for exp(r)
# (truncation error r^14 / 14! < 5e-18).
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e+00
#: Beyond |u| = 40, -tanh(u / 2) rounds to -1 or 1 in float64 (1 - tanh(20) < 1e-17).
_SATURATE = 40.0


@njit(cache=True, error_model="numpy", inline="always")
def _neg_tanh_half(x):
    """``-tanh(x / 2)`` with ``+ - * /`` and a shift only, so that a loop over it vectorises.

    Absolute error a few units of 1e-16 (the update sums ``u * y``: an absolute error is what counts).
    """
    a = abs(x)
    if not a < _SATURATE:  # also NaN: the blow-up check on the weights catches it
        a = _SATURATE
    k = np.int64(a * _INV_LN2 + 0.5)
    r = (k * _LN2_HI - a) + k * _LN2_LO
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    t = p / np.float64(np.int64(1) << k)  # exp(-a), in (0, 1]
    s = (1.0 - t) / (1.0 + t)  # tanh(a / 2) >= 0
    return -s if x >= 0.0 else s


@njit(cache=True, error_model="numpy")
def _step(xt, perm, v, bias, lrate, max_weight, batch, xb, u, y, g, tmp):
    """Every minibatch of one step (``V``, ``bias`` updated in place).

    Returns the minibatches run when the weights blew up (the step stops there), else 0.

    ``xb``, ``u``, ``y`` (B, C) and ``g``, ``tmp`` (C, C) are work buffers.
    """
    n_channels = v.shape[0]
    for start in range(0, (perm.size // batch) * batch, batch):
        for b in range(batch):  # gather this minibatch's rows (a cache-resident block)
            row = perm[start + b]
            for j in range(n_channels):
                xb[b, j] = xt[row, j]
        np.dot(xb, v, u)  # u = X_b V, (B, C)
        for b in range(batch):
            for j in range(n_channels):
                y[b, j] = _neg_tanh_half(u[b, j] + bias[j])
                u[b, j] += bias[j]
        np.dot(u.T, y, g)  # g = u^T y
        for k in range(n_channels):
            g[k, k] += batch
        for b in range(batch):
            for j in range(n_channels):
                bias[j] += lrate * y[b, j]
        np.dot(v, g, tmp)
        if _add_scaled(v, tmp, lrate, max_weight):
            return start // batch + 1
    return 0


@njit(cache=True, error_model="numpy", inline="always")
def _add_scaled(v, tmp, lrate, max_weight):
    """``V += lrate tmp``; True when a weight leaves ``[-max_weight, max_weight]`` (or is NaN)."""
    n_channels = v.shape[0]
    inside = True
    for i in range(n_channels):
        for j in range(n_channels):
            w = v[i, j] + lrate * tmp[i, j]
            v[i, j] = w
            inside &= abs(w) <= max_weight  # False for NaN
    return not inside


@fill_doc(stepper=STEPPER_PARAMETERS)
class CpuStepper:
    """Runs Infomax steps on the CPU for :func:`course_lib.ica.infomax` (``method="cpu"``).

    Parameters
    ----------
    {stepper}
    """

    name = "cpu"

    def __init__(self, Xs, batch):
        n_channels = Xs.shape[0]
        self.xt = np.ascontiguousarray(Xs.T)
        self.batch = batch
        self.xb = np.empty((batch, n_channels))
        self.u = np.empty((batch, n_channels))
        self.y = np.empty((batch, n_channels))
        self.g = np.empty((n_channels, n_channels))
        self.tmp = np.empty((n_channels, n_channels))
        self.minibatches_run = 0

    def step(self, perm, W, bias, lrate, max_weight):
        """One step from ``W``, ``bias``; returns ``(W, bias, blown_up)`` (new arrays)."""
        v = np.ascontiguousarray(W.T)
        bias = bias.copy()
        perm = np.ascontiguousarray(perm, dtype=np.int64)
        blown_at = _step(self.xt, perm, v, bias, float(lrate), float(max_weight), self.batch, self.xb, self.u,
                         self.y, self.g, self.tmp)
        self.minibatches_run = blown_at if blown_at else perm.size // self.batch
        return np.ascontiguousarray(v.T), bias, bool(blown_at)


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
        self.minibatches_run = 0

    def step(self, perm, W, bias, lrate, max_weight):
        """One step from ``W``, ``bias``; returns ``(W, bias, blown_up)``."""
        block, ext = self.block, self.ext
        v = np.ascontiguousarray(W.T)
        bias = bias.copy()
        n_blocks = perm.size // block
        for blk in range(n_blocks):
            self.minibatches_run = blk + 1
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
