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
from ..grading.ownwork import as_student_function
from ..grading.trusted import trusted_check, trusted_profile
from .api import as_csr
from .data import empty_rows_and_long_row, laplacian, power_law_rows, random_balanced, row_length_family
from .model import SPEED_RATIO, k_sweep
from .reference import spmv_reference

PROBLEM_SET = "ps2"
#: Tolerance relative to max |y| of the float64 reference: float32 sums in any order pass.
RTOL = 1e-4
#: Block sizes the grader launches the CSR kernel with.
CSR_BLOCKS = (32, 64)
#: Lanes of a warp: a warp-level reduction may add once per row segment of each warp.
WARP = 32

# Every test is split (see course_lib.grading.core): ``inputs`` and ``judge`` run in the grader,
# ``produce`` runs the student's code on plain arrays and returns its raw outputs, so nothing the
# notebook patches (this module, NumPy, the references) can change a grade.


def _x(n_cols, rng):
    return rng.uniform(-1.0, 1.0, n_cols).astype(np.float32)


def _matrix_data(A, rng):
    """Plain arrays of a CSR float32 matrix and an x for it (what crosses to the student's process)."""
    A = as_csr(A, np.float32)
    return {"indptr": A.indptr.astype(np.int32), "indices": A.indices.astype(np.int32), "data": A.data,
            "shape": [int(n) for n in A.shape], "x": _x(A.shape[1], rng)}


def _matrix(data):
    n_rows, n_cols = data["shape"]
    return sp.csr_matrix((data["data"], data["indices"], data["indptr"]), shape=(n_rows, n_cols))


def _guarded_output(n, guard, fill):
    """A device buffer of ``n + guard`` float32, the last ``guard`` a NaN sentinel, and its length-n view.

    On a GPU a write past the end of y rarely faults: it lands in the guard, where the judge sees it.
    """
    from numba import cuda

    host = np.full(n + guard, np.nan, np.float32)
    host[:n] = fill
    buffer = cuda.to_device(host)
    return buffer, buffer[:n]


def _check_guard(got, n, name="y"):
    """Raise unless ``got`` holds the n results followed by an untouched NaN guard."""
    got = np.asarray(got)
    if got.ndim != 1 or got.size < n:
        raise TestFailure(f"{name} came back with shape {got.shape}")
    guard = got[n:]
    if guard.size and not np.all(np.isnan(guard)):
        first = int(np.argmax(~np.isnan(guard)))
        raise TestFailure(f"wrote past the end of {name}: index {n + first} of a {name} of {n} elements was written; "
                          "guard the threads past the last row")
    return got[:n]


def _check_result(got, data, name):
    n_rows = data["shape"][0]
    y = _check_guard(got, n_rows)
    compare_arrays(y, spmv_reference(_matrix(data), data["x"]), rtol=RTOL, atol=1e-6, name=name)


def _checker_report(report, name):
    """Raise unless the race checker's output (from ``produce``) reports success."""
    if not isinstance(report, dict) or report.get("ok") is not True:
        text = report.get("report") if isinstance(report, dict) else None
        # The report names source lines and threads, nothing of the inputs: shown for hidden tests too.
        raise TestFailure(text if isinstance(text, str) else f"the {name} did not report success", public=True)


def _valid_block(block, what):
    if block is None or type(block) is bool or not isinstance(block, (int, np.integer)) or not 1 <= block <= 1024:
        raise TestFailure(f"{what}: block size {block!r} is not an int in 1..1024")
    return int(block)


# ----------------------------------------------------------------------------- q1
def _prepare_csr(kernel):
    return as_student_kernel(kernel, "CSR thread-per-row kernel")


def _run_csr(kernel, data):
    """Launch the CSR kernel on ``data``; returns y followed by its guard (``block`` NaN)."""
    from numba import cuda

    block = _valid_block(data["block"], "CSR launch")
    n_rows = data["shape"][0]
    buffer, d_y = _guarded_output(n_rows, block, np.nan)  # unwritten rows show up as NaN too
    kernel[-(-n_rows // block), block](cuda.to_device(np.asarray(data["indptr"])),
                                       cuda.to_device(np.asarray(data["indices"])),
                                       cuda.to_device(np.asarray(data["data"])), cuda.to_device(np.asarray(data["x"])),
                                       d_y)
    return buffer.copy_to_host()


def _csr_test(make, label, block=CSR_BLOCKS[0], hidden=False):
    def inputs(rng, info):
        return {**_matrix_data(make(rng), rng), "block": block}

    def judge(data, got, info):
        _check_result(got, data, "y" if hidden else f"y for a {tuple(data['shape'])} matrix")

    hint = ("guard the threads past the last row (row >= number of rows) and loop from indptr[row] to "
            "indptr[row + 1] (excluded); every row, even an empty one, must be written")
    return Test(label, hidden=hidden, hint=hint, inputs=inputs, produce=_run_csr, judge=judge)


def _csr_race_inputs(rng, info):
    return _matrix_data(empty_rows_and_long_row(37, 20, seed=int(rng.integers(1 << 30))), rng)


def _csr_race_produce(kernel, data):
    """Run the kernel under the simulator's race, barrier and bounds checker; its report is the output."""
    y = np.zeros(data["shape"][0], np.float32)
    report = trusted_check(kernel, 2, 32, np.asarray(data["indptr"]), np.asarray(data["indices"]),
                       np.asarray(data["data"]), np.asarray(data["x"]), y, seed=1)
    return {"ok": bool(report.ok), "report": str(report), "y": y}


def _csr_race_judge(data, got, info):
    """No race or out-of-bounds access reported, and the right y under the checker."""
    _checker_report(got, "race and bounds checker")
    _check_result(got.get("y"), data, "y under the race checker")


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
    _Q1_TESTS.append(Test("hidden: race and bounds check", hidden=True,
                          hint="a thread past the last row must not read indptr[row + 1]",
                          inputs=_csr_race_inputs, produce=_csr_race_produce, judge=_csr_race_judge))

Q1 = Question("ps2.q1", "CSR thread-per-row kernel", 4, tuple(_Q1_TESTS), prepare=_prepare_csr,
              tolerance=f"|error| <= 1e-06 + {RTOL:g} x max|y| against a float64 SciPy reference")


# ----------------------------------------------------------------------------- q2
def _prepare_coo(kernel, block=None):
    as_student_kernel(kernel, "COO segmented-reduction kernel")
    if block is None or isinstance(block, bool) or int(block) != block or not 1 <= block <= 1024:
        raise TestFailure("pass the block size your kernel uses, e.g. check('ps2.q2', coo_segmented, block=BLOCK); "
                          f"got block={block!r}")
    return kernel, int(block)


def _describe_coo(answer):
    return {"block": answer[1]}


def _coo_inputs_block(info):
    return _valid_block(info.get("block"), "the COO kernel's block")


def _coo_rows(data):
    """Row index of every non-zero (row-sorted COO), int32."""
    indptr = np.asarray(data["indptr"])
    return np.repeat(np.arange(data["shape"][0], dtype=np.int32), np.diff(indptr))


def _coo_args(data):
    return (_coo_rows(data), np.asarray(data["indices"]), np.asarray(data["data"]), np.asarray(data["x"]))


def _run_coo(answer, data):
    """Launch the COO kernel on ``data`` (y starts at zero); returns y followed by its guard."""
    from numba import cuda

    kernel, block = answer
    n_rows, nnz = data["shape"][0], len(data["data"])
    buffer, d_y = _guarded_output(n_rows, block, 0.0)
    if nnz:
        kernel[-(-nnz // block), block](*(cuda.to_device(a) for a in _coo_args(data)), d_y)
    return buffer.copy_to_host()


def _long_rows(n_rows, long_length, seed):
    """Rows of 1-3 entries with every fifth row ``long_length`` long (runs crossing blocks)."""
    lengths = np.random.default_rng(seed).integers(1, 4, n_rows)
    lengths[::5] = long_length
    rng = np.random.default_rng(seed + 1)
    rows = np.repeat(np.arange(n_rows), lengths)
    cols = np.concatenate([rng.choice(long_length + 3, n, replace=False) for n in lengths])
    return sp.csr_matrix((rng.uniform(-1, 1, rows.size), (rows, cols)), shape=(n_rows, long_length + 3))


_COO_HINT = ("a row's run can start in one block and end in the next: the last thread of every run must ADD its "
             "sum to y with cuda.atomic.add (y starts at zero); pad threads past the last non-zero with a row "
             "index of their own (-1) and a zero product; in each scan step, put a barrier between reading the "
             "neighbour's partial sum and writing your own")


def _coo_test(make, label, hidden=False):
    def inputs(rng, info):
        return _matrix_data(make(_coo_inputs_block(info), rng), rng)

    def judge(data, got, info):
        name = "y" if hidden else f"y for a {tuple(data['shape'])} matrix with {len(data['data'])} non-zeros"
        _check_result(got, data, name)

    return Test(label, hidden=hidden, hint=_COO_HINT, inputs=inputs, produce=_run_coo, judge=judge)


def _coo_race_inputs(rng, info):
    block = _coo_inputs_block(info)
    return _matrix_data(_long_rows(9, block + 3, int(rng.integers(1 << 30))), rng)


def _coo_race_produce(answer, data):
    kernel, block = answer
    y = np.zeros(data["shape"][0], np.float32)
    report = trusted_check(kernel, -(-len(data["data"]) // block), block, *_coo_args(data), y, seed=1)
    return {"ok": bool(report.ok), "report": str(report), "y": y}


def _coo_race_judge(data, got, info):
    """No race or barrier problem reported, and the right y under the checker."""
    _checker_report(got, "race and barrier checker")
    _check_result(got.get("y"), data, "y under the race checker")


def _row_segments(indptr, chunk):
    """Runs of one row within each chunk of ``chunk`` consecutive non-zeros (a block or a warp)."""
    rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    if rows.size == 0:
        return 0
    chunk_of = np.arange(rows.size) // chunk
    starts = (np.diff(rows) != 0) | (np.diff(chunk_of) != 0)
    return 1 + int(np.count_nonzero(starts))


def atomics_allowed(indptr, block):
    """How many atomic additions a segmented reduction may issue: about one per row segment of a block.

    A warp-level reduction (segments per warp) is accepted too, with twice that as slack.
    """
    return 2 * _row_segments(np.asarray(indptr), min(block, WARP))


def _atomics_inputs(rng, info):
    block = _coo_inputs_block(info)
    # Rows longer than two blocks: one atomic per non-zero is many times one per segment.
    return _matrix_data(_long_rows(6, 2 * block + 1 + int(rng.integers(0, block)), int(rng.integers(1 << 30))), rng)


def _atomics_produce(answer, data):
    """Run the kernel under the simulator's profiler; the atomic count and y are the outputs."""
    kernel, block = answer
    y = np.zeros(data["shape"][0], np.float32)
    report = trusted_profile(kernel, -(-len(data["data"]) // block), block, *_coo_args(data), y)
    return {"atomics": int(report.total.atomics), "y": y}


def _atomics_judge(data, got, info):
    block = _coo_inputs_block(info)
    if not isinstance(got, dict) or type(got.get("atomics")) is not int:
        raise TestFailure("the profiler did not report an atomic count")
    nnz, atomics = len(data["data"]), got["atomics"]
    allowed = atomics_allowed(data["indptr"], block)
    if atomics > allowed:
        # Ratios only, so that the message can be shown without revealing the hidden matrix.
        raise TestFailure(f"{atomics / nnz:.2f} atomic additions per non-zero on a matrix with long rows, where "
                          f"one per row run of each block is {allowed / 2 / nnz:.2f}: reduce each row's run inside "
                          "the block first, then add it to y once", public=True)
    _check_result(got.get("y"), data, "y under the profiler")


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
    _Q2_TESTS.append(Test("hidden: race and barrier check", hidden=True,
                          hint="each scan step needs a barrier after reading the neighbour's partial sum and "
                               "another after writing, and every thread must reach every barrier",
                          inputs=_coo_race_inputs, produce=_coo_race_produce, judge=_coo_race_judge))
    _Q2_TESTS.append(Test("hidden: one atomic per row segment, not per non-zero", hidden=True,
                          hint="an atomic add per non-zero is not a segmented reduction: sum each row's run of "
                               "the block in shared memory and let only the last thread of the run add it to y",
                          inputs=_atomics_inputs, produce=_atomics_produce, judge=_atomics_judge))

Q2 = Question("ps2.q2", "COO segmented-reduction kernel", 4, tuple(_Q2_TESTS), prepare=_prepare_coo,
              describe=_describe_coo,
              tolerance=f"|error| <= 1e-06 + {RTOL:g} x max|y| against a float64 SciPy reference")


# ----------------------------------------------------------------------------- q3
def _prepare_k(answer):
    if not isinstance(answer, dict) or not {"hyb_cost", "choose_k"} <= set(answer):
        raise TestFailure("answer with a dict: {'hyb_cost': hyb_cost, 'choose_k': choose_k}")
    for key in ("hyb_cost", "choose_k"):
        if not callable(answer[key]):
            raise TestFailure(f"{key} must be a function of the row lengths (and K for hyb_cost)")
        # The library computes K and the cost (k_sweep, bell_garland_k): calling it earns nothing.
        as_student_function(answer[key], key)
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


def _q3_inputs(rng, info):
    cases = []
    for name, A in _q3_matrices(rng).items():
        lengths = _lengths(A)
        longest = int(lengths.max())
        Ks = sorted({0, 1, longest // 2, longest, int(rng.integers(0, longest + 2))})
        cases.append({"name": name, "lengths": lengths, "Ks": Ks})
    return {"cases": cases}


def _cost_produce(answer, data):
    return [[answer["hyb_cost"](np.array(case["lengths"]), K) for K in case["Ks"]] for case in data["cases"]]


def _one_per_case(got, cases, what):
    if type(got) is not list or len(got) != len(cases):
        raise TestFailure(f"expected one {what} per input, got {got!r}")
    return zip(cases, got)


def _cost_judge(data, got, info):
    for case, costs in _one_per_case(got, data["cases"], "list of costs"):
        name, lengths = case["name"], case["lengths"]
        for K, cost in _one_per_case(costs, case["Ks"], "cost"):
            want = float(k_sweep(lengths, [K])["cost"][0])
            if type(cost) not in (int, float) or not np.isfinite(cost) or abs(cost - want) > 1e-6 * max(want, 1):
                raise TestFailure(f"hyb_cost(lengths of the {name}, K={K}) = {cost!r}, expected {want:g}: the ELL "
                                  f"part processes R x K slots (padding included), each of the remaining entries "
                                  f"costs {SPEED_RATIO:g}")


def _choice_produce(answer, data):
    return [answer["choose_k"](np.array(case["lengths"])) for case in data["cases"]]


def _choice_judge(data, got, info):
    for case, K in _one_per_case(got, data["cases"], "K"):
        name, lengths = case["name"], case["lengths"]
        if type(K) is not int or K < 0:
            raise TestFailure(f"choose_k(lengths of the {name}) must return a non-negative int, got {K!r}")
        sweep = k_sweep(lengths)
        cost = float(k_sweep(lengths, [K])["cost"][0])
        best = float(sweep["cost"].min())
        if cost > best * (1 + 1e-9):
            raise TestFailure(f"choose_k(lengths of the {name}) = {K}: modelled cost {cost:g}, but K = "
                              f"{sweep['best_K']} costs {best:g}; move K while more than a third of the rows "
                              "still have an entry in the next column")


Q3 = Question("ps2.q3", "choosing K for the hybrid", 2, (
    Test("the cost model", hint="R * K + 3 * (entries beyond the first K of each row)",
         inputs=_q3_inputs, produce=_cost_produce, judge=_cost_judge),
    Test("K minimises the modelled cost", hint="the largest K such that at least R / 3 rows have K or more entries",
         inputs=_q3_inputs, produce=_choice_produce, judge=_choice_judge),
), prepare=_prepare_k, tolerance="costs to 1e-6 relative; K must reach the minimum modelled cost")

QUESTIONS = (Q1, Q2, Q3)
