"""Counting models of Unit 2: bytes per SpMV, SIMT efficiency, and the hybrid's K.

- The byte model of CUSP (Bell & Garland): the bytes one SpMV must move for each
  format, which against the device's bandwidth gives the roofline of a memory-bound
  kernel (CSR, fp32: about 12 bytes and 2 flops per non-zero).
- SIMT efficiency: the fraction of lane-steps that do useful work when a warp's 32
  lanes advance in lockstep. Thread per row runs each warp as long as its longest row;
  thread per element does not care about rows at all.
- The cost model behind the Bell-Garland rule: thread per row (ELL) is about 3x faster
  per entry than thread per element (COO) on balanced rows, so moving column K into
  the ELL part pays off while more than one third of the rows still have an entry
  there. :func:`bell_garland_k` is exactly the minimiser of :func:`k_sweep`'s cost.
"""

from __future__ import annotations

import math

import numpy as np

import scipy.sparse as sp

from .._validate import check_array, check_choice, check_dtype, check_float, check_int, check_positive_int

__all__ = [
    "REDUCTION_STEPS",
    "SPEED_RATIO",
    "bell_garland_k",
    "bytes_per_spmv",
    "coo_bytes",
    "csr_bytes",
    "ell_bytes",
    "gflops_roofline",
    "k_sweep",
    "modelled_cost",
    "row_lengths",
    "simt_efficiency",
]

#: Thread per row is about this many times faster per entry than thread per element on
#: balanced rows (Bell & Garland, SC09).
SPEED_RATIO = 3.0
WARP = 32
#: Shuffle steps of the warp-per-row reduction: log2(32).
REDUCTION_STEPS = 5

_METHODS = ("csr_scalar", "csr_vector", "coo", "coo_atomic", "ell", "hyb")


def row_lengths(A):
    """Non-zeros per row.

    Parameters
    ----------
    A : scipy sparse matrix of shape (R, C), or array_like of shape (R,)
        A matrix, or row lengths already (returned as int64).

    Returns
    -------
    ndarray of shape (R,), int64
    """
    if sp.issparse(A):
        from ._checks import as_csr

        return np.diff(as_csr(A).indptr).astype(np.int64)
    if A is None or (isinstance(A, np.ndarray) and A.ndim != 1):
        raise ValueError(f"A must be a SciPy sparse matrix or a 1-D array of row lengths, got "
                         f"{'None' if A is None else f'an array of shape {A.shape}'}")
    lengths = check_array(A, "A", ndim=1)
    if lengths.size == 0:
        return np.zeros(0, np.int64)
    if lengths.dtype.kind not in "iu":
        raise ValueError(f"A must have an integer dtype (row lengths), got dtype {lengths.dtype}")
    if lengths.min() < 0:
        raise ValueError(f"A (row lengths) must be non-negative, got {lengths.min()}")
    return lengths.astype(np.int64)


def bell_garland_k(A, fraction=1.0 / SPEED_RATIO):
    """The hybrid's ELL width: the largest K such that at least ``fraction * R`` rows have >= K entries.

    Parameters
    ----------
    A : scipy sparse matrix or array_like of shape (R,)
        The matrix or its row lengths.
    fraction : float
        1 / (speed of thread per row relative to thread per element); 1/3 in the source.

    Returns
    -------
    int
        0 for a matrix without rows.

    Examples
    --------
    >>> bell_garland_k([1, 1, 2, 2, 3, 9])   # 2 of 6 rows have >= 3 entries
    3
    """
    lengths = row_lengths(A)
    fraction = check_float(fraction, "fraction", minimum=0, maximum=1, min_inclusive=False)
    if lengths.size == 0:
        return 0
    needed = math.ceil(fraction * lengths.size - 1e-9)
    return int(np.sort(lengths)[::-1][max(needed, 1) - 1])


def csr_bytes(n_rows, nnz, index_bytes=4, value_bytes=4):
    """Bytes of one CSR SpMV: ``2*idx*R + idx*Z + 2*val*Z + 2*val*R`` (row pointers,
    column indices, values and x gathers, y)."""
    return 2 * index_bytes * n_rows + index_bytes * nnz + 2 * value_bytes * nnz + 2 * value_bytes * n_rows


def coo_bytes(nnz, occupied_rows, index_bytes=4, value_bytes=4):
    """Bytes of one COO SpMV: ``2*idx*Z + 2*val*Z + 2*val*R_occupied``."""
    return 2 * index_bytes * nnz + 2 * value_bytes * nnz + 2 * value_bytes * occupied_rows


def ell_bytes(n_rows, K, nnz, index_bytes=4, value_bytes=4):
    """Bytes of one ELL SpMV, padding counted: ``val*R*K + idx*Z + val*Z + 2*val*R``."""
    return value_bytes * n_rows * K + index_bytes * nnz + value_bytes * nnz + 2 * value_bytes * n_rows


def bytes_per_spmv(A, method, K=None, dtype=None, index_bytes=4):
    """Bytes one SpMV moves with ``method`` (the CUSP byte model).

    Parameters
    ----------
    A : scipy sparse matrix of shape (R, C)
    method : {"csr_scalar", "csr_vector", "coo", "coo_atomic", "ell", "hyb", "merge_path"}
        ``"merge_path"`` moves the CSR arrays (its tile plan, 12 bytes per tile of
        block x 8 steps, and the split rows' sums are left out).
    K : int, optional
        ELL width of ``"hyb"`` (default :func:`bell_garland_k`); ``"ell"`` uses the
        longest row.
    dtype : float32 or float64, optional
        Value type; defaults to ``A.dtype``.
    index_bytes : int

    Returns
    -------
    int
    """
    check_choice(method, "method", _METHODS + ("merge_path",))
    index_bytes = check_positive_int(index_bytes, "index_bytes")
    lengths = row_lengths(A)
    value_bytes = (np.dtype(A.dtype) if dtype is None else check_dtype(dtype)).itemsize
    n_rows, nnz = lengths.size, int(lengths.sum())
    if method in ("csr_scalar", "csr_vector", "merge_path"):
        return csr_bytes(n_rows, nnz, index_bytes, value_bytes)
    if method in ("coo", "coo_atomic"):
        return coo_bytes(nnz, int(np.count_nonzero(lengths)), index_bytes, value_bytes)
    if method == "ell":
        K = int(lengths.max(initial=0))
    else:
        K = bell_garland_k(lengths) if K is None else check_int(K, "K", minimum=0)
    in_ell = np.minimum(lengths, K)
    rest = lengths - in_ell
    return (ell_bytes(n_rows, K, int(in_ell.sum()), index_bytes, value_bytes)
            + coo_bytes(int(rest.sum()), int(np.count_nonzero(rest)), index_bytes, value_bytes))


def gflops_roofline(bytes_moved, nnz, bandwidth):
    """Best possible GFLOP/s of a memory-bound SpMV (2 flops per non-zero).

    Parameters
    ----------
    bytes_moved : float
        Bytes per SpMV (:func:`bytes_per_spmv`).
    nnz : int
    bandwidth : float
        Bytes per second.
    """
    bytes_moved = check_float(bytes_moved, "bytes_moved", minimum=0, min_inclusive=False)
    nnz = check_int(nnz, "nnz", minimum=0)
    bandwidth = check_float(bandwidth, "bandwidth", minimum=0, min_inclusive=False)
    return 2 * nnz / (bytes_moved / bandwidth) / 1e9


def _warp_max(lengths, warp):
    """Longest row of each group of ``warp`` consecutive rows."""
    padded = np.zeros(-(-lengths.size // warp) * warp, dtype=np.int64)
    padded[:lengths.size] = lengths
    return padded.reshape(-1, warp).max(axis=1)


def simt_efficiency(A, method, K=None, warp=WARP):
    """Useful lane-steps over issued lane-steps of the multiply loop of each kernel.

    A warp issues one step for all its lanes at once; a lane with nothing to do still
    occupies its slot. Counts per SpMV:

    - ``"csr_scalar"``: each warp of 32 rows runs ``max(len)`` steps;
    - ``"csr_vector"``: each row runs ``ceil(len / 32)`` warp steps (the 5 shuffle steps
      of the reduction are reported apart);
    - ``"coo"``, ``"coo_atomic"``: ``ceil(Z / 32)`` steps, whatever the rows;
    - ``"ell"``: ``ceil(R / 32) * K`` steps, padding included (K = longest row);
    - ``"hyb"``: ELL with width K (default :func:`bell_garland_k`) plus COO for the rest.

    Parameters
    ----------
    A : scipy sparse matrix or array_like of shape (R,)
        The matrix or its row lengths.
    method : str
    K : int, optional
        Only for ``"hyb"``.
    warp : int

    Returns
    -------
    dict
        ``useful`` (non-zeros processed), ``issued`` (lane-steps), ``efficiency``
        (useful / issued, 1.0 when nothing is issued), ``warp_steps`` and
        ``reduction_steps`` (shuffle steps, ``"csr_vector"`` only).
    """
    check_choice(method, "method", _METHODS)
    warp = check_positive_int(warp, "warp")
    if K is not None and method != "hyb":
        raise ValueError(f"K only applies to method 'hyb', not {method!r}")
    lengths = row_lengths(A)
    nnz = int(lengths.sum())
    reduction = 0
    if method == "csr_scalar":
        steps = int(_warp_max(lengths, warp).sum())
    elif method == "csr_vector":
        steps = int((-(-lengths // warp)).sum())
        reduction = REDUCTION_STEPS * lengths.size
    elif method in ("coo", "coo_atomic"):
        steps = -(-nnz // warp)
    elif method == "ell":
        steps = -(-lengths.size // warp) * int(lengths.max(initial=0))
    else:
        K = bell_garland_k(lengths) if K is None else check_int(K, "K", minimum=0)
        rest = int(np.maximum(lengths - K, 0).sum())
        steps = -(-lengths.size // warp) * K + -(-rest // warp)
    issued = steps * warp
    return {"method": method, "useful": nnz, "issued": issued, "efficiency": nnz / issued if issued else 1.0,
            "warp_steps": steps, "reduction_steps": reduction}


def modelled_cost(A, method, K=None, speed_ratio=SPEED_RATIO, warp=WARP):
    """Relative run time of one SpMV, in warp steps of the thread-per-row loop.

    A thread-per-row step (CSR scalar, ELL) costs 1, a thread-per-element step costs
    ``speed_ratio`` (the product plus its share of the segmented reduction), a shuffle
    step of the warp-per-row reduction costs 1. The model ignores memory traffic; see
    :func:`bytes_per_spmv` for that side.

    Returns
    -------
    float
    """
    check_choice(method, "method", _METHODS)
    speed_ratio = check_float(speed_ratio, "speed_ratio", minimum=0, min_inclusive=False)
    eff = simt_efficiency(A, method, K=K if method == "hyb" else None, warp=warp)
    lengths = row_lengths(A)
    if method in ("coo", "coo_atomic"):
        return speed_ratio * eff["warp_steps"]
    if method == "hyb":
        K = bell_garland_k(lengths) if K is None else check_int(K, "K", minimum=0)
        ell_steps = -(-lengths.size // warp) * K
        return ell_steps + speed_ratio * (eff["warp_steps"] - ell_steps)
    return float(eff["warp_steps"] + eff["reduction_steps"])


def k_sweep(A, Ks=None, speed_ratio=SPEED_RATIO):
    """The hybrid's cost for every ELL width K: both failure modes in one table.

    The cost, in thread-per-row entry steps, is ``R * K + speed_ratio * Z_coo(K)``:
    the ELL part processes R * K slots (padding included), the COO part its ``Z_coo``
    entries, each ``speed_ratio`` times dearer. Too small a K sends regular entries to
    the slow COO path (poor peak); too large a K pads every row (load imbalance). The
    cost falls while more than ``R / speed_ratio`` rows have an entry in column K + 1,
    so :func:`bell_garland_k` minimises it.

    Parameters
    ----------
    A : scipy sparse matrix or array_like of shape (R,)
    Ks : sequence of int, optional
        Widths to evaluate; default 0 .. longest row.
    speed_ratio : float

    Returns
    -------
    dict of ndarrays
        ``K``, ``ell_slots`` (R * K), ``ell_nnz``, ``coo_nnz``, ``padding`` (fraction of
        the ELL slots that are padding), ``cost`` and ``bytes`` (fp32 byte model);
        plus ``best_K`` (the Bell-Garland K).
    """
    lengths = row_lengths(A)
    speed_ratio = check_float(speed_ratio, "speed_ratio", minimum=0, min_inclusive=False)
    n_rows, nnz = lengths.size, int(lengths.sum())
    Ks = np.arange(int(lengths.max(initial=0)) + 1) if Ks is None else np.array([check_int(k, "Ks", minimum=0) for k in Ks])
    # Entries in the first K columns of the row profile, for every K at once.
    counts = np.bincount(lengths, minlength=int(Ks.max(initial=0)) + 2)
    rows_at_least = n_rows - np.concatenate([[0], np.cumsum(counts)])[:-1]  # rows with len >= j
    ell_nnz_by_k = np.concatenate([[0], np.cumsum(rows_at_least[1:])])
    ell_nnz = np.array([ell_nnz_by_k[k] if k < ell_nnz_by_k.size else nnz for k in Ks], dtype=np.int64)
    ell_nnz = np.minimum(ell_nnz, nnz)
    slots = n_rows * Ks
    coo_nnz = nnz - ell_nnz
    with np.errstate(invalid="ignore", divide="ignore"):
        padding = np.where(slots > 0, 1.0 - ell_nnz / np.maximum(slots, 1), 0.0)
    occupied_coo = np.array([int(np.count_nonzero(lengths > k)) for k in Ks], dtype=np.int64)
    byte_counts = np.array([ell_bytes(n_rows, int(k), int(e)) + coo_bytes(int(c), int(o))
                            for k, e, c, o in zip(Ks, ell_nnz, coo_nnz, occupied_coo)], dtype=np.int64)
    return {
        "K": Ks,
        "ell_slots": slots,
        "ell_nnz": ell_nnz,
        "coo_nnz": coo_nnz,
        "padding": padding,
        "cost": slots + speed_ratio * coo_nnz,
        "bytes": byte_counts,
        "best_K": bell_garland_k(lengths, 1.0 / speed_ratio),
    }
