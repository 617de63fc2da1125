"""Problem set 1 (``solutions/ps1_nbody.ipynb``), on the shared harness (:mod:`course_lib.grading.authoring.harness`).

- ``ps1.q1`` (6 points): tiling with **two destination bodies per thread**. Answer:
  ``check("ps1.q1", make_two_body_kernel)``, a function of the tile size P returning a kernel
  launched as ``kernel[ceil(N / (2 P)), P](bodies, softening_sq, acc)``. Graded on results
  (guarded buffers), the race and barrier checker (blocks of 64 threads, where a warp barrier is
  not a block barrier), and the technique's signature, measured by the profiler on two
  configurations (P = 64 with a partial last block, and P = 24, N = 101: not a power of two,
  partial warps, a partial last tile) and, in a hidden test (no points of its own; its failure caps the
  question like the visible one's), on two drawn at grading time from the grading seed (:func:`drawn_case`):
  P = 8 or 16 with N in [``MAX_N`` / 2, ``MAX_N``) (the question's largest N, 1024), and P = 32 (one warp) with
  N in [3P, 6P), each N odd; the profiler runs one block of each, drawn by ``sample_blocks`` (any block, the
  partial last one included, equally likely), and the features count the work of the blocks that ran. A kernel
  that tiles only at the visible tests' sizes fails there. Features and bounds (``TWO_BODY_SIGNATURE``), from
  the cost model of tiling (every block stages the N sources once, P records per tile, each thread one
  record per tile; every thread then computes 2 N interactions from shared memory):

  * global loads, in 16-byte body records per interaction: at most 1.25 x (blocks N + N) / N^2
    (sources once per block, destinations once; 25% for padding and partial tiles);
  * shared bytes allocated per block: more than 0 and at most 2 P records of 16 bytes (a tile, or a
    double-buffered one; never the whole input);
  * global load bytes per request: at least 32, i.e. 8 lanes of 4 bytes (the block stages the tile
    together, one record per thread; one thread staging it issues 1-lane requests), or 3P for P < 11 (a
    block's requests serve at most its P lanes, fewer in a partial last block);
  * block barriers per block: between ceil(N / 2P) (one per round of staging, 2P records at most)
    and 2 ceil(N / P) + 2 (two per tile);
  * thread span (busiest thread over the mean): at most 1.5 x 2P blocks / N (every thread computes
    the same 2 N interactions; threads past N may skip theirs, hence the factor of slots to bodies);
  * warp share (per block, its busiest warp's statements over the mean per warp): at most 1.25 x the model's
    (N interactions per live destination of a warp's lanes: 1 but in a partial last block); the first warp
    computing the block's destinations while the others wait has about P / 32;
  * atomic operations: none (each destination is owned and stored by one thread).
- ``ps1.q2`` (2 points): predict, then measure the kernel's global loads. Answer:
  ``{"kernel": make_two_body_kernel, "predicted_bytes": f(n, tile), "measure": g(make_kernel, n, tile)}``,
  where ``g`` measures with the profiler the bytes per interaction of ``make_kernel(tile)`` launched on
  n bodies. The grader calls ``g`` on the student's factory and on decoys of its own (a two-body
  kernel reading every source from global memory, and the lesson's one-destination kernel launched
  the same way), for sizes and tiles drawn at grading time, and measures each launch itself: a
  number that was not measured on the kernel given cannot match, and a failure there caps the question at half
  (a pasted, modelled or misdirected measurement is not the student's work).
- ``ps1.q3`` (2 points): the tile size for the two-body kernel on a device. Answer:
  ``choose_tile(n, sm_count, max_threads_per_block, max_threads_per_sm)``.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, float32

from ..grading.authoring.harness import (STORED, Launch, calls_test, close, function, kernel_factory, measurement,
                                         question, race_test, result_test, sign_flipped)
from ..grading.authoring.measuring import kernel_measurement_test
from ..grading.authoring.signature import (Feature, at_least, at_most, between, block_barriers, load_bytes_per_request,
                                           no_atomics, sample_blocks, shared_bytes_per_block, signature_test,
                                           warp_share)
from .api import pack_bodies
from .data import plummer_sphere, uniform_cube
from .kernels import interaction, nbody_tiled_kernel
from .reference import accelerations_reference

PROBLEM_SET = "ps1"
SOFTENING = 0.05
#: Relative tolerance (of max |a|) against the float64 reference: float32 sums in any order.
RTOL = 1e-4
#: N of the measure-and-explain question, and the tiles measured there.
MEASURE_N, MEASURE_TILES = 64, (4, 8, 16)
#: The largest N the question's tests use (its statement says so): a configuration drawn at grading time reaches it.
MAX_N = 1024


# ----------------------------------------------------------------------------- q1
def bodies_case(n, tile, seed, generator=plummer_sphere):
    """``inputs`` data: N bodies (float32 (N, 4) records) and the tile the kernel is made with."""
    pos, _, mass = generator(n, seed=seed)
    return {"bodies": pack_bodies(pos, mass), "tile": int(tile)}


def case(n_of_tile, tile, generator=plummer_sphere):
    return lambda rng, info: bodies_case(n_of_tile(tile, rng), tile, int(rng.integers(1 << 30)), generator)


def launch_two_body(answer, data):
    """The launch every q1 test uses: ceil(N / 2P) blocks of P threads; acc starts as NaN (unwritten shows)."""
    bodies, tile = np.asarray(data["bodies"], np.float32), int(data["tile"])
    acc = np.full((len(bodies), 3), np.nan, np.float32)
    return Launch(answer.kernel(tile), max(1, -(-len(bodies) // (2 * tile))), tile,
                  {"bodies": bodies, "softening_sq": np.float32(SOFTENING**2), "acc": acc}, outputs=("acc",),
                  blocks=data.get("blocks"))


def expected_acc(data):
    bodies = np.asarray(data["bodies"], np.float64)
    return {"acc": accelerations_reference(bodies[:, :3], bodies[:, 3], SOFTENING)}


def _blocks(data):
    return -(-len(data["bodies"]) // (2 * data["tile"]))


def blocks_run(data):
    """The blocks the profiler ran: a drawn sample (``data["blocks"]``) of a large launch, else every block."""
    blocks = data.get("blocks")
    return list(blocks) if blocks is not None else list(range(_blocks(data)))


def destinations_run(data):
    """Destination bodies of the blocks that ran (block b covers bodies 2Pb .. 2Pb + 2P - 1 below N)."""
    n, span = len(data["bodies"]), 2 * data["tile"]
    return sum(max(0, min(span, n - b * span)) for b in blocks_run(data))


def records_per_interaction(metrics, data):
    """Global bytes loaded / 16-byte body record / the interactions of the blocks that ran (N per destination)."""
    return metrics["global_load_bytes"] / 16 / (destinations_run(data) * len(data["bodies"]))


def staged_once_per_block(data):
    """Range of records per interaction when every block loads each source once (plus its 2P destinations)."""
    n, ran = len(data["bodies"]), destinations_run(data)
    once = (len(blocks_run(data)) * n + ran) / (ran * n)  # sources once per block, destinations once
    return 0.0, 1.25 * once


def model_warp_share(data):
    """The largest warp share of a block that ran, in the model: a warp's work is N interactions per live
    destination of its lanes (two per thread), so only a partial last block has idle warps."""
    n, tile = len(data["bodies"]), data["tile"]
    warps = -(-tile // 32)
    shares = []
    for b in blocks_run(data):
        t = np.arange(tile)
        live = ((2 * tile * b + t) < n).astype(int) + ((2 * tile * b + t + tile) < n)
        per_warp = np.array([live[32 * w:32 * w + 32].sum() for w in range(warps)], float) + 1  # + staging
        shares.append(per_warp.max() / per_warp.mean())
    return max(shares)


def _tiles(data):
    return -(-len(data["bodies"]) // data["tile"])


TWO_BODY_SIGNATURE = (
    Feature("global loads (body records per interaction)", records_per_interaction,
            lambda data: staged_once_per_block(data),
            "every block loads each source body once, into shared memory, and reads it from there for both "
            "destinations", "tiling's cost model: N sources per block of 2P destinations, plus the destinations"),
    shared_bytes_per_block(between(1, lambda data: 2 * data["tile"] * 16),
                           "a block stages one tile of P body records (16 bytes each) at a time, not the whole input",
                           "one tile of P float32 (x, y, z, m) records; a second one for double buffering"),
    load_bytes_per_request(at_least(lambda data: min(32, 3 * data["tile"])),
                           "the threads of the block stage the tile together, each loading its own record, so every "
                           "load request serves the lanes of a warp",
                           "a request serves the active lanes of a warp: >= 8 of 4 bytes (3/4 of the P lanes of a "
                           "block of P < 11 threads)"),
    block_barriers(between(_blocks, lambda data: 2 * _tiles(data) + 2),
                   "a block barrier after the tile is staged and one before it is overwritten; a warp barrier does not "
                   "order the warps of a block", "one or two syncthreads per tile"),
    Feature("thread span (busiest thread's statements / mean)", lambda m, data: m["thread_span"],
            at_most(lambda data: 1.5 * 2 * data["tile"] * len(blocks_run(data)) / destinations_run(data)),
            "every thread does the same work: its two destinations against every source",
            "2 N interactions per thread; threads past N may skip theirs"),
    warp_share(at_most(lambda data: 1.25 * model_warp_share(data)),
               "every warp stages its own records and computes its own lanes' destinations; no warp does the "
               "block's work while the others wait at the barriers",
               "N interactions per live destination of a warp's lanes"),
    no_atomics("each thread owns its two destinations and stores their sums once, with plain stores",
               "one owner per destination"),
)


def _n_label(data):
    return f"for N = {len(data['bodies'])}, tile {data['tile']}"


def drawn_case(tiles, sizes):
    """A signature configuration drawn at grading time: P from ``tiles``, N drawn in ``sizes(tile)`` (odd, so
    the last block is partial), and one of its blocks, drawn by ``sample_blocks`` (any block, the partial last
    one included, equally likely), for the profiler to run."""
    def inputs(rng, info):
        tile = int(rng.choice(tiles))
        n = int(rng.integers(*sizes(tile))) | 1
        data = bodies_case(n, tile, int(rng.integers(1 << 30)), plummer_sphere if rng.random() < 0.5 else uniform_cube)
        data["blocks"] = sample_blocks(rng, -(-n // (2 * tile)), k=1)
        return data
    return inputs


_KERNEL = kernel_factory("make_two_body_kernel", allowed=(interaction,))
_COMPARE = close(RTOL)
_Q1 = dict(launch=launch_two_body, expect=expected_acc, compare=_COMPARE, label=_n_label)

Q1 = question(
    "ps1.q1", "tiling with two destination bodies per thread", 6, answer=_KERNEL,
    tolerance=f"|error| <= {RTOL:g} x max|a| against a float64 NumPy reference",
    diagnose=[("sign", sign_flipped)],
    tests=[
        result_test("one body (N = 1; no points: a kernel writing zeros passes)", 0, inputs=case(lambda p, r: 1, 4),
                    **_Q1),
        result_test("N = 2 tile - 1: one block, its last body missing", 1, inputs=case(lambda p, r: 2 * p - 1, 8),
                    **_Q1),
        result_test("N = 2 tile + 1: a second block with one body", 1, inputs=case(lambda p, r: 2 * p + 1, 8), **_Q1),
        result_test("N = 5 tile + 3, several tiles, the last one partial", 0.5,
                    inputs=case(lambda p, r: 5 * p + 3, 4, uniform_cube), **_Q1),
        result_test("hidden: random N and tile 16", 0.5, hidden=True,
                    inputs=case(lambda p, r: int(r.integers(2, 5 * p)), 16), **_Q1),
        race_test("race and barrier check (N = 2 tile + 5, tile 64: two warps per block)", 1, technique=True,
                  inputs=case(lambda p, r: 2 * p + 5, 64), launch=launch_two_body, expect=expected_acc,
                  compare=_COMPARE),
        signature_test("the tiling technique, measured (profiler; tile 64 and tile 24)", 2,
                       configs=[case(lambda p, r: 3 * p + 8, 64), case(lambda p, r: 4 * p + 5, 24, uniform_cube)],
                       launch=launch_two_body, expect=expected_acc, compare=_COMPARE, label=_n_label,
                       features=TWO_BODY_SIGNATURE),
        signature_test("hidden: the tiling technique on sizes and tiles drawn at grading time, up to N = 1024", 0,
                       hidden=True, configs=[drawn_case((8, 16), lambda p: (MAX_N // 2, MAX_N)),
                                             drawn_case((32,), lambda p: (3 * p, 6 * p))],
                       launch=launch_two_body, expect=expected_acc, compare=_COMPARE, features=TWO_BODY_SIGNATURE),
    ])


# ----------------------------------------------------------------------------- q2
def predicted_bytes(n, tile):
    """The model: every block loads the N sources (16 bytes each); every destination is loaded once (12 bytes)."""
    return 16 * n * -(-n // (2 * tile)) + 12 * n


def global_two_body(tile):
    """A decoy for ``measure``: two destinations per thread, every source read from global memory
    (16 bytes per source and destination pair: about 16 bytes per interaction)."""
    @cuda.jit
    def kernel(bodies, softening_sq, acc):
        n = bodies.shape[0]
        first = 2 * tile * cuda.blockIdx.x + cuda.threadIdx.x
        for d in (first, first + tile):
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


#: The grader's own kernels that ``measure`` must measure as well (their traffic differs from the technique's).
MEASURE_DECOYS = {"a kernel reading every source from global memory": global_two_body,
                  "the lesson's one-destination tiled kernel": nbody_tiled_kernel}


def _measure_configs(rng, info):
    return [(MEASURE_N, int(rng.choice([4, 8]))), (int(rng.integers(33, 80)), int(rng.choice([4, 8, 16])))]


def _measure_launch(make, config):
    """The launch of the problem statement, ceil(n / 2P) blocks of P threads, for the kernel ``make(tile)``."""
    n, tile = config
    bodies = bodies_case(n, tile, seed=1)["bodies"]
    return Launch(make(tile), max(1, -(-n // (2 * tile))), tile,
                  {"bodies": bodies, "softening_sq": np.float32(SOFTENING**2), "acc": np.zeros((n, 3), np.float32)},
                  outputs=("acc",))


def _bytes_per_interaction(metrics, config):
    return metrics["global_load_bytes"] / config[0] ** 2


Q2 = question(
    "ps1.q2", "predict, then measure the global loads", 2,
    answer={"kernel": _KERNEL, "predicted_bytes": function("predicted_bytes"),
            "measure": measurement("measure")},
    tolerance="predictions within 5% of the model; measurements within 1% of the course's profiler",
    tests=[
        calls_test("the prediction, bytes loaded for N bodies and tile P", 1, key="predicted_bytes", rtol=0.05,
                   args=lambda rng, info: [(64, 4), (1000, 16), (4096, 128), (int(rng.integers(300, 5000)), 32)],
                   expect=predicted_bytes,
                   explain=STORED),
        kernel_measurement_test("your measure(), on your kernel and on the grader's, at drawn sizes", 1,
                                key="measure", kernel_key="kernel", decoys=MEASURE_DECOYS,
                                configs=_measure_configs, launch=_measure_launch, measure=_bytes_per_interaction,
                                rtol=0.01, caps=True),
    ])


# ----------------------------------------------------------------------------- q3
def two_body_tile(n, sm_count, max_threads_per_block, max_threads_per_sm):
    """The grader's rule for the two-body kernel: the largest power of two P with P <= the block limit,
    at least one block of 2P bodies per SM, and two resident blocks (2P threads) per SM."""
    fits = [1 << k for k in range(11)
            if (1 << k) <= max_threads_per_block and 2 * (1 << k) <= max_threads_per_sm
            and -(-n // (2 << k)) >= sm_count]
    return fits[-1] if fits else None


_DEVICES = [(132, 1024, 2048), (108, 1024, 2048), (68, 1024, 1536), (16, 512, 1024)]  # H100, A100, RTX 3080, small


def _tile_cases(rng, info):
    cases = [(1 << 20, *_DEVICES[0]), (65536, *_DEVICES[1]), (8192, *_DEVICES[2]), (30000, *_DEVICES[3]),
             (132 * 80, *_DEVICES[0])]
    return cases + [(int(rng.integers(1 << 13, 1 << 22)), *_DEVICES[int(rng.integers(len(_DEVICES)))])]


Q3 = question(
    "ps1.q3", "choosing the tile for two bodies per thread", 2, answer=function("choose_tile"),
    tolerance="exact integers",
    tests=[calls_test("tile size on several devices", 2, what="choose_tile", args=_tile_cases, expect=two_body_tile,
                      explain=STORED)])

QUESTIONS = (Q1, Q2, Q3)
