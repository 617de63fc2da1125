"""Problem set 5 (``solutions/ps5_hac.ipynb``), on the shared harness (:mod:`course_lib.grading.authoring.harness`).

- ``ps5.q1`` (6 points): the fusion step as a segmented reduction **in warps, by shuffles**: the
  lesson's ``fusion_segmented_kernel`` scans in shared memory with two barriers per step; here each
  warp of the block scans its 32 keys (a *chunk*) in registers (``shfl_up_sync``) and the warps
  hand the state of the last run on through shared memory, one barrier per warp. Answer:
  ``check("ps5.q1", fusion_warp)``, a kernel launched as ``fusion_warp[1, 32 * w](keys, weights,
  src, dst)`` for any number w >= 1 of warps. Graded on results (guarded buffers) on awkward inputs
  and blocks of 1 to 4 warps, the race and warp checker (two warps), and the technique's signature
  (``WARP_SCAN_SIGNATURE``) measured by the profiler on three configurations: blocks of 64 threads
  (two warps) on long runs crossing the chunks and the blocks, blocks of 96 threads (three
  warps, not a power of two) on 37 short runs, a partial last chunk and a partial block, and a block of one
  warp on long runs; and, in a hidden test, on two configurations drawn from the grading seed (3 to 20 runs of 1
  to 80 entries, a block of one warp and one of 2 to :data:`MAX_DRAWN_WARPS` warps). A kernel whose technique
  depends on the block (thread 0 walking the keys when the block is one warp) fails there. Each
  feature counts per *warp chunk*, the 32 keys one warp takes in one pass of the block (passes x
  warps of them). Features and bounds, from the cost model of a segmented Hillis-Steele scan in
  registers (log2(32) = 5 steps, each shifting 1 to 4 values by ``shfl_up_sync``, then up to 8
  broadcasts; every lane handles its own key) with the carry between warps in shared memory:

  * warp shuffles per warp chunk: between 5 x 1 = 5 (only the sums shifted, the lanes of a run found
    by ``match_any_sync``) and 5 x 4 + 8 = 28 (a shared-memory scan has none, lane 0 fetching the
    others' values one by one has 31 or more per value);
  * atomic operations: none;
  * global and shared memory requests per warp chunk: between 1 and 24, or 12 + 2 w for w > 4 warps (a key, a
    weight and the next key loaded, three tombstone stores and the sum: 7; the carry handed on in turns: up to 6, or the
    states of the warps below folded by each warp: 10 on average in a block of four warps; a scan
    through shared memory reads three values and writes one at each of 5 or more steps, 27 or more
    in all; a lane looping over the keys makes one per key);
  * block-wide barriers per warp chunk: at most 2, and one more before the first pass (one per warp's turn with
    the carry, or two per pass when the warps publish their states at once: 2 per chunk for a block of one warp;
    a scan in shared memory waits at two per step, 2 x log2(32 w) >= 10 per pass of the block);
  * thread span (busiest lane's statements / mean): at most 1.3 (every lane does the same steps);
  * SIMT efficiency (active lanes per warp instruction / 32): at least 0.8 (work one lane does while
    the others wait lowers it);
  * warp share (busiest warp's instructions over the block's mean): at most :data:`MAX_WARP_SHARE` (about 1
    when every warp scans its chunk of each pass; w when one warp scans the block's keys while the others wait).
- ``ps5.q2`` (4 points): measure and explain. Answer: ``{"amdahl": f(stage_seconds,
  accelerated, speedup), "copies": g(loop, n, seed)}``: Amdahl's law from measured stage
  times, and the host<->device copies (both directions) of one iteration of the clustering loop
  ``loop(graph, max_merges)`` it is given, measured with ``course_lib.sim.record`` on
  ``tied_graph(n, seed)``. The grader calls ``g`` on the lesson's two loops (:class:`GpuLoop`: the host round trip
  and the device-resident loop) and on loops of its own that add 1 to 3 round trips per merge (``COPIES_DECOYS``),
  on a graph size and seed drawn by the grader (the grader's loops in a hidden test, on the grading seed), and
  records every run itself
  (:func:`course_lib.grading.authoring.recorded.run_measurement_test`): a pasted count, or one of a loop of the
  student's own instead of the one given, scores 0 for the copies and caps the question at half.
- ``ps5.q3`` (4 points): the device-resident merge loop written on the host, in its own module
  (:mod:`course_lib.hac._questions_q3`); its given kernels are re-exported here, where the problem set imports them.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ..grading.core import TestFailure
from ..grading.authoring.harness import STORED, Launch, calls_test, function, kernel, question, race_test, result_test
from ..grading.authoring.recorded import run_measurement_test
from ..grading.authoring.signature import Feature, at_most, between, no_atomics, signature_test, warp_share
from ..sim import record
from .api import cluster
from .data import tied_graph
from ._questions_q3 import (PAIR_BLOCK, Q3, Q3_MAX_ALLOCATIONS, Q3_MAX_COPIES, Q3_MAX_DTOH, Q3_RTOL, Q3_SPARE_LAUNCHES,
                           closest_pair_kernel, judge_merge_counts, judge_merges, merge_pair_kernel, merges_reference,
                           similarity_case)
from ..grading.resources import answer_key

# The answer keys are the grader's (grading_resources/keys/ps5_hac.py), read when a value is judged.
_amdahl_expected = answer_key("ps5", "_amdahl_expected")

PROBLEM_SET = "ps5"
#: A warp reduces 32 keys (a chunk) at a time; a block of w warps takes 32 w keys per pass.
WARP = 32
#: Relative tolerance of a run's sum against the float64 reference (float32, any order of additions).
RTOL = 1e-5
#: Global and shared memory requests per warp chunk: a key, a weight and the next key loaded, three tombstone stores
#: and the sum (7), then the carry between warps: up to 6 handed on in turns (three reads, three writes), or the
#: states of the warps below folded by each warp (4 reads per warp below and the block's carry: up to 17 in a block of
#: four warps, 10 on average). A scan through shared memory reads the neighbour, the sum and the first entry below and
#: writes its sum at each of its 5 or more steps (7 + 20 = 27 or more); one lane looping over the keys makes one
#: request per key (32 or more).
MAX_REQUESTS_PER_CHUNK = 24


def max_requests_per_chunk(data):
    """MAX_REQUESTS_PER_CHUNK up to four warps; beyond, the fold of the warps below grows by 2 per warp on average
    (12 + 2 w: 28 for eight warps, below the 32 of a lane looping over the keys and the 39 of a shared scan)."""
    return max(MAX_REQUESTS_PER_CHUNK, 12 + 2 * int(data.get("block", WARP)) // WARP)
#: Block-wide barriers per warp chunk: one per warp's turn with the carry plus one before the first pass, or two per
#: pass (2 / w per warp chunk) when the warps publish their states at once. A scan in shared memory waits at two per
#: step: 2 x log2(32 w) >= 12 per pass of a block of w >= 2 warps, 6 or more per warp chunk with the grader's blocks.
MAX_BARRIERS_PER_CHUNK = 2
#: Most ``warp_share`` (busiest warp's instructions over the block's mean): about 1 when every warp scans its chunk
#: of each pass, w when one warp of w scans the block's keys while the others wait.
MAX_WARP_SHARE = 1.5
#: Most warps per block of the configurations the grader draws (the kernel takes any number w >= 1).
MAX_DRAWN_WARPS = 8


# ----------------------------------------------------------------------------- q1
def fusion_case(n_runs, run_lengths, n_entries, seed):
    """k's entries: ``n_runs`` runs (neighbour l, several entries each) among ``n_entries`` entries.

    Returns plain data: sorted int64 keys ``(l << 32) | e``, float32 weights, int32 src and dst.
    """
    rng = np.random.default_rng(seed)
    lengths = [int(run_lengths(rng)) for _ in range(n_runs)]
    n = sum(lengths)
    m = max(n_entries, n)
    entries = np.sort(rng.choice(m, n, replace=False)).astype(np.int64)
    rng.shuffle(entries)
    neighbours = np.sort(rng.choice(10_000, n_runs, replace=False)).astype(np.int64)
    owner = np.repeat(neighbours, lengths)
    keys = np.sort((owner << 32) | entries)
    k = 20_000
    src = rng.integers(0, 10_000, m).astype(np.int32)
    dst = rng.integers(0, 10_000, m).astype(np.int32)
    src[keys & 0xFFFFFFFF] = k
    dst[keys & 0xFFFFFFFF] = (keys >> 32).astype(np.int32)
    weights = (0.05 + rng.random(m)).astype(np.float32)
    return {"keys": keys, "weights": weights, "src": src, "dst": dst}


def case(n_runs, run_lengths, n_entries=0, block=WARP):
    """Inputs of a test: :func:`fusion_case` with the block size (threads, whole warps) of its launch."""
    return lambda rng, info: {**fusion_case(n_runs, run_lengths, n_entries, int(rng.integers(1 << 30))),
                              "block": block}


def pairs(rng):
    """A run of one or two entries (from i, from j, or both): what the algorithm produces."""
    return rng.integers(1, 3)


def launch_fusion(answer, data):
    """One block of whole warps over the keys (their length is the count)."""
    return Launch(answer.kernel(), 1, int(data.get("block", WARP)),
                  {"keys": np.asarray(data["keys"], np.int64), "weights": np.array(data["weights"], np.float32),
                   "src": np.array(data["src"], np.int32), "dst": np.array(data["dst"], np.int32)},
                  outputs=("weights", "src", "dst"))


def expected_fusion(data):
    """float64 sums of each run in its first entry; the other entries tombstones; the rest unchanged."""
    keys = np.asarray(data["keys"], np.int64)
    weights = np.array(data["weights"], np.float64)
    src, dst = np.array(data["src"], np.int32), np.array(data["dst"], np.int32)
    neighbour, entry = keys >> 32, keys & 0xFFFFFFFF
    start = 0
    for p in range(1, len(keys) + 1):
        if p == len(keys) or neighbour[p] != neighbour[start]:
            run = entry[start:p]
            weights[run[0]] = weights[run].sum()
            weights[run[1:]] = -np.inf
            src[run[1:]] = -1
            dst[run[1:]] = -1
            start = p
    return {"weights": weights, "src": src, "dst": dst}


def _mismatch(message, cause):
    """A comparison failure; the harness adds the cause's line and hint."""
    return TestFailure(message, cause=cause)


def compare_fusion(got, expected, name):
    """Exact for the endpoints and the tombstones, relative tolerance RTOL for the sums."""
    got = np.asarray(got)
    if got.shape != expected.shape:
        raise _mismatch(f"{name} has shape {got.shape}, expected {expected.shape}", "value")
    if name.startswith("weights"):
        dead = np.isneginf(expected)
        wrong_dead = np.flatnonzero(dead != np.isneginf(got))
        if wrong_dead.size:
            e = wrong_dead[0]
            raise _mismatch(f"{name}[{e}] = {got[e]!r}, expected {expected[e]!r}", "tombstone")
        live = ~dead
        err = np.abs(got[live].astype(np.float64) - expected[live])
        bad = np.flatnonzero(~(err <= RTOL * np.abs(expected[live])))
        if bad.size:
            e = np.flatnonzero(live)[bad[0]]
            raise _mismatch(f"{name}[{e}] = {got[e]!r}, expected {expected[e]:.7g}", "value")
        return
    bad = np.flatnonzero(got != expected)
    if bad.size:
        e = bad[0]
        raise _mismatch(f"{name}[{e}] = {got[e]}, expected {expected[e]}", "tombstone")


def run_crosses_chunks(got, expected, data) -> bool:
    """Diagnosis: every wrong entry belongs to a run that crosses a boundary between chunks of 32 keys."""
    got = np.asarray(got, np.float64)
    expected = np.asarray(expected, np.float64)
    if got.shape != expected.shape:
        return False
    wrong = np.flatnonzero(~((got == expected) | (np.abs(got - expected) <= RTOL * np.abs(expected))))
    keys = np.asarray(data["keys"], np.int64)
    if not wrong.size or not keys.size:
        return False
    neighbour, entry = keys >> 32, keys & 0xFFFFFFFF
    position = {int(e): p for p, e in enumerate(entry)}
    for e in wrong:
        p = position.get(int(e))
        if p is None:
            return False
        run = np.flatnonzero(neighbour == neighbour[p])
        if run[0] // WARP == run[-1] // WARP:
            return False
    return True


def _chunks(data):
    """Warp chunks: the passes of the block over the keys times its warps (every warp takes part in a pass)."""
    block = int(data.get("block", WARP))
    return max(1, -(-len(data["keys"]) // block) * (block // WARP))


def memory_requests(metrics, data):
    """Global and shared memory requests (loads and stores) per warp chunk."""
    requests = metrics["global_load_requests"] + metrics["global_store_requests"] + metrics["shared_requests"]
    return requests / _chunks(data)


WARP_SCAN_SIGNATURE = (
    Feature("warp shuffles per warp chunk", lambda m, d: m["shuffles"] / _chunks(d), between(5, 28),
            "5 scan steps, each shifting the running sum (and the neighbour, the first entry) one, 2, 4, 8, 16 lanes "
            "down with cuda.shfl_up_sync, then a few broadcasts (cuda.shfl_sync)",
            "5 steps x 1-4 values + up to 8 broadcasts"),
    no_atomics("the run's last lane writes its sum; no atomics", "one writer per run"),
    Feature("memory requests per warp chunk", memory_requests, between(1, max_requests_per_chunk),
            "one key per lane and chunk, the scan in registers, only the carry between warps in shared memory (no "
            "shared-memory scan, no lane looping over a run)",
            "7 loads and stores per chunk + the carry between warps"),
    Feature("block-wide barriers per warp chunk", lambda m, d: m["barriers_per_block"] / _chunks(d),
            at_most(lambda d: MAX_BARRIERS_PER_CHUNK + 1 / _chunks(d)),
            "the warps scan without barriers; they wait only to hand the carry on, one cuda.syncthreads() per warp",
            "one barrier per warp's turn, or two per pass, + one before the first pass"),
    Feature("thread span (busiest lane's statements / mean)", lambda m, d: m["thread_span"], at_most(1.3),
            "every lane takes the same scan steps for its own key", "the same work per lane"),
    Feature("SIMT efficiency (active lanes per warp instruction / 32)", lambda m, d: m["simt_efficiency"],
            between(0.8, 1.0), "all 32 lanes scan together; no lane works alone while the others wait",
            "every lane active in the scan"),
    warp_share(at_most(MAX_WARP_SHARE),
               "every warp of the block scans its own chunk of each pass; no warp scans the block's keys while the "
               "others wait at the barriers", "the same steps per warp: about 1; one warp doing the block's work: w"),
)

_FUSION = kernel("fusion_warp")
_Q1 = dict(launch=launch_fusion, expect=expected_fusion, compare=compare_fusion)


def _long_runs(rng):
    return rng.integers(3 * WARP, 5 * WARP)


def _hidden_random(rng, info):
    """Random runs, on a block of 1 to 4 warps drawn too."""
    block = WARP * int(rng.integers(1, 5))
    return {**fusion_case(int(rng.integers(1, 12)), lambda r: r.integers(1, 2 * WARP), 0, int(rng.integers(1 << 30))),
            "block": block}


def _drawn(one_warp):
    """A configuration drawn at grading time: a block of one warp, or of 2 to MAX_DRAWN_WARPS warps, over 3 to
    20 runs of 1 to 80 entries (runs crossing chunks and passes, a partial last pass)."""
    def inputs(rng, info):
        warps = 1 if one_warp else int(rng.integers(2, MAX_DRAWN_WARPS + 1))
        return {**fusion_case(int(rng.integers(3, 21)), lambda r: r.integers(1, 81), 0, int(rng.integers(1 << 30))),
                "block": WARP * warps}

    return inputs


Q1 = question(
    "ps5.q1", "the fusion step as a segmented reduction in warps, by shuffles", 6, answer=_FUSION,
    tolerance=f"sums within {RTOL:g} (relative) of a float64 reference; endpoints and tombstones exact",
    diagnose=[("chunk", run_crosses_chunks)],
    tests=[
        result_test("no entries (no points: a kernel doing nothing passes)", 0, inputs=case(0, pairs), **_Q1),
        result_test("one entry", 0.5, inputs=case(1, lambda r: 1, 5), **_Q1),
        result_test("one run of two entries, two warps", 0.5, inputs=case(1, lambda r: 2, 6, 2 * WARP), **_Q1),
        result_test("runs of one or two, more entries than the warp", 1, inputs=case(WARP + 3, pairs), **_Q1),
        result_test("long runs crossing the chunks of 32 keys and the passes of three warps", 1,
                    inputs=case(3, _long_runs, 0, 3 * WARP), **_Q1),
        result_test("hidden: random runs, one to four warps", 0.5, hidden=True, inputs=_hidden_random, **_Q1),
        race_test("race and warp check, two warps", 1, technique=True,
                  inputs=case(5, lambda r: r.integers(1, WARP + 9), 0, 2 * WARP),
                  launch=launch_fusion, expect=expected_fusion, compare=compare_fusion),
        signature_test("the warp-scan technique, measured (profiler; long runs on blocks of 64, 37 short ones on "
                       "blocks of 96, long runs on one warp)", 1, configs=[case(2, _long_runs, 0, 2 * WARP),
                                                                          case(37, pairs, 0, 3 * WARP),
                                                                          case(3, _long_runs, 0, WARP)],
                       **_Q1, features=WARP_SCAN_SIGNATURE,
                       label=lambda d: f"for {len(d['keys'])} keys, blocks of {d['block']}"),
        signature_test("hidden: the warp-scan technique on runs and blocks drawn at grading time (profiler; one "
                       "warp, and 2 to 8 warps)", 0.5, hidden=True, configs=[_drawn(True), _drawn(False)], **_Q1,
                       features=WARP_SCAN_SIGNATURE),
    ])


# ----------------------------------------------------------------------------- q2
STAGES = ("matching", "suppression", "weighting", "collection", "integration", "fusion")
#: The thesis's C profile (its Cuadro 1), seconds.
THESIS_CPU = {"matching": 43.89, "suppression": 64.60, "weighting": 118.84, "collection": 71.83, "integration": 0.10,
              "fusion": 0.15}


def _amdahl_cases(rng, info):
    random = {s: float(rng.uniform(0.01, 10)) for s in STAGES}
    chosen = [s for s in STAGES if rng.random() < 0.5] or ["weighting"]
    return [(THESIS_CPU, ["matching", "suppression", "weighting", "collection"], 10.0),
            (THESIS_CPU, ["weighting"], 46.0),
            (random, chosen, float(rng.uniform(2, 100)))]


def _hidden_amdahl_cases(rng, info):
    random = {s: float(rng.uniform(0.01, 10)) for s in STAGES}
    return [(random, list(STAGES), 7.0), (random, [], 50.0), (THESIS_CPU, ["fusion"], 1e9)]


class GpuLoop:
    """A clustering loop ``run(graph, max_merges)`` for ``copies`` to measure: ``hac.cluster(graph, method,
    max_merges=max_merges)``, then ``extra`` more host<->device round trips of a small array per merge (0 for the
    lesson's loops; the grader's own loops add some, so that their copies per iteration differ).

    Parameters
    ----------
    method : {"gpu", "gpu_roundtrip"}
    extra : int
        Round trips (one copy each way) added per merge.
    """

    def __init__(self, method, extra=0):
        self.method, self.extra = method, int(extra)
        self.copies = None  # the copies of the last call, recorded by the call itself (the grader's measurement)

    def __call__(self, graph, max_merges):
        from numba import cuda

        with record() as own:
            result = cluster(graph, self.method, max_merges=max_merges)
            for _ in range(self.extra * int(max_merges)):
                cuda.to_device(np.zeros(1, np.int32)).copy_to_host()
        self.copies = sum(own.summary()[direction] for direction in ("HtoD_count", "DtoH_count"))
        return result

    def __repr__(self):
        return f"GpuLoop({self.method!r})"  # the extra copies are the grader's draw: not shown


def _extra_round_trips(config):
    """The round trips per merge a loop of the grader's adds: from the drawn seed (1 to 3), unknown beforehand."""
    return 1 + config[1] % 3


#: The loops ``copies`` measures: the lesson's two, and two of the grader's whose copies per iteration differ.
COPIES_LOOPS = {"the host round trip": lambda config: GpuLoop("gpu_roundtrip"),
                "the device-resident loop": lambda config: GpuLoop("gpu")}
COPIES_DECOYS = {"a round-trip loop of the grader's, more copies per merge":
                 lambda config: GpuLoop("gpu_roundtrip", _extra_round_trips(config)),
                 "a device-resident loop of the grader's, some copies per merge":
                 lambda config: GpuLoop("gpu", _extra_round_trips(config))}


def _copies_configs(rng, info):
    """One graph drawn at grading time: n in [6, 10) nodes and a seed."""
    return [(int(rng.integers(6, 10)), int(rng.integers(1000)))]


def _copies_recorded(loop, config):
    """The grader's measurement: what ``loop`` records of its own copies on ``tied_graph(n, seed)`` for two merges,
    less for one."""
    graph = tied_graph(config[0], seed=config[1])
    loop(graph, 2)
    after_two = loop.copies
    loop(graph, 1)
    return after_two - loop.copies


def _call_copies(copies, loop, config):
    return copies(loop, *config)


_COPIES = function("copies", allowed=(cluster, record, tied_graph))
_COPIES_TEST = dict(key="copies", configs=_copies_configs, call=_call_copies, truth=_copies_recorded)

Q2 = question(
    "ps5.q2", "measure and explain: Amdahl's law and the copies of each loop", 4,
    answer={"amdahl": function("amdahl"), "copies": _COPIES},
    tolerance="the speedups to 1e-9 (relative); the copies exact",
    tests=[
        calls_test("Amdahl: the thesis's stages and a random profile", 1, key="amdahl", rtol=1e-9,
                   args=_amdahl_cases, expect=_amdahl_expected,
                   explain=STORED),
        calls_test("hidden: every stage, no stage, a huge speedup", 1, key="amdahl", rtol=1e-9, hidden=True,
                   args=_hidden_amdahl_cases, expect=_amdahl_expected),
        run_measurement_test("copies of one iteration of the lesson's two loops (record(); graphs drawn by the "
                             "grader)", 1, runs=COPIES_LOOPS, **_COPIES_TEST),
        run_measurement_test("hidden: copies of one iteration of the grader's own loops (record(); graphs drawn "
                             "at grading time)", 1, runs=COPIES_DECOYS, hidden=True, **_COPIES_TEST),
    ])


QUESTIONS = (Q1, Q2, Q3)
