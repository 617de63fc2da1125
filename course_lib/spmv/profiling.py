"""Measured counts of the SpMV kernels: the simulator's profiler run on a real matrix.

:func:`measure` launches the kernels of one method under :func:`course_lib.sim.profile`
and reads, from the line that does the multiply-add, the lane-steps a GPU would issue
and how many of them do useful work (SIMT efficiency), and over all the loads how many
32-byte sectors each warp-level load touches (4 for 32 consecutive float32: coalesced). The tests check that
these measurements equal the counting model of :mod:`course_lib.spmv.model`.
"""

from __future__ import annotations

import numpy as np

from .api import as_csr, ell_split, hyb_split
from .model import WARP

__all__ = ["MEASURED_METHODS", "measure"]

MEASURED_METHODS = ("csr_scalar", "csr_vector", "coo", "ell", "hyb")

# The line of each kernel that multiplies and adds one non-zero, and the line whose
# executions are the loop's issue slots (for ELL, padding slots run the index load too).
_CSR_LINE = "total += data[k] * x[indices[k]]"
_ELL_SLOT_LINE = "col = ell_indices[slot, row]"
_ELL_LINE = "total += ell_data[slot, row] * x[col]"
_COO_LINE = "products[t] = data[k] * x[cols[k]]"


def _counts(report, useful_line, issue_line=None):
    useful = report.line(useful_line)
    issue = report.line(issue_line) if issue_line else useful
    return useful.active_lanes, WARP * issue.warp_instructions


def measure(A, method, K=None, block=64):
    """Profile one SpMV with ``method`` in the simulator and return its measured counts.

    Parameters
    ----------
    A : scipy sparse matrix of shape (R, C)
        Keep it small (hundreds of rows): every simulated thread is traced.
    method : {"csr_scalar", "csr_vector", "coo", "ell", "hyb"}
    K : int, optional
        ELL width for ``"hyb"`` (default: the Bell-Garland rule).
    block : int
        Threads per block, a multiple of 32.

    Returns
    -------
    dict
        ``useful`` (lanes that multiplied a non-zero), ``issued`` (32 x warp-level
        executions of the loop), ``efficiency`` (useful / issued), ``sectors_per_request``
        (32-byte sectors per warp-level global load request, over every load of the
        launches: 4 when 32 lanes read 32 consecutive float32) and ``reports`` (the
        profiler's reports, one per kernel launched).
    """
    from ..sim import profile
    from . import kernels

    if method not in MEASURED_METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {MEASURED_METHODS}")
    if block % WARP:
        raise ValueError(f"block must be a multiple of {WARP}, got {block}")
    csr = as_csr(A, np.float32)
    n_rows, n_cols = csr.shape
    x = np.ones(n_cols, np.float32)
    y = np.zeros(n_rows, np.float32)
    useful = issued = 0
    reports = []
    if method in ("csr_scalar", "csr_vector"):
        threads = n_rows * (WARP if method == "csr_vector" else 1)
        kernel = kernels.csr_scalar_kernel if method == "csr_scalar" else kernels.csr_vector_kernel
        report = profile(kernel, -(-threads // block), block, csr.indptr, csr.indices, csr.data, x, y)
        useful, issued = _counts(report, _CSR_LINE)
        reports.append(report)
    else:
        if method == "coo":
            rows = np.repeat(np.arange(n_rows, dtype=np.int32), np.diff(csr.indptr))
            coo = (rows, csr.indices, csr.data)
        else:
            split = ell_split(csr) if method == "ell" else hyb_split(csr, K)
            coo = (split.coo_rows, split.coo_cols, split.coo_data)
            if split.K:
                report = profile(kernels.ell_kernel, -(-n_rows // block), block, split.ell_indices, split.ell_data,
                                 x, y)
                useful, issued = _counts(report, _ELL_LINE, _ELL_SLOT_LINE)
                reports.append(report)
        if coo[2].size:
            report = profile(kernels.coo_segmented_kernel(block), -(-coo[2].size // block), block, *coo, x, y)
            more_useful, more_issued = _counts(report, _COO_LINE)
            useful, issued = useful + more_useful, issued + more_issued
            reports.append(report)
    sectors = sum(r.total.global_load_sectors for r in reports)
    requests = sum(r.total.global_load_requests for r in reports)
    return {"method": method, "useful": int(useful), "issued": int(issued),
            "efficiency": useful / issued if issued else 1.0,
            "sectors_per_request": sectors / requests if requests else float("nan"), "reports": reports}
