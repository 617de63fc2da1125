"""One generator for the graded fixtures of every problem set.

A fixture is a problem set's solution notebook with some answer cells (by nbgrader ``grade_id``)
replaced, named after what it covers: ``right``, ``right_but_different``, a wrong technique
(``naive``, ``atomics_only``, ``racy``...), each typical bug (``sign``, ``missing_barrier``,
``bounds``...), an attack on the grader (``patched_judges``, refused for tampering) and ``untouched`` (the released
problem set). Each declares the points the instructor grader must give it, per question, and
what its reasons and Markdown feedback must say; ``tests/grading/test_problem_sets.py`` grades
all fixtures of a problem set in one run of ``python -m course_lib.grading grade`` and asserts
every row. The notebooks are written at test time, not committed::

    python tests/grading/make_fixtures.py ps1 /tmp/ps1-fixtures   # to look at them
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
UNTOUCHED = "untouched"


@dataclass(frozen=True)
class Fixture:
    """A submission and what the grader must make of it.

    Attributes
    ----------
    covers : str
        What it stands for (one line).
    cells : dict
        ``grade_id -> new source`` of the cells replaced in the solution; ``UNTOUCHED`` for the
        released problem set as it is.
    points : tuple of float
        Points per question, in order.
    says : dict
        ``question id -> text`` that must appear in that question's reason (the CSV row).
    feedback : tuple of str
        Texts that must appear in the student's Markdown feedback.
    """

    covers: str
    cells: dict | str
    points: tuple
    says: dict = field(default_factory=dict)
    feedback: tuple = ()


# =========================================================================== PS1
PS1_HEADER = "interaction = nbody.kernels.interaction\n\n\n"

#: Correct, written differently: structure-of-arrays staging, a guarded inner loop, one sum per destination.
PS1_DIFFERENT = PS1_HEADER + '''def make_two_body_kernel(tile):
    @cuda.jit
    def kernel(bodies, softening_sq, acc):
        sx = cuda.shared.array(tile, float32)
        sy = cuda.shared.array(tile, float32)
        sz = cuda.shared.array(tile, float32)
        sm = cuda.shared.array(tile, float32)
        n = bodies.shape[0]
        t = cuda.threadIdx.x
        mine = (cuda.blockIdx.x * 2 * tile + t, cuda.blockIdx.x * 2 * tile + t + tile)
        pos = cuda.local.array((2, 3), float32)
        a = cuda.local.array((2, 3), float32)
        for d in range(2):
            for c in range(3):
                a[d, c] = 0.0
                pos[d, c] = bodies[mine[d], c] if mine[d] < n else 0.0
        for base in range(0, n, tile):
            j = base + t
            if j < n:
                sx[t] = bodies[j, 0]
                sy[t] = bodies[j, 1]
                sz[t] = bodies[j, 2]
                sm[t] = bodies[j, 3]
            cuda.syncthreads()
            for k in range(min(tile, n - base)):
                for d in range(2):
                    fx, fy, fz = interaction(pos[d, 0], pos[d, 1], pos[d, 2], sx[k], sy[k], sz[k], sm[k],
                                             softening_sq)
                    a[d, 0] += fx
                    a[d, 1] += fy
                    a[d, 2] += fz
            cuda.syncthreads()
        for d in range(2):
            if mine[d] < n:
                for c in range(3):
                    acc[mine[d], c] = a[d, c]

    return kernel
'''

#: Right results, wrong technique: both destinations read every source from global memory.
PS1_NAIVE = PS1_HEADER + '''def make_two_body_kernel(tile):
    @cuda.jit
    def kernel(bodies, softening_sq, acc):
        n = bodies.shape[0]
        for i in (cuda.blockIdx.x * 2 * tile + cuda.threadIdx.x, cuda.blockIdx.x * 2 * tile + cuda.threadIdx.x + tile):
            if i < n:
                ax = float32(0.0)
                ay = float32(0.0)
                az = float32(0.0)
                for j in range(n):
                    fx, fy, fz = interaction(bodies[i, 0], bodies[i, 1], bodies[i, 2], bodies[j, 0], bodies[j, 1],
                                             bodies[j, 2], bodies[j, 3], softening_sq)
                    ax += fx
                    ay += fy
                    az += fz
                acc[i, 0] = ax
                acc[i, 1] = ay
                acc[i, 2] = az

    return kernel
'''


def _solution_cell(problem_set: str, grade_id: str) -> str:
    nb = nbformat.read(_solution(problem_set), as_version=4)
    (cell,) = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id]
    return cell.source


def _edit(problem_set: str, grade_id: str, *replacements) -> str:
    """A solution cell with ``(old, new)`` replacements, each of which must apply exactly once."""
    source = _solution_cell(problem_set, grade_id)
    for old, new in replacements:
        if source.count(old) != 1:
            raise ValueError(f"{problem_set} {grade_id}: {old!r} occurs {source.count(old)} times")
        source = source.replace(old, new)
    return source


PS1_WRONG_PREDICTION = '''MEASURE_N = 64
MEASURE_TILES = (4, 8, 16)


def predicted_bytes(n, tile):
    return 16 * n * n // (2 * tile)  # forgets the destinations and the rounding up


def measure(make_kernel, n, tile):
    return 1.0  # not measured
'''

PS1_WRONG_TILE = '''def choose_tile(n, sm_count, max_threads_per_block, max_threads_per_sm):
    tile = max_threads_per_block
    while math.ceil(n / tile) < sm_count or 2 * tile > max_threads_per_sm:
        tile //= 2
    return tile  # counts P bodies per block, not 2P
'''


def _ps1() -> dict:
    q1 = "ps1_q1_answer"
    return {
        "right": Fixture("the solution", {}, (6, 2, 2)),
        "right_but_different": Fixture(
            "correct, written differently (SoA staging, guarded loop), other q2/q3 code",
            {q1: PS1_DIFFERENT,
             "ps1_q2_answer": _edit("ps1", "ps1_q2_answer",
                                    ("blocks = -(-n // (2 * tile))", "blocks = math.ceil(n / (2 * tile))")),
             "ps1_q3_answer": "def choose_tile(n, sm_count, max_threads_per_block, max_threads_per_sm):\n"
                              "    ok = [p for p in (2**k for k in range(11)) if p <= max_threads_per_block and\n"
                              "          2 * p <= max_threads_per_sm and -(-n // (2 * p)) >= sm_count]\n"
                              "    return max(ok)\n"},
            (6, 2, 2)),
        "naive": Fixture(
            "right results, sources read from global memory by every thread: the technique test caps q1 at half",
            {q1: PS1_NAIVE}, (3, 2, 2),
            says={"ps1.q1": "the tiling technique, measured"},
            feedback=("Likely cause: technique", "Capped at 3 points", "measured 1.75")),
        "missing_barrier": Fixture(
            "the second syncthreads forgotten: wrong results, and the race checker names the lines",
            {q1: _edit("ps1", q1, ("            cuda.syncthreads()  # nobody overwrites the tile while others "
                                   "still read it\n", ""))}, (0, 2, 2),
            says={"ps1.q1": "race and barrier check (N = 2 tile + 5, tile 64: two warps per block): the checker "
                            "found 1 problem(s) (race)"},
            feedback=("[race] write-read race on shared array staged", "Likely cause: barrier",
                      "Hint: one syncthreads after staging a tile and one before the next tile overwrites it")),
        "sign": Fixture(
            "r_ij taken as p_i - p_j; and a wrong prediction, measurement and tile rule",
            {q1: _edit("ps1", q1, ("interaction(px, py, pz, sx, sy, sz, sm, softening_sq)",
                                   "interaction(sx, sy, sz, px, py, pz, sm, softening_sq)"),
                       ("interaction(qx, qy, qz, sx, sy, sz, sm, softening_sq)",
                        "interaction(sx, sy, sz, qx, qy, qz, sm, softening_sq)")),
             "ps1_q2_answer": PS1_WRONG_PREDICTION, "ps1_q3_answer": PS1_WRONG_TILE},
            (0, 0, 0),
            says={"ps1.q1": "values are wrong", "ps1.q2": "predicted_bytes(64, 4) = 8192, expected 8960",
                  "ps1.q3": "choose_tile(65536, 108, 1024, 2048) = 512, expected 256"},
            feedback=("Likely cause: sign", "Hint: r_ij = p_j - p_i", "but the course's profiler measures")),
        "bounds": Fixture(
            "stores not guarded: the second destination is written past the end of acc (the technique still "
            "earns its points)",
            {q1: _edit("ps1", q1, ("            if second < count:\n                acc[second, c] = sum_q[c]",
                                   "            acc[second, c] = sum_q[c]"))},
            (2, 2, 2), says={"ps1.q1": "problem(s) (out-of-bounds)"},
            feedback=("Hint: guard the loads of both destinations and of the last tile",)),
        "unwritten": Fixture(
            "only the first destination of each thread is stored",
            {q1: _edit("ps1", q1, ("            if second < count:\n                acc[second, c] = sum_q[c]\n",
                                   ""))},
            (0, 2, 2), feedback=("Likely cause: unwritten", "Hint: each thread stores two bodies")),
        "patched_judges": Fixture(
            "a kernel writing zeros, with NumPy, the references and every judge patched in the notebook",
            {"ps1_setup": _solution_cell("ps1", "ps1_setup") + "\n\n" + PATCH_JUDGES.format(unit="nbody"),
             q1: PS1_HEADER + "def make_two_body_kernel(tile):\n    @cuda.jit\n"
                              "    def kernel(bodies, softening_sq, acc):\n        i = cuda.grid(1)\n"
                              "        if i < acc.shape[0]:\n            for c in range(3):\n"
                              "                acc[i, c] = 0.0\n\n    return kernel\n",
             "ps1_q2_answer": "MEASURE_N = 64\nMEASURE_TILES = (4, 8, 16)\npredicted_bytes = lambda n, tile: "
                              "Anything()\nmeasure = lambda make_kernel, n, tile: Anything()\n",
             "ps1_q3_answer": "def choose_tile(*args):\n    return Anything()\n"},
            (0, 0, 0), says={"ps1.q1": "refused for tampering", "ps1.q3": "refused for tampering"}),
        UNTOUCHED: Fixture("the released problem set, unanswered", UNTOUCHED, (0, 0, 0),
                           says={"ps1.q1": "not answered yet", "ps1.q3": "not answered yet"}),
    }


# =========================================================================== PS2
PS2_DIFFERENT = '''def make_subwarp_kernel(lanes):
    @cuda.jit
    def kernel(indptr, indices, data, x, y):
        row = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // lanes
        lane = cuda.threadIdx.x % lanes
        ok = row < y.shape[0]
        start = indptr[row] if ok else 0
        stop = indptr[row + 1] if ok else 0
        acc = float32(0.0)
        for j in range(start + lane, stop, lanes):
            acc += data[j] * x[indices[j]]
        offset = lanes // 2
        while offset >= 1:
            acc += cuda.shfl_down_sync(0xFFFFFFFF, acc, offset)
            offset = offset // 2
        if ok and lane == 0:
            y[row] = acc

    return kernel
'''

#: Right results, wrong technique: lane 0 of each group does the whole row (thread per row in disguise).
PS2_NAIVE = '''def make_subwarp_kernel(lanes):
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
'''

#: Right results, wrong technique: the lanes add their partial sums to y with atomics.
PS2_ATOMICS = '''def make_subwarp_kernel(lanes):
    @cuda.jit
    def kernel(indptr, indices, data, x, y):
        g = cuda.grid(1)
        row = g // lanes
        lane = g % lanes
        part = float32(0.0)
        if row < y.shape[0]:
            if lane == 0:
                y[row] = 0.0
            for j in range(indptr[row] + lane, indptr[row + 1], lanes):
                part += data[j] * x[indices[j]]
        cuda.syncwarp()  # y[row] is zero before any lane adds to it
        if row < y.shape[0]:
            cuda.atomic.add(y, row, part)

    return kernel
'''


def _ps2() -> dict:
    q1, q2, q3 = "ps2_q1_answer", "ps2_q2_answer", "ps2_q3_answer"
    return {
        "right": Fixture("the solution", {}, (6, 2, 2)),
        "right_but_different": Fixture(
            "correct, written differently (shfl_down_sync, a for loop), other q2 code",
            {q1: PS2_DIFFERENT, q2: _edit("ps2", q2, (
                "    group_steps = [(int(n) + lanes - 1) // lanes for n in row_lengths]",
                "    group_steps = [-(-int(n) // lanes) for n in row_lengths] or [0]"))}, (6, 2, 2)),
        "naive": Fixture("lane 0 of each group does the whole row: capped at half; its traffic is least at L = 2, "
                         "not at the solution's best_lanes", {q1: PS2_NAIVE}, (3, 1.5, 2),
                         says={"ps2.q1": "the sub-warp technique, measured"},
                         feedback=("Likely cause: technique", "Capped at 3 points")),
        "atomics_only": Fixture("partial sums added with atomics, not shuffles: capped at half", {q1: PS2_ATOMICS},
                                (3, 2, 2), says={"ps2.q1": "the sub-warp technique, measured"},
                                feedback=("atomic operations",)),
        "early_exit": Fixture(
            "whole groups of lanes past the last row return before the shuffles: exited lanes take no part in a "
            "shuffle (CUDA programming guide), and the remaining groups shuffle only among themselves, so this "
            "is right too",
            {q1: _edit("ps2", q1, ("        mine = float32(0.0)\n",
                                   "        if r >= y.shape[0]:\n            return\n        mine = float32(0.0)\n"))},
            (6, 2, 2), says={"ps2.q1": "all tests passed"}),
        "bounds": Fixture(
            "no row guard: lanes past the last row read indptr past its end",
            {q1: _edit("ps2", q1, ("        if r < y.shape[0]:  # lanes past the last row keep 0 and still join the "
                                   "shuffles\n", "        if True:\n"))},
            (2.5, 2, 2), says={"ps2.q1": "(out-of-bounds)"},
            feedback=("Hint: guard the rows past the end (row < R)",)),
        "wrong_stride": Fixture(
            "every lane walks the whole rest of its row (stride 1), and wrong q2/q3 answers",
            {q1: _edit("ps2", q1, ("                j += lanes\n", "                j += 1\n")),
             q2: _edit("ps2", q2, ("    rows_per_warp = 32 // lanes", "    rows_per_warp = 32"),
                       ("best_lanes = 8", "best_lanes = 32")),
             q3: _edit("ps2", q3, ("return row_lengths.size * K + 3 * int(np.maximum(row_lengths - K, 0).sum())",
                                   "return row_lengths.size * K + int(np.maximum(row_lengths - K, 0).sum())"))},
            (0, 0.5, 1), says={"ps2.q1": "values are wrong", "ps2.q3": "hyb_cost("},
            feedback=("Hint: lane l sums entries l, l + L",)),
        "patched_judges": Fixture(
            "a kernel writing zeros, with NumPy, the references and every judge patched in the notebook",
            {"ps2_setup": _solution_cell("ps2", "ps2_setup") + "\n\n" + PATCH_JUDGES.format(unit="spmv"),
             q1: "def make_subwarp_kernel(lanes):\n    @cuda.jit\n    def kernel(indptr, indices, data, x, y):\n"
                 "        i = cuda.grid(1)\n        if i < y.shape[0]:\n            y[i] = 0.0\n\n    return kernel\n",
             q2: "MEASURE_LANES = (2, 4, 8, 16, 32)\npredicted_steps = measure = lambda *args: Anything()\n"
                 "best_lanes = 8\n",
             q3: "hyb_cost = choose_k = lambda *args: Anything()\n"},
            (0, 0, 0), says={"ps2.q1": "refused for tampering", "ps2.q3": "refused for tampering"}),
        UNTOUCHED: Fixture("the released problem set, unanswered", UNTOUCHED, (0, 0, 0),
                           says={"ps2.q1": "not answered yet", "ps2.q3": "not answered yet"}),
    }


# =========================================================================== PS3
PS3_DIFFERENT = '''@cuda.jit
def bottom_up_step(in_indptr, in_indices, frontier_flags, current, depth, parent, next_flags, next_count):
    me = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if me >= depth.shape[0]:
        return
    if depth[me] != -1:
        return
    for e in range(in_indptr[me], in_indptr[me + 1]):
        w = in_indices[e]
        if frontier_flags[w] == 1:
            parent[me] = w
            depth[me] = current + 1
            next_flags[me] = 1
            cuda.atomic.add(next_count, 0, 1)
            return
'''

#: Right results, wrong technique: scans every in-neighbour and keeps the last parent found.
PS3_NO_EARLY_EXIT = '''@cuda.jit
def bottom_up_step(in_indptr, in_indices, frontier_flags, current, depth, parent, next_flags, next_count):
    v = cuda.grid(1)
    if v < depth.shape[0] and depth[v] == -1:
        found = -1
        for k in range(in_indptr[v], in_indptr[v + 1]):
            u = in_indices[k]
            if frontier_flags[u]:
                found = u
        if found != -1:
            depth[v] = current + 1
            parent[v] = found
            next_flags[v] = 1
            cuda.atomic.add(next_count, 0, 1)
'''

#: Racy: top-down inside the bottom-up interface, each frontier vertex claims its neighbours by check-then-act.
PS3_RACY = '''@cuda.jit
def bottom_up_step(in_indptr, in_indices, frontier_flags, current, depth, parent, next_flags, next_count):
    u = cuda.grid(1)
    if u < depth.shape[0] and frontier_flags[u]:
        for k in range(in_indptr[u], in_indptr[u + 1]):
            v = in_indices[k]
            if depth[v] == -1 or depth[v] == current + 1:
                depth[v] = current + 1
                parent[v] = u
                next_flags[v] = 1
                cuda.atomic.add(next_count, 0, 1)
'''


def _ps3() -> dict:
    q1, q2, q3 = "ps3_q1_answer", "ps3_q2_answer", "ps3_q3_answer"
    return {
        "right": Fixture("the solution", {}, (6, 2, 2)),
        "right_but_different": Fixture(
            "correct, written differently (early returns, a for loop), other q2/q3 code",
            {q1: PS3_DIFFERENT,
             q2: _edit("ps3", q2, ("    for v in np.flatnonzero(depth == -1):", "    for v in range(len(depth)):\n"
                                   "        if depth[v] != -1:\n            continue")),
             q3: _edit("ps3", q3, ("    return (n - 1) * iterations", "    return iterations * (n - 1)"))}, (6, 2, 2)),
        "no_early_exit": Fixture("every in-neighbour scanned after the parent is found: capped at half",
                                 {q1: PS3_NO_EARLY_EXIT}, (3, 2, 2),
                                 says={"ps3.q1": "the bottom-up technique, measured"},
                                 feedback=("Likely cause: technique", "Capped at 3 points")),
        "racy": Fixture("top-down check-then-act: vertices counted several times, the checker sees the races; the "
                        "results are right in the simulator (capped at half)",
                        {q1: PS3_RACY}, (2.5, 2, 2), says={"ps3.q1": "next_count = 18 and 6 vertices flagged"},
                        feedback=("Likely cause: race", "Hint: a thread writes only its own vertex")),
        "bounds": Fixture("no v < V guard: threads past the last vertex read past the arrays",
                          {q1: _edit("ps3", q1, ("    if v < depth.shape[0] and depth[v] < 0:", "    if depth[v] < 0:"))},
                          (1.5, 2, 2), says={"ps3.q1": "IndexError"}),
        "off_by_one": Fixture("depth[v] = current, and wrong q3 answers (the lesson's undirected 2E, and O(V + E) "
                              "for bottom-up steps only)",
                              {q1: _edit("ps3", q1, ("                depth[v] = current + 1",
                                                     "                depth[v] = current")),
                               q3: _edit("ps3", q3, ("    return n - 1 - n // 2  #", "    return 2 * (n - 1)  #"),
                                         ('work_complexity = "O(V * E)"', 'work_complexity = "O(V + E)"'))},
                              (1, 2, 0.75), says={"ps3.q1": "depth under the checker: 85 of 120 values differ"},
                              feedback=("Hint: an unvisited vertex (depth -1) looks through its in-neighbours",)),
        "patched_judges": Fixture(
            "a kernel writing garbage, with NumPy, the references and every judge patched in the notebook",
            {"ps3_setup": _solution_cell("ps3", "ps3_setup") + "\n\n" + PATCH_JUDGES.format(unit="bfs"),
             q1: "@cuda.jit\ndef bottom_up_step(in_indptr, in_indices, frontier_flags, current, depth, parent, "
                 "next_flags, next_count):\n    v = cuda.grid(1)\n    if v < depth.shape[0]:\n        depth[v] = 7\n",
             q2: "MEASURE_LEVELS = (1, 2, 3)\npredicted_edges = measure = lambda *args: Anything()\n",
             q3: "quadratic_on_chain = frontier_on_chain = lambda n: Anything()\nwork_complexity = Anything()\n"},
            (0, 0, 0), says={"ps3.q1": "refused for tampering", "ps3.q3": "refused for tampering"}),
        UNTOUCHED: Fixture("the released problem set, unanswered", UNTOUCHED, (0, 0, 0),
                           says={"ps3.q1": "not answered yet", "ps3.q2": "not answered yet"}),
    }


# =========================================================================== PS4
PS4_DIFFERENT = '''INTERIOR = poisson.INTERIOR


@cuda.jit
def red_black_kernel(image, rhs, labels, colour):
    x, y = cuda.grid(2)
    h, w = labels.shape
    if x >= w or y >= h:
        return
    if (x + y) % 2 != colour or labels[y, x] != INTERIOR:
        return
    d = float32(4.0)
    if y == 0 or y == h - 1:
        d -= float32(1.0)
    if x == 0 or x == w - 1:
        d -= float32(1.0)
    for c in range(3):
        a = float32(0.0)
        for dy, dx in ((-1, 0), (1, 0), (0, -1), (0, 1)):
            yy = y + dy
            xx = x + dx
            if 0 <= yy < h and 0 <= xx < w and labels[yy, xx] == INTERIOR:
                a += image[c, yy, xx]
        image[c, y, x] = max(float32(0.0), min(float32(255.0), (a + rhs[c, y, x]) / d))
'''

#: Right results, wrong technique: every thread of the colour also writes back its other-colour neighbours.
PS4_REWRITES = '''INTERIOR = poisson.INTERIOR


@cuda.jit
def red_black_kernel(image, rhs, labels, colour):
    x, y = cuda.grid(2)
    h, w = labels.shape
    if x < w and y < h and labels[y, x] == INTERIOR:
        for c in range(3):
            if (x + y) % 2 == colour:
                d = float32(0.0)
                a = rhs[c, y, x]
                if y > 0:
                    d += float32(1.0)
                    if labels[y - 1, x] == INTERIOR:
                        a += image[c, y - 1, x]
                if y < h - 1:
                    d += float32(1.0)
                    if labels[y + 1, x] == INTERIOR:
                        a += image[c, y + 1, x]
                if x > 0:
                    d += float32(1.0)
                    if labels[y, x - 1] == INTERIOR:
                        a += image[c, y, x - 1]
                if x < w - 1:
                    d += float32(1.0)
                    if labels[y, x + 1] == INTERIOR:
                        a += image[c, y, x + 1]
                image[c, y, x] = min(max(a / d, float32(0.0)), float32(255.0))
            else:
                image[c, y, x] = image[c, y, x]  # a needless store of the other colour
'''


def _ps4() -> dict:
    q1, q2, q3 = "ps4_q1_answer", "ps4_q2_answer", "ps4_q3_answer"
    return {
        "right": Fixture("the solution", {}, (6, 2, 2)),
        "right_but_different": Fixture("correct, written differently (early returns, a loop over offsets)",
                                       {q1: PS4_DIFFERENT, q2: _edit("ps4", q2, (
                                           "    return 3 * 4 * int(mine.sum())", "    return int(np.sum(mine)) * 12"))},
                                       (6, 2, 2)),
        "rewrites_other_colour": Fixture(
            "right results, but every thread also stores the other colour's pixels: the checker and the profiler "
            "see it, capped at half", {q1: PS4_REWRITES}, (3, 2, 2),
            says={"ps4.q1": "race"}, feedback=("Likely cause: technique", "Capped at 3 points")),
        "no_colour": Fixture(
            "in place, every pixel in every launch (the lesson's racy Jacobi)",
            {q1: _edit("ps4", q1, (" and (row + col) % 2 == colour", ""))}, (0, 2, 2),
            says={"ps4.q1": "race"}, feedback=("Likely cause: race", "Hint: update only the pixels of the launch's colour")),
        "bounds": Fixture("no x < W guard: threads past the image read and write outside it",
                          {q1: _edit("ps4", q1, ("row < height and col < width and ", "row < height and "))},
                          (1, 2, 2), says={"ps4.q1": "(out-of-bounds)"}),
        "four_neighbours": Fixture("D = 4 everywhere (edges and corners too), and a wrong classify",
                                   {q1: _edit("ps4", q1, (
                                       "        inside = float32((row > 0) + (row < height - 1) + (col > 0) + "
                                       "(col < width - 1))", "        inside = float32(4.0)")),
                                    q3: _edit("ps4", q3, ("padded = np.pad(mask, 1, constant_values=True)",
                                                          "padded = np.pad(mask, 1, constant_values=False)"))},
                                   (0.5, 2, 0.75), says={"ps4.q1": "values differ from the red-black reference"},
                                   feedback=("neighbours beyond the image edge do not count",)),
        "patched_judges": Fixture(
            "a kernel writing garbage, with NumPy, the references and every judge patched in the notebook",
            {"ps4_setup": _solution_cell("ps4", "ps4_setup") + "\n\n" + PATCH_JUDGES.format(unit="poisson"),
             q1: "@cuda.jit\ndef red_black_kernel(image, rhs, labels, colour):\n    x, y = cuda.grid(2)\n"
                 "    if y < labels.shape[0] and x < labels.shape[1]:\n        image[0, y, x] = 7.0\n",
             q2: "predicted_store_bytes = measure = lambda *args: Anything()\n",
             q3: "def classify(mask):\n    return Anything()\n"},
            (0, 0, 0), says={"ps4.q1": "refused for tampering", "ps4.q2": "refused for tampering"}),
        UNTOUCHED: Fixture("the released problem set, unanswered", UNTOUCHED, (0, 0, 0),
                           says={"ps4.q1": "not answered yet", "ps4.q3": "not answered yet"}),
    }


# =========================================================================== PS5
#: Right sums, wrong technique: every later entry of a run adds itself into the first with an atomic.
PS5_ATOMICS_ONLY = """@cuda.jit
def fusion_warp(keys, weights, src, dst):
    n = keys.shape[0]
    for p in range(cuda.threadIdx.x, n, 32):
        neighbour = keys[p] >> 32
        first = p
        while first > 0 and (keys[first - 1] >> 32) == neighbour:
            first -= 1
        if first != p:
            cuda.atomic.add(weights, keys[first] & 0xFFFFFFFF, weights[keys[p] & 0xFFFFFFFF])
    cuda.syncwarp()
    for p in range(cuda.threadIdx.x, n, 32):
        if p > 0 and (keys[p - 1] >> 32) == (keys[p] >> 32):
            e = keys[p] & 0xFFFFFFFF
            weights[e] = -np.inf
            src[e] = -1
            dst[e] = -1
"""

#: Right sums, the lesson's technique instead of the question's: a Hillis-Steele scan in shared memory with a
#: barrier after every step (what fusion_segmented_kernel does), no shuffles.
PS5_SHARED_SCAN = """@cuda.jit
def fusion_warp(keys, weights, src, dst):
    run_key = cuda.shared.array(32, int64)
    run_sum = cuda.shared.array(32, float32)
    run_head = cuda.shared.array(32, int64)
    carry = cuda.shared.array(2, int64)
    carry_sum = cuda.shared.array(1, float32)
    t = cuda.threadIdx.x
    n = keys.shape[0]
    if t == 0:
        carry[0] = -1
    cuda.syncthreads()
    for base in range(0, n, 32):
        p = base + t
        neighbour = int64(-2 - t)
        entry = int64(-1)
        value = float32(0.0)
        if p < n:
            neighbour = keys[p] >> 32
            entry = keys[p] & 0xFFFFFFFF
            value = weights[entry]
        head = entry
        if t == 0 and neighbour == carry[0]:
            value += carry_sum[0]
            head = carry[1]
        run_key[t] = neighbour
        run_sum[t] = value
        run_head[t] = head
        cuda.syncthreads()
        offset = 1
        while offset < 32:
            add = float32(0.0)
            first = head
            if t >= offset and run_key[t - offset] == neighbour:
                add = run_sum[t - offset]
                first = min(head, run_head[t - offset])
            cuda.syncthreads()
            run_sum[t] += add
            run_head[t] = first
            head = first
            cuda.syncthreads()
            offset *= 2
        if p < n:
            if entry != head:
                weights[entry] = -np.inf
                src[entry] = -1
                dst[entry] = -1
            if p == n - 1 or (keys[p + 1] >> 32) != neighbour:
                weights[head] = run_sum[t]
        if t == 31:
            carry[0] = neighbour
            carry[1] = head
            carry_sum[0] = run_sum[t]
        cuda.syncthreads()
"""

#: The course's own kernel and measurements instead of the student's (q1 and q2 cells, in that order).
PS5_COURSE_OWN = """fusion_warp = hac.kernels.fusion_segmented_kernel(32)


def amdahl(stage_seconds, accelerated, speedup):
    f = sum(stage_seconds[s] for s in accelerated) / sum(stage_seconds.values())
    return hac.amdahl_speedup(f, speedup)


def copies(method, n, seed):
    measured = hac.profiling.per_iteration(hac.tied_graph(n, seed=seed), method)
    return measured["HtoD_count"] + measured["DtoH_count"]
"""

_PS5_Q1 = "ps5_q1_answer"
#: The solution's carry from one chunk to the next (three broadcasts from lane 31).
_PS5_CARRY = ("        carry_key = cuda.shfl_sync(FULL_MASK, neighbour, 31)\n"
              "        carry_sum = cuda.shfl_sync(FULL_MASK, total, 31)\n"
              "        carry_head = cuda.shfl_sync(FULL_MASK, head, 31)\n")


def ps5_no_carry() -> str:
    """The typical bug: the scan by shuffles, but a run crossing a chunk boundary starts again from zero."""
    return _edit("ps5", _PS5_Q1, (_PS5_CARRY, ""),
                 ("        if lane == 0 and neighbour == carry_key:  # the run began in an earlier chunk\n"
                  "            total += carry_sum\n            head = carry_head\n", ""))


def ps5_different() -> str:
    """Correct, written differently: the carry through shared memory (written by lane 31 after the loads' syncwarp,
    a second syncwarp before the next chunk reads it), a while loop over the offsets, a conditional for the head."""
    return _edit(
        "ps5", _PS5_Q1,
        ("    carry_key = int64(-1)  # the last run of the previous chunk: its neighbour, sum so far and first entry\n"
         "    carry_sum = float32(0.0)\n    carry_head = int64(-1)\n",
         "    carry = cuda.shared.array(2, int64)  # neighbour and first entry of the last run so far\n"
         "    carry_sum = cuda.shared.array(1, float32)\n    if lane == 0:\n        carry[0] = -1\n"
         "    cuda.syncwarp()\n"),
        ("neighbour == carry_key:", "neighbour == carry[0]:"),
        ("            total += carry_sum\n            head = carry_head\n",
         "            total += carry_sum[0]\n            head = carry[1]\n"),
        ("        for step in range(5):  # inclusive segmented scan in registers, 1, 2, 4, 8, 16 lanes down the warp\n"
         "            offset = 1 << step\n", "        offset = 1\n        while offset < 32:\n"),
        ("                head = min(head, below_head)\n",
         "                head = below_head if below_head < head else head\n            offset *= 2\n"),
        (_PS5_CARRY, ""),
        ("                weights[head] = total\n",
         "                weights[head] = total\n        if lane == 31:\n            carry[0] = neighbour\n"
         "            carry[1] = head\n            carry_sum[0] = total\n        cuda.syncwarp()\n"))


def _ps5() -> dict:
    q1, q2 = _PS5_Q1, "ps5_q2_answer"
    course_q1, course_q2 = PS5_COURSE_OWN.split("\n\n\ndef amdahl")
    return {
        "right": Fixture("the solution", {}, (6, 4)),
        "right_but_different": Fixture(
            "correct, written differently (the carry through shared memory with a second syncwarp, a while loop over "
            "the scan's offsets; Amdahl from the accelerated fraction)",
            {q1: ps5_different(),
             q2: _edit("ps5", q2, ("    before = sum(stage_seconds.values())\n"
                                   "    after = sum(t / speedup if stage in accelerated else t for stage, t in "
                                   "stage_seconds.items())\n    return before / after",
                                   "    f = sum(stage_seconds[s] for s in accelerated) / sum(stage_seconds.values())\n"
                                   "    return 1.0 / ((1.0 - f) + f / speedup)"))},
            (6, 4)),
        "atomics_only": Fixture("right sums from atomics instead of a segmented scan: capped at half",
                                {q1: PS5_ATOMICS_ONLY}, (3, 4), says={"ps5.q1": "the warp-scan technique, measured"},
                                feedback=("atomic operations: measured", "Capped at 3 points")),
        "shared_scan": Fixture("right sums from the lesson's technique (a scan in shared memory, no shuffles): capped "
                               "at half", {q1: PS5_SHARED_SCAN}, (3, 4), says={"ps5.q1": "the warp-scan technique, measured"},
                               feedback=("cuda.shfl_up_sync", "Capped at 3 points")),
        "no_carry": Fixture("the scan by shuffles, runs crossing a chunk boundary not carried over",
                            {q1: ps5_no_carry()}, (2, 4), says={"ps5.q1": "race and warp check"},
                            feedback=("Likely cause: chunk", "cuda.shfl_sync(mask, value, 31)")),
        "course_own": Fixture("the course's fusion kernel, Amdahl helper and profiling instead of the student's",
                              {q1: course_q1 + "\n", q2: "def amdahl" + course_q2}, (0, 0),
                              says={"ps5.q1": "course's own", "ps5.q2": "course's own"}),
        "patched_judges": Fixture(
            "a kernel writing garbage, with NumPy, the references and every judge patched in the notebook",
            {"ps5_setup": _solution_cell("ps5", "ps5_setup") + "\n\n" + PATCH_JUDGES.format(unit="hac"),
             q1: "@cuda.jit\ndef fusion_warp(keys, weights, src, dst):\n"
                 "    if cuda.threadIdx.x < weights.shape[0]:\n        weights[cuda.threadIdx.x] = 7.0\n",
             q2: "amdahl = copies = lambda *args: Anything()\n"},
            (0, 0), says={"ps5.q1": "refused for tampering", "ps5.q2": "refused for tampering"}),
        UNTOUCHED: Fixture("the released problem set, unanswered", UNTOUCHED, (0, 0),
                           says={"ps5.q1": "not answered yet", "ps5.q2": "not answered yet"}),
    }


# =========================================================================== PS6
def _ps6_source(name: str) -> str:
    """A ``minibatch_gemm_kernel`` answer from tests/ica/submissions.py (the grader tests' answers)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_ps6_submissions", ROOT / "tests" / "ica" / "submissions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return "TILE = 16\n\n\n" + module.source_of(name)


def _ps6() -> dict:
    q1 = "ps6_q1_answer"
    capped = ("Capped at 3 points", "the technique gives")
    return {
        "right": Fixture("the solution", {}, (6, 4)),
        "right_but_different": Fixture("correct, another register block: four samples of one channel per thread, "
                                       "chunks of 8 along k, a local array", {q1: _ps6_source("four_by_one")},
                                       (6, 4)),
        "right_plain_names": Fixture("correct, written differently: the course's-style 2 x 2 block with other names "
                                     "and a conditional expression per staged element",
                                     {q1: _ps6_source("solution")}, (6, 4)),
        "naive": Fixture("right results, every output's operands read from global memory: capped at half",
                         {q1: _ps6_source("naive")}, (3, 4),
                         says={"ps6.q1": "the register-blocked tiling technique, measured"},
                         feedback=("operands staged in shared memory", "global bytes loaded / the tiled model",
                                   *capped)),
        "registers_only": Fixture("right results, the 2 x 2 register block read straight from global memory: "
                                  "capped at half", {q1: _ps6_source("registers_only")}, (3, 4),
                                  says={"ps6.q1": "the register-blocked tiling technique, measured"},
                                  feedback=("operands staged in shared memory", "global bytes loaded / the tiled model",
                                            *capped)),
        "shared_no_registers": Fixture("right results, shared tiles but no value reused from a register: capped at "
                                       "half", {q1: _ps6_source("shared_no_registers")}, (3, 4),
                                       says={"ps6.q1": "the register-blocked tiling technique, measured"},
                                       feedback=("register blocking", "shared-memory accesses per multiply-add",
                                                 *capped)),
        "missing_barrier": Fixture("no barrier after the products: the next chunk overwrites tiles still read",
                                   {q1: _ps6_source("missing_barrier")}, (1, 4),
                                   feedback=("write-read race on shared array",)),
        "patched_judges": Fixture(
            "a kernel writing garbage, with NumPy, the references and every judge patched in the notebook",
            {"ps6_setup": _solution_cell("ps6", "ps6_setup") + "\n\n" + PATCH_JUDGES.format(unit="ica"),
             q1: "TILE = 16\n\n\n@cuda.jit\ndef minibatch_gemm_kernel(Wt, Xt, perm, start, U):\n"
                 "    if cuda.threadIdx.x < U.shape[1]:\n        U[0, cuda.threadIdx.x] = 7.0\n",
             "ps6_q2_answer": "launches_per_step = occupancy = predicted_load_bytes = lambda *args: Anything()\n"
                              "measure_load_bytes = lambda kernel, n_channels: Anything()\n"},
            (0, 0), says={"ps6.q1": "refused for tampering", "ps6.q2": "refused for tampering"}),
        UNTOUCHED: Fixture("the released problem set, unanswered", UNTOUCHED, (0, 0),
                           says={"ps6.q1": "not answered yet", "ps6.q2": "not answered yet"}),
    }


# =========================================================================== PS7
def _ps7_source(name: str) -> str:
    """A ``make_compact_kernel`` answer from tests/cellsim/submissions.py (the grader tests' answers)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_ps7_submissions", ROOT / "tests" / "cellsim" / "submissions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.source_of(name)


def _ps7() -> dict:
    q1, q2 = "ps7_q1_answer", "ps7_q2_answer"
    capped = ("Capped at 3 points", "the technique gives")
    return {
        "right": Fixture("the solution", {}, (6, 4)),
        "right_but_different": Fixture("correct, another scan: Blelloch's up-sweep and down-sweep, thread 0 "
                                       "reserving (72 bytes per slot of the level in q2)",
                                       {q1: _ps7_source("make_blelloch"), q2: _edit("ps7", q2, (
                                           "(n_initial * 2**level + n_initial * 2 ** (level + 1)) * 24",
                                           "72 * n_initial * 2**level"))}, (6, 4)),
        "right_double_buffer": Fixture("correct, written differently: a ping-pong scan with one barrier per step, "
                                       "no atomic for a block without recorded cells",
                                       {q1: _ps7_source("make_double_buffer")}, (6, 4)),
        "atomic_per_cell": Fixture("right packed cells, but one global atomic per recorded cell and no scan: "
                                   "capped at half", {q1: _ps7_source("make_atomic_per_cell")}, (3, 4),
                                   says={"ps7.q1": "the block-scan compaction technique, measured"},
                                   feedback=("atomics per block",
                                             *capped)),
        "serial_scan": Fixture("right result, but thread 0 scans its whole block alone: capped at half",
                               {q1: _ps7_source("make_serial_scan")}, (3, 4),
                               says={"ps7.q1": "the block-scan compaction technique, measured"},
                               feedback=("SIMT efficiency", *capped)),
        "recount": Fixture("right result, but each cell counts the flags before it from global memory (quadratic "
                           "work): capped at half", {q1: _ps7_source("make_recount")}, (3, 4),
                           says={"ps7.q1": "the block-scan compaction technique, measured"},
                           feedback=("global bytes loaded per cell",
                                     *capped)),
        "shifted_scan": Fixture("the inclusive scan used as the exclusive one: every slot one too far",
                                {q1: _ps7_source("make_shifted")}, (0.25, 4),
                                feedback=("Likely cause: bounds", "IndexError")),
        "missing_barrier": Fixture("no barrier between a scan step's reads and writes",
                                   {q1: _ps7_source("make_missing_barrier")}, (0.25, 4),
                                   feedback=("write-read race on shared array",)),
        "one_level": Fixture("the tree's step counted for the new level only",
                             {q2: _edit("ps7", q2, ("(n_initial * 2**level + n_initial * 2 ** (level + 1)) * 24",
                                                    "n_initial * 2 ** (level + 1) * 24"))}, (6, 2.5),
                             says={"ps7.q2": "count both levels"}),
        "prediction_all_cells": Fixture("the load prediction counts a fluorescence for every cell, recorded or not",
                                        {q2: _edit("ps7", q2, ("return 4 * n + 8 * n_recorded",
                                                               "return 12 * n"))}, (6, 3.25),
                                        says={"ps7.q2": "predicted_load_bytes(197, 97) = 2364"}),
        "patched_judges": Fixture(
            "a kernel writing garbage, with NumPy, the references and every judge patched in the notebook",
            {"ps7_setup": _solution_cell("ps7", "ps7_setup") + "\n\n" + PATCH_JUDGES.format(unit="cellsim"),
             q1: "def make_compact_kernel(block):\n    @cuda.jit\n"
                 "    def compact(flags, phis, counter, out_ids, out_phis):\n"
                 "        i = cuda.grid(1)\n        if i < flags.shape[0]:\n            out_phis[0] = 7.0\n\n"
                 "    return compact\n",
             q2: "tree_step_bytes = first_level_over = lambda *args: Anything()\n"
                 "tree_dtoh_bytes = compact_dtoh_bytes = Anything()\n"},
            (0, 0), says={"ps7.q1": "refused for tampering", "ps7.q2": "refused for tampering"}),
        UNTOUCHED: Fixture("the released problem set, unanswered", UNTOUCHED, (0, 0),
                           says={"ps7.q1": "not answered yet"}),
    }


# =========================================================================== PS8
#: Correct, written differently: strided zeroing, the last F threads merge every count (zeros too), an early return.
PS8_DIFFERENT = '''SLOTS = 32


@cuda.jit
def feature_count_kernel(features, feature_count):
    hist = cuda.shared.array(SLOTS, int32)
    t = cuda.threadIdx.x
    f_count = feature_count.shape[0]
    for f in range(t, f_count, cuda.blockDim.x):
        hist[f] = 0
    cuda.syncthreads()
    k = cuda.blockIdx.x * cuda.blockDim.x + t
    if k < features.shape[0]:
        cuda.atomic.add(hist, features[k], 1)
    cuda.syncthreads()
    f = cuda.blockDim.x - 1 - t
    if f >= f_count:
        return
    cuda.atomic.add(feature_count, f, hist[f])
'''

#: The lesson's starting point: one global atomic per instance (right results, the technique not used).
PS8_GLOBAL = '''@cuda.jit
def feature_count_kernel(features, feature_count):
    i = cuda.grid(1)
    if i < features.shape[0]:
        cuda.atomic.add(feature_count, features[i], 1)
'''

#: Right results, wrong technique: thread 0 counts the block's instances while the others wait.
PS8_ONE_THREAD = '''@cuda.jit
def feature_count_kernel(features, feature_count):
    counts = cuda.shared.array(32, int32)
    t = cuda.threadIdx.x
    if t < feature_count.shape[0]:
        counts[t] = 0
    cuda.syncthreads()
    if t == 0:
        first = cuda.blockIdx.x * cuda.blockDim.x
        for i in range(first, min(first + cuda.blockDim.x, features.shape[0])):
            counts[features[i]] += 1
    cuda.syncthreads()
    if t < feature_count.shape[0] and counts[t] > 0:
        cuda.atomic.add(feature_count, t, counts[t])
'''

#: Correct q2, written differently: the blocks counted one by one; device arrays and the lines summed.
PS8_Q2_DIFFERENT = '''def predicted_global_atomics(n, block, n_features):
    total = 0
    for first in range(0, n, block):
        total += min(block, n - first, n_features)
    return total


def measure(kernel, n, block, n_features):
    features = cuda.to_device(co.questions.measure_features(n, n_features))
    counts = cuda.to_device(np.zeros(n_features, np.int32))
    report = profile(kernel, (n + block - 1) // block, block, features, counts)
    return sum(line.global_atomics for line in report.lines)
'''


def _ps8() -> dict:
    q1, q2 = "ps8_q1_answer", "ps8_q2_answer"
    # Typical q2 slip: every block counted as full (the partial last block overestimated).
    full_blocks = _edit("ps8", q2, ("return full * min(block, n_features) + min(last, n_features)",
                                    "return math.ceil(n / block) * min(block, n_features)"))
    # A q2 "measurement" that returns the prediction instead of profiling the kernel it is given.
    not_measured = _edit("ps8", q2, ("    return report.total.global_atomics\n",
                                     "    return predicted_global_atomics(n, block, n_features)\n"))
    return {
        "right": Fixture("the solution", {}, (6, 4)),
        "right_but_different": Fixture("correct, written differently (strided zeroing, the last threads merge every "
                                       "count, an early return; the blocks counted one by one and device arrays in "
                                       "q2)", {q1: PS8_DIFFERENT, q2: PS8_Q2_DIFFERENT}, (6, 4)),
        "global_atomics": Fixture("the lesson's one global atomic per instance: right counts, the technique not "
                                  "used, capped at half", {q1: PS8_GLOBAL}, (3, 4),
                                  says={"ps8.q1": "global atomics"},
                                  feedback=("Likely cause: technique", "Capped at 3 points")),
        "one_thread": Fixture("thread 0 counts the block's instances while the others wait: capped at half",
                              {q1: PS8_ONE_THREAD}, (3, 4), says={"ps8.q1": "thread span"}),
        "no_barrier": Fixture("the barrier before the merge forgotten: warps merge before the others have counted",
                              {q1: _edit("ps8", q1, ("    cuda.syncthreads()  # every instance of the block counted "
                                                     "before the merge\n", ""))}, (1, 4),
                              says={"ps8.q1": "race"}, feedback=("Likely cause: barrier",)),
        "not_measured": Fixture("a q2 measurement that returns the prediction instead of profiling the kernel it "
                                "is given", {q2: not_measured}, (6, 2),
                                says={"ps8.q2": "the course's profiler measures"}),
        "full_blocks": Fixture("q2 counts every block as full", {q2: full_blocks}, (6, 2),
                               says={"ps8.q2": "predicted_global_atomics(1, 32, 5) = 5, expected 1"}),
        "bounds": Fixture("no i < N guard: threads past the last instance read outside features",
                          {q1: _edit("ps8", q1, ("    if mine < features.shape[0]:", "    if True:"))}, (0, 4),
                          says={"ps8.q1": "(out-of-bounds)"}),
        "patched_judges": Fixture(
            "a kernel writing garbage, with NumPy, the references and every judge patched in the notebook",
            {"ps8_setup": _solution_cell("ps8", "ps8_setup") + "\n\n" + PATCH_JUDGES.format(unit="colocation"),
             q1: "@cuda.jit\ndef feature_count_kernel(features, feature_count):\n"
                 "    i = cuda.grid(1)\n    if i < feature_count.shape[0]:\n        feature_count[i] = 7\n",
             q2: "predicted_global_atomics = measure = lambda *args: Anything()\n"},
            (0, 0), says={"ps8.q1": "refused for tampering", "ps8.q2": "refused for tampering"}),
        UNTOUCHED: Fixture("the released problem set, unanswered", UNTOUCHED, (0, 0),
                           says={"ps8.q1": "not answered yet", "ps8.q2": "not answered yet"}),
    }


# =========================================================================== shared pieces
#: What would score full marks if tests were judged in the student's process.
PATCH_JUDGES = '''import numpy.testing
import course_lib.grading
import course_lib.grading.core
import course_lib.grading.harness
import course_lib.{unit}.questions as questions_module


def _never_fails(*args, **kwargs):
    return None


class Anything:
    """Equal to everything."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __le__(self, other):
        return True

    __ge__ = __lt__ = __gt__ = __le__
    __hash__ = object.__hash__


np.allclose = lambda *args, **kwargs: True
np.array_equal = lambda *args, **kwargs: True
np.testing.assert_allclose = _never_fails
numpy.testing.assert_array_equal = _never_fails
course_lib.grading.compare_arrays = _never_fails
course_lib.grading.core.compare_arrays = _never_fails
course_lib.grading.harness.unguard = lambda padded, shape, **kwargs: padded
course_lib.grading.harness._judge_outputs = _never_fails
course_lib.grading.check = _never_fails
course_lib.grading.core.run_tests = _never_fails
course_lib.grading.core.TestFailure.__init__ = lambda self, *args, **kwargs: None
for question in questions_module.QUESTIONS:
    for test in question.tests:
        object.__setattr__(test, "judge", _never_fails)
'''

FIXTURES = {"ps1": _ps1, "ps2": _ps2, "ps3": _ps3, "ps4": _ps4, "ps5": _ps5, "ps6": _ps6, "ps7": _ps7, "ps8": _ps8}


# =========================================================================== writing
def _solution(problem_set: str) -> Path:
    (path,) = sorted((ROOT / "solutions").glob(f"{problem_set}_*.ipynb"))
    return path


def fixtures(problem_set: str) -> dict:
    """``name -> Fixture`` of a problem set."""
    if problem_set not in FIXTURES:
        raise ValueError(f"no fixtures for {problem_set!r}; known: {sorted(FIXTURES)}")
    return FIXTURES[problem_set]()


def notebook(problem_set: str, fixture: Fixture):
    """The fixture's notebook: the solution with its cells replaced (or the released problem set)."""
    if fixture.cells == UNTOUCHED:
        return nbformat.read(ROOT / "problem_sets" / _solution(problem_set).name, as_version=4)
    nb = nbformat.read(_solution(problem_set), as_version=4)
    unknown = set(fixture.cells) - {c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells}
    if unknown:
        raise ValueError(f"{problem_set}: no cells {sorted(unknown)} in the solution")
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in fixture.cells:
            cell.source = fixture.cells[grade_id]
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb


def write(problem_set: str, folder) -> list:
    """Write every fixture of a problem set as ``<folder>/<name>.ipynb``; return the paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, fixture in fixtures(problem_set).items():
        path = folder / f"{name}.ipynb"
        nbformat.write(notebook(problem_set, fixture), path)
        paths.append(path)
    return paths


def answer_cell(problem_set: str, name: str, grade_id: str) -> str:
    """The source a fixture puts in one cell (the solution's when the fixture keeps it)."""
    fixture = fixtures(problem_set)[name]
    if fixture.cells != UNTOUCHED and grade_id in fixture.cells:
        return fixture.cells[grade_id]
    return _solution_cell(problem_set, grade_id)


if __name__ == "__main__":
    for written in write(sys.argv[1], sys.argv[2]):
        print(written)
