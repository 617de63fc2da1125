"""Does problem set 4 grade its techniques rather than one solution, on every launch the questions allow?

Answers written from the problem statements, as a student who skipped the lesson might: ps4.q1's
``half_sweep_kernel(mine, other, rhs, labels, width, colour)`` on colour-separated arrays (cell (y, k) of colour c is
pixel (y, 2k + (y + c) % 2)), ps4.q2's ``measure(kernel, problem, colour)`` and ps4.q3's ``split_kernel(planes, red,
black)``. Wrong techniques with right results, including those that use the technique only on the launches the
grader's fixed configurations have in common, earn at most half of their question on several grading seeds; right
ones written differently earn full marks.
"""

import numpy as np
import pytest
from numba import cuda, float32

from course_lib import poisson
from course_lib.grading import get_question, run_tests
from course_lib.poisson import INTERIOR
from course_lib.sim import profile

SEEDS = (3, 8)


def grade(question, answer, seed):
    return run_tests(get_question(question), answer, hidden=True, seed=seed)


@cuda.jit(device=True)
def relax(mine, other, rhs, labels, width, colour, y, k):
    """The update of one cell, if (y, k) is an interior cell (every q1 variant below uses the same arithmetic; the
    technique differs)."""
    h, wc = labels.shape
    if y < h and k < wc and labels[y, k] == INTERIOR:
        relax_interior(mine, other, rhs, labels, width, colour, y, k)


@cuda.jit(device=True)
def relax_interior(mine, other, rhs, labels, width, colour, y, k):
    """The update of an interior cell (y, k): no guard, so a caller that checked already has no dead code."""
    h = labels.shape[0]
    o = (y + colour) % 2
    x = 2 * k + o
    d = float32((y > 0) + (y < h - 1) + (x > 0) + (x < width - 1))
    for ch in range(3):
        s = rhs[ch, y, k]
        if y > 0:
            s += other[ch, y - 1, k]
        if y < h - 1:
            s += other[ch, y + 1, k]
        if x > 0:
            s += other[ch, y, k - 1 + o]
        if x < width - 1:
            s += other[ch, y, k + o]
        mine[ch, y, k] = min(max(s / d, float32(0.0)), float32(255.0))


# ----------------------------------------------------------------------------- q1, wrong techniques
@cuda.jit
def swapped_x_and_y(mine, other, rhs, labels, width, colour):
    """Consecutive lanes take consecutive rows of a column of the block's tile (the cells' x and y swapped)."""
    t = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x
    rows = cuda.blockDim.y
    relax(mine, other, rhs, labels, width, colour, cuda.blockIdx.y * rows + t % rows,
          cuda.blockIdx.x * cuda.blockDim.x + t // rows)


@cuda.jit
def one_thread_per_row(mine, other, rhs, labels, width, colour):
    k, y = cuda.grid(2)
    if k == 0:
        for kk in range(labels.shape[1]):
            relax(mine, other, rhs, labels, width, colour, y, kk)


@cuda.jit
def technique_only_on_small_grids(mine, other, rhs, labels, width, colour):
    """A thread per cell on grids of up to 16 blocks; on larger ones, the tile's x and y swapped."""
    if cuda.gridDim.x * cuda.gridDim.y <= 16:
        k, y = cuda.grid(2)
        relax(mine, other, rhs, labels, width, colour, y, k)
    else:
        t = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x
        rows = cuda.blockDim.y
        relax(mine, other, rhs, labels, width, colour, cuda.blockIdx.y * rows + t % rows,
              cuda.blockIdx.x * cuda.blockDim.x + t // rows)


@cuda.jit
def technique_only_on_small_images(mine, other, rhs, labels, width, colour):
    """A thread per cell up to 2,000 pixels (every fixed size); above, the first thread of each row walks it."""
    k, y = cuda.grid(2)
    if labels.shape[0] * width <= 2000:
        relax(mine, other, rhs, labels, width, colour, y, k)
    elif k == 0:
        for kk in range(labels.shape[1]):
            relax(mine, other, rhs, labels, width, colour, y, kk)


@cuda.jit
def lane_zero_walks_one_warp_blocks(mine, other, rhs, labels, width, colour):
    """A thread per cell in blocks of several warps; in one-warp blocks, lane 0 walks the block's 32 cells."""
    k, y = cuda.grid(2)
    if cuda.blockDim.x * cuda.blockDim.y > 32:
        relax(mine, other, rhs, labels, width, colour, y, k)
    elif cuda.threadIdx.x == 0:
        for lane in range(cuda.blockDim.x):
            relax(mine, other, rhs, labels, width, colour, y, k + lane)


@cuda.jit
def first_warp_does_the_block(mine, other, rhs, labels, width, colour):
    """The block's first row of threads (its first warp when 32 wide) updates every row of the block's tile."""
    k, _ = cuda.grid(2)
    if cuda.threadIdx.y == 0:
        for r in range(cuda.blockDim.y):
            relax(mine, other, rhs, labels, width, colour, cuda.blockIdx.y * cuda.blockDim.y + r, k)
    cuda.syncthreads()


@cuda.jit
def technique_only_for_colour_one(mine, other, rhs, labels, width, colour):
    """A thread per cell for the black cells; for the red ones, the tile's x and y swapped."""
    if colour == 1:
        k, y = cuda.grid(2)
        relax(mine, other, rhs, labels, width, colour, y, k)
    else:
        t = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x
        rows = cuda.blockDim.y
        relax(mine, other, rhs, labels, width, colour, cuda.blockIdx.y * rows + t % rows,
              cuda.blockIdx.x * cuda.blockDim.x + t // rows)


@cuda.jit
def stores_the_other_colour_back(mine, other, rhs, labels, width, colour):
    k, y = cuda.grid(2)
    relax(mine, other, rhs, labels, width, colour, y, k)
    if y < labels.shape[0] and k < labels.shape[1]:
        for ch in range(3):
            other[ch, y, k] = other[ch, y, k]


WRONG_Q1 = [swapped_x_and_y, one_thread_per_row, technique_only_on_small_grids, technique_only_on_small_images,
            lane_zero_walks_one_warp_blocks, first_warp_does_the_block, technique_only_for_colour_one,
            stores_the_other_colour_back]


# ----------------------------------------------------------------------------- q1, right, written differently
@cuda.jit
def neighbours_by_pixel(mine, other, rhs, labels, width, colour):
    """Each neighbour's cell from its pixel column: the other colour's cell of pixel x' is x' // 2."""
    k = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    y = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    h = labels.shape[0]
    if y >= h or k >= labels.shape[1]:
        return
    if labels[y, k] != INTERIOR:
        return
    x = 2 * k + (y + colour) % 2
    n = float32(0.0)
    r, g, b = rhs[0, y, k], rhs[1, y, k], rhs[2, y, k]
    for dy, dx in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        yy, xx = y + dy, x + dx
        if 0 <= yy < h and 0 <= xx < width:
            n += float32(1.0)
            r += other[0, yy, xx // 2]
            g += other[1, yy, xx // 2]
            b += other[2, yy, xx // 2]
    mine[0, y, k] = min(max(r / n, float32(0.0)), float32(255.0))
    mine[1, y, k] = min(max(g / n, float32(0.0)), float32(255.0))
    mine[2, y, k] = min(max(b / n, float32(0.0)), float32(255.0))


@cuda.jit
def grid_stride_rows(mine, other, rhs, labels, width, colour):
    """A grid-stride loop over rows and cells (one pass on the grader's grids)."""
    k0, y0 = cuda.grid(2)
    sx, sy = cuda.gridsize(2)
    for y in range(y0, labels.shape[0], sy):
        for k in range(k0, labels.shape[1], sx):
            relax(mine, other, rhs, labels, width, colour, y, k)


@cuda.jit
def labels_first(mine, other, rhs, labels, width, colour):
    """Reads the label first and relaxes through the shared device function."""
    k, y = cuda.grid(2)
    if k < labels.shape[1] and y < labels.shape[0] and labels[y, k] == INTERIOR:
        relax_interior(mine, other, rhs, labels, width, colour, y, k)


RIGHT_Q1 = [neighbours_by_pixel, grid_stride_rows, labels_first]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kernel", WRONG_Q1, ids=lambda k: k.__name__)
def test_q1_wrong_technique_with_right_results_earns_at_most_half(kernel, seed):
    result = grade("ps4.q1", kernel, seed)
    assert result.points <= 3, str(result)
    assert any(o.technique and not o.passed for o in result.outcomes), str(result)
    assert all(o.passed for o in result.outcomes if not o.technique and not o.name.startswith("one launch")), \
        str(result)  # right results: only the technique is wrong


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kernel", RIGHT_Q1, ids=lambda k: k.__name__)
def test_q1_the_technique_written_differently_earns_full_marks(kernel, seed):
    result = grade("ps4.q1", kernel, seed)
    assert result.points == 6, str(result)


# ----------------------------------------------------------------------------- q3
@cuda.jit
def split_swapped_x_and_y(planes, red, black):
    """Consecutive lanes take consecutive rows of the block's tile."""
    t = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x
    rows = cuda.blockDim.y
    y = cuda.blockIdx.y * rows + t % rows
    x = cuda.blockIdx.x * cuda.blockDim.x + t // rows
    if y < planes.shape[1] and x < planes.shape[2]:
        for c in range(3):
            if (x + y) % 2 == 0:
                red[c, y, x // 2] = planes[c, y, x]
            else:
                black[c, y, x // 2] = planes[c, y, x]


@cuda.jit
def split_by_row_threads(planes, red, black):
    """The first thread of each row copies the whole row."""
    x, y = cuda.grid(2)
    if x == 0 and y < planes.shape[1]:
        for xx in range(planes.shape[2]):
            for c in range(3):
                if (xx + y) % 2 == 0:
                    red[c, y, xx // 2] = planes[c, y, xx]
                else:
                    black[c, y, xx // 2] = planes[c, y, xx]


@cuda.jit
def split_one_thread_per_cell(planes, red, black):
    """Threads of the first half of each row take a cell each: two pixels, read two apart (strided loads)."""
    k, y = cuda.grid(2)
    h, w = planes.shape[1], planes.shape[2]
    if y < h and k < red.shape[2]:
        o = y % 2
        for c in range(3):
            if 2 * k + o < w:
                red[c, y, k] = planes[c, y, 2 * k + o]
            if 2 * k + 1 - o < w:
                black[c, y, k] = planes[c, y, 2 * k + 1 - o]


@cuda.jit
def split_only_on_small_grids(planes, red, black):
    """A thread per pixel on grids of up to 16 blocks; above, the first thread of each row copies it."""
    x, y = cuda.grid(2)
    if cuda.gridDim.x * cuda.gridDim.y <= 16:
        if y < planes.shape[1] and x < planes.shape[2]:
            for c in range(3):
                if (x + y) % 2 == 0:
                    red[c, y, x // 2] = planes[c, y, x]
                else:
                    black[c, y, x // 2] = planes[c, y, x]
    elif x == 0 and y < planes.shape[1]:
        for xx in range(planes.shape[2]):
            for c in range(3):
                if (xx + y) % 2 == 0:
                    red[c, y, xx // 2] = planes[c, y, xx]
                else:
                    black[c, y, xx // 2] = planes[c, y, xx]


WRONG_Q3 = [split_swapped_x_and_y, split_by_row_threads, split_one_thread_per_cell, split_only_on_small_grids]


@cuda.jit
def split_early_return(planes, red, black):
    x = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    y = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if x >= planes.shape[2] or y >= planes.shape[1]:
        return
    k = x >> 1
    if (x ^ y) & 1:
        black[0, y, k] = planes[0, y, x]
        black[1, y, k] = planes[1, y, x]
        black[2, y, k] = planes[2, y, x]
        return
    red[0, y, k] = planes[0, y, x]
    red[1, y, k] = planes[1, y, x]
    red[2, y, k] = planes[2, y, x]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kernel", WRONG_Q3, ids=lambda k: k.__name__)
def test_q3_wrong_technique_with_right_results_earns_at_most_half(kernel, seed):
    result = grade("ps4.q3", kernel, seed)
    assert result.points <= 1, str(result)
    assert any(o.technique and not o.passed for o in result.outcomes), str(result)
    assert all(o.passed for o in result.outcomes if not o.technique), str(result)


@pytest.mark.parametrize("seed", SEEDS)
def test_q3_the_split_written_differently_earns_full_marks(seed):
    result = grade("ps4.q3", split_early_return, seed)
    assert result.points == 2, str(result)


# ----------------------------------------------------------------------------- q2, measurements
def _cells(full, colour):
    h, w = full.shape[-2:]
    out = np.zeros(full.shape[:-1] + ((w + 1) // 2,), full.dtype)
    for y in range(h):
        row = full[..., y, (y + colour) % 2::2]
        out[..., y, :row.shape[-1]] = row
    return out


def measured(kernel, problem, colour):
    """The measure the question asks for: one launch on the problem's colour-separated arrays."""
    prep = poisson.prepare(*problem)
    h, w = prep.labels.shape
    values = np.where(prep.labels == INTERIOR, prep.guess, 0).astype(np.float32)
    report = profile(kernel, (-(-((w + 1) // 2) // 32), -(-h // 4)), (32, 4), _cells(values, colour),
                     _cells(values, 1 - colour), _cells(prep.rhs, colour), _cells(prep.labels, colour),
                     np.int32(w), np.int32(colour))
    return report.total.global_load_bytes


def predicted(labels, colour):
    y, x = np.indices(labels.shape)
    return 12 * int(np.sum((labels == INTERIOR) & ((y + x) % 2 == colour)))


MEASURE = poisson.synthetic_pair(12, 14, seed=6)


def pasted(kernel, problem, colour):
    return (1104, 1044)[colour]


def always_own_kernel(kernel, problem, colour):
    return measured(labels_first, problem, colour)


def always_the_fixed_problem(kernel, problem, colour):
    return measured(kernel, MEASURE, colour)


def modelled(kernel, problem, colour):
    from course_lib.poisson.model import bytes_per_iteration

    labels = poisson.prepare(*problem).labels
    return bytes_per_iteration(int(np.sum(labels == INTERIOR))) / 2


@pytest.mark.parametrize("seed", SEEDS)
def test_q2_a_measure_that_runs_the_kernel_and_problem_it_is_given_earns_full_marks(seed):
    answer = {"kernel": labels_first, "predicted_store_bytes": predicted, "measure": measured}
    assert grade("ps4.q2", answer, seed).points == 2


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("measure", [pasted, always_own_kernel, always_the_fixed_problem, modelled],
                         ids=lambda f: f.__name__)
def test_q2_pasted_modelled_or_misdirected_measurements_earn_at_most_half(measure, seed):
    result = grade("ps4.q2", {"kernel": labels_first, "predicted_store_bytes": predicted, "measure": measure}, seed)
    assert result.points <= 1, str(result)
    measuring = next(o for o in result.outcomes if o.name.startswith("your measure()"))
    assert not measuring.passed, str(result)
