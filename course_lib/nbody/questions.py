"""Problem set 1 (``solutions/ps1_nbody.ipynb``), on the shared harness (:mod:`course_lib.grading.harness`).

- ``ps1.q1`` (6 points): tiling with **two destination bodies per thread**. Answer:
  ``check("ps1.q1", make_two_body_kernel)``, a function of the tile size P returning a kernel
  launched as ``kernel[ceil(N / (2 P)), P](bodies, softening_sq, acc)``. Graded on results
  (guarded buffers), the race and barrier checker, and the profiler: each source body must be
  loaded from global memory once per block (about 1 / (2P) body records per interaction).
- ``ps1.q2`` (2 points): predict, then measure the kernel's global loads. Answer:
  ``{"kernel": make_two_body_kernel, "predicted_bytes": f(n, tile), "measure": g(tile)}``, where
  ``g`` measures the bytes per interaction of the student's kernel at N = 64 with the profiler.
- ``ps1.q3`` (2 points): the tile size for the two-body kernel on a device. Answer:
  ``choose_tile(n, sm_count, max_threads_per_block, max_threads_per_sm)``.
"""

from __future__ import annotations

import numpy as np

from ..grading.harness import (Launch, calls_test, close, function, kernel_factory, measured_test, measurement,
                               question, race_test, result_test, sign_flipped, technique_test)
from .api import pack_bodies
from .data import plummer_sphere, uniform_cube
from .kernels import interaction
from .reference import accelerations_reference

PROBLEM_SET = "ps1"
SOFTENING = 0.05
#: Relative tolerance (of max |a|) against the float64 reference: float32 sums in any order.
RTOL = 1e-4
#: N of the measure-and-explain question, and the tiles measured there.
MEASURE_N, MEASURE_TILES = 64, (4, 8, 16)


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
                  {"bodies": bodies, "softening_sq": np.float32(SOFTENING**2), "acc": acc}, outputs=("acc",))


def expected_acc(data):
    bodies = np.asarray(data["bodies"], np.float64)
    return {"acc": accelerations_reference(bodies[:, :3], bodies[:, 3], SOFTENING)}


def records_per_interaction(metrics, data):
    """Global bytes loaded / 16-byte body record / N^2 interactions."""
    return metrics["global_load_bytes"] / 16 / len(data["bodies"]) ** 2


def staged_once_per_block(data):
    """Range of records per interaction when every block loads each source once (plus its 2P destinations)."""
    n, tile = len(data["bodies"]), data["tile"]
    blocks = -(-n // (2 * tile))
    once = (blocks * n + n) / n**2  # sources once per block, destinations once (at most a full record)
    return 0.0, 1.25 * once


def _n_label(data):
    return f"for N = {len(data['bodies'])}, tile {data['tile']}"


_KERNEL = kernel_factory("make_two_body_kernel", allowed=(interaction,))
_COMPARE = close(RTOL)
_Q1 = dict(launch=launch_two_body, expect=expected_acc, compare=_COMPARE, label=_n_label)

Q1 = question(
    "ps1.q1", "tiling with two destination bodies per thread", 6, answer=_KERNEL,
    tolerance=f"|error| <= {RTOL:g} x max|a| against a float64 NumPy reference",
    diagnose=[("sign", sign_flipped)],
    hints={"sign": "r_ij = p_j - p_i: interaction(xi, yi, zi, xj, yj, zj, mj, eps2) takes the destination first",
           "barrier": "one syncthreads after staging a tile and one before the next tile overwrites it; threads "
                      "past N must still reach both (no early return)",
           "bounds": "guard the loads of both destinations and of the last tile (j < N), and both stores",
           "unwritten": "each thread stores two bodies: its own index and the one P further, within its block's "
                        "2P bodies",
           "value": "pad the last tile with zero-mass bodies; both destinations of a thread use every staged source",
           "technique": "stage each source once per block in cuda.shared.array((tile, 4), float32) and use it "
                        "from there for both destinations"},
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
        race_test("race and barrier check (N = 4 tile - 3)", 1, technique=True, inputs=case(lambda p, r: 4 * p - 3, 4),
                  launch=launch_two_body, expect=expected_acc, compare=_COMPARE),
        technique_test("sources loaded once per block (profiler)", 2, inputs=case(lambda p, r: 8 * p + 3, 4),
                       launch=launch_two_body, expect=expected_acc, compare=_COMPARE, measure=records_per_interaction,
                       limit=staged_once_per_block, unit="body records loaded per interaction",
                       technique="sources staged in shared memory, each loaded once per block of 2P destinations"),
    ])


# ----------------------------------------------------------------------------- q2
def predicted_bytes(n, tile):
    """The model: every block loads the N sources (16 bytes each); every destination is loaded once (12 bytes)."""
    return 16 * n * -(-n // (2 * tile)) + 12 * n


def _measure_inputs(rng, info):
    return {"params": list(MEASURE_TILES), "n": MEASURE_N}


def _measure_launch(answer, data, tile):
    return launch_two_body(answer["kernel"], bodies_case(data["n"], tile, seed=1))


def _bytes_per_interaction(metrics, data, tile):
    return metrics["global_load_bytes"] / data["n"] ** 2


Q2 = question(
    "ps1.q2", "predict, then measure the global loads", 2,
    answer={"kernel": _KERNEL, "predicted_bytes": function("predicted_bytes"),
            "measure": measurement("measure")},
    tolerance="predictions within 5% of the model; measurements within 1% of the course's profiler",
    tests=[
        calls_test("the prediction, bytes loaded for N bodies and tile P", 1, key="predicted_bytes", rtol=0.05,
                   args=lambda rng, info: [(64, 4), (1000, 16), (4096, 128), (int(rng.integers(300, 5000)), 32)],
                   expect=predicted_bytes,
                   explain=lambda a, want: "count the sources once per block of 2P destinations, plus each "
                                           "destination once"),
        measured_test("your measurements, bytes per interaction at N = 64", 1, key="measure",
                      inputs=_measure_inputs, launch=_measure_launch, measure=_bytes_per_interaction, rtol=0.01,
                      hint="profile(kernel, grid, block, ...).total.global_load_bytes / N**2 for each tile"),
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
                      explain=lambda a, want: "the largest power of two that fits a block, gives every SM a block "
                                              "of 2P bodies and lets two blocks be resident",
                      hint="a block now covers 2P bodies: ceil(N / (2P)) blocks")])

QUESTIONS = (Q1, Q2, Q3)
