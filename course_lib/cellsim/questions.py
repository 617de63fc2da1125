"""Problem set 7 (``solutions/ps7_cellsim.ipynb``), on the shared harness (:mod:`course_lib.grading.authoring.harness`).

- ``ps7.q1`` (6 points): **compact the recorded cells in one kernel**. The lesson builds compaction from
  separate launches (a Hillis-Steele block scan in shared memory, a scan of the block totals, an add, a
  scatter) and its shared-memory histogram makes one global atomic per block and bin instead of one per
  cell. Here the student combines the two with a scan the course does not print: each **warp scans its
  flags in registers with warp shuffles** (``shfl_up_sync``, log2(32) = 5 steps), only the warps' totals go
  through shared memory, **one thread reserves the block's slots with a single global atomic** on a counter,
  and every recorded cell is written at the block's start plus its exclusive offset in the block. Answer: ``check("ps7.q1", make_compact_kernel)``, a function of the
  block size (a power of two, chosen by the grader) returning a kernel ``(flags, phis, counter, out_ids,
  out_phis)`` launched as ``kernel[ceil(n / block), block]``. Blocks may reserve in any order, so the
  packed order of the blocks is free; within the output, slot k holds a recorded cell's index and its
  fluorescence. Graded on results (guarded buffers, awkward sizes), the race and barrier checker, and the
  technique's signature (:func:`course_lib.grading.authoring.signature.signature_test`), measured by the
  profiler on three launches, block 64 with n = 197, block 128 with n = 131 and block 32 with n = 150 (two, four and one warp, each
  with a partial last block), and, in a hidden test, on two launches drawn from the grading seed: n in [2000,
  40000), a share of recorded cells in [0.2, 0.8], blocks of one warp and of 64 or 128 threads, of whose grid 3
  blocks (any, the partial last one included) are drawn too and profiled
  (:func:`course_lib.grading.authoring.signature.sample_blocks`), each feature counted over the blocks that ran. A
  kernel (or factory) whose technique depends on the block size or on n fails there. Features and bounds
  (``COMPACT_SIGNATURE``), from the cost model of ceil(n / B) blocks of B threads, a share p of the cells recorded:

  * atomics per block: at most 1 (the block's reservation). One atomic per recorded cell gives about B p per
    block;
  * global bytes loaded per cell: at most 8 + 10 p (:func:`load_bytes_bound`). Every flag once (4 bytes) and
    every recorded cell's fluorescence once (8 bytes): 4 + 8 p; the bound allows each flag twice and 25% on
    the rest. Counting the flags before a cell from global memory costs about 4 B / 2 bytes per cell;
  * SIMT efficiency (active lanes per warp instruction over 32): at least :data:`MIN_SIMT`. A parallel scan
    runs log2(B) steps with every lane of the block active; only the guarded loads and stores of the partial
    last block and the one reserving thread run with fewer. One thread scanning (or compacting) its block
    runs B steps on one lane, so the efficiency falls towards 1 / 32 (about 0.12 measured for B = 64 and 128);
  * block barriers per block: at least 1 for blocks of several warps. The warps' totals cross the block's warps
    through shared memory, and only a block barrier orders them (a warp barrier does not);
  * warp shuffles per warp: at least 5 (log2(32) steps of the warp's scan in registers); a scan in shared
    memory makes none;
  * shared-memory requests per warp: at most :data:`MAX_SHARED_PER_WARP`. The warp scan needs a few (its total
    written, the earlier warps' totals read, the block's start): about 3 measured; a scan in shared memory
    makes two or three per step, 21-23 measured for Hillis-Steele at B = 64 and 128;
  * warp share (busiest warp's instructions over its block's mean): at most :data:`MAX_WARP_SHARE` (about 1 when
    every warp scans its own flags; the warps per block when one warp scans the block's while the others wait).
- ``ps7.q2`` (4 points): **memory decisions, then transfers and loads measured**. Two decisions the lesson's
  memory models lead to but neither it nor the library makes: ``tree_largest_population(depth, budget)``, the
  largest initial population whose fixed-slot tree reaches a depth within a budget (:func:`tree_population_key`),
  and ``cells_per_batch(n_initial, depth, budget)``, the most cells per batch whose compaction buffers (generation
  g's sized min(c, r 2**g), section 7b of the lesson) fit the budget (:func:`cells_per_batch_key`), for depths,
  sizes and budgets drawn across the ranges the question states (:data:`Q2_DEPTHS`, :data:`Q2_MAX_CELLS`,
  :data:`Q2_MAX_BUDGET`). Then the student's ``dtoh_bytes(run)``, which measures
  with ``course_lib.sim.record`` the bytes a simulation ``run()`` copies back to the host. The grader calls it on
  the lesson's two methods (:class:`SimulationRun`, ``"tree"`` and ``"compact"``) on a histogram it draws, and, in
  a hidden test on the grading seed, on a run of its own that copies more back (``DTOH_DECOYS``); every run records
  itself (:func:`course_lib.grading.authoring.recorded.run_measurement_test`): pasted bytes, a model of them, or
  those of another run score 0 for the part and cap the question at half. Then **predict, then measure** the global
  bytes the q1 kernel loads: a formula
  of n and the number of recorded cells (checked against the cost model 4 n + 8 r), and the student's
  ``measure_load_bytes(make_kernel, n)``, which measures with the profiler the global bytes loaded by
  ``make_kernel(64)`` on the cells of :func:`measure_case`. The grader calls it on the student's factory and on
  decoys of its own (``MEASURE_DECOYS``: a kernel loading every cell's fluorescence, one counting the flags
  before each cell from global memory), for sizes it draws at grading time, and profiles each launch itself
  (:func:`course_lib.grading.authoring.measuring.kernel_measurement_test`): pasted numbers, or the model's prediction, do
  not match the decoys, and a measurement that fails caps the question at half.
- ``ps7.q3`` (4 points): **the level loop, written on the host, with the totals kept on the device**. Two
  kernels are given (:func:`divide_cells`, :func:`keep_daughters`): the first splits every live cell of a level
  into two daughters and flags those bright enough to keep, the second packs the kept daughters into the next
  level's buffer, reserving each slot with an atomic on ``totals[level + 1]``; both are grid-stride loops over the
  level's total, read on the device. The student writes ``run_levels(phis, levels, phi_min, capacity, block,
  sm_count)``, the host program that runs ``levels`` levels and returns ``(totals, final_phis)``. The number of
  live cells only exists on the device, so the host never reads it inside the loop, and it launches every level
  with one grid chosen for the device (about as many blocks as ``sm_count`` SMs hold at once), not one covering
  the capacity. Graded on results (the trusted NumPy loop, hidden sizes) and on counts measured in the student's
  process (``record()`` for launches, their grids and copies, the allocation calls of ``numba.cuda`` counted
  around the run): two launches per level, at most :data:`Q3_MAX_COPIES` copies and :data:`Q3_MAX_ALLOCATIONS`
  allocations per run, whatever the number of levels, and grids within :func:`device_grid_bounds` at two
  capacities and on devices of 1 to 3 SMs. A host loop copying the total back every level to size its grid,
  allocating every level, or launching grids that grow with the capacity is capped at half.
  Its own module: :mod:`course_lib.cellsim._questions_q3` (its given kernels are re-exported here, where the
  problem set imports them).
"""

from __future__ import annotations

import dataclasses

import numpy as np
from numba import cuda

from ..grading.authoring.harness import (STORED, Answer, Launch, calls_test, fail, function, kernel_factory,
                                         measurement, question, race_test, result_test, unguard)
from ..grading.authoring.measuring import kernel_measurement_test
from ..grading.authoring.recorded import run_measurement_test
from ..grading.authoring.signature import (Feature, at_least, at_most, between, block_barriers, sample_blocks,
                                           signature_test, warp_share)
from .model import FRAME_BYTES_PER_CELL
from .profiling import MEASURE_BLOCK, cells_case, measure_case  # noqa: F401  (tests read MEASURE_BLOCK here)
from ._questions_q3 import (Q3, Q3_MAX_ALLOCATIONS, Q3_MAX_COPIES, device_grid_bounds, divide_cells, grid_runs,
                           judge_grids, judge_level_counts, judge_levels, keep_daughters, levels_case, levels_reference)
from ..grading.resources import answer_key

# The answer keys are the grader's (grading_resources/keys/ps7_cellsim.py), read when a value is judged.
peak_bytes_per_initial_cell = answer_key("ps7", "peak_bytes_per_initial_cell")
tree_population_key = answer_key("ps7", "tree_population_key")
batch_buffer_bytes = answer_key("ps7", "batch_buffer_bytes")
cells_per_batch_key = answer_key("ps7", "cells_per_batch_key")
predicted_load_bytes = answer_key("ps7", "predicted_load_bytes")

PROBLEM_SET = "ps7"

# The run of the q2 notebook (its exploration prints what record() measures for it).
Q2_RUN = {"n_cells": 100, "hist_seed": 3, "median": 300.0, "tau_max": 200.0, "phi_min": 11.0, "seed": 5}
Q2_BUDGET = 8000
Q2_BLOCK = 32

def measured(test):
    """A measurement test whose failure caps the question at half: a number that is not measured (pasted, the
    model's prediction, another kernel's or another problem's) is not the student's work."""
    return dataclasses.replace(test, technique=True)


# ----------------------------------------------------------------------------- q1
#: Block sizes the grader asks the answer's factory for.
BLOCKS = (32, 64, 128)
#: The launches whose technique is measured: (block, n, share recorded). Each has a partial last block.
TECHNIQUE_CASES = ((64, 197, 0.45), (128, 131, 0.6), (32, 150, 0.5))
#: Least SIMT efficiency of a parallel block scan (the module docstring gives the cost model).
MIN_SIMT = 0.4
#: Most shared-memory requests per warp in q1: the warps' totals and the block's start, with slack.
MAX_SHARED_PER_WARP = 10
#: Most ``warp_share`` in q1 (busiest warp's instructions over its block's mean): about 1 when every warp scans its
#: flags, the warps per block when one warp scans the block's.
MAX_WARP_SHARE = 1.5
#: The range of n of the configurations the grader draws (a sample of 3 blocks profiled).
DRAWN_N = (2_000, 40_000)


def case(n, p, block):
    return lambda rng, info: cells_case(n, p, block, int(rng.integers(1 << 30)))


def random_case(rng, info):
    return cells_case(int(rng.integers(2, 300)), float(rng.uniform(0.2, 0.8)), int(rng.choice(BLOCKS)),
                      int(rng.integers(1 << 30)))


def launch_compact(answer, data):
    """ceil(n / block) blocks; the counter starts at 0, the outputs at -1 / NaN so that unwritten slots show."""
    flags = np.asarray(data["flags"], np.int32)
    block, total = int(data["block"]), int(flags.sum())
    args = {"flags": flags, "phis": np.asarray(data["phis"], np.float64), "counter": np.zeros(1, np.int32),
            "out_ids": np.full(total, -1, np.int32), "out_phis": np.full(total, np.nan)}
    return Launch(answer.kernel(block), max(1, -(-flags.size // block)), block, args,
                  outputs=("counter", "out_ids", "out_phis"), blocks=data.get("blocks"))


def expected_compact(data):
    """The recorded cells in increasing order (the answer's packed order is compared after sorting)."""
    flags = np.asarray(data["flags"])
    ids = np.flatnonzero(flags == 1).astype(np.int32)
    return {"counter": np.array([ids.size], np.int32), "out_ids": ids,
            "out_phis": np.asarray(data["phis"], np.float64)[ids]}


def judge_compaction(data, outputs, label=""):
    """Check a compaction: the counter is the number of recorded cells, the packed ids are the recorded cells
    (each once, blocks in any order) and every slot's fluorescence is its cell's. ``outputs`` are plain arrays."""
    want = expected_compact(data)
    where = f" {label}" if label else ""
    counter, ids, phis = (np.asarray(outputs[k]) for k in ("counter", "out_ids", "out_phis"))
    if counter.shape != (1,) or int(counter[0]) != want["counter"][0]:
        raise fail(f"counter{where} = {counter.tolist()}, expected [{int(want['counter'][0])}] (the number of "
                   f"recorded cells)", "counter")
    if ids.shape != want["out_ids"].shape:
        raise fail(f"out_ids{where} has shape {ids.shape}, expected {want['out_ids'].shape}")
    if np.any(ids < 0) and np.any(np.isnan(phis)):
        raise fail(f"out_ids{where}: {int(np.sum(ids < 0))} of {ids.size} slots were never written", "unwritten")
    if not np.array_equal(np.sort(ids), want["out_ids"]):
        missing = np.setdiff1d(want["out_ids"], ids)
        extra = np.setdiff1d(ids, want["out_ids"])
        raise fail(f"out_ids{where} are not the recorded cells, each once: missing {missing[:5].tolist()}, "
                   f"not recorded or repeated {extra[:5].tolist() or 'a duplicate'}", "value")
    mismatched = np.flatnonzero(phis != np.asarray(data["phis"], np.float64)[ids])
    if mismatched.size:
        k = int(mismatched[0])
        raise fail(f"out_phis{where}[{k}] = {phis[k]}, but slot {k} holds cell {int(ids[k])} of fluorescence "
                   f"{float(np.asarray(data['phis'])[ids[k]])}", "pairing")


def _result_judge(data, got):
    """Unguard the launch's outputs (a write past an array fails with the cause ``bounds``), then judge."""
    if not isinstance(got, dict) or not all(k in got for k in ("counter", "out_ids", "out_phis")):
        raise fail("the kernel's outputs did not come back")
    total = int(np.asarray(data["flags"]).sum())
    plain = {"counter": unguard(got["counter"], (1,), name="counter"),
             "out_ids": unguard(got["out_ids"], (total,), name="out_ids"),
             "out_phis": unguard(got["out_phis"], (total,), name="out_phis")}
    judge_compaction(data, plain, _label(data))


def _sorted_exact(got, expected, name):
    """Race test comparison: the packed arrays as sets (blocks reserve their slots in any order)."""
    if np.shape(got) != np.shape(expected) or not np.array_equal(np.sort(got), np.sort(expected)):
        raise fail(f"{name}: the packed values are not the recorded cells' (compared after sorting)")


def _label(data):
    flags = np.asarray(data["flags"])
    sampled = "" if data.get("blocks") is None else f", {len(data['blocks'])} blocks drawn"
    return f"for n = {flags.size} cells, {int(flags.sum())} recorded, block = {data['block']}{sampled}"


def _drawn(one_warp):
    """A configuration drawn at grading time: n in DRAWN_N, a share of recorded cells in [0.2, 0.8], blocks of one
    warp or of 64 or 128 threads, and 3 blocks of the grid drawn for the profiler (:func:`sample_blocks`)."""
    def inputs(rng, info):
        block = 32 if one_warp else int(rng.choice(BLOCKS[1:]))
        n = int(rng.integers(*DRAWN_N))
        data = cells_case(n, float(rng.uniform(0.2, 0.8)), block, int(rng.integers(1 << 30)))
        return {**data, "blocks": sample_blocks(rng, -(-n // block))}

    return inputs


def _ran_cells(data):
    """The flags of the cells whose blocks the profiler runs: the grader's sample (``data["blocks"]``) or all."""
    flags, block = np.asarray(data["flags"]), int(data["block"])
    if data.get("blocks") is None:
        return flags
    return np.concatenate([flags[b * block:(b + 1) * block] for b in data["blocks"]])


def atomics_per_block(metrics, data):
    """Atomics over the blocks that ran (the profile's ``blocks``: the sample, or the grid)."""
    return metrics["atomics"] / max(1.0, metrics["blocks"])


def load_bytes_per_cell(metrics, data):
    return metrics["global_load_bytes"] / max(1, len(_ran_cells(data)))


def load_bytes_bound(data):
    """Each flag read at most twice (8 bytes), each recorded cell's fluorescence once (8 bytes), 25% slack on
    the fluorescence; over the cells of the blocks that run."""
    flags = _ran_cells(data)
    return 0.0, 8.0 + 10.0 * int(flags.sum()) / max(1, flags.size)


def shuffles_per_warp(metrics, data):
    """Shuffles over the warps that ran (the profile's ``warps``)."""
    return metrics["shuffles"] / max(1.0, metrics["warps"])


def shared_requests_per_warp(metrics, data):
    return metrics["shared_requests"] / max(1.0, metrics["warps"])


def least_barriers(data):
    """A block of several warps orders its warps' totals with a block barrier; a block of one warp needs none."""
    return 1 if int(data["block"]) > 32 else 0


def simt_efficiency(metrics, data):
    return metrics["active_lanes"] / (32 * metrics["warp_instructions"]) if metrics["warp_instructions"] else 0.0


#: The technique's signature (the module docstring gives the cost model behind each bound).
COMPACT_SIGNATURE = (
    Feature("one global atomic per block (atomics per block)", atomics_per_block, at_most(1),
            "one thread per block reserves the block's slots with a single atomic on the counter (not one per cell)",
            "one reservation per block; one atomic per recorded cell gives about B p per block"),
    Feature("each cell's data loaded once (global bytes loaded per cell)", load_bytes_per_cell,
            load_bytes_bound,
            "a cell's offset comes from the block's scan in shared memory (not from counting the flags before it)",
            "a flag (4 bytes) per cell, a fluorescence (8 bytes) per recorded cell; each flag twice and 25% on the "
            "rest allowed: 8 + 10 p bytes per cell"),
    Feature("a parallel scan (SIMT efficiency)", simt_efficiency, between(MIN_SIMT, 1.0),
            "all threads of the block take part in each of the scan's log2(block) steps (not one thread scanning "
            "the whole block)",
            "log2(B) steps with every lane active; one lane scanning B values falls towards 1 / 32"),
    block_barriers(at_least(least_barriers),
                   "the warps' totals cross the block's warps through shared memory: a block barrier orders them "
                   "(a warp barrier does not)", "blocks of 64 and 128 threads are two and four warps; one warp needs "
                                                "none"),
    Feature("a warp scan in registers (warp shuffles per warp)", shuffles_per_warp, at_least(5),
            "each warp scans its 32 flags in registers with cuda.shfl_up_sync, log2(32) = 5 steps",
            "5 shuffles per warp; a scan in shared memory makes none"),
    Feature("shared memory for the warps' totals only (shared requests per warp)", shared_requests_per_warp,
            at_most(MAX_SHARED_PER_WARP),
            "only each warp's total and the block's start go through shared memory, not every step of the scan",
            "about 3 per warp; a scan in shared memory makes 20 or more"),
    warp_share(at_most(MAX_WARP_SHARE),
               "every warp of the block scans its own 32 flags; no warp scans (or compacts) the block while the others "
               "wait", "the same steps per warp: about 1; one warp doing the block's work: the warps per block"),
)


_Q1 = dict(launch=launch_compact, judge=_result_judge)

Q1 = question(
    "ps7.q1", "compacting the recorded cells in one kernel: a warp-shuffle scan and one atomic per block", 6,
    answer=kernel_factory("make_compact_kernel"),
    tolerance="exact (values are copied, not computed); the blocks' order in the output is free",
    tests=[
        result_test("n = 1, not recorded (no points: a kernel doing nothing passes)", 0, inputs=case(1, 0.0, 64),
                    **_Q1),
        result_test("n = 63, block 64 (one block, its last thread idle)", 1, inputs=case(63, 0.5, 64), **_Q1),
        result_test("n = 65, block 64 (a second block with one cell)", 1, inputs=case(65, 0.5, 64), **_Q1),
        result_test("every cell recorded (n = 70, block 32)", 0.5, inputs=case(70, 1.0, 32), **_Q1),
        result_test("no cell recorded (n = 40, block 32): nothing may be written", 0.25, inputs=case(40, 0.0, 32),
                    **_Q1),
        result_test("hidden: random n, block and share of recorded cells", 0.75, hidden=True, inputs=random_case,
                    **_Q1),
        race_test("race and barrier check (n = 131, block 128)", 1, inputs=case(131, 0.5, 128),
                  launch=launch_compact, expect=expected_compact, compare=_sorted_exact),
        signature_test("the warp-scan compaction technique, measured (profiler; block 64, n = 197, block 128, "
                       "n = 131 and block 32, n = 150)", 1,
                       configs=[case(n, p, block) for block, n, p in TECHNIQUE_CASES],
                       launch=launch_compact, expect=expected_compact, compare=_sorted_exact, label=_label,
                       features=COMPACT_SIGNATURE),
        signature_test("hidden: the warp-scan compaction technique on sizes and blocks drawn at grading time "
                       "(profiler, a sample of the blocks)", 0.5, hidden=True, configs=[_drawn(True), _drawn(False)],
                       launch=launch_compact, expect=expected_compact, compare=_sorted_exact,
                       features=COMPACT_SIGNATURE),
    ])


# ----------------------------------------------------------------------------- q2
#: The ranges of q2's memory decisions (stated in the question; the grader draws across them).
Q2_DEPTHS = (0, 30)
Q2_MAX_BUDGET = 10**13
Q2_MAX_CELLS = 10**7


def _budget(rng, most=Q2_MAX_BUDGET):
    """A budget drawn log-uniformly in [1, most] (every order of magnitude as likely)."""
    return int(10 ** rng.uniform(0, np.log10(most)))


def _tree_cases(rng, info):
    """Edges (depth 0, a budget below one slot, exactly one slot, the lesson's L = 1e6 at depth 11 and 16 GB), then
    depths and budgets drawn across the stated ranges."""
    cases = [(0, 23), (0, 24), (1, 71), (1, 72), (11, 16 * 10**9), (3, 0), (30, Q2_MAX_BUDGET)]
    drawn = []
    for _ in range(3):
        depth = int(rng.integers(Q2_DEPTHS[0], Q2_DEPTHS[1] + 1))
        one_cell = peak_bytes_per_initial_cell(depth)  # the peak of one initial cell
        drawn += [(depth, _budget(rng)), (depth, min(Q2_MAX_BUDGET, int(one_cell * 10 ** rng.uniform(0, 6))))]
    return cases + drawn


def _batch_cases(rng, info):
    """Edges (no budget, one cell per generation exactly and one byte short, a budget holding the whole tree, batches
    smaller than L, the lesson's L = 1e6 at depth 11 and 16 GB), then sizes drawn across the stated ranges."""
    cases = [(5, 3, 0), (5, 3, 4 * FRAME_BYTES_PER_CELL), (5, 3, 4 * FRAME_BYTES_PER_CELL - 1), (1, 0, 10**6),
             (3, 4, 10**6), (1000, 2, 44_000), (10**6, 11, 16 * 10**9), (Q2_MAX_CELLS, 30, Q2_MAX_BUDGET)]
    drawn = []
    for _ in range(3):
        n_initial = int(10 ** rng.uniform(0, np.log10(Q2_MAX_CELLS)))
        depth = int(rng.integers(Q2_DEPTHS[0], Q2_DEPTHS[1] + 1))
        # from batches of a few cells to the whole tree: (depth + 1) L cells fill every generation's batch
        full = FRAME_BYTES_PER_CELL * (depth + 1) * n_initial
        spread = rng.uniform(-2, np.log10(2 ** (depth + 1) / (depth + 1)) + 0.5)
        drawn += [(n_initial, depth, _budget(rng)), (n_initial, depth, min(Q2_MAX_BUDGET, int(full * 10**spread)))]
    return cases + drawn


class SimulationRun:
    """A simulation ``run()`` for q2's ``dtoh_bytes`` to measure: ``simulate`` on a lognormal histogram of
    ``n_cells`` cells (median 300, seeded), ``method="tree"`` or ``"compact"`` (``memory_budget=Q2_BUDGET``,
    ``block=Q2_BLOCK``), the q2 run's other parameters. Each call records its own transfers (the grader's
    measurement, ``dtoh_bytes`` after the call); ``extra_bytes`` more are copied back at the end (0 for the lesson's
    runs; the grader's own runs copy some, so that their bytes differ).

    Parameters
    ----------
    method : {"tree", "compact"}
    n_cells, hist_seed : int
    extra_bytes : int
        A multiple of 8.
    """

    def __init__(self, method, n_cells, hist_seed, extra_bytes=0):
        self.method, self.n_cells, self.hist_seed, self.extra_bytes = method, int(n_cells), int(hist_seed), \
            int(extra_bytes)
        self.dtoh_bytes = None

    def __call__(self):
        from numba import cuda

        from ..sim import record
        from .api import simulate
        from .data import THESIS_TYPES, lognormal_histogram

        h0 = lognormal_histogram(self.n_cells, seed=self.hist_seed, median=Q2_RUN["median"])
        options = {"memory_budget": Q2_BUDGET, "block": Q2_BLOCK} if self.method == "compact" else {}
        with record() as log:
            result = simulate(h0, THESIS_TYPES, method=self.method, tau_max=Q2_RUN["tau_max"],
                              phi_min=Q2_RUN["phi_min"], seed=Q2_RUN["seed"], **options)
            if self.extra_bytes:
                cuda.to_device(np.zeros(self.extra_bytes // 8)).copy_to_host()
        self.dtoh_bytes = int(log.summary()["DtoH_bytes"])
        return result

    def __repr__(self):
        return f"SimulationRun({self.method!r}, {self.n_cells}, {self.hist_seed})"  # extra bytes: the grader's draw


def measured_dtoh_bytes(method, n_cells=Q2_RUN["n_cells"], hist_seed=Q2_RUN["hist_seed"]):
    """Bytes copied device -> host by a q2 run (:class:`SimulationRun`), measured with ``record()``."""
    run = SimulationRun(method, n_cells, hist_seed)
    run()
    return run.dtoh_bytes


#: The runs ``dtoh_bytes`` measures in q2 (``label -> make(config)``, config ``(n_cells, hist_seed)``): the lesson's
#: two methods, and runs of the grader's own that copy 8 to 400 more bytes back (drawn from the seed).
DTOH_RUNS = {"the tree run": lambda config: SimulationRun("tree", *config),
             f"the compact run (memory_budget={Q2_BUDGET}, block={Q2_BLOCK})":
             lambda config: SimulationRun("compact", *config)}
DTOH_DECOYS = {"a tree run of the grader's, copying more back":
               lambda config: SimulationRun("tree", *config, extra_bytes=8 * (1 + config[1] % 50))}


def _dtoh_configs(rng, info):
    """One histogram drawn by the grader: 20 to 39 initial cells and a seed (small: every run is simulated)."""
    return [(int(rng.integers(20, 40)), int(rng.integers(1000)))]


_DTOH_TEST = dict(key="dtoh_bytes", configs=_dtoh_configs, call=lambda measure, run, config: measure(run),
                  truth=lambda run, config: run.dtoh_bytes,
                  shown=lambda label, config: f"dtoh_bytes(<{label}>) on {config[0]} cells (histogram seed "
                                              f"{config[1]})")


def every_fluorescence_loaded(block):
    """A decoy for ``measure_load_bytes``: every thread loads its flag and its cell's fluorescence, recorded or not,
    and reserves a slot per recorded cell with an atomic (12 bytes per cell)."""
    @cuda.jit
    def kernel(flags, phis, counter, out_ids, out_phis):
        i = cuda.grid(1)
        if i < flags.shape[0]:
            phi = phis[i]
            if flags[i] == 1:
                slot = cuda.atomic.add(counter, 0, 1)
                out_ids[slot] = i
                out_phis[slot] = phi

    return kernel


def counted_from_global(block):
    """A decoy for ``measure_load_bytes``: each recorded cell counts the recorded cells before it from global
    memory (cells in order, no scan, no atomic; about n r / 2 flags loaded)."""
    @cuda.jit
    def kernel(flags, phis, counter, out_ids, out_phis):
        i = cuda.grid(1)
        n = flags.shape[0]
        if i < n and flags[i] == 1:
            before = 0
            for j in range(i):
                before += flags[j]
            out_ids[before] = i
            out_phis[before] = phis[i]
        if i == n - 1:
            total = 0
            for j in range(n):
                total += flags[j]
            counter[0] = total

    return kernel


#: The grader's own factories that ``measure_load_bytes`` must measure as well (their loads differ from the model's).
MEASURE_DECOYS = {"a kernel loading every cell's fluorescence": every_fluorescence_loaded,
                  "a kernel counting the flags before each cell from global memory": counted_from_global}


def _measure_configs(rng, info):
    """Two sizes drawn at grading time: a few blocks of 64 with a partial last one."""
    return [(int(rng.integers(65, 128)) | 1,), (int(rng.integers(128, 256)) | 1,)]


def _measure_launch(make, config):
    """q1's launch of the factory ``measure_load_bytes`` received, on the cells of ``measure_case(n)``."""
    return launch_compact(Answer(make, {}, lambda factory, *args: factory(*args)), measure_case(config[0]))


Q2 = question(
    "ps7.q2", "memory decisions: the tree's largest population, compaction's batch size", 4,
    answer={"tree_largest_population": function("tree_largest_population"),
            "cells_per_batch": function("cells_per_batch"),
            "dtoh_bytes": measurement("dtoh_bytes"),
            "make_compact_kernel": kernel_factory("make_compact_kernel"),
            "predicted_load_bytes": function("predicted_load_bytes"),
            "measure_load_bytes": measurement("measure_load_bytes")},
    tolerance="exact integers; measurements within 1% of the course's profiler",
    tests=[
        calls_test("the largest initial population whose tree reaches a depth within a budget", 0.5,
                   key="tree_largest_population", args=_tree_cases, expect=tree_population_key, explain=STORED),
        calls_test("the most cells per batch whose compaction buffers fit a budget", 1, key="cells_per_batch",
                   args=_batch_cases, expect=cells_per_batch_key, explain=STORED),
        run_measurement_test("device-to-host bytes of the tree and compact runs (record(); a histogram drawn by "
                             "the grader)", 0.5, runs=DTOH_RUNS, **_DTOH_TEST),
        run_measurement_test("hidden: device-to-host bytes of the grader's own run (record(); a histogram drawn "
                             "at grading time)", 0.5, runs=DTOH_DECOYS, hidden=True, **_DTOH_TEST),
        calls_test("the prediction: global bytes your q1 kernel loads for n cells, r recorded", 0.75,
                   key="predicted_load_bytes", expect=predicted_load_bytes,
                   args=lambda rng, info: [(197, 97), (1, 0), (131, 131), (int(rng.integers(2, 10**6)), 0),
                                           (int(rng.integers(1000, 10**6)), int(rng.integers(0, 1000)))],
                   explain=STORED),
        measured(kernel_measurement_test(
            "your measure_load_bytes(), on your kernel and on the grader's, at sizes drawn by the grader", 0.75,
            key="measure_load_bytes", kernel_key="make_compact_kernel", decoys=MEASURE_DECOYS, configs=_measure_configs,
            launch=_measure_launch, measure=lambda metrics, config: metrics["global_load_bytes"], rtol=0.01)),
    ])


QUESTIONS = (Q1, Q2, Q3)
