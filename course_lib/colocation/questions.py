"""Problem set 8 (``solutions/ps8_colocation.ipynb``), on the shared harness (:mod:`course_lib.grading.harness`).

- ``ps8.q1`` (6 points): the **grid preprocessing kernel**, one thread per instance. Answer:
  ``check("ps8.q1", cell_count_kernel)``, a kernel ``(x, y, features, x0, y0, cell, n_cols, cell_of,
  count_map)`` launched as ``kernel[ceil(N / 32), 32]``: it writes each instance's cell id and adds it to
  the CountMap (``count_map``: int32 of shape (n_cells, F), zeroed) with atomics. Graded against
  :func:`course_lib.colocation.model.count_map` on awkward inputs (points on cell boundaries, all in one
  cell, one instance, a prime N), under the race checker (a plain ``+= 1`` loses updates and fails it),
  and with the profiler: the loads of ``x``, ``y`` and ``features`` are coalesced (consecutive threads,
  consecutive instances).
- ``ps8.q2`` (4 points): **predict, then measure** the global load sectors of the student's own q1
  kernel. Answer: ``{"cell_count_kernel": kernel, "predicted_load_sectors": f(n), "measure_load_sectors":
  g(n)}``: the prediction is checked against the cost model ``2 ceil(N / 4) + ceil(N / 8)`` (a warp of m
  consecutive instances touches ceil(8 m / 32) sectors of ``x``, the same of ``y`` and ceil(4 m / 32) of
  ``features``), the measurement ``g(n)`` (the student's profile of their kernel on :func:`measure_case`)
  against the grader's own profile of the same kernel at two sizes it draws at grading time.
"""

from __future__ import annotations

import numpy as np

from ..grading.harness import Launch, calls_test, function, kernel, measured_test, measurement, question, race_test, \
    result_test, technique_test
from .data import planted_colocations
from .model import CELL_MARGIN, count_map, grid_for

PROBLEM_SET = "ps8"
#: Threads per block of every q1 launch.
BLOCK = 32
#: Features of the q2 measurement's instances.
MEASURE_FEATURES = 3


# ----------------------------------------------------------------------------- q1
def grid_case(points, features, n_features, r=1.0):
    """``inputs`` data: coordinates as two float64 arrays, features, and the grid of side r (plus margin)."""
    points = np.asarray(points, np.float64).reshape(-1, 2)
    grid = grid_for(points, r, n_features)
    return {"x": np.ascontiguousarray(points[:, 0]), "y": np.ascontiguousarray(points[:, 1]),
            "features": np.asarray(features, np.int32), "n_features": int(n_features), "x0": grid.x0,
            "y0": grid.y0, "cell": grid.cell, "n_cols": grid.n_cols, "n_rows": grid.n_rows, "r": float(r)}


def _points(d):
    return np.column_stack([np.asarray(d["x"]), np.asarray(d["y"])])


def _grid(d):
    return grid_for(_points(d), d["r"], d["n_features"])


def launch_grid(answer, d):
    """One thread per instance, blocks of 32; ``cell_of`` starts at -1 and the CountMap at 0."""
    n, n_cells = len(d["x"]), d["n_cols"] * d["n_rows"]
    args = {"x": np.asarray(d["x"], np.float64), "y": np.asarray(d["y"], np.float64),
            "features": np.asarray(d["features"], np.int32), "x0": np.float64(d["x0"]), "y0": np.float64(d["y0"]),
            "cell": np.float64(d["cell"]), "n_cols": np.int32(d["n_cols"]),
            "cell_of": np.full(n, -1, np.int32), "count_map": np.zeros((n_cells, d["n_features"]), np.int32)}
    return Launch(answer.kernel(), max(1, -(-n // BLOCK)), BLOCK, args, outputs=("cell_of", "count_map"))


def expect_grid(d):
    """The trusted grid: NumPy cell ids and :func:`~course_lib.colocation.model.count_map`."""
    grid = _grid(d)
    return {"cell_of": grid.cells_of(_points(d)), "count_map": count_map(grid, _points(d), d["features"],
                                                                         d["n_features"])}


def on_boundaries(rng, info):
    """Points on cell edges and corners (the origin plus multiples of the cell side, r = 0.3), and a few inside.

    With this origin and side, ``(x - x0) / cell`` computed in float64 lands just below a whole number for some
    edges: only the formula the question gives, in float64, puts those points where NumPy does (float32
    arithmetic, or a multiplication by ``1 / cell``, moves some of them to the next cell).
    """
    r, x0, y0 = 0.3, -1.7, 2.2
    cell = r * CELL_MARGIN
    kx = np.arange(30)
    ky = (7 * kx) % 30
    edges = np.column_stack([x0 + kx * cell, y0 + ky * cell])
    inside = np.array([(x0 + 0.5 * cell, y0 + 2.5 * cell), (x0 + 3.999 * cell, y0 + 0.001), (0.0, 5.0),
                       (x0 + 29 * cell - 1e-12, y0)])
    points = np.vstack([edges, inside])
    return grid_case(points, np.arange(len(points)) % 3, 3, r)


def one_cell(rng, info, n=70):
    """Every point in the same cell: every thread adds to the same few counters."""
    points = np.random.default_rng(4).uniform(0.0, 0.9, (n, 2))
    return grid_case(points, np.arange(n) % 2, 2)


def one_instance(rng, info):
    return grid_case([[2.5, -1.0]], [0], 1)


def prime_count(rng, info):
    data = planted_colocations(97, 4, groups=((0, 1),), extent=5.0, seed=2)
    return grid_case(data.points, data.features, 4)


def random_case(rng, info):
    n, f = int(rng.integers(2, 150)), int(rng.integers(1, 7))
    points = rng.uniform(-3.0, 3.0, (n, 2)) * rng.uniform(0.5, 3.0)
    return grid_case(points, rng.integers(0, f, n), f)


def coalesced_case(rng, info):
    """Three full warps of instances spread over many cells (the profiler's case)."""
    data = planted_colocations(96, 3, groups=((0, 1),), extent=6.0, seed=9)
    return grid_case(data.points, data.features, 3)


def coalesced_sectors(d):
    """Global load sectors when warp w's lanes read instances 32w..32w+31: per warp, 8 sectors of x, 8 of y,
    4 of features (32-byte sectors), with slack for alignment."""
    warps = -(-len(d["x"]) // 32)
    return 0.0, 1.25 * warps * (8 + 8 + 4) + 6


def _load_sectors(metrics, d):
    return metrics["global_load_sectors"]


def swapped_axes(got, expected, d):
    """Diagnosis: cell ids made as ``cx * n_rows + cy`` instead of ``cy * n_cols + cx``."""
    if np.shape(got) != np.shape(expected) or np.ndim(expected) != 1 or "x" not in d:
        return False
    grid = _grid(d)
    cx = np.floor((np.asarray(d["x"]) - grid.x0) / grid.cell).astype(np.int64)
    cy = np.floor((np.asarray(d["y"]) - grid.y0) / grid.cell).astype(np.int64)
    return not np.array_equal(got, expected) and np.array_equal(got, cx * grid.n_rows + cy)


def _grid_test(name, points, make, hidden=False):
    return result_test(name, points, inputs=make, launch=launch_grid, expect=expect_grid, hidden=hidden,
                       label=lambda d: f"for N = {len(d['x'])}")


Q1 = question(
    "ps8.q1", "the grid preprocessing kernel: cell ids and the CountMap", 6, answer=kernel("cell_count_kernel"),
    tolerance="exact integers against NumPy's cell ids and course_lib.colocation.model.count_map",
    diagnose=(("axes", swapped_axes),),
    hints={"race": "many threads add to the same counter of count_map: a plain += 1 loses updates; use "
                   "cuda.atomic.add(count_map, (cell, feature), 1)",
           "bounds": "guard i < N: the last block has threads past the last instance",
           "value": "cx = floor((x[i] - x0) / cell) and cy likewise, computed in float64 exactly as written (no "
                    "float32, no multiplication by 1 / cell: points on cell edges must land where NumPy puts them); "
                    "the id is cy * n_cols + cx",
           "axes": "cells are numbered row by row: id = cy * n_cols + cx",
           "technique": "one thread per instance, thread i = cuda.grid(1) reading x[i], y[i] and features[i] once: "
                        "the 32 lanes of a warp then read 32 consecutive elements (coalesced)"},
    tests=[
        _grid_test("points on cell edges and corners", 1, on_boundaries),
        _grid_test("every point in one cell", 1, one_cell),
        _grid_test("one instance", 0.5, one_instance),
        _grid_test("a prime number of instances (97)", 1, prime_count),
        _grid_test("hidden: random sizes, extents and features", 0.5, random_case, hidden=True),
        race_test("race check: every point in one cell (course_lib.sim.check)", 1, technique=True,
                  inputs=lambda rng, info: one_cell(rng, info, 40), launch=launch_grid, expect=expect_grid),
        technique_test("coalesced loads of x, y and features (profiler)", 1, inputs=coalesced_case,
                       launch=launch_grid, expect=expect_grid, measure=_load_sectors, limit=coalesced_sectors,
                       unit="global load sectors", technique="one thread per instance, consecutive threads reading "
                                                             "consecutive elements of x, y and features"),
    ])


# ----------------------------------------------------------------------------- q2
def measure_case(n):
    """``inputs`` data of the q2 measurement for n instances: 3 features, (0, 1) planted, seeded by n.

    Returns
    -------
    dict
        As :func:`grid_case` gives it: ``x``, ``y`` float64 (n,), ``features`` int32 (n,), the grid's ``x0``,
        ``y0``, ``cell``, ``n_cols``, ``n_rows``.
    """
    n = int(n)
    data = planted_colocations(n, MEASURE_FEATURES, groups=((0, 1),), extent=6.0, seed=n)
    return grid_case(data.points, data.features, MEASURE_FEATURES)


def predicted_load_sectors(n):
    """The cost model: warps of 32 consecutive instances; a warp of m lanes reads m float64 of x (ceil(m / 4)
    sectors of 32 bytes), as many of y, and m int32 of features (ceil(m / 8)). Summed over the warps (32 is a
    multiple of 4 and 8): 2 ceil(n / 4) + ceil(n / 8)."""
    return 2 * -(-n // 4) + -(-n // 8)


def _measure_inputs(rng, info):
    """Two sizes drawn at grading time, neither a multiple of 32 (a partial last warp)."""
    sizes = {int(rng.integers(33, 160)), int(rng.integers(160, 400))}
    return {"params": sorted(n + 1 if n % 32 == 0 else n for n in sizes)}


def _measure_launch(answer, data, n):
    return launch_grid(answer["cell_count_kernel"], measure_case(n))


def _load_sectors_of(metrics, data, n):
    return metrics["global_load_sectors"]


Q2 = question(
    "ps8.q2", "predict, then measure the load sectors of your q1 kernel", 4,
    answer={"cell_count_kernel": kernel("cell_count_kernel"),
            "predicted_load_sectors": function("predicted_load_sectors"),
            "measure_load_sectors": measurement("measure_load_sectors")},
    tolerance="the prediction exact; measurements within 1% of the course's profiler",
    tests=[
        calls_test("the prediction: global load sectors for N instances", 2, key="predicted_load_sectors",
                   expect=predicted_load_sectors,
                   args=lambda rng, info: [(1,), (32,), (33,), (97,), (int(rng.integers(100, 10**6)),)],
                   explain=lambda args, want: "count the 32-byte sectors one warp of consecutive instances touches "
                                              "in x, y and features, and remember the last warp may be partial"),
        measured_test("your measurements of your q1 kernel, at sizes drawn by the grader", 2,
                      key="measure_load_sectors", inputs=_measure_inputs, launch=_measure_launch,
                      measure=_load_sectors_of, rtol=0.01,
                      hint="profile(cell_count_kernel, ceil(N / 32), 32, ...).total.global_load_sectors on the "
                           "instances of co.questions.measure_case(N), with cell_of and a zeroed count_map"),
    ])

QUESTIONS = (Q1, Q2)
