"""Problem set 2 (``solutions/ps2_spmv.ipynb``): questions, visible and hidden tests.

- ``ps2.q1`` (4 points): the CSR thread-per-row kernel. Answer:
  ``check("ps2.q1", csr_scalar)``; the grader launches it with its own block sizes.
- ``ps2.q2`` (4 points): the COO thread-per-element kernel with a segmented reduction
  in shared memory. Answer: ``check("ps2.q2", coo_segmented, block=BLOCK)``.
- ``ps2.q3`` (2 points): choosing the hybrid's K, justified by a cost model that is
  checked numerically. Answer: ``{"hyb_cost": cost(row_lengths, K), "choose_k": f(row_lengths)}``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .. import device
from ..grading.core import Question, Test, TestFailure, as_student_kernel, compare_arrays
from .api import as_csr
from .data import empty_rows_and_long_row, laplacian, power_law_rows, random_balanced, row_length_family
from .model import SPEED_RATIO, k_sweep
from .reference import spmv_reference

PROBLEM_SET = "ps2"
#: Tolerance relative to max |y| of the float64 reference: float32 sums in any order pass.
RTOL = 1e-4
#: Block sizes the grader launches the CSR kernel with.
CSR_BLOCKS = (32, 64)


def _x(n_cols, rng):
    return rng.uniform(-1.0, 1.0, n_cols).astype(np.float32)


def _check_result(got, A, x, name):
    compare_arrays(got, spmv_reference(A, x), rtol=RTOL, atol=1e-6, name=name)


def _race_check(kernel, griddim, blockdim, *args):
    """Run a launch under the simulator's race, barrier and bounds checker."""
    from .. import sim

    report = sim.check(kernel, griddim, blockdim, *args, seed=1)
    if not report.ok:
        raise TestFailure(str(report))


# ----------------------------------------------------------------------------- q1
def _prepare_csr(kernel):
    return as_student_kernel(kernel, "CSR thread-per-row kernel")


def _run_csr(kernel, A, x, block):
    from numba import cuda

    A = as_csr(A, np.float32)
    n_rows = A.shape[0]
    d_y = cuda.to_device(np.full(n_rows, np.nan, np.float32))  # unwritten rows show up as NaN
    kernel[-(-n_rows // block), block](cuda.to_device(A.indptr), cuda.to_device(A.indices), cuda.to_device(A.data),
                                       cuda.to_device(x), d_y)
    return d_y.copy_to_host()


def _csr_test(make, label, block=CSR_BLOCKS[0], hidden=False):
    def run(kernel, rng):
        A = make(rng)
        x = _x(A.shape[1], rng)
        _check_result(_run_csr(kernel, A, x, block), A, x, "y" if hidden else f"y for a {A.shape} matrix")

    hint = ("guard the threads past the last row (row >= number of rows) and loop from indptr[row] to "
            "indptr[row + 1] (excluded); every row, even an empty one, must be written")
    return Test(label, run, hidden=hidden, hint=hint)


def _csr_race(kernel, rng):
    A = as_csr(empty_rows_and_long_row(37, 20, seed=int(rng.integers(1 << 30))), np.float32)
    _race_check(kernel, 2, 32, A.indptr, A.indices, A.data, _x(37, rng), np.zeros(37, np.float32))


_Q1_TESTS = [
    _csr_test(lambda rng: sp.csr_matrix(np.array([[2.5]], np.float32)), "a 1 x 1 matrix"),
    _csr_test(lambda rng: empty_rows_and_long_row(31, 40, seed=1), "31 rows (block - 1), empty rows, a long row"),
    _csr_test(lambda rng: random_balanced(33, 4, n_cols=50, seed=2), "33 rows (block + 1): a second block"),
    _csr_test(lambda rng: power_law_rows(70, 5.0, 2.2, seed=3), "power-law rows, 70 x 70", block=64),
    _csr_test(lambda rng: power_law_rows(int(rng.integers(2, 100)), 4.0, 2.1, seed=int(rng.integers(1 << 30))),
              "hidden: random power-law matrix", block=CSR_BLOCKS[1], hidden=True),
    _csr_test(lambda rng: random_balanced(device.pick(sim=int(rng.integers(65, 130)), gpu=100_003), 7,
                                          n_cols=int(rng.integers(10, 200)), seed=int(rng.integers(1 << 30))),
              "hidden: larger rectangular matrix", hidden=True),
]
if device.is_simulator():
    _Q1_TESTS.append(Test("hidden: race and bounds check", _csr_race, hidden=True,
                          hint="a thread past the last row must not read indptr[row + 1]"))

Q1 = Question("ps2.q1", "CSR thread-per-row kernel", 4, tuple(_Q1_TESTS), prepare=_prepare_csr)


# ----------------------------------------------------------------------------- q2
def _prepare_coo(kernel, block=None):
    as_student_kernel(kernel, "COO segmented-reduction kernel")
    if block is None or isinstance(block, bool) or int(block) != block or not 1 <= block <= 1024:
        raise TestFailure("pass the block size your kernel uses, e.g. check('ps2.q2', coo_segmented, block=BLOCK); "
                          f"got block={block!r}")
    return kernel, int(block)


def _coo_arrays(A):
    A = as_csr(A, np.float32)
    rows = np.repeat(np.arange(A.shape[0], dtype=np.int32), np.diff(A.indptr))
    return A, rows


def _run_coo(answer, A, x):
    from numba import cuda

    kernel, block = answer
    A, rows = _coo_arrays(A)
    d_y = cuda.to_device(np.zeros(A.shape[0], np.float32))
    if A.nnz:
        kernel[-(-A.nnz // block), block](cuda.to_device(rows), cuda.to_device(A.indices), cuda.to_device(A.data),
                                          cuda.to_device(x), d_y)
    return d_y.copy_to_host()


def _long_rows(n_rows, long_length, seed):
    """Rows of 1-3 entries with every fifth row ``long_length`` long (runs crossing blocks)."""
    lengths = np.random.default_rng(seed).integers(1, 4, n_rows)
    lengths[::5] = long_length
    rng = np.random.default_rng(seed + 1)
    rows = np.repeat(np.arange(n_rows), lengths)
    cols = np.concatenate([rng.choice(long_length + 3, n, replace=False) for n in lengths])
    return sp.csr_matrix((rng.uniform(-1, 1, rows.size), (rows, cols)), shape=(n_rows, long_length + 3))


def _coo_test(make, label, hidden=False):
    def run(answer, rng):
        _kernel, block = answer
        A = make(block, rng)
        x = _x(A.shape[1], rng)
        _check_result(_run_coo(answer, A, x), A, x, "y" if hidden else f"y for a {A.shape} matrix with {A.nnz} "
                                                                        "non-zeros")

    hint = ("a row's run can start in one block and end in the next: the last thread of every run must ADD its "
            "sum to y with cuda.atomic.add (y starts at zero); pad threads past the last non-zero with a row "
            "index of their own (-1) and a zero product; in each scan step, put a barrier between reading the "
            "neighbour's partial sum and writing your own")
    return Test(label, run, hidden=hidden, hint=hint)


def _coo_race(answer, rng):
    kernel, block = answer
    A, rows = _coo_arrays(_long_rows(9, block + 3, int(rng.integers(1 << 30))))
    _race_check(kernel, -(-A.nnz // block), block, rows, A.indices, A.data, _x(A.shape[1], rng),
                np.zeros(A.shape[0], np.float32))


_Q2_TESTS = [
    _coo_test(lambda b, rng: sp.csr_matrix(np.array([[2.5]], np.float32)), "a single non-zero"),
    _coo_test(lambda b, rng: random_balanced(max(b - 1, 1), 1, n_cols=7, seed=4),
              "block - 1 non-zeros, one per row"),
    _coo_test(lambda b, rng: sp.csr_matrix(np.ones((1, b + 1), np.float32)), "one row of block + 1 entries"),
    _coo_test(lambda b, rng: _long_rows(11, 2 * b + 1, seed=5), "rows longer than two blocks"),
    _coo_test(lambda b, rng: empty_rows_and_long_row(40, 3 * b // 2 + 1, seed=6), "empty rows and a long row"),
    _coo_test(lambda b, rng: power_law_rows(int(rng.integers(10, 60)), 5.0, 2.1, seed=int(rng.integers(1 << 30))),
              "hidden: random power-law matrix", hidden=True),
    _coo_test(lambda b, rng: _long_rows(int(rng.integers(3, 12)), int(rng.integers(b, 3 * b)),
                                        int(rng.integers(1 << 30))), "hidden: random long rows", hidden=True),
]
if device.is_simulator():
    _Q2_TESTS.append(Test("hidden: race and barrier check", _coo_race, hidden=True,
                          hint="each scan step needs a barrier after reading the neighbour's partial sum and "
                               "another after writing, and every thread must reach every barrier"))

Q2 = Question("ps2.q2", "COO segmented-reduction kernel", 4, tuple(_Q2_TESTS), prepare=_prepare_coo)


# ----------------------------------------------------------------------------- q3
def _prepare_k(answer):
    if not isinstance(answer, dict) or not {"hyb_cost", "choose_k"} <= set(answer):
        raise TestFailure("answer with a dict: {'hyb_cost': hyb_cost, 'choose_k': choose_k}")
    for key in ("hyb_cost", "choose_k"):
        if not callable(answer[key]):
            raise TestFailure(f"{key} must be a function of the row lengths (and K for hyb_cost)")
    return answer


def _q3_matrices(rng):
    seed = int(rng.integers(1 << 30))
    return {
        "5-point Laplacian 12 x 12": laplacian("5pt", 12),
        "power-law rows": power_law_rows(500, 8.0, 2.2, seed=seed),
        "skewed rows (skew 1.5)": row_length_family(600, 1.5, 6.0, seed=seed),
        "empty rows and a long row": empty_rows_and_long_row(300, 150, seed=seed),
        "balanced random rows": random_balanced(200, 5, seed=seed),
    }


def _lengths(A):
    return np.diff(as_csr(A).indptr).astype(np.int64)


def _cost_test(answer, rng):
    for name, A in _q3_matrices(rng).items():
        lengths = _lengths(A)
        for K in sorted({0, 1, int(lengths.max()) // 2, int(lengths.max()), int(rng.integers(0, lengths.max() + 2))}):
            want = float(k_sweep(lengths, [K])["cost"][0])
            got = answer["hyb_cost"](lengths.copy(), K)
            if not np.isfinite(got) or abs(got - want) > 1e-6 * max(want, 1):
                raise TestFailure(f"hyb_cost(lengths of the {name}, K={K}) = {got!r}, expected {want:g}: the ELL "
                                  f"part processes R x K slots (padding included), each of the remaining entries "
                                  f"costs {SPEED_RATIO:g}")


def _choice_test(answer, rng):
    for name, A in _q3_matrices(rng).items():
        lengths = _lengths(A)
        sweep = k_sweep(lengths)
        K = answer["choose_k"](lengths.copy())
        if isinstance(K, bool) or not isinstance(K, (int, np.integer)) or K < 0:
            raise TestFailure(f"choose_k(lengths of the {name}) must return a non-negative int, got {K!r}")
        cost = float(k_sweep(lengths, [int(K)])["cost"][0])
        best = float(sweep["cost"].min())
        if cost > best * (1 + 1e-9):
            raise TestFailure(f"choose_k(lengths of the {name}) = {K}: modelled cost {cost:g}, but K = "
                              f"{sweep['best_K']} costs {best:g}; move K while more than a third of the rows "
                              "still have an entry in the next column")


Q3 = Question("ps2.q3", "choosing K for the hybrid", 2, (
    Test("the cost model", _cost_test, hint="R * K + 3 * (entries beyond the first K of each row)"),
    Test("K minimises the modelled cost", _choice_test,
         hint="the largest K such that at least R / 3 rows have K or more entries"),
), prepare=_prepare_k)

QUESTIONS = (Q1, Q2, Q3)
