"""Problem set 2 (``solutions/ps2_spmv.ipynb``), on the shared harness (:mod:`course_lib.grading.authoring.harness`).

- ``ps2.q1`` (6 points): the **sub-warp CSR-vector** kernel, L lanes per row reduced by warp shuffles, each row's
  bounds read once (not by each of its L lanes, as lesson 2's warp-per-row kernel does) and handed to its group
  by ``cuda.shfl_sync``.
  Answer: ``check("ps2.q1", make_subwarp_kernel)``, a function of L returning a kernel launched as
  ``kernel[ceil(R * L / block), block](indptr, indices, data, x, y)``. Graded on results (guarded
  buffers), the checker (warp and bounds problems), and the technique's signature
  (``SUBWARP_SIGNATURE``), measured by the profiler on two configurations (L = 8 with blocks of 64
  threads, and L = 16 with blocks of 96 threads and a partial last block, power-law rows) and, in a hidden test
  (no points of its own; its failure caps the question like the visible one's), on two configurations drawn at
  grading time from the grading seed (:func:`drawn_case`): L = 2 or 4 with blocks of one warp, and L drawn from
  every allowed L (2 to 32) with blocks of 64, 96 or 128 threads, each on a power-law matrix of a drawn size
  (R L up to ``DRAWN_THREADS``, every block profiled) and mean row length. A kernel that splits rows only for
  the L or the blocks of the visible test fails there. Its
  features and bounds, from the cost model of L lanes per row (lane l of a row's group reads
  entries l, l + L, ...; the group's L partial sums are added by log2(L) warp shuffles):

  * global load sectors: at most 1.15 x the sectors of that access pattern (:func:`subwarp_sectors`:
    indptr, then per step the L consecutive indices and values of each row and their x, per warp)
    plus 1 per warp; a thread per row or a blocked split of the row reads scattered entries;
  * global load requests per warp: at most 1.5 (3 ceil(longest / L) + 2) + 1;
  * global bytes loaded: at most 1.1 x (12 per entry + 8 per row) + 4 per warp + 64: every lane reading its
    row's two bounds adds 8 (L - 1) per row and shows here;
  * shuffles (one per warp and instruction): between log2(L) per warp holding a row and log2(L) + 2
    per warp launched (2 more for a broadcast of the row's bounds); a shared-memory tree has none,
    lane 0 fetching the L - 1 others serially has L - 1;
  * thread span: at most 1.75 x the span of the model (each thread's ceil(length / L) steps plus 3,
    the busiest over the mean): one lane doing the row's work serially shows here;
  * atomics: none (each row's sum is owned and stored by one lane).
- ``ps2.q2`` (2 points): predict the loop steps of the warps, measure the global load sectors of the
  kernel for each L, and pick the L with the least traffic. Answer: ``{"kernel": ..., "predicted_steps":
  f(row_lengths, lanes), "measure": g(make_kernel, A, lanes), "best_lanes": L}``. The grader calls ``g`` on
  the student's factory and on decoys of its own (thread per row, and lane 0 of each group walking its row),
  on matrices and L drawn at grading time, and measures each launch itself (a failure there caps the question at
  half); ``best_lanes`` must be the L
  its own measurements of the student's kernel on ``MEASURE_MATRIX`` pick.
- ``ps2.q3`` (2 points): the hybrid's K at the **traffic ratio** the student measures. Answer: ``{"measure_ratio":
  f(A), "hyb_cost": cost(row_lengths, K, ratio, launch), "choose_k": g(row_lengths, ratio, launch)}``.
  ``measure_ratio(A)`` profiles two launches on a float32 CSR matrix A whose rows all have one length
  (:func:`ratio_launches`: the course's ELL kernel with every entry, so no padding, and its segmented COO kernel
  with the same entries, blocks of ``RATIO_BLOCK``) and returns COO's global load sectors per entry over ELL's:
  what a COO entry costs in the traffic the profiler counts, against the same entry in ELL (about 1.1 to 1.5
  on the matrices the grader draws, not the lesson's speed ratio of 3; the scan steps, barriers and atomics of
  COO are not in it). The grader calls it on two such matrices of distinct row lengths (visible) and one drawn
  from the grading seed (hidden; no points of its own), and profiles the same launches itself
  (:func:`measured_ratio`, to 1%): a pasted, modelled or misdirected measurement scores 0 there and caps the
  question at half (``technique=True``). The cost of ELL width K is R K slots (a padded slot costs its warp a
  step like a real one), ``ratio`` per entry past the first K of its row and ``launch`` if any entry is left for
  COO; ``choose_k`` must reach the least cost on matrices with ratios drawn below and above 3 and launch costs up
  to ones that make pure ELL the best, and, in a hidden test, on a drawn matrix of uneven rows at the ratio the
  student's ``measure_ratio`` gives on a drawn matrix of one row length, judged at the grader's measured ratio.
  Lesson 2's rule (the largest K that at least R / 3 rows reach) answers none of these.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import cuda, float32

from ..grading.authoring.buffers import results_per_case
from ..grading.authoring.harness import (STORED, Answer, Launch, _matches, _test, calls_test, close, fail, function, integer,
                                         kernel_factory, measurement, profile_launch, question, race_test, result_test,
                                         sign_flipped)
from ..grading.authoring.measuring import best_parameter_test, kernel_measurement_test
from ..grading.authoring.signature import Feature, at_most, between, no_atomics, signature_test
from . import kernels
from .api import as_csr, ell_split
from .data import empty_rows_and_long_row, laplacian, power_law_rows, random_balanced, row_length_family
from .reference import spmv_reference
from ..grading.resources import answer_key

# The answer keys are the grader's (grading_resources/keys/ps2_spmv.py), read when a value is judged.
best_cost = answer_key("ps2", "best_cost")

PROBLEM_SET = "ps2"
#: Tolerance relative to max |y| of the float64 reference: float32 sums in any order pass.
RTOL = 1e-4
WARP = 32
#: Lanes per row measured in q2, and the seed of its matrix.
MEASURE_LANES, MEASURE_SEED = (2, 4, 8, 16, 32), 5


# ----------------------------------------------------------------------------- q1
def matrix_case(A, lanes, block, seed):
    """``inputs`` data: a float32 CSR matrix as plain arrays, an x, and the launch parameters."""
    A = as_csr(A, np.float32)
    x = np.random.default_rng(seed).uniform(-1, 1, A.shape[1]).astype(np.float32)
    return {"indptr": A.indptr.astype(np.int32), "indices": A.indices.astype(np.int32), "data": A.data,
            "shape": [int(n) for n in A.shape], "x": x, "lanes": int(lanes), "block": int(block)}


def case(make, lanes, block=64):
    return lambda rng, info: matrix_case(make(rng), lanes, block, int(rng.integers(1 << 30)))


def equal_rows(n_rows, length):
    """Rows of the same length (the profiler's model is exact on them)."""
    return random_balanced(n_rows, length, n_cols=max(length + 7, 40), seed=n_rows)


def launch_subwarp(answer, data):
    """ceil(R L / block) blocks; y starts as NaN (unwritten rows show)."""
    n_rows, lanes, block = data["shape"][0], data["lanes"], data["block"]
    y = np.full(n_rows, np.nan, np.float32)
    args = {name: np.asarray(data[name]) for name in ("indptr", "indices", "data", "x")}
    return Launch(answer.kernel(lanes), max(1, -(-n_rows * lanes // block)), block, {**args, "y": y}, outputs=("y",))


def expected_y(data):
    A = sp.csr_matrix((np.asarray(data["data"]), np.asarray(data["indices"]), np.asarray(data["indptr"])),
                      shape=tuple(data["shape"]))
    return {"y": spmv_reference(A, np.asarray(data["x"]))}


def load_requests_per_warp(metrics, data):
    warps = -(-data["shape"][0] * data["lanes"] // WARP)
    return metrics["global_load_requests"] / warps


def lanes_model(data):
    """Requests per warp when L lanes split each row: 3 per step (index, value, x) plus 2 for indptr, with slack."""
    lengths = np.diff(np.asarray(data["indptr"]))
    steps = -(-int(lengths.max()) // data["lanes"])
    return 0.0, 1.5 * (3 * steps + 2) + 1


def bytes_model(data):
    """Global bytes loaded when each entry's index, value and x are read once and each row's bounds once."""
    n_entries, n_rows = len(np.asarray(data["indices"])), data["shape"][0]
    return 1.1 * (12 * n_entries + 8 * n_rows) + 4 * _warps_launched(data) + 64


def atomics(metrics, data):
    return metrics["atomics"]


def _row_groups(data):
    """Row of each launched thread (-1 past the last row), its lane in the row's group, and the row lengths."""
    n_rows, lanes, block = data["shape"][0], data["lanes"], data["block"]
    threads = max(1, -(-n_rows * lanes // block)) * block
    t = np.arange(threads)
    row = t // lanes
    return np.where(row < n_rows, row, -1), t % lanes, np.diff(np.asarray(data["indptr"], np.int64))


def subwarp_sectors(data):
    """Global load sectors of the technique's access pattern: per warp, indptr[row] and indptr[row + 1] of its
    rows, then per step s the index and value of entry start + s L + lane of each row and x at its column."""
    row, lane, lengths = _row_groups(data)
    indptr, indices = np.asarray(data["indptr"], np.int64), np.asarray(data["indices"], np.int64)
    lanes, total = data["lanes"], 0
    for w in range(0, row.size, WARP):
        r, l = row[w:w + WARP], lane[w:w + WARP]
        live = r >= 0
        if not live.any():
            continue
        total += len({int(indptr[k]) // 8 for k in r[live]}) + len({int(indptr[k + 1]) // 8 for k in r[live]})
        steps = -(-int(lengths[r[live]].max()) // lanes)
        for s in range(steps):
            j = indptr[r[live]] + s * lanes + l[live]
            j = j[j < indptr[r[live] + 1]]
            total += 2 * len(set((j // 8).tolist())) + len(set((indices[j] // 8).tolist()))
    return total


def model_span(data):
    """Busiest thread over the mean of the model: ceil(length / L) steps plus 3 per thread (0 steps past R)."""
    row, _, lengths = _row_groups(data)
    steps = np.where(row >= 0, -(-lengths[np.maximum(row, 0)] // data["lanes"]), 0) + 3
    return float(steps.max() / steps.mean())


def _warps_launched(data):
    n_rows, lanes, block = data["shape"][0], data["lanes"], data["block"]
    return max(1, -(-n_rows * lanes // block)) * -(-block // WARP)


def _shuffle_bounds(data):
    steps = int(np.log2(data["lanes"]))
    holding = -(-data["shape"][0] * data["lanes"] // WARP)
    return steps * holding, (steps + 2) * _warps_launched(data)


SUBWARP_SIGNATURE = (
    Feature("global load sectors", lambda m, data: m["global_load_sectors"],
            at_most(lambda data: 1.15 * subwarp_sectors(data) + _warps_launched(data)),
            "lane l of a row's group reads entries l, l + L, l + 2L...: at each step the group reads L consecutive "
            "entries, which share sectors", "the sectors of the interleaved access pattern, counted per warp"),
    Feature("global load requests per warp", load_requests_per_warp, lanes_model,
            "L lanes split each row, so a warp needs ceil(longest / L) steps of 3 requests",
            "3 requests per step of L entries, 2 for indptr"),
    Feature("global bytes loaded", lambda m, data: m["global_load_bytes"], at_most(bytes_model),
            "a row's two bounds are read once, not by each of its L lanes, and reach the group's lanes by "
            "cuda.shfl_sync", "12 bytes per entry, 8 per row"),
    Feature("warp shuffles", lambda m, data: m["shuffles"], _shuffle_bounds,
            "log2(L) shuffle steps (offsets L/2, ..., 1) add the group's L partial sums in registers, every lane "
            "of the group taking part; two more hand the bounds over", "log2(L) per warp, + 2 for the bounds"),
    Feature("thread span (busiest thread's statements / mean)", lambda m, data: m["thread_span"],
            at_most(lambda data: 1.75 * model_span(data)),
            "the L lanes of a group share the row's entries and the reduction, no lane doing the group's work alone",
            "ceil(length / L) steps per lane"),
    no_atomics("lane 0 of each group stores its row's sum, once; no atomics", "one owner per row"),
)


def _label(data):
    return f"for a {data['shape'][0]} x {data['shape'][1]} matrix, {data['lanes']} lanes per row"


#: Lanes per row the question allows (every one may be drawn at grading time), and the most threads a drawn
#: launch has (R L): the profiler runs every thread, so a drawn matrix has at most this many over L rows.
ALLOWED_LANES, DRAWN_THREADS = (2, 4, 8, 16, 32), 1600


def drawn_case(lanes_choices, block_choices):
    """A signature configuration drawn at grading time: L from ``lanes_choices``, the block from
    ``block_choices``, and a power-law matrix of R rows (R L at most ``DRAWN_THREADS``, R odd so the last
    block is partial) with a mean row length drawn in [4, 24)."""
    def inputs(rng, info):
        lanes, block = int(rng.choice(lanes_choices)), int(rng.choice(block_choices))
        rows = int(rng.integers(DRAWN_THREADS // (2 * lanes), DRAWN_THREADS // lanes)) | 1
        A = power_law_rows(rows, float(rng.uniform(4.0, 24.0)), 2.1, seed=int(rng.integers(1 << 30)))
        return matrix_case(A, lanes, block, int(rng.integers(1 << 30)))
    return inputs


_KERNEL = kernel_factory("make_subwarp_kernel")
_Q1 = dict(launch=launch_subwarp, expect=expected_y, compare=close(RTOL, 1e-6))

Q1 = question(
    "ps2.q1", "sub-warp CSR-vector kernel, bounds read once per row", 6, answer=_KERNEL, diagnose=[("sign", sign_flipped)],
    tolerance=f"|error| <= 1e-06 + {RTOL:g} x max|y| against a float64 SciPy reference",
    tests=[
        result_test("a 1 x 1 matrix (no points: a kernel copying x passes)", 0,
                    inputs=case(lambda r: sp.csr_matrix(np.array([[2.5]], np.float32)), 4), **_Q1),
        result_test("empty rows and a long row, 4 lanes", 1, label=_label,
                    inputs=case(lambda r: empty_rows_and_long_row(23, 40, seed=1), 4), **_Q1),
        result_test("R L not a multiple of the block, 8 lanes", 1, label=_label,
                    inputs=case(lambda r: power_law_rows(13, 6.0, 2.2, seed=2), 8), **_Q1),
        result_test("hidden: random power-law matrix, 2 lanes", 0.5, hidden=True,
                    inputs=case(lambda r: power_law_rows(int(r.integers(5, 60)), 5.0, 2.1,
                                                         seed=int(r.integers(1 << 30))), 2), **_Q1),
        race_test("warp, race and bounds check", 1, technique=True,
                  inputs=case(lambda r: empty_rows_and_long_row(11, 19, seed=3), 4), **_Q1),
        signature_test("the sub-warp technique, measured (profiler; L = 8 and L = 16)", 2.5,
                       configs=[case(lambda r: equal_rows(21, 19), 8, 64),
                                case(lambda r: power_law_rows(23, 12.0, 2.0, seed=int(r.integers(1 << 30))), 16, 96)],
                       **_Q1, label=_label, features=SUBWARP_SIGNATURE),
        signature_test("hidden: the sub-warp technique on L, blocks and matrices drawn at grading time", 0,
                       hidden=True, configs=[drawn_case((2, 4), (32,)), drawn_case(ALLOWED_LANES, (64, 96, 128))],
                       **_Q1, features=SUBWARP_SIGNATURE),
    ])


# ----------------------------------------------------------------------------- q2
def warp_steps(row_lengths, lanes):
    """Loop steps of all warps: each warp holds 32 / L rows and runs ceil(longest / L) steps."""
    per_row = -(-np.asarray(row_lengths, np.int64) // lanes)
    rows_per_warp = WARP // lanes
    padded = np.zeros(-(-per_row.size // rows_per_warp) * rows_per_warp, np.int64)
    padded[:per_row.size] = per_row
    return int(padded.reshape(-1, rows_per_warp).max(axis=1).sum()) if padded.size else 0


def measure_matrix():
    """The matrix measured in q2 (the notebook builds the same one)."""
    return power_law_rows(48, 10.0, 2.0, seed=MEASURE_SEED)


def _steps_args(rng, info):
    lengths = [np.diff(as_csr(A).indptr).astype(np.int64) for A in
               (measure_matrix(), laplacian("5pt", 9), empty_rows_and_long_row(70, 90, seed=int(rng.integers(99))))]
    return [(lengths[i], lanes) for i in range(3) for lanes in (1, 4, 32)] + [(lengths[0], 8)]


def _measure_launch(answer, lanes):
    return launch_subwarp(answer["kernel"], matrix_case(measure_matrix(), lanes, 64, seed=1))


def _sectors(metrics, lanes):
    return metrics["global_load_sectors"]


@cuda.jit
def _thread_per_row(indptr, indices, data, x, y):
    row = cuda.grid(1)
    if row < y.shape[0]:
        total = float32(0.0)
        for j in range(indptr[row], indptr[row + 1]):
            total += data[j] * x[indices[j]]
        y[row] = total


def group_leader_walks_row(lanes):
    """A decoy for ``measure``: lane 0 of each group of L walks its whole row (thread per row, spread out)."""
    @cuda.jit
    def kernel(indptr, indices, data, x, y):
        g = cuda.grid(1)
        row = g // lanes
        if g % lanes == 0 and row < y.shape[0]:
            total = float32(0.0)
            for j in range(indptr[row], indptr[row + 1]):
                total += data[j] * x[indices[j]]
            y[row] = total

    return kernel


def thread_per_row(lanes):
    """A decoy for ``measure``: one thread per row whatever L (the lanes past the rows do nothing)."""
    return _thread_per_row


#: The grader's own kernel factories that ``measure`` must measure as well (their traffic differs).
MEASURE_DECOYS = {"thread per row": thread_per_row, "lane 0 of each group walking its row": group_leader_walks_row}


def _measure_configs(rng, info):
    """(seed, rows, L): the measured matrix at two L drawn now, and a power-law matrix of a size drawn now."""
    lanes = [int(v) for v in rng.choice(MEASURE_LANES, 2, replace=False)]
    return [(MEASURE_SEED, 48, lanes[0]), (MEASURE_SEED, 48, lanes[1]),
            (int(rng.integers(1 << 20)), int(rng.integers(20, 60)), int(rng.choice(MEASURE_LANES)))]


def _measured_matrix(seed, rows):
    return as_csr(power_law_rows(rows, 10.0, 2.0, seed=seed), np.float32)


def _measure_arguments(config):
    seed, rows, lanes = config
    return _measured_matrix(seed, rows), lanes


def _decoy_launch(make, config):
    seed, rows, lanes = config
    data = matrix_case(_measured_matrix(seed, rows), lanes, 64, seed=1)
    return launch_subwarp(Answer(make, {}, lambda factory, *a: factory(*a)), data)


Q2 = question(
    "ps2.q2", "predict the steps, measure the traffic, choose L", 2,
    answer={"kernel": _KERNEL, "predicted_steps": function("predicted_steps"), "measure": measurement(),
            "best_lanes": integer("best_lanes", minimum=1, maximum=WARP)},
    tolerance="steps exact; measurements within 1% of the course's profiler",
    tests=[
        calls_test("the predicted loop steps of the warps", 1, key="predicted_steps", args=_steps_args,
                   expect=warp_steps),
        kernel_measurement_test("your measure(), on your kernel and on the grader's, on drawn matrices and L", 0.5,
                                key="measure", kernel_key="kernel", decoys=MEASURE_DECOYS, configs=_measure_configs,
                                arguments=_measure_arguments, launch=_decoy_launch,
                                measure=lambda metrics, config: metrics["global_load_sectors"], rtol=0.01, caps=True),
        best_parameter_test("the L with the least traffic for your kernel", 0.5, key="best_lanes",
                            params=MEASURE_LANES, launch=_measure_launch, measure=_sectors, best=min),
    ])


# ----------------------------------------------------------------------------- q3
def _q3_cases(rng):
    seed = int(rng.integers(1 << 30))
    matrices = {"5-point Laplacian 12 x 12": laplacian("5pt", 12), "power-law rows": power_law_rows(500, 8.0, 2.2,
                                                                                                     seed=seed),
                "skewed rows": row_length_family(600, 1.5, 6.0, seed=seed),
                "empty rows and a long row": empty_rows_and_long_row(300, 150, seed=seed),
                "balanced rows": random_balanced(200, 5, seed=seed)}
    return {name: np.diff(as_csr(A).indptr).astype(np.int64) for name, A in matrices.items()}


def _conditions(rng, lengths):
    """(ratio, launch) pairs: ratios other than 3, and COO launches cheap, costly, and costly enough that the
    pure ELL K can win."""
    rows, extra = lengths.size, int(np.maximum(lengths - np.median(lengths), 0).sum())
    ratios = [float(rng.uniform(1.2, 2.8)), float(rng.uniform(3.5, 9.0))]
    return [(r, launch) for r in ratios for launch in (0.0, float(rng.uniform(0.1, 0.5)) * rows,
                                                       float(rng.uniform(1.0, 3.0)) * r * extra + rows)]


def _cost_args(rng, info):
    out = []
    for lengths in _q3_cases(rng).values():
        longest = int(lengths.max())
        for ratio, launch in _conditions(rng, lengths)[::2]:
            out += [(lengths, K, ratio, launch)
                    for K in sorted({0, 1, longest // 2, longest, int(rng.integers(0, longest + 2))})]
    return out


def modelled_cost(lengths, K, ratio, launch):
    """R K ELL slots, ``ratio`` per entry past the first K of its row, and ``launch`` if any entry is left."""
    lengths = np.asarray(lengths, np.int64)
    excess = int(np.maximum(lengths - int(K), 0).sum())
    return float(lengths.size * int(K) + ratio * excess + (launch if excess > 0 else 0.0))


def _k_args(rng, info):
    return [(lengths, ratio, launch) for lengths in _q3_cases(rng).values()
            for ratio, launch in _conditions(rng, lengths)]


#: Threads per block of the two launches the traffic ratio is measured on.
RATIO_BLOCK = 64
#: The rows and the entries per row of the matrices the ratio is measured on (every row of one length, so that
#: ELL holds no padding and both launches process the same entries), drawn at grading time with their seed.
RATIO_ROWS, RATIO_ROW_LENGTHS = (32, 80), (2, 10)
#: The kinds of matrix whose rows differ in length, where K is judged.
UNEVEN_KINDS = ("power-law rows", "skewed rows", "empty rows and a long row")


def uneven_matrix(spec):
    """The float32 CSR matrix of a drawn ``(kind, rows, seed)`` of ``UNEVEN_KINDS``, where K is chosen."""
    kind, rows, seed = spec
    if kind == "power-law rows":
        A = power_law_rows(rows, 8.0, 2.1, seed=seed)
    elif kind == "skewed rows":
        A = row_length_family(rows, 1.5, 6.0, seed=seed)
    else:
        A = empty_rows_and_long_row(rows, rows // 2, seed=seed)
    return as_csr(A, np.float32)


def ratio_matrix(spec):
    """The float32 CSR matrix of a drawn ``(rows, entries per row, seed)``: every row of one length, small, so that
    its two launches profile quickly."""
    rows, length, seed = spec
    return as_csr(random_balanced(rows, length, seed=seed), np.float32)


def ratio_launches(A):
    """The two launches the ratio compares, on ``A`` (float32 CSR, every row of one length K): the course's ELL
    kernel with every entry in ELL (R x K slots, no padding) and its segmented COO kernel with the same entries,
    both with blocks of ``RATIO_BLOCK`` threads and x = 1."""
    n_rows, n_cols = A.shape
    lengths = np.diff(A.indptr)
    if lengths.size == 0 or (lengths != lengths[0]).any() or lengths[0] == 0:
        raise ValueError("the traffic ratio is measured on a matrix whose rows all have one length, at least 1 "
                         f"(got lengths {lengths.min(initial=0)} to {lengths.max(initial=0)}): ELL then holds no "
                         "padding and both launches process the same entries")
    x = np.ones(n_cols, np.float32)
    split = ell_split(A)
    ell = Launch(kernels.ell_kernel, max(1, -(-n_rows // RATIO_BLOCK)), RATIO_BLOCK,
                 {"ell_indices": split.ell_indices, "ell_data": split.ell_data, "x": x,
                  "y": np.zeros(n_rows, np.float32)}, outputs=("y",))
    rows = np.repeat(np.arange(n_rows, dtype=np.int32), lengths).astype(np.int32)
    coo = Launch(kernels.coo_segmented_kernel(RATIO_BLOCK), max(1, -(-A.nnz // RATIO_BLOCK)), RATIO_BLOCK,
                 {"rows": rows, "cols": A.indices.astype(np.int32), "data": A.data, "x": x,
                  "y": np.zeros(n_rows, np.float32)}, outputs=("y",))
    return ell, coo, A.nnz


def measured_ratio(A):
    """The grader's measurement: COO's global load sectors per entry over ELL's per entry, on the same entries
    (course profiler). Sectors are one of COO's costs; its scan steps, barriers and atomics are not in it."""
    ell, coo, entries = ratio_launches(A)
    per_ell_entry = profile_launch(ell)["metrics"]["global_load_sectors"] / entries
    per_coo_entry = profile_launch(coo)["metrics"]["global_load_sectors"] / entries
    return per_coo_entry / per_ell_entry


def _ratio_spec(rng):
    return [int(rng.integers(*RATIO_ROWS)), int(rng.integers(*RATIO_ROW_LENGTHS)), int(rng.integers(1 << 20))]


def _ratio_specs(count):
    """``inputs``: ``count`` matrices drawn now, of distinct row lengths, for the ratio."""
    def inputs(rng, info):
        lengths = rng.choice(np.arange(*RATIO_ROW_LENGTHS), size=count, replace=False)
        return {"specs": [[int(rng.integers(*RATIO_ROWS)), int(k), int(rng.integers(1 << 20))] for k in lengths]}
    return inputs


def _launch_costs(rng, lengths):
    """COO launch costs: none, a small one, and one large enough that pure ELL can win."""
    return [0.0, float(rng.uniform(0.1, 0.5)) * lengths.size, float(rng.uniform(2.0, 4.0)) * int(lengths.sum())]


def ratio_test(name, points, count, *, hidden=False, choose=False):
    """The student's ``measure_ratio(A)`` on ``count`` matrices of one row length drawn at grading time, against
    the grader's own measurement of the same two launches; with ``choose``, the K that ``choose_k`` gives, on a
    matrix of uneven rows drawn too, at the ratio measured must reach the least modelled cost at the grader's
    ratio instead. A measurement that was not measured on the matrix given (pasted, modelled, measured once)
    caps the question at half."""
    def produce(answer, data):
        results = []
        for spec in data["specs"]:
            A = ratio_matrix(tuple(spec[:3]))
            reported = answer["measure_ratio"](A)
            if isinstance(reported, (np.integer, np.floating)):
                reported = float(reported)
            result = {"reported": reported, "want": float(measured_ratio(A))}
            if choose:
                lengths = np.diff(uneven_matrix(tuple(spec[3])).indptr).astype(np.int64)
                chosen = [answer["choose_k"](lengths, reported, launch) for launch in spec[4]]
                result["chosen"] = [int(K) if isinstance(K, np.integer) else K for K in chosen]
            results.append(result)
        return results

    def inputs(rng, info):
        data = _ratio_specs(count)(rng, info)
        if choose:
            # K is judged on rows of uneven lengths (on equal rows every rule gives the longest row).
            for spec in data["specs"]:
                uneven = [UNEVEN_KINDS[int(rng.integers(len(UNEVEN_KINDS)))], int(rng.integers(40, 100)),
                          int(rng.integers(1 << 20))]
                lengths = np.diff(uneven_matrix(tuple(uneven)).indptr).astype(np.int64)
                spec += [uneven, _launch_costs(rng, lengths)]
        return data

    def judge(data, got, info):
        for spec, result in results_per_case(got, data["specs"], "the measurements"):
            where = ("a matrix drawn at grading time" if hidden
                     else f"a {spec[0]}-row matrix of {spec[1]} entries per row")
            value, want = result.get("reported"), result.get("want")
            if type(want) is not float or not np.isfinite(want):
                raise fail("the grader's measurement did not come back", "answer")
            if type(value) not in (int, float) or not np.isfinite(value):
                raise fail(f"measure_ratio({where}) is {value!r}, not a number", "measure")
            if not choose:
                if not _matches(value, want, 0.01):
                    raise fail(f"measure_ratio({where}) = {value:.4g}, but the course's profiler measures {want:.4g} "
                               "for its two launches (allowed difference 1%): measure the matrix you are given",
                               "measure")
                continue
            lengths = np.diff(uneven_matrix(tuple(spec[3])).indptr).astype(np.int64)
            if type(result.get("chosen")) is not list or len(result["chosen"]) != len(spec[4]):
                raise fail("choose_k's answers did not come back", "answer")
            for launch, K in zip(spec[4], result["chosen"]):
                if type(K) is not int or K < 0:
                    raise fail(f"choose_k(..., {value:.4g}, {launch:.4g}) = {K!r} is not a valid K")
                best = best_cost(lengths, want, launch)
                if not _matches(modelled_cost(lengths, K, want, launch), best, 1e-9):
                    raise fail(f"for a matrix of {spec[3][0]} and launch cost {launch:.4g}, K = {K} costs "
                               f"{modelled_cost(lengths, K, want, launch):.6g} at the measured ratio {want:.4g}; "
                               f"the best costs {best:.6g}")

    return _test(name, points, inputs=inputs, produce=produce, judge=judge, hidden=hidden,
                 technique=not choose)


Q3 = question(
    "ps2.q3", "choosing K for the hybrid, at the traffic ratio you measure, with a COO launch cost", 2,
    answer={"measure_ratio": measurement("measure_ratio"), "hyb_cost": function("hyb_cost"),
            "choose_k": function("choose_k")},
    tolerance="ratios within 1% of the course's profiler; costs to 1e-6 relative; K must reach the minimum "
              "modelled cost",
    tests=[
        ratio_test("your measure_ratio(), on matrices of two row lengths", 0.5, 2),
        ratio_test("hidden: your measure_ratio() on a matrix drawn at grading time", 0, 1, hidden=True),
        calls_test("the cost model", 0.5, key="hyb_cost", args=_cost_args, expect=modelled_cost, rtol=1e-6,
                   explain=STORED),
        ratio_test("hidden: your K on an uneven matrix, at the ratio you measure on another, drawn at grading time",
                   0.5, 1, hidden=True,
                   choose=True),
        calls_test("K minimises the modelled cost", 0.5, key="choose_k", args=_k_args,
                   expect=best_cost,
                   transform=lambda lengths, ratio, launch, K: (modelled_cost(lengths, K, ratio, launch)
                                                                if K >= 0 else None),
                   rtol=1e-9),
    ])


QUESTIONS = (Q1, Q2, Q3)
