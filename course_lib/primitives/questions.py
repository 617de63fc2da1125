"""Problem set 9 (``solutions/ps9_primitives.ipynb``), on the shared harness (:mod:`course_lib.grading.authoring.harness`).

The lesson prints the one-value-per-thread scans (Hillis-Steele, Blelloch) and compaction by flags, a
scan and a scatter over the whole array. The questions ask for what lies next to them.

- ``ps9.q1`` (6 points): a **coarsened work-efficient scan**. Answer: ``check("ps9.q1",
  make_coarse_scan_kernel)``, a function of the block size B returning a kernel launched as
  ``kernel[ceil(n / (4 B)), B](x, out, block_sums)`` that writes the exclusive scan of each tile of 4 B
  float32 values and each tile's total. Graded on results (guarded buffers), the checker, and the
  technique's signature measured on B = 32 (one warp) and B = 128 with a partial last tile and, in a hidden test
  (no points of its own; its failure caps the question like the visible one's), on two configurations drawn at
  grading time from the grading seed (:func:`drawn_sizes`): B = 32, and B = 64 or 128, each with n drawn in
  [``DRAWN_MAX_N`` / 16, ``DRAWN_MAX_N``) (odd: a partial last tile), of whose blocks the profiler runs
  ``SAMPLED_BLOCKS`` drawn by ``sample_blocks`` (any block, the last partial one included, equally likely; the
  per-value features count the values of the tiles that ran). A kernel that scans only small arrays, or only
  the blocks of the visible test, the work-efficient way fails there:

  * statements per value (the profiler's active lanes over the 4 B values of each launched tile, the *work*):
    at most :data:`WORK_LIMIT`.
    A work-efficient scan runs a bounded number of statements per value whatever the tile (each thread
    scans its 4 values serially; the block scans B totals, not 4 B values); Hillis-Steele over the tile
    runs log2(4 B) steps that each touch every value (about 48 statements per value at B = 32, 60 at B = 128; the
    solution runs 27 and 22, a Blelloch tree over the totals 28 and 31);
  * thread span (the busiest thread's statements over the mean): at most 2; one thread scanning the tile
    serially has a span of about B;
  * barriers per block: between 1 and 2 log2(B) + 4 (staging in and out, and a tree over the B
    totals up and down; a warp-shuffle scan of the totals needs fewer);
  * shared-memory wavefronts over the ideal (one per warp-wide access): at most 1.25. Thread t reading
    values 4t, ..., 4t + 3 of a plain shared array sends 4 lanes to each bank (a 4-way conflict);
    the padding of the lesson (index i at i + i // 32) spreads them;
  * global load sectors: at most 1.1 x the 4 n / 32 sectors of the values read once, coalesced, plus one
    per block;
  * warp share (per block, the busiest warp's statements over the mean per warp): at most 1.5; the tile is
    split evenly over the warps, and a tree over the B totals gives the first warps a few levels more (1.25 at
    B = 128); the first warp scanning the tile while the others wait has a share of B / 32;
  * atomics: none.
- ``ps9.q2`` (3 points): **compaction within a tile by warp votes**. Answer: ``check("ps9.q2",
  make_compact_kernel)``, a function of B returning a kernel launched as ``kernel[ceil(n / B), B](x,
  threshold, out, counts)``: block b writes the values of its tile greater than ``threshold``, in order, to
  ``out[b B:b B + counts[b]]`` and their number to ``counts[b]``, leaving the rest of ``out`` as it
  found it. Technique: at most 2 barriers per block (each lane's rank comes from a ballot of its warp and
  the counts of the warps before it, not from a block-wide scan of log2 B levels), thread span at most 3,
  a warp share of at most 1 + (B / 32) / 4 (every warp votes and places its own values; one lane adding the
  warps' counts adds a little; the first warp compacting the whole tile has B / 32), no atomics (an atomic
  counter does not keep the order). Measured on B = 64 and B = 128 and, in a hidden test drawn at grading
  time as in ``ps9.q1`` (a tile is B values), on B = 32 and on B = 64, 96 or 128, with a threshold drawn in
  [-0.8, 0.8).
- ``ps9.q3`` (2 points): **a staging layout for C values per thread**, a design decision. Answer:
  ``check("ps9.q3", staging_layout)``, a function of the coarsening factor C and the block size B returning
  ``(period, gap)``: value i of a tile of C B values is stored at ``i + gap * (i // period)``. The lesson pads
  for one value per thread and for its sweeps; which layout a tile of C values per thread needs (none, or a gap
  at a period that depends on C) is left to the student. The grader runs its own kernel with that layout
  (:func:`staging_kernel`: coalesced staging stores, then each thread's C consecutive reads) under the course's
  profiler (any backend), and requires the right sums, one shared wavefront per warp-wide access, and no more
  shared words than the least conflict-free layout of the family (:func:`least_staged_words`): visible on four
  (C, B), hidden on three drawn at grading time (an even C with an odd factor, an odd C, any C in 2..16; B of
  32, 64 or 128). Both tests are technique tests: padding everywhere as the lesson does (conflicts or wasted
  words), never padding, or padding only powers of two each fail both. ``primitives.model.wavefronts`` may be
  used to try candidates.
"""

from __future__ import annotations

import numpy as np

from numba import cuda, float32

from ..grading.authoring.buffers import TestFailure, fail, results_per_case
from ..grading.authoring.harness import Launch, close, function, kernel_factory, profile_launch, question, race_test
from ..grading.authoring.harness import result_test
from ..grading.authoring.testkinds import _technique_failure, _test
from ..grading.authoring.signature import (Feature, at_most, between, no_atomics, sample_blocks, signature_test,
                                           warp_share)
from .model import wavefronts
from .reference import scan_reference
from ..grading.resources import answer_key

# The answer keys are the grader's (grading_resources/keys/ps9_primitives.py), read when a value is judged.
_conflict_free = answer_key("ps9", "_conflict_free")
least_staged_words = answer_key("ps9", "least_staged_words")

PROBLEM_SET = "ps9"
#: Values per thread of the coarsened scan.
COARSEN = 4
#: Statements per value a work-efficient coarsened scan stays under (see the module docstring).
WORK_LIMIT = 42.0
#: What ``out`` holds before the compaction: a value no input reaches (inputs lie in [-1, 1]).
UNTOUCHED = 99.0
RTOL = 1e-5


# ----------------------------------------------------------------------------- q1
def scan_case(n, block, seed):
    """``inputs`` data: n values uniform in [-1, 1), the block size."""
    x = np.random.default_rng(seed).uniform(-1, 1, n).astype(np.float32)
    return {"x": x, "block": int(block)}


def sized(n, block):
    return lambda rng, info: scan_case(n, block, int(rng.integers(1 << 30)))


def tiles_of(data, per_thread=COARSEN):
    return max(1, -(-len(data["x"]) // (per_thread * data["block"])))


#: The largest n a configuration drawn at grading time has (the profiler runs a sample of its blocks), and the
#: blocks of such a launch that it runs.
DRAWN_MAX_N, SAMPLED_BLOCKS = 1 << 16, 2


def tiles_run(data, per_thread=COARSEN):
    """Tiles the profiler ran: the sampled blocks of a drawn configuration (``data["blocks"]``), else all."""
    blocks = data.get("blocks")
    return len(blocks) if blocks is not None else tiles_of(data, per_thread)


def values_run(data, per_thread=COARSEN):
    """Input values inside the tiles the profiler ran (the last tile may be partial)."""
    n, tile = len(data["x"]), per_thread * data["block"]
    blocks = data.get("blocks")
    if blocks is None:
        return n
    return sum(max(0, min(tile, n - b * tile)) for b in blocks)


def drawn_sizes(block_choices, per_thread, make_case):
    """A signature configuration drawn at grading time: a block from ``block_choices``, n drawn in
    [DRAWN_MAX_N / 16, DRAWN_MAX_N) (odd, so the last tile is partial), and ``SAMPLED_BLOCKS`` of its blocks,
    drawn by :func:`~course_lib.grading.authoring.signature.sample_blocks` (the first, the last and the interior
    ones alike), for the profiler to run. ``make_case(n, block, rng)`` builds the data."""
    def inputs(rng, info):
        block = int(rng.choice(block_choices))
        n = int(rng.integers(DRAWN_MAX_N // 16, DRAWN_MAX_N)) | 1
        data = make_case(n, block, rng)
        data["blocks"] = sample_blocks(rng, -(-n // (per_thread * block)), k=SAMPLED_BLOCKS)
        return data
    return inputs


def launch_coarse_scan(answer, data):
    """ceil(n / 4B) blocks of B threads; out starts as NaN (unwritten values show)."""
    n, block = len(data["x"]), data["block"]
    out = np.full(n, np.nan, np.float32)
    sums = np.full(tiles_of(data), np.nan, np.float32)
    return Launch(answer.kernel(block), tiles_of(data), block,
                  {"x": np.asarray(data["x"]), "out": out, "block_sums": sums}, outputs=("out", "block_sums"),
                  blocks=data.get("blocks"))


def expected_scan(data):
    x = np.asarray(data["x"], np.float64)
    tile = COARSEN * data["block"]
    out = np.concatenate([scan_reference(x[k:k + tile]) for k in range(0, max(x.size, 1), tile)])[:x.size]
    sums = np.array([x[k:k + tile].sum() for k in range(0, max(x.size, 1), tile)])
    return {"out": out, "block_sums": sums}


def _statements_per_value(metrics, data):
    """Statements run per value slot of the tiles that ran (a partial last tile counts whole: its threads run)."""
    return metrics["active_lanes"] / (tiles_run(data) * COARSEN * data["block"])


def _load_sectors(data):
    return 1.1 * 4 * values_run(data) / 32 + tiles_run(data)


def _barrier_range(data):
    return 1, 2 * int(np.log2(data["block"])) + 4


COARSE_SCAN_SIGNATURE = (
    Feature("statements per value (the work)", _statements_per_value, at_most(lambda data: WORK_LIMIT),
            "each thread scans its 4 values serially and the block scans only the B thread totals: a bounded "
            "number of statements per value, whatever the tile (log2(4B) steps over every value is not)",
            "Brent: O(n) work in O(n / p + log p) steps"),
    Feature("thread span (busiest thread's statements / mean)", lambda m, data: m["thread_span"],
            at_most(lambda data: 2.0), "every thread scans its own values and takes part in the block's scan",
            "4 values and log2 B levels per thread"),
    Feature("barriers per block", lambda m, data: m["barriers_per_block"], _barrier_range,
            "a barrier after staging, a few for the scan of the B totals, one before the coalesced stores",
            "2 + 2 log2(B) + 2 at most"),
    Feature("shared-memory wavefronts / ideal", lambda m, data: m["shared_wavefronts"] / max(m["shared_ideal_wavefronts"], 1),
            at_most(lambda data: 1.25),
            "thread t reads its 4 consecutive staged values 4t..4t+3: pad the shared array (i at i + i // 32) so the "
            "32 lanes of a warp hit 32 banks", "one wavefront per warp-wide access"),
    Feature("global load sectors", lambda m, data: m["global_load_sectors"], at_most(_load_sectors),
            "the block loads its tile in B-wide coalesced rows into shared memory, each value once",
            "4 n / 32 sectors"),
    warp_share(at_most(1.5), "every warp scans the values of its own threads; only the scan of the B totals may "
               "give the first warps a few more levels", "the tile split evenly over the warps, a tree over the totals"),
    no_atomics("the scan combines values with adds in registers and shared memory; no atomics", "no atomics"),
)


def _label(data):
    return f"for n = {len(data['x'])}, B = {data['block']}"


def _scan_drawn(n, block, rng):
    return scan_case(n, block, int(rng.integers(1 << 30)))


_COARSE = kernel_factory("make_coarse_scan_kernel")
_Q1 = dict(launch=launch_coarse_scan, expect=expected_scan, compare=close(RTOL, 1e-5))

Q1 = question(
    "ps9.q1", "a coarsened work-efficient scan", 6,
    answer=_COARSE,
    tolerance=f"|error| <= 1e-05 + {RTOL:g} x max|expected| against a float64 NumPy scan of each tile",
    tests=[
        result_test("n = 1 (no points)", 0, inputs=sized(1, 32), label=_label, **_Q1),
        result_test("one partial tile, B = 32", 1, inputs=sized(77, 32), label=_label, **_Q1),
        result_test("three tiles, the last partial, B = 64", 1, inputs=sized(700, 64), label=_label, **_Q1),
        result_test("hidden: a random size, B = 32", 0.5, hidden=True,
                    inputs=lambda rng, info: scan_case(int(rng.integers(2, 400)), 32, int(rng.integers(1 << 30))),
                    **_Q1),
        race_test("race, barrier and bounds check", 1, technique=True, inputs=sized(200, 32), **_Q1),
        signature_test("the coarsened work-efficient technique, measured (B = 32 and B = 128)", 2.5,
                       configs=[sized(256, 32), sized(700, 128)], **_Q1, label=_label,
                       features=COARSE_SCAN_SIGNATURE),
        signature_test("hidden: the coarsened technique on sizes, blocks and tiles drawn at grading time", 0,
                       hidden=True, configs=[drawn_sizes((32,), COARSEN, _scan_drawn),
                                             drawn_sizes((64, 128), COARSEN, _scan_drawn)],
                       **_Q1, features=COARSE_SCAN_SIGNATURE),
    ])


# ----------------------------------------------------------------------------- q2
def compact_case(n, block, threshold, seed):
    x = np.random.default_rng(seed).uniform(-1, 1, n).astype(np.float32)
    return {"x": x, "block": int(block), "threshold": float(threshold)}


def compact_sized(n, block, threshold=0.2):
    return lambda rng, info: compact_case(n, block, threshold, int(rng.integers(1 << 30)))


def _compact_drawn(n, block, rng):
    return compact_case(n, block, float(rng.uniform(-0.8, 0.8)), int(rng.integers(1 << 30)))


def launch_compact(answer, data):
    n, block = len(data["x"]), data["block"]
    blocks = max(1, -(-n // block))
    out = np.full(n, UNTOUCHED, np.float32)
    counts = np.full(blocks, -1, np.int32)
    return Launch(answer.kernel(block), blocks, block,
                  {"x": np.asarray(data["x"]), "threshold": np.float32(data["threshold"]), "out": out,
                   "counts": counts}, outputs=("out", "counts"), blocks=data.get("blocks"))


def expected_compact(data):
    x, block = np.asarray(data["x"]), data["block"]
    out = np.full(x.size, UNTOUCHED, np.float32)
    counts = []
    for start in range(0, max(x.size, 1), block):
        kept = x[start:start + block][x[start:start + block] > np.float32(data["threshold"])]
        out[start:start + kept.size] = kept
        counts.append(kept.size)
    return {"out": out, "counts": np.array(counts, np.int32)}


COMPACT_SIGNATURE = (
    Feature("barriers per block", lambda m, data: m["barriers_per_block"], between(0, 2),
            "a ballot gives each lane its rank in its warp (the set bits below it), the warps' counts one barrier "
            "later give the warp's offset: no block-wide scan of log2 B levels", "1 barrier"),
    Feature("thread span (busiest thread's statements / mean)", lambda m, data: m["thread_span"],
            at_most(lambda data: 3.0), "every thread places its own value", "a few statements per thread"),
    warp_share(at_most(lambda data: 1 + data["block"] / 32 / 4),
               "every warp votes and places its own lanes' values; only the offsets of the B / 32 warps may give "
               "one lane a few more statements", "1 + (warps per block) / 4: one lane adding the warps' counts"),
    no_atomics("the positions come from the votes' counts, so the order is kept; an atomic counter would not keep it",
               "no atomics"),
)

_COMPACT = kernel_factory("make_compact_kernel")
_Q2 = dict(launch=launch_compact, expect=expected_compact)

Q2 = question(
    "ps9.q2", "compaction within a tile by warp votes", 3,
    answer=_COMPACT, tolerance="exact (values are copied, never computed)",
    tests=[
        result_test("one warp, nothing kept (no points)", 0, inputs=compact_sized(32, 32, 2.0), **_Q2),
        result_test("two tiles of 64, the last partial", 1, inputs=compact_sized(100, 64), **_Q2),
        result_test("hidden: a random size and threshold, B = 96", 0.5, hidden=True,
                    inputs=lambda rng, info: compact_case(int(rng.integers(1, 300)), 96, float(rng.uniform(-1, 1)),
                                                          int(rng.integers(1 << 30))), **_Q2),
        race_test("race, warp and bounds check", 0.5, technique=True, inputs=compact_sized(150, 64), **_Q2),
        signature_test("ranks by warp votes, measured (B = 64 and B = 128)", 1,
                       configs=[compact_sized(128, 64), compact_sized(300, 128, -0.3)], **_Q2,
                       features=COMPACT_SIGNATURE),
        signature_test("hidden: ranks by warp votes on sizes, blocks and thresholds drawn at grading time", 0,
                       hidden=True, configs=[drawn_sizes((32,), 1, _compact_drawn),
                                             drawn_sizes((64, 96, 128), 1, _compact_drawn)],
                       **_Q2, features=COMPACT_SIGNATURE),
    ])


# ----------------------------------------------------------------------------- q3
#: The coarsening factors and blocks a layout is judged on (drawn at grading time in the hidden test).
LAYOUT_PER_THREAD, LAYOUT_BLOCKS = range(2, 17), (32, 64, 128)
#: The most shared words a layout may take, over the tile's values (a larger array is refused, not profiled).
LAYOUT_MAX_WORDS = 2


def staged_words(per_thread, block, period, gap):
    """Shared words of a tile of ``per_thread * block`` values with value i stored at ``i + gap * (i // period)``."""
    tile = per_thread * block
    return tile + gap * ((tile - 1) // period)


def staging_kernel(per_thread, block, period, gap):
    """The grader's kernel for one layout: the block stages ``per_thread * block`` values coalesced (thread t
    stores values t, t + B, ...), then thread t adds its own ``per_thread`` consecutive values, all through
    the layout ``i + gap * (i // period)``."""
    words = staged_words(per_thread, block, period, gap)

    @cuda.jit
    def stage_and_add(x, out):
        staged = cuda.shared.array(words, float32)
        t = cuda.threadIdx.x
        for row in range(per_thread):
            k = row * block + t
            staged[k + gap * (k // period)] = x[k]
        cuda.syncthreads()
        total = float32(0)
        for step in range(per_thread):
            k = per_thread * t + step
            total += staged[k + gap * (k // period)]
        out[t] = total

    return stage_and_add


def _layout_configs(configs):
    return lambda rng, info: {"configs": [list(c) for c in configs]}


def _drawn_layout_configs(rng, info):
    """One even C with an odd factor (where a gap every 32 words wastes memory), one odd C, one C from the
    whole range, each with a block drawn from ``LAYOUT_BLOCKS``."""
    evens = [c for c in LAYOUT_PER_THREAD if c % 2 == 0 and c & (c - 1)]
    odds = [c for c in LAYOUT_PER_THREAD if c % 2]
    picks = [int(rng.choice(evens)), int(rng.choice(odds)), int(rng.choice(list(LAYOUT_PER_THREAD)))]
    return {"configs": [[c, int(rng.choice(LAYOUT_BLOCKS))] for c in picks]}


def _valid_layout(layout, per_thread, block):
    where = f"staging_layout({per_thread}, {block})"
    if not isinstance(layout, (tuple, list)) or len(layout) != 2:
        raise fail(f"{where} returned {layout!r:.80}, not a pair (period, gap)", "answer")
    period, gap = layout
    if any(isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) for v in (period, gap)):
        raise fail(f"{where} returned {layout!r:.80}: period and gap must be integers", "answer")
    period, gap = int(period), int(gap)
    if period < 1 or gap < 0:
        raise fail(f"{where} returned period {period} and gap {gap}: the period must be at least 1 and the gap "
                   "at least 0", "answer")
    if staged_words(per_thread, block, period, gap) > LAYOUT_MAX_WORDS * per_thread * block:
        raise fail(f"{where} returned period {period} and gap {gap}: "
                   f"{staged_words(per_thread, block, period, gap)} shared words for {per_thread * block} values, "
                   f"more than {LAYOUT_MAX_WORDS} per value", "memory")
    return period, gap


def layout_test(name, points, inputs, *, hidden=False):
    """The student's ``staging_layout(C, B)`` on each configuration, run in the grader's staging kernel under
    the course's profiler: the result must be right, the accesses conflict-free (one wavefront per warp-wide
    access) and the shared array no larger than the least conflict-free layout of the family needs."""
    def produce(answer, data):
        # The profiles run here, in the submission's worker (as every measurement of the problem sets does), and
        # only for a layout the judge will accept; the judge checks the layouts again.
        results = []
        for per_thread, block in data["configs"]:
            layout = answer.value(per_thread, block)
            result = {"layout": list(layout) if isinstance(layout, (tuple, list)) else layout}
            try:
                period, gap = _valid_layout(layout, per_thread, block)
            except TestFailure:
                results.append(result)
                continue
            x = np.random.default_rng(per_thread * block).uniform(-1, 1, per_thread * block).astype(np.float32)
            run = profile_launch(Launch(staging_kernel(per_thread, block, period, gap), 1, block,
                                        {"x": x, "out": np.zeros(block, np.float32)}, outputs=("out",)))
            want = x.astype(np.float64).reshape(block, per_thread).sum(axis=1)
            m = run["metrics"]
            result.update(sums_right=bool(np.allclose(run["outputs"]["out"], want, rtol=1e-5, atol=1e-5)),
                          wavefronts_per_access=float(m["shared_wavefronts"] / max(m["shared_ideal_wavefronts"], 1)))
            results.append(result)
        return results

    def judge(data, got, info):
        for (per_thread, block), result in results_per_case(got, data["configs"], "the layouts"):
            period, gap = _valid_layout(result.get("layout"), per_thread, block)
            ratio = result.get("wavefronts_per_access")
            if result.get("sums_right") is not True or type(ratio) is not float or not np.isfinite(ratio):
                raise fail(f"C = {per_thread}, B = {block}: the staged values did not come back", "answer")
            label = f"C = {per_thread}, B = {block}, layout (period {period}, gap {gap})"
            # The layout is plain data: the judge decides the conflicts itself, exactly (the worker's profile,
            # which a submission could forge, is only a cross-check).
            if not _conflict_free(per_thread, block, period, gap) and ratio <= 1.0 + 1e-9:
                raise _technique_failure(
                    f"{label}: two lanes of a warp hit the same bank in some access of the staging kernel; a "
                    "conflict-free layout needs one shared wavefront per warp-wide access",
                    {"measured": ratio, "low": 1.0, "high": 1.0, "unit": "wavefronts / ideal (as reported)"})
            if ratio > 1.0 + 1e-9:
                raise _technique_failure(
                    f"{label}: the profiler measured {ratio:.3g} shared wavefronts per warp-wide access; a "
                    "conflict-free layout needs 1", {"measured": ratio, "low": 1.0, "high": 1.0,
                                                    "unit": "wavefronts / ideal"})
            words, least = staged_words(per_thread, block, period, gap), least_staged_words(per_thread, block)
            if words > least:
                raise _technique_failure(
                    f"{label}: conflict-free, but {words} shared words for {per_thread * block} values; a layout "
                    f"of this family does it in {least}",
                    {"measured": words, "low": per_thread * block, "high": least, "unit": "shared words"})

    return _test(name, points, inputs=inputs, produce=produce, judge=judge, hidden=hidden,
                 technique=True)


Q3 = question(
    "ps9.q3", "a conflict-free staging layout for C values per thread, in the fewest words", 2,
    answer=function("staging_layout", allowed=(wavefronts,)),
    tolerance="exact: one shared wavefront per warp-wide access, measured by the course's profiler, and no more "
              "shared words than the least conflict-free layout of the family",
    tests=[
        layout_test("your layouts, profiled in a staging kernel: C = 4 and 3 (B = 64), C = 6 (B = 32), C = 12 "
                    "(B = 128)", 1, _layout_configs([(4, 64), (3, 64), (6, 32), (12, 128)])),
        layout_test("hidden: your layouts for coarsening factors and blocks drawn at grading time", 1,
                    _drawn_layout_configs, hidden=True),
    ])

QUESTIONS = (Q1, Q2, Q3)
