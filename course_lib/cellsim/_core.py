"""The model's per-cell rules and random numbers, written once and compiled three ways.

:func:`build` turns the plain Python functions below into a set of functions for one
target: ``"python"`` (called as they are, by the event-driven reference), ``"cpu"``
(``numba.njit``, by the compiled CPU simulator) and ``"cuda"`` (device functions, by
the kernels). Because every target runs the same arithmetic on the same inputs, the
three give the same bits:

* the random numbers are *counter-based*: Philox4x32-10 (Salmon et al., SC'11, the
  generator behind cuRAND's ``curand_init(seed, subsequence, ...)`` Philox states) maps
  a 128-bit counter and a 64-bit key to 128 random bits with 32-bit integer multiplies,
  adds and xors only. The counter is (cell id, generation, stream), the key the seed:
  a cell's numbers do not depend on which thread, block, batch or backend computes it;
* the normal deviates come from a tabulated inverse CDF (:func:`normal_table`), so only
  ``+ - * /`` are used: IEEE 754 rounds those exactly on every device, while ``log``,
  ``cos`` and ``exp`` (Box-Muller) are only accurate to about an ulp and differ between
  the GPU's libdevice and the CPU's libm;
* on a GPU every product that is followed by an addition goes through ``dmul_rn``: the
  CUDA compiler otherwise contracts ``a * b + c`` into one fused multiply-add, which
  rounds once instead of twice (``cuda.compile_ptx`` shows ``fma.rn.f64`` for ``a * b + c``).

Cell ids are the fixed slots of the thesis's binary tree: the initial cells are
0 .. L - 1, and the daughters of cell ``k`` are ``2k`` and ``2k + 1`` one generation
later. The pair (id, generation) names one node of the division tree.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

__all__ = ["DIVIDE", "DISCARD", "FATE_RULE", "RECORD", "THESIS_FATE_RULE",
           "MIN_TIMER", "STREAM_TIMER", "STREAM_TYPE", "TABLE_SIZE", "build",
           "normal_table", "seed_words"]

#: Fates of a cell (the thesis's Alive / Inactive / Remove).
DIVIDE, RECORD, DISCARD = 0, 1, 2

#: The record/discard rule of every simulator of the unit (reference, CPU version, kernels), in one sentence.
#: The lesson, the quiz and the predictions quote it verbatim; ``fate`` below implements it, time first.
FATE_RULE = (
    "A cell whose next division would come after tau_max (or never: a quiescent cell) is recorded with its "
    "fluorescence; otherwise, if its daughters would have phi / 2 < phi_min, it is discarded (neither it nor "
    "its daughters reach the output); otherwise it divides at tau + timer into two daughters with phi / 2."
)

#: How the thesis writes the same rule, and where the course decides what it leaves open.
THESIS_FATE_RULE = (
    "The thesis states the rule as the states of the two daughter slots 2i and 2i + 1 of cell i: both Alive if "
    "tau + mu <= tau_max; slot 2i Inactive (the cell itself, kept for the output) and slot 2i + 1 Remove if "
    "tau + mu >= tau_max; both Remove if phi / 2 <= phi_min, that is, the cell divides and both daughters are "
    "removed, which the course calls discarding the cell. Its conditions overlap at equality and it does not "
    "say which wins when a late division would also make daughters below phi_min; the course checks time "
    "first (a cell alive at tau_max is recorded whatever its phi) and divides at equality (tau + timer == "
    "tau_max, phi / 2 == phi_min)."
)
#: Third counter word: which random number of a cell is drawn.
STREAM_TIMER, STREAM_TYPE = 0, 1
#: Intervals of the tabulated inverse normal CDF (a power of two: u * TABLE_SIZE is exact).
TABLE_SIZE = 4096
#: A division timer is a draw of a normal truncated to > 0; a draw that rounds to <= 0 becomes this (hours).
MIN_TIMER = 1e-9

_M0 = 0xD2511F53
_M1 = 0xCD9E8D57
_W0 = 0x9E3779B9
_W1 = 0xBB67AE85
_MASK32 = 0xFFFFFFFF


def seed_words(seed: int) -> tuple:
    """The Philox key of a seed: its low and high 32-bit words (as Python ints)."""
    seed = int(seed)
    return seed & _MASK32, (seed >> 32) & _MASK32


def normal_table(size: int = TABLE_SIZE) -> np.ndarray:
    """Inverse CDF of the standard normal at ``k / size``, k = 0 .. size (float64).

    Linear interpolation in this table turns a uniform number into a normal deviate.
    The two end points (-inf and +inf) are replaced by values that give the first and
    last intervals the right mean: ``E[Z | Z < q1]`` is ``(q0 + q1) / 2``.

    Returns
    -------
    ndarray of shape (size + 1,), float64
    """
    # scipy.special, not scipy.stats: importing scipy.stats costs a graded notebook's process a second or
    # more of CPU. The density is computed as scipy.stats.norm.pdf computes it (on an array: NumPy's scalar
    # exp may differ in the last bit), and norm.cdf is ndtr: the table is the same to the bit.
    from scipy.special import ndtr, ndtri

    q = ndtri(np.arange(size + 1, dtype=np.float64) / size)
    q1 = np.asarray(q[1])
    pdf = np.exp(-q1**2 / 2.0) / np.sqrt(2 * np.pi)
    tail_mean = (-pdf / ndtr(q1))[()]  # E[Z | Z < q1]
    q[0] = 2.0 * tail_mean - q1
    q[size] = -q[0]
    return q


# ---------------------------------------------------------------------------------------------
# Plain Python definitions. Every constant is a NumPy uint64 or float64 so that Numba types the
# arithmetic as 64-bit unsigned integers (mixing uint64 with a plain int literal gives float64).
# ---------------------------------------------------------------------------------------------


def build(target: str) -> SimpleNamespace:
    """The model's device-level functions compiled for ``target``.

    Parameters
    ----------
    target : {"python", "cpu", "cuda"}
        ``"cuda"`` makes inlined device functions (in the simulator: plain calls).

    Returns
    -------
    SimpleNamespace
        ``philox``, ``uniform``, ``cell_uniform``, ``division_timer``, ``initial_type``,
        ``initial_cell``, ``fate``, ``bin_index`` and ``mul`` (see their docstrings in this module's source).
    """
    if target == "python":
        def jit(f):
            return f
        mul = _mul_plain
    elif target == "cpu":
        import numba

        def jit(f):
            return numba.njit(f)
        mul = jit(_mul_plain)
    elif target == "cuda":
        from numba import cuda

        from .. import device

        def jit(f):
            return cuda.jit(device=True, inline=True)(f)
        if device.is_simulator():
            mul = jit(_mul_plain)
        else:
            from numba.cuda import libdevice

            mul = libdevice.dmul_rn  # a product that is never fused into an FMA
    else:
        raise ValueError(f"target must be 'python', 'cpu' or 'cuda', got {target!r}")

    m0, m1 = np.uint64(_M0), np.uint64(_M1)
    w0, w1 = np.uint64(_W0), np.uint64(_W1)
    mask32 = np.uint64(_MASK32)
    shift32 = np.uint64(32)

    def philox(c0, c1, c2, c3, k0, k1):
        """Philox4x32-10: four 32-bit counter words and two key words (uint64 holding 32 bits)
        -> four random 32-bit words (uint64)."""
        for _ in range(10):
            p0 = m0 * c0  # both factors < 2**32: the product fits in 64 bits
            p1 = m1 * c2
            hi0 = p0 >> shift32
            lo0 = p0 & mask32
            hi1 = p1 >> shift32
            lo1 = p1 & mask32
            c0 = hi1 ^ c1 ^ k0
            c1 = lo1
            c2 = hi0 ^ c3 ^ k1
            c3 = lo0
            k0 = (k0 + w0) & mask32
            k1 = (k1 + w1) & mask32
        return c0, c1, c2, c3

    philox_j = jit(philox)

    def uniform(a, b):
        """A float64 in [0, 1) from two random 32-bit words: 27 + 26 = 53 random bits (exact)."""
        high = a >> np.uint64(5)
        low = b >> np.uint64(6)
        return (mul(np.float64(high), 67108864.0) + np.float64(low)) * (1.0 / 9007199254740992.0)

    uniform_j = jit(uniform)

    def cell_uniform(cell_id, generation, stream, k0, k1):
        """The uniform number ``stream`` of cell (cell_id, generation) under key (k0, k1)."""
        cid = np.uint64(cell_id)
        r0, r1, r2, r3 = philox_j(cid & mask32, cid >> shift32, np.uint64(generation), np.uint64(stream),
                                  np.uint64(k0), np.uint64(k1))
        return uniform_j(r0, r1)

    cell_uniform_j = jit(cell_uniform)

    def division_timer(u, mean, std, cdf_at_zero, table):
        """Time to the next division: Normal(mean, std) truncated to > 0, by inverse CDF of u.

        ``u`` in [0, 1) is mapped to ``cdf_at_zero + u * (1 - cdf_at_zero)``: the part of the
        normal above zero, so no draw is rejected (no loop, no divergence in a warp)."""
        p = cdf_at_zero + mul(u, 1.0 - cdf_at_zero)
        n = table.shape[0] - 1
        t = p * n
        k = int(t)
        if k >= n:
            k = n - 1
        frac = t - k
        z = table[k] + mul(frac, table[k + 1] - table[k])
        x = mean + mul(std, z)
        if x <= 0.0:
            x = 1e-9
        return x

    division_timer_j = jit(division_timer)

    def initial_type(u, type_params):
        """Type of an initial cell: the first t with u < type_params[t, 0] (cumulative proportions;
        the last type if none)."""
        n = type_params.shape[0]
        for t in range(n - 1):
            if u < type_params[t, 0]:
                return t
        return n - 1

    initial_type_j = jit(initial_type)

    def initial_cell(cell_id, cumulative, fluorescence, type_params, k0, k1):
        """Fluorescence and type of initial cell ``cell_id`` (0 <= cell_id < L).

        Cell j belongs to the first histogram bin b with ``cumulative[b] > j`` (binary search
        over the cumulative counts), and draws its type from its own random stream."""
        lo = 0
        hi = cumulative.shape[0] - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if cumulative[mid] > cell_id:
                hi = mid
            else:
                lo = mid + 1
        u = cell_uniform_j(cell_id, 0, 1, k0, k1)
        return fluorescence[lo], initial_type_j(u, type_params)

    def fate(cell_id, generation, phi, tau, cell_type, type_params, table, k0, k1, tau_max, phi_min):
        """Fate of one cell and the time of its division.

        ``type_params[t]`` holds (cumulative proportion, mean, std, normal CDF at zero) of
        type t; a negative mean marks a quiescent type. Returns ``(fate, division_time)`` by
        :data:`FATE_RULE`, time checked first: RECORD when ``tau + timer > tau_max`` (or the type
        never divides), else DISCARD when ``phi / 2 < phi_min``, else DIVIDE. The division time is
        ``tau + timer`` (inf for quiescent cells).
        """
        mean = type_params[cell_type, 1]
        if mean < 0.0:
            return 1, math.inf
        u = cell_uniform_j(cell_id, generation, 0, k0, k1)
        timer = division_timer_j(u, mean, type_params[cell_type, 2], type_params[cell_type, 3], table)
        when = tau + timer
        if when > tau_max:
            return 1, when
        if phi * 0.5 < phi_min:
            return 2, when
        return 0, when

    def bin_index(x, edges):
        """Histogram bin of x: b with edges[b] <= x < edges[b + 1], the last bin closed;
        ``edges.shape[0] - 1`` (one past the last bin) when x is outside [edges[0], edges[-1]]."""
        n_bins = edges.shape[0] - 1
        if x < edges[0] or x > edges[n_bins]:
            return n_bins
        if x == edges[n_bins]:
            return n_bins - 1
        lo = 0
        hi = n_bins  # invariant: edges[lo] <= x < edges[hi]
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if edges[mid] <= x:
                lo = mid
            else:
                hi = mid
        return lo

    return SimpleNamespace(philox=philox_j, uniform=uniform_j, cell_uniform=cell_uniform_j,
                           division_timer=division_timer_j, initial_type=initial_type_j,
                           initial_cell=jit(initial_cell), fate=jit(fate),
                           bin_index=jit(bin_index), mul=mul)


def _mul_plain(a, b):
    return a * b
