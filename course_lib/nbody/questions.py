"""Problem set 1 (``solutions/ps1_nbody.ipynb``), on the shared harness (:mod:`course_lib.grading.authoring.harness`).

- ``ps1.q1`` (6 points): **q threads per body**, the split of each body's source loop that lesson 1 (cell 37,
  after GPU Gems 3 ch. 31) describes for modest N and neither prints nor ships. Answer:
  ``check("ps1.q1", make_split_kernel)``, a function of the tile P (8 to 256, as the statement says: the largest
  tile drawn) and the split q (a power of two, 1 to 32, dividing P) returning a kernel launched as ``kernel[ceil(N q / P), P](bodies, softening_sq, acc)``: block b
  serves the P / q bodies from b P / q, thread t the body b P / q + t // q (its q threads are consecutive lanes of
  one warp) as its part t % q. The block stages P sources a round in shared memory, one per thread; each of a
  body's q threads sums its own share of them (P / q each, any fixed split); the q partial sums are then added
  by a reduction (shared memory with barriers, or warp shuffles), and one thread stores the body's sum.
  Graded on results (guarded buffers, q = 1 included), the race and barrier checker (P = 64, q = 8: two warps a
  block, a racy reduction shows), and the technique's signature, measured by the profiler on two configurations
  (P = 64, q = 4, blocks of two warps and a partial last block; P = 24, q = 8, N = 101: not a power of two,
  partial warps, a partial last tile) and, in a hidden test (no points of its own; its failure caps the question
  like the visible one's), on three drawn at grading time from the grading seed (:func:`drawn_case`): P in
  {64, 128, 256} with q in {16, 32} (at least 2 bodies a block) and N in [``MAX_N`` / 2, ``MAX_N``), P in
  {32, 64, 128} with q = 2, and P in {32, 128} with q in {4, 8}, both with N in [3P, 6P), each N odd; the profiler runs one block of each, drawn by
  ``sample_blocks`` (any block, the partial last one included, equally likely), and the features count the
  work of the blocks that ran. A kernel that splits only at some q or N fails there. Features and bounds
  (``SPLIT_SIGNATURE``), from the cost model of the split (every block stages the N sources once, P records a
  round, each thread one record; each thread sums N / q of them from shared memory, then q partial sums a body
  are reduced):

  * global loads, in 16-byte body records per interaction: at most 1.25 x (blocks N + q N_live) / (N_live N)
    (sources once per block, each destination once per thread of its body);
  * shared bytes allocated per block: more than 0 and at most 3 P records of 16 bytes (a tile, or a
    double-buffered one, and P partial sums of 3 floats);
  * shared accesses per lane, per interaction: at most 2 x the model's (4 reads of a staged record per
    interaction, every padded source included, plus the staging stores and a reduction's 12 q (1 + log2 q)
    per body; twice, so that a body's position kept in shared memory, 3 more reads, passes): a body's q threads
    each summing every source read q times as many (4 q), caught at the visible configurations' q = 4 and 8;
    at q = 2 that is within the bound, so a hidden test (:func:`work_ratio_test`) profiles every block of the
    factory's kernels at q = 2 and q = 4 on the same N in (P, 2P), at every tile the tests launch q = 2 with
    (:data:`TILES_AT_SPLIT_2`), and allows at most 1.5 x the work of q = 4 (1.1 x at P = 8, where a tile's fixed
    costs weigh more);
  * global load bytes per request: at least 32 (or 3P for P < 11): the block stages the tile together;
  * block barriers per block: between ceil(N / 2P) and 2 ceil(N / P) + 2 log2 q + 4;
  * thread span (busiest thread over the mean): at most 1.5 x (P blocks / q N_live) x (1 + q^2 / N) (every
    thread sums N / q interactions; threads past N may skip theirs; one thread may add the q partial sums in
    a row): one thread per body doing the whole loop while the other q - 1 wait has q;
  * warp share: at most 1.25 x the model's (N / q interactions per live lane);
  * atomic operations: none (the q partial sums are reduced, and one thread stores each body).
- ``ps1.q2`` (2 points): predict, then measure the split kernel's global loads. Answer:
  ``{"kernel": make_split_kernel, "predicted_bytes": f(n, tile, q), "measure": g(make_kernel, n, tile, q)}``,
  where ``g`` measures with the profiler the bytes per interaction of ``make_kernel(tile, q)`` launched on n
  bodies. The grader calls ``g`` on the student's factory and on decoys of its own (a kernel reading every
  source from global memory, and the lesson's one-thread-per-body tiled kernel, launched the same way), for sizes,
  tiles and splits drawn at grading time, and measures each launch itself: a number that was not measured on
  the kernel given cannot match, and a failure there caps the question at half.
- ``ps1.q3`` (2 points): the split q for a device at modest N. Answer:
  ``choose_split(n, tile, sm_count, max_threads_per_sm, warps_wanted)``: the smallest q whose grid fills every SM
  with ``warps_wanted`` resident warps (:func:`split_rule`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, float32

from ..grading.authoring.harness import (STORED, Launch, calls_test, close, function, kernel_factory, measurement,
                                         question, race_test, result_test, sign_flipped)
from ..grading.authoring.measuring import kernel_measurement_test
from ..grading.authoring.signature import (Feature, at_least, at_most, between, block_barriers, load_bytes_per_request,
                                           no_atomics, sample_blocks, shared_bytes_per_block, signature_test,
                                           warp_share, work_ratio_test)
from .api import pack_bodies
from .data import plummer_sphere, uniform_cube
from .kernels import interaction, nbody_tiled_kernel
from .reference import accelerations_reference
from ..grading.resources import answer_key

# The answer keys are the grader's (grading_resources/keys/ps1_nbody.py), read when a value is judged.
predicted_bytes = answer_key("ps1", "predicted_bytes")
split_warps = answer_key("ps1", "split_warps")
split_rule = answer_key("ps1", "split_rule")

PROBLEM_SET = "ps1"
SOFTENING = 0.05
#: Relative tolerance (of max |a|) against the float64 reference: float32 sums in any order.
RTOL = 1e-4
#: N of the measure-and-explain question, its tile and the splits measured there.
MEASURE_N, MEASURE_TILE, MEASURE_SPLITS = 64, 16, (1, 2, 4)
#: The largest N the question's tests use (its statement says so): a configuration drawn at grading time reaches it.
MAX_N = 1024
#: The largest split q the question allows: a body's q threads are lanes of one warp.
MAX_SPLIT = 32


# ----------------------------------------------------------------------------- q1
def bodies_case(n, tile, q, seed, generator=plummer_sphere):
    """``inputs`` data: N bodies (float32 (N, 4) records), the tile and the split the kernel is made with."""
    pos, _, mass = generator(n, seed=seed)
    return {"bodies": pack_bodies(pos, mass), "tile": int(tile), "q": int(q)}


def case(n_of, tile, q, generator=plummer_sphere):
    """A fixed configuration: ``n_of(bodies per block, rng)`` bodies, tile P and split q."""
    return lambda rng, info: bodies_case(n_of(tile // q, rng), tile, q, int(rng.integers(1 << 30)), generator)


def split_grid(n, tile, q):
    """Blocks of the split launch: ceil(N q / P), P / q bodies each (at least one block)."""
    return max(1, -(-n * q // tile))


def launch_split(answer, data):
    """The launch every q1 test uses: ceil(N q / P) blocks of P threads; acc starts as NaN (unwritten shows)."""
    bodies, tile, q = np.asarray(data["bodies"], np.float32), int(data["tile"]), int(data["q"])
    acc = np.full((len(bodies), 3), np.nan, np.float32)
    return Launch(answer.kernel(tile, q), split_grid(len(bodies), tile, q), tile,
                  {"bodies": bodies, "softening_sq": np.float32(SOFTENING**2), "acc": acc}, outputs=("acc",),
                  blocks=data.get("blocks"))


def expected_acc(data):
    bodies = np.asarray(data["bodies"], np.float64)
    return {"acc": accelerations_reference(bodies[:, :3], bodies[:, 3], SOFTENING)}


def _blocks(data):
    return split_grid(len(data["bodies"]), data["tile"], data["q"])


def blocks_run(data):
    """The blocks the profiler ran: a drawn sample (``data["blocks"]``) of a large launch, else every block."""
    blocks = data.get("blocks")
    return list(blocks) if blocks is not None else list(range(_blocks(data)))


def destinations_run(data):
    """Bodies of the blocks that ran (block b serves bodies b P / q .. (b + 1) P / q - 1 below N)."""
    n, span = len(data["bodies"]), data["tile"] // data["q"]
    return sum(max(0, min(span, n - b * span)) for b in blocks_run(data))


def _tiles(data):
    return -(-len(data["bodies"]) // data["tile"])


def records_per_interaction(metrics, data):
    """Global bytes loaded / 16-byte body record / the interactions of the blocks that ran (N per body)."""
    return metrics["global_load_bytes"] / 16 / (destinations_run(data) * len(data["bodies"]))


def staged_once_per_block(data):
    """Range of records per interaction when every block loads each source once and each of a body's q
    threads loads its destination."""
    n, ran = len(data["bodies"]), destinations_run(data)
    once = (len(blocks_run(data)) * n + data["q"] * ran) / (ran * n)
    return 0.0, 1.25 * once


def shared_per_interaction(metrics, data):
    """Shared loads and stores per lane over the interactions of the blocks that ran."""
    return metrics["shared_lane_accesses"] / (destinations_run(data) * len(data["bodies"]))


def model_shared_per_interaction(data):
    """The split's shared accesses per interaction: 4 reads a padded source per body slot (every thread of
    a block sums its share of every staged tile), 4 staging stores a source per block, and a reduction of
    3 components over q threads, log2 q levels of at most 3 accesses each (a shared one; shuffles have none)."""
    n, tile, q = len(data["bodies"]), data["tile"], data["q"]
    blocks, ran = len(blocks_run(data)), destinations_run(data)
    slots = blocks * (tile // q)
    reads = 4 * slots * _tiles(data) * tile
    staging = 4 * blocks * _tiles(data) * tile
    reduction = 12 * q * (1 + math.log2(q)) * slots
    return (reads + staging + reduction) / (ran * n)


def model_warp_share(data):
    """The largest warp share of a block that ran, in the model: a warp's work is N / q interactions per live
    lane (lane t of block b works for body b P / q + t // q), so only a partial last block has idle warps."""
    n, tile, q = len(data["bodies"]), data["tile"], data["q"]
    warps = -(-tile // 32)
    shares = []
    for b in blocks_run(data):
        live = ((b * (tile // q) + np.arange(tile) // q) < n).astype(int)
        per_warp = np.array([live[32 * w:32 * w + 32].sum() for w in range(warps)], float) + 1  # + staging
        shares.append(per_warp.max() / per_warp.mean())
    return max(shares)


def _span_bound(data):
    n, tile, q = len(data["bodies"]), data["tile"], data["q"]
    slots = tile * len(blocks_run(data)) / (q * destinations_run(data))
    return 1.5 * slots * (1 + q * q / n)


SPLIT_SIGNATURE = (
    Feature("global loads (body records per interaction)", records_per_interaction, staged_once_per_block,
            "every block loads each source body once, into shared memory, and the threads read it from there",
            "N sources per block of P / q bodies, plus each body's destination once per thread of it"),
    shared_bytes_per_block(between(1, lambda data: 3 * data["tile"] * 16),
                           "a block stages one tile of P body records (16 bytes each) at a time, not the whole input",
                           "one tile of P float32 (x, y, z, m) records, a second one for double buffering, P partial "
                           "sums"),
    Feature("shared accesses per interaction (loads and stores per lane)", shared_per_interaction,
            at_most(lambda data: 2 * model_shared_per_interaction(data)),
            "each of a body's q threads sums only its own share of every staged tile: a staged source is read "
            "once for each body, not once by each of its q threads",
            "4 reads of a staged record per interaction, the staging stores and a reduction of q partial sums"),
    load_bytes_per_request(at_least(lambda data: min(32, 3 * data["tile"])),
                           "the threads of the block stage the tile together, each loading its own record, so every "
                           "load request serves the lanes of a warp",
                           "a request serves the active lanes of a warp: >= 8 of 4 bytes"),
    block_barriers(between(lambda data: -(-len(data["bodies"]) // (2 * data["tile"])),
                           lambda data: 2 * _tiles(data) + 2 * math.log2(data["q"]) + 4),
                   "a block barrier after the tile is staged and one before it is overwritten; a warp barrier does not "
                   "order the warps of a block", "one or two syncthreads per tile, and a reduction's"),
    Feature("thread span (busiest thread's statements / mean)", lambda m, data: m["thread_span"],
            at_most(_span_bound),
            "the q threads of a body split its source loop: each sums N / q interactions, none does the whole loop",
            "N / q interactions per thread, threads past N may skip theirs, a reduction of q partial sums"),
    warp_share(at_most(lambda data: 1.25 * model_warp_share(data)),
               "every warp stages its own records and sums its own lanes' shares; no warp does the block's work "
               "while the others wait at the barriers", "N / q interactions per live lane"),
    no_atomics("the q partial sums of a body are added by a reduction, and one thread stores them with plain stores",
               "one owner per destination"),
)


def _n_label(data):
    return f"for N = {len(data['bodies'])}, tile {data['tile']}, q = {data['q']}"


def drawn_case(tiles, splits, sizes):
    """A signature configuration drawn at grading time: P from ``tiles``, q from ``splits`` (P / q >= 2), N drawn
    in ``sizes(tile)`` (odd, so the last block is partial), and one of its blocks, drawn by ``sample_blocks`` (any
    block, the partial last one included, equally likely), for the profiler to run."""
    def inputs(rng, info):
        tile = int(rng.choice(tiles))
        q = int(rng.choice([s for s in splits if 2 * s <= tile]))
        n = int(rng.integers(*sizes(tile))) | 1
        data = bodies_case(n, tile, q, int(rng.integers(1 << 30)),
                           plummer_sphere if rng.random() < 0.5 else uniform_cube)
        data["blocks"] = sample_blocks(rng, split_grid(n, tile, q), k=1)
        return data
    return inputs


#: The tiles at which q1's tests launch q = 2: the visible test's (N = 3 blocks + 1), then the hidden signature's.
VISIBLE_TILE_AT_SPLIT_2, HIDDEN_TILES_AT_SPLIT_2 = 8, (32,)
#: Every tile at which q1 launches q = 2: the work ratio is judged at each, so a kernel cannot double its loop at
#: one of them only (a branch to a doubled loop at any other tile never runs under q1's launches, which the
#: coverage test caps).
TILES_AT_SPLIT_2 = (VISIBLE_TILE_AT_SPLIT_2, *HIDDEN_TILES_AT_SPLIT_2)


def _pair_cases(rng, info):
    """Bodies for the work ratio: for each P of :data:`TILES_AT_SPLIT_2`, q = 2 and N odd in (P, 2P) drawn: a few
    blocks, all of them profiled."""
    cases = []
    for tile in TILES_AT_SPLIT_2:
        n = int(rng.integers(tile + 1, 2 * tile)) | 1
        cases.append(bodies_case(n, tile, 2, int(rng.integers(1 << 30)), uniform_cube))
    return {"cases": cases}


def _most_work(data, index):
    """The work ratio allowed for pair ``index``: 1.5 (right kernels measure 0.9-1.2 at P = 32, the doubled loop
    1.8-2.1); 1.1 at P = 8, where a tile's staging and barriers are a larger share of a thread's work (right
    kernels 0.74-0.95, the doubled loop 1.22-1.46 for N = 9 to 15)."""
    return 1.1 if data["cases"][index]["tile"] <= 8 else 1.5


def _split_and_finer(answer, data):
    """For each case, the launch at q = 2 and the same factory's at q = 4 on the same bodies: a q whose technique
    the signature tests judge (a body's four threads each summing everything reads 16 times a staged record), so a
    kernel cannot make its baseline slower to hide the work it doubles at q = 2."""
    return [(launch_split(answer, case), launch_split(answer, dict(case, q=4))) for case in data["cases"]]


_KERNEL = kernel_factory("make_split_kernel", allowed=(interaction,))
_COMPARE = close(RTOL)
_Q1 = dict(launch=launch_split, expect=expected_acc, compare=_COMPARE, label=_n_label)

Q1 = question(
    "ps1.q1", "q threads per body: the split source loop", 6, answer=_KERNEL,
    tolerance=f"|error| <= {RTOL:g} x max|a| against a float64 NumPy reference",
    diagnose=[("sign", sign_flipped)],
    tests=[
        result_test("one body (N = 1, q = 4; no points: a kernel writing zeros passes)", 0,
                    inputs=case(lambda b, r: 1, 8, 4), **_Q1),
        result_test("q = 1 (one thread per body), N = 2 tile + 3", 0.5, inputs=case(lambda b, r: 2 * b + 3, 8, 1),
                    **_Q1),
        result_test("N = bodies per block - 1: one block, its last body missing", 0.5,
                    inputs=case(lambda b, r: b - 1, 32, 4), **_Q1),
        result_test("N = 3 blocks + 1, q = 2: a last block with one body", 1,
                    inputs=case(lambda b, r: 3 * b + 1, VISIBLE_TILE_AT_SPLIT_2, 2), **_Q1),
        result_test("N = 5 tile + 3, q = 8: several tiles, the last one partial", 0.5,
                    inputs=case(lambda b, r: 40 * b + 3, 16, 8, uniform_cube), **_Q1),
        result_test("hidden: random N, tile 32 and q = 16", 0.5, hidden=True,
                    inputs=case(lambda b, r: int(r.integers(2, 60)), 32, 16), **_Q1),
        race_test("race and barrier check (N = tile + 5, tile 64, q = 8: two warps per block, two tiles)", 1,
                  technique=True, inputs=case(lambda b, r: 8 * b + 5, 64, 8), launch=launch_split,
                  expect=expected_acc, compare=_COMPARE),
        signature_test("the split technique, measured (profiler; tile 64 with q = 4, tile 24 with q = 8)", 2,
                       configs=[case(lambda b, r: 12 * b + 9, 64, 4),
                                case(lambda b, r: 33 * b + 2, 24, 8, uniform_cube)],
                       launch=launch_split, expect=expected_acc, compare=_COMPARE, label=_n_label,
                       features=SPLIT_SIGNATURE),
        signature_test("hidden: the split technique on sizes, tiles and q drawn at grading time, up to N = 1024 and "
                       "q = 32", 0, hidden=True,
                       configs=[drawn_case((64, 128, 256), (16, 32), lambda p: (MAX_N // 2, MAX_N)),
                                drawn_case(HIDDEN_TILES_AT_SPLIT_2, (2,), lambda p: (3 * p, 6 * p)),
                                drawn_case((32, 128), (4, 8), lambda p: (3 * p, 6 * p))],
                       launch=launch_split, expect=expected_acc, compare=_COMPARE, features=SPLIT_SIGNATURE),
        # At q = 2 a body's two threads each summing every source read only twice a split's shared values, within
        # the shared-access bound (a body kept in shared memory reads 1.7 times as many): the work tells them apart.
        # Padded threads count too, so for N in (P, 2P) the split measures 1-1.2 x the work at q = 4 and the
        # doubled loop 2-2.4 x.
        work_ratio_test("hidden: at q = 2 the kernel does the work of q = 4, not twice it (N drawn at grading time)",
                        inputs=_pair_cases, launches=_split_and_finer, most=_most_work,
                        baseline="the same kernel at q = 4"),
    ])


# ----------------------------------------------------------------------------- q2
def global_reads(tile, q):
    """A decoy for ``measure``: one thread per body (q ignored) reading every source from global memory
    (16 bytes per interaction), launched as the split."""
    @cuda.jit
    def kernel(bodies, softening_sq, acc):
        n = bodies.shape[0]
        d = cuda.grid(1)
        if d < n:
            sx = sy = sz = float32(0.0)
            for s in range(n):
                g = interaction(bodies[d, 0], bodies[d, 1], bodies[d, 2], bodies[s, 0], bodies[s, 1],
                                bodies[s, 2], bodies[s, 3], softening_sq)
                sx += g[0]
                sy += g[1]
                sz += g[2]
            acc[d, 0], acc[d, 1], acc[d, 2] = sx, sy, sz

    return kernel


def lesson_tiled(tile, q):
    """A decoy for ``measure``: the lesson's tiled kernel (one thread per body, q ignored), launched as the split."""
    return nbody_tiled_kernel(tile)


#: The grader's own kernels that ``measure`` must measure as well (their traffic differs from the technique's).
MEASURE_DECOYS = {"a kernel reading every source from global memory": global_reads,
                  "the lesson's one-thread-per-body tiled kernel": lesson_tiled}


def _measure_configs(rng, info):
    return [(MEASURE_N, int(rng.choice([8, 16])), int(rng.choice([2, 4]))),
            (int(rng.integers(33, 80)), int(rng.choice([8, 16])), int(rng.choice([2, 4])))]


def _measure_launch(make, config):
    """The launch of the problem statement, ceil(n q / P) blocks of P threads, for the kernel ``make(tile, q)``."""
    n, tile, q = config
    bodies = bodies_case(n, tile, q, seed=1)["bodies"]
    return Launch(make(tile, q), split_grid(n, tile, q), tile,
                  {"bodies": bodies, "softening_sq": np.float32(SOFTENING**2), "acc": np.zeros((n, 3), np.float32)},
                  outputs=("acc",))


def _bytes_per_interaction(metrics, config):
    return metrics["global_load_bytes"] / config[0] ** 2


Q2 = question(
    "ps1.q2", "predict, then measure the global loads of the split", 2,
    answer={"kernel": _KERNEL, "predicted_bytes": function("predicted_bytes"),
            "measure": measurement("measure")},
    tolerance="predictions within 5% of the model; measurements within 1% of the course's profiler",
    tests=[
        calls_test("the prediction, bytes loaded for N bodies, tile P and split q", 1, key="predicted_bytes",
                   rtol=0.05,
                   args=lambda rng, info: [(64, 16, 1), (1000, 64, 4), (4096, 128, 32),
                                           (int(rng.integers(300, 5000)), 256, int(rng.choice([2, 8, 16])))],
                   expect=predicted_bytes, explain=STORED),
        kernel_measurement_test("your measure(), on your kernel and on the grader's, at drawn sizes", 1,
                                key="measure", kernel_key="kernel", decoys=MEASURE_DECOYS,
                                configs=_measure_configs, launch=_measure_launch, measure=_bytes_per_interaction,
                                rtol=0.01, caps=True),
    ])


# ----------------------------------------------------------------------------- q3
_DEVICES = [(132, 2048), (108, 2048), (68, 1536), (16, 1024)]  # H100, A100, RTX 3080, small


def _split_cases(rng, info):
    cases = [(32768, 256, 132, 2048, 32), (1 << 20, 256, 132, 2048, 32), (8192, 128, 108, 2048, 16),
             (20000, 512, 68, 1536, 24), (3000, 64, 16, 1024, 16), (500, 256, 132, 2048, 48),
             (65536, 1024, 68, 1536, 32)]
    draws = []
    for _ in range(2):
        sm_count, threads = _DEVICES[int(rng.integers(len(_DEVICES)))]
        tile = int(rng.choice([tp for tp in (64, 128, 256, 512, 1024) if tp <= threads]))
        draws.append((int(rng.integers(1 << 10, 1 << 17)), tile, sm_count, threads, int(rng.choice([8, 16, 32]))))
    return cases + draws


Q3 = question(
    "ps1.q3", "choosing q for a device at modest N", 2, answer=function("choose_split"),
    tolerance="exact integers",
    tests=[calls_test("q on several devices and sizes", 2, what="choose_split", args=_split_cases, expect=split_rule,
                      explain=STORED)])

QUESTIONS = (Q1, Q2, Q3)
