"""Problem set 6 (``solutions/ps6_ica.ipynb``), on the shared harness (:mod:`course_lib.grading.authoring.harness`).

- ``ps6.q1`` (6 points): the **register-blocked minibatch product** ``U = X_b W^T`` (the thesis's custom
  GEMM, tiled). Answer: ``check("ps6.q1", minibatch_gemm_kernel)``, a kernel launched as
  ``kernel[(ceil(C / 16), ceil(B / 16)), (8, 8)](Wt, Xt, perm, start, U)`` computing
  ``U[b, :] = W @ Xt[perm[start + b]]``: each block a 16 x 16 tile of U, each of its 64 threads a block of
  four outputs held in registers, the operands staged tile by tile in shared memory. Graded on results
  (guarded buffers, awkward C and B), the race and barrier checker, and the technique's signature
  (:func:`course_lib.grading.authoring.signature.signature_test`), measured by the profiler on two launches of blocks of
  64 threads (two warps) with partial tiles both ways: C = 40, B = 37 and C = 20, B = 21; and, in a hidden test, on
  a launch drawn from the grading seed over the whole range of the unit's channel counts, C in (48,
  ``MAX_CHANNELS`` = 256], B = 16 k + r (k in [1, 12], r in [12, 15]), of whose grid :data:`DRAWN_BLOCKS` blocks
  are drawn too and profiled (:func:`course_lib.grading.authoring.signature.sample_blocks`; each feature counted
  over the blocks that ran), and on C = 24, B = 30. A kernel whose technique depends on C (tiling only up to 48
  channels) fails there. Features and bounds (``GEMM_SIGNATURE``), from the cost model of a launch of
  ceil(C / 16) x ceil(B / 16) blocks of 8 x 8 threads:

  * global loads over the tiled model: at most 1.5. Block (i, j) reads the 16 samples of row block j (C
    doubles each, and each sample's permutation entry once) and the 16 columns of W^T of block column i (C
    doubles each), each once: 8 C^2 ceil(B / 16) + (8 C + 4) B ceil(C / 16) bytes (:func:`tiled_load_bytes`).
    A kernel that gathers the permutation entry again for every element it stages loads 4 B C ceil(C / 16)
    more, about 1.25 times the model at C = 20 and 40, and stays within; operands read from global memory for
    every output cost about C / 2 times more (8x measured for a 2 x 2 register block, 10-13x for one output at
    a time). The bytes are the profiler's *requested* bytes (every lane's load counted), not DRAM traffic;
  * shared-memory accesses per multiply-add (a request counted as its warp's 32 lanes, over the padded tiles'
    multiply-adds): at most :data:`MAX_SHARED_PER_FMA`. A thread with an r x s block of outputs reads r + s
    values per step of k for r s multiply-adds: (r + s) / (r s) = 1 for 2 x 2, 1.25 for 4 x 1; staging adds
    2 / 16. Without register blocking every multiply-add reads both operands (2 + 2 / 16); one thread staging
    the tiles for the block issues 32 times the staging requests (about 5);
  * shared bytes allocated per block: more than 0 and at most :data:`MAX_SHARED_BYTES`, two 16 x 16 float64
    tiles (4096 bytes), double-buffered (8192); staging the whole matrix needs more;
  * block barriers per block: between ceil(C / 16) and 2 ceil(C / 4) + 2: one or two syncthreads per chunk of
    k staged, chunks of 4 to 16 channels. A warp barrier (syncwarp) does not order the block's two warps;
  * global load bytes per request: at least 32 (8 lanes of 4 bytes): the block stages each tile together,
    each thread its own elements; one thread staging it issues requests of one lane;
  * atomic operations: none (each output has one owner, which stores it once);
  * in the hidden test (``DRAWN_SIGNATURE``), the warp share (busiest warp's instructions over its block's mean):
    at most :data:`MAX_WARP_SHARE`, about 1 when both warps stage and compute their share, about 2 when one warp
    does the block's work while the other waits at the barriers (the drawn B leaves both warps rows in the last
    tile).
- ``ps6.q2`` (4 points): two **decisions** made with the lesson's rules, then **predict, then measure** the global
  loads of the student's own q1 kernel. Answer: ``{"smallest_batch": f(method, n_samples, max_launches),
  "register_budget": g(threads_per_block, shared_bytes_per_block, warps_wanted, limits), "minibatch_gemm_kernel":
  kernel, "predicted_load_bytes": h(n_channels, batch), "measure_load_bytes": m(kernel, n_channels)}``. ``f``: the
  smallest batch size whose step stays within a launch budget; ``g``: the most registers per thread at which an SM
  still holds a number of warps (:mod:`course_lib.ica._questions_q2` holds their keys and their cases, visible and
  drawn at grading time over the whole range). The prediction is checked against the tiled model
  :func:`tiled_load_bytes`; ``m`` measures with the profiler the global bytes the kernel it is given loads on the
  minibatch of :func:`measure_case` (B = 37). The grader calls it on the student's kernel and on decoys of its own
  (``MEASURE_DECOYS``: a GEMM reading every operand from global memory, one thread per block computing its tile
  sample by sample) for two channel counts it draws at grading time, and profiles each launch itself
  (:func:`course_lib.grading.authoring.measuring.kernel_measurement_test`): pasted numbers, the model's
  prediction, a measurement of another kernel or of another problem do not match, score 0 for the measurement and
  cap the question at half.
- ``ps6.q3`` (4 points): the Infomax step loop with W, its transpose and the bias on the device across steps, the
  blow-up, the change, the annealing and the stop decided from a few numbers copied back per step
  (:mod:`course_lib.ica._questions_q3`, which says how it is graded); its case maker ``steps_case`` is re-exported
  here, where the problem set imports it.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from numba import cuda

from ..grading.authoring.harness import (STORED, Answer, Launch, calls_test, close, function, kernel, measurement,
                                         question, race_test, result_test)
from ..grading.authoring.measuring import kernel_measurement_test
from ..grading.authoring.signature import (Feature, at_least, at_most, between, block_barriers, load_bytes_per_request,
                                           no_atomics, sample_blocks, shared_bytes_per_block, signature_test,
                                           warp_share)
from .data import MAX_CHANNELS
from .profiling import MEASURE_BATCH, gemv_case, measure_case
from ._questions_q2 import (LIMITS, MAX_SAMPLES, batch_cases, drawn_batch_cases, drawn_register_cases,  # noqa: F401
                            register_budget_key, register_cases, smallest_batch_key)
from ..grading.resources import answer_key

# The answer keys are the grader's (grading_resources/keys/ps6_ica.py), read when a value is judged.
predicted_load_bytes = answer_key("ps6", "predicted_load_bytes")

PROBLEM_SET = "ps6"
#: float64 sums in any order.
RTOL = 1e-12



def measured(test):
    """A measurement test whose failure caps the question at half: a number that is not measured (pasted, the
    model's prediction, another kernel's or another problem's) is not the student's work."""
    return dataclasses.replace(test, technique=True)


# ----------------------------------------------------------------------------- q1
#: Outputs per side of a block's tile of U, and threads per side of a block (each thread: four outputs).
TILE, THREADS = 16, 8
#: The launches whose technique is measured (channels C, samples B): both leave partial tiles.
TECHNIQUE_CASES = ((40, 37), (20, 21))
#: Most shared-memory accesses per multiply-add (the module docstring gives the cost model).
MAX_SHARED_PER_FMA = 1.5


def case(n_channels, batch, start=0):
    return lambda rng, info: gemv_case(n_channels, batch, start, int(rng.integers(1 << 30)))


def _random_case(rng, info):
    return gemv_case(int(rng.integers(2, 41)), int(rng.integers(1, 41)), int(rng.integers(0, 5)),
                     int(rng.integers(1 << 30)))


def tiles(n):
    return max(1, -(-int(n) // TILE))


def launch_gemm(answer, data):
    """(ceil(C / 16), ceil(B / 16)) blocks of 8 x 8 threads; U starts as NaN so that unwritten outputs show."""
    Wt = np.asarray(data["Wt"], np.float64)
    n_channels, batch = Wt.shape[0], int(data["batch"])
    U = np.full((batch, n_channels), np.nan)
    return Launch(answer.kernel(), (tiles(n_channels), tiles(batch)), (THREADS, THREADS),
                  {"Wt": Wt, "Xt": np.asarray(data["Xt"], np.float64), "perm": np.asarray(data["perm"], np.int32),
                   "start": np.int64(data["start"]), "U": U}, outputs=("U",), blocks=data.get("blocks"))


def expected_u(data):
    Wt, Xt = np.asarray(data["Wt"]), np.asarray(data["Xt"])
    idx = np.asarray(data["perm"])[data["start"]:data["start"] + data["batch"]]
    return {"U": Xt[idx] @ Wt}


def tiled_load_bytes(data):
    """The cost model's global loads (requested bytes): every block row of U reads W^T once (8 C^2 bytes per
    ceil(B / 16)), every block column reads the minibatch once (8 B C bytes) and each sample's permutation entry
    once (4 B bytes)."""
    n_channels, batch = len(data["Wt"]), int(data["batch"])
    return 8 * n_channels ** 2 * tiles(batch) + (8 * n_channels + 4) * batch * tiles(n_channels)


def _ran_blocks(data):
    """The blocks ``(i, j)`` the profiler runs: the grader's sample (``data["blocks"]``) or the whole grid."""
    n_channels, batch = len(data["Wt"]), int(data["batch"])
    if data.get("blocks") is None:
        return [(i, j) for i in range(tiles(n_channels)) for j in range(tiles(batch))]
    return [(int(b[0]), int(b[1])) for b in data["blocks"]]


def sampled_load_bytes(data):
    """:func:`tiled_load_bytes` over the blocks that run: block (i, j) reads its rows' C values and permutation
    entries (8 C + 4 bytes a sample) and its columns of W^T (8 C bytes a channel), each once."""
    n_channels, batch = len(data["Wt"]), int(data["batch"])
    total = 0
    for i, j in _ran_blocks(data):
        rows, columns = min(TILE, batch - TILE * j), min(TILE, n_channels - TILE * i)
        total += (8 * n_channels + 4) * rows + 8 * n_channels * columns
    return total


def load_ratio(metrics, data):
    return metrics["global_load_bytes"] / sampled_load_bytes(data)


def shared_per_fma(metrics, data):
    """Shared-memory loads and stores (a request counted as its warp's 32 lanes) per multiply-add of the
    padded tiles: 256 outputs per block that ran, 16 ceil(C / 16) products each."""
    fmas = len(_ran_blocks(data)) * TILE * TILE * TILE * tiles(len(data["Wt"]))
    return 32 * metrics["shared_requests"] / fmas


def _k_steps(data):
    """Tiles of 16 along k (the channels): the chunks a block stages one after the other."""
    return tiles(len(data["Wt"]))


#: Most shared bytes a block allocates: two 16 x 16 float64 tiles, double-buffered.
MAX_SHARED_BYTES = 2 * 2 * TILE * TILE * 8

#: The technique's signature (see the module docstring for the cost model behind each bound).
GEMM_SIGNATURE = (
    Feature("operands staged in shared memory (global bytes loaded / the tiled model)", load_ratio, at_most(1.5),
            "each block reads its 16 samples and its 16 columns of W^T once, tile by tile, into shared memory",
            "the tiled model tiled_load_bytes, 50% slack (a permutation entry gathered per staged element fits); "
            "operands read per output cost about C / 2 times more"),
    Feature("register blocking (shared-memory accesses per multiply-add)", shared_per_fma,
            at_most(MAX_SHARED_PER_FMA),
            "each value read from shared memory is used for two (or more) of the thread's outputs, kept in "
            "registers; the block stages each tile together, a few elements per thread",
            "(r + s) / (r s) per step of k for an r x s register block, plus 2 / 16 for staging"),
    shared_bytes_per_block(between(1, MAX_SHARED_BYTES),
                           "a block holds one 16 x 16 tile of the samples and one of W^T at a time (two of each when "
                           "double-buffered), never the whole matrix",
                           "two 16 x 16 float64 tiles: 4096 bytes; double-buffered: 8192"),
    block_barriers(between(_k_steps, lambda data: 2 * -(-len(data["Wt"]) // 4) + 2),
                   "a block barrier after a chunk is staged and one before it is overwritten; the block's 64 threads "
                   "are two warps, and a warp barrier (syncwarp) does not order them",
                   "one or two syncthreads per chunk of k, chunks of 4 to 16 channels"),
    load_bytes_per_request(at_least(32),
                           "the threads of the block stage the tile together, each loading its own elements, so a "
                           "load request serves the lanes of a warp",
                           "a request serves the active lanes of a warp: >= 8 of 4 bytes"),
    no_atomics("each output is owned by one thread, which stores its sum once with a plain store",
               "one owner per output"),
)

#: Most ``warp_share`` (busiest warp's instructions over its block's mean): about 1 when both warps of the block
#: stage and multiply their share, about 2 when one warp does the block's work while the other waits.
MAX_WARP_SHARE = 1.5
#: The signature of the hidden test, whose configurations' last tile of samples has rows for both warps (8 and 4
#: to 7: a warp computing only its own rows' outputs does at most 16 / 12 of the mean): also the warps' shares.
DRAWN_SIGNATURE = GEMM_SIGNATURE + (
    warp_share(at_most(MAX_WARP_SHARE),
               "both warps of the block stage their share of the tiles and compute their 32 threads' outputs; no warp "
               "does the block's work while the other waits at the barriers",
               "the same work per warp: about 1; one warp doing the block's work: about 2"),
)


#: Blocks of a drawn configuration's grid that the profiler runs.
DRAWN_BLOCKS = 2


def _drawn_case(rng, info):
    """A configuration drawn at grading time: C in (48, MAX_CHANNELS], B = 16 k + r (k in [1, 12], r in [12, 15]:
    a partial last tile whose rows both warps share, 8 and 4 to 7), start in [0, 4], and blocks of the grid drawn
    for the profiler (:func:`course_lib.grading.authoring.signature.sample_blocks`): DRAWN_BLOCKS of them (a block costs C / 16
    chunks of k in the simulator)."""
    n_channels = int(rng.integers(49, MAX_CHANNELS + 1))
    batch = TILE * int(rng.integers(1, 13)) + int(rng.integers(12, 16))
    data = gemv_case(n_channels, batch, int(rng.integers(0, 5)), int(rng.integers(1 << 30)))
    return {**data, "blocks": sample_blocks(rng, (tiles(n_channels), tiles(batch)), k=DRAWN_BLOCKS)}


def _label(data):
    sampled = "" if data.get("blocks") is None else f", {len(data['blocks'])} blocks drawn"
    return f"for C = {len(data['Wt'])} channels, B = {data['batch']} samples, start = {data['start']}{sampled}"


_Q1 = dict(launch=launch_gemm, expect=expected_u, compare=close(RTOL), label=_label)

Q1 = question(
    "ps6.q1", "the register-blocked minibatch product U = X_b W^T", 6,
    answer=kernel("minibatch GEMM kernel"),
    tolerance=f"|error| <= {RTOL:g} x max|U| against NumPy in float64",
    tests=[
        result_test("one channel, one sample (no points: a sanity check)", 0, inputs=case(1, 1), **_Q1),
        result_test("C = 5, B = 3, start = 2 (one partial tile)", 1, inputs=case(5, 3, 2), **_Q1),
        result_test("C = 17, B = 33 (a tile and one more channel; two tiles and one more sample)", 1,
                    inputs=case(17, 33), **_Q1),
        result_test("C = 32, B = 16, start = 5 (whole tiles)", 1, inputs=case(32, 16, 5), **_Q1),
        result_test("hidden: random C, B and start", 0.5, hidden=True, inputs=_random_case, **_Q1),
        race_test("race and barrier check (C = 20, B = 21)", 1, inputs=case(20, 21, 1), launch=launch_gemm,
                  expect=expected_u, compare=close(RTOL)),
        signature_test("the register-blocked tiling technique, measured (profiler; C = 40, B = 37 and C = 20, "
                       "B = 21)", 1, configs=[case(c, b, 3) for c, b in TECHNIQUE_CASES], features=GEMM_SIGNATURE,
                       **_Q1),
        signature_test("hidden: the technique on channel counts up to MAX_CHANNELS and sizes drawn at grading time "
                       "(profiler, a sample of the blocks; and C = 24, B = 30)", 0.5, hidden=True,
                       configs=[_drawn_case, case(24, 30, 1)],
                       features=DRAWN_SIGNATURE, **_Q1),
    ])


# ----------------------------------------------------------------------------- q2
@cuda.jit
def global_gemm(Wt, Xt, perm, start, U):
    """A decoy for ``measure_load_bytes``: the launch of q1, each thread's four outputs reading their operands
    from global memory, one output at a time (about C / 2 times the tiled model's loads)."""
    n_channels = Wt.shape[0]
    for j in range(4):
        b = 16 * cuda.blockIdx.y + 2 * cuda.threadIdx.y + j // 2
        c = 16 * cuda.blockIdx.x + 2 * cuda.threadIdx.x + j % 2
        if b < U.shape[0] and c < n_channels:
            total = 0.0
            for k in range(n_channels):
                total += Xt[perm[start + b], k] * Wt[k, c]
            U[b, c] = total


@cuda.jit
def gemv_per_sample(Wt, Xt, perm, start, U):
    """A decoy for ``measure_load_bytes``: the launch of q1, the first thread of each block walking its samples'
    rows of U one after the other, W^T read from global memory for every sample."""
    if cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0:
        n_channels = Wt.shape[0]
        for b in range(16 * cuda.blockIdx.y, min(16 * cuda.blockIdx.y + 16, U.shape[0])):
            row = perm[start + b]
            for c in range(16 * cuda.blockIdx.x, min(16 * cuda.blockIdx.x + 16, n_channels)):
                total = 0.0
                for k in range(n_channels):
                    total += Wt[k, c] * Xt[row, k]
                U[b, c] = total


#: The grader's own kernels that ``measure_load_bytes`` must measure as well (their loads differ from the model's).
MEASURE_DECOYS = {"a GEMM reading every operand from global memory": global_gemm,
                  "one thread per block computing its tile sample by sample": gemv_per_sample}


def _measure_configs(rng, info):
    """Two channel counts drawn at grading time, neither a multiple of 16 (partial tiles): one tile of channels,
    and two (small: each configuration is profiled for the student's kernel and for every decoy)."""
    return [(int(rng.integers(5, 16)),), (int(rng.integers(17, 32)),)]


def _measure_launch(make, config):
    """q1's launch of the kernel ``measure_load_bytes`` received, on the minibatch of ``measure_case(C)``."""
    return launch_gemm(Answer(make, {}), measure_case(config[0]))


Q2 = question(
    "ps6.q2", "decide, predict and measure: a batch size for a launch budget, a register cap for a warp target, and "
              "the loads of your q1 kernel", 4,
    answer={"smallest_batch": function("smallest_batch"), "register_budget": function("register_budget"),
            "minibatch_gemm_kernel": kernel("minibatch GEMM kernel"),
            "predicted_load_bytes": function("predicted_load_bytes"),
            "measure_load_bytes": measurement("measure_load_bytes")},
    tolerance="the batch size, the register cap and the load prediction exact; measurements within 1% of the "
              "profiler",
    tests=[
        calls_test("the smallest batch size within a launch budget, for each method", 0.5, key="smallest_batch",
                   args=batch_cases, expect=smallest_batch_key, explain=STORED),
        calls_test("hidden: batch sizes for methods, sample counts and budgets drawn at grading time", 0.5,
                   key="smallest_batch", args=drawn_batch_cases, expect=smallest_batch_key, hidden=True,
                   explain=STORED),
        calls_test("the most registers per thread that still reach a warp target", 0.75, key="register_budget",
                   args=register_cases, expect=register_budget_key, explain=STORED),
        calls_test("hidden: register caps for blocks, shared memory, warp targets and SM limits drawn at grading "
                   "time", 0.75, key="register_budget", args=drawn_register_cases, expect=register_budget_key,
                   hidden=True, explain=STORED),
        calls_test("the prediction: global bytes your q1 kernel loads for C channels, B samples", 0.75,
                   key="predicted_load_bytes", expect=predicted_load_bytes,
                   args=lambda rng, info: [(1, 1), (16, 16), (17, 33), (40, 37), (int(rng.integers(2, 300)),
                                                                               int(rng.integers(1, 300)))],
                   explain=STORED),
        measured(kernel_measurement_test(
            "your measure_load_bytes(), on your kernel and on the grader's, at channel counts drawn by the grader",
            0.75,
            key="measure_load_bytes", kernel_key="minibatch_gemm_kernel", decoys=MEASURE_DECOYS,
            configs=_measure_configs, launch=_measure_launch,
            measure=lambda metrics, config: metrics["global_load_bytes"], rtol=0.01)),
    ])

QUESTIONS = (Q1, Q2)


# ----------------------------------------------------------------------------- q3
from ._questions_q3 import (Q3, Q3_STEP_DTOH, Q3_STEP_DTOH_BYTES, Q3_STEP_LAUNCHES, steps_case,  # noqa: E402,F401
                            steps_reference)

QUESTIONS = QUESTIONS + (Q3,)
