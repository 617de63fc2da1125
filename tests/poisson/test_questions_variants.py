"""Does ps4.q1 grade the red-black technique rather than one solution?

Kernels written from the problem statement (``red_black_kernel(image, rhs, labels, colour)`` launched
on 8 x 8 blocks over the image, updating in place the strict-interior pixels with
``(y + x) % 2 == colour`` from their strict-interior neighbours, clamped to [0, 255]): wrong
techniques with right results earn at most half, right ones written differently full marks.
"""

import pytest
from numba import cuda, float32

from course_lib.grading import get_question, run_tests
from course_lib.poisson import INTERIOR

POINTS = 6


def grade(kernel):
    return run_tests(get_question("ps4.q1"), kernel, hidden=True, seed=4)


@cuda.jit(device=True)
def relax(image, rhs, labels, y, x):
    """The update of one pixel (every variant below uses the same arithmetic; the technique differs)."""
    h, w = labels.shape
    d = float32((y > 0) + (y < h - 1) + (x > 0) + (x < w - 1))
    for ch in range(3):
        s = rhs[ch, y, x]
        if y > 0 and labels[y - 1, x] == INTERIOR:
            s += image[ch, y - 1, x]
        if y + 1 < h and labels[y + 1, x] == INTERIOR:
            s += image[ch, y + 1, x]
        if x > 0 and labels[y, x - 1] == INTERIOR:
            s += image[ch, y, x - 1]
        if x + 1 < w and labels[y, x + 1] == INTERIOR:
            s += image[ch, y, x + 1]
        image[ch, y, x] = min(max(s / d, float32(0.0)), float32(255.0))


# ----------------------------------------------------------------------------- wrong techniques
@cuda.jit
def one_thread_sweeps_the_grid(image, rhs, labels, colour):
    x, y = cuda.grid(2)
    if x != 0 or y != 0:
        return
    h, w = labels.shape
    for yy in range(h):
        for xx in range(w):
            if (yy + xx) % 2 == colour and labels[yy, xx] == INTERIOR:
                relax(image, rhs, labels, yy, xx)


@cuda.jit
def one_thread_per_row(image, rhs, labels, colour):
    x, y = cuda.grid(2)
    h, w = labels.shape
    if x == 0 and y < h:
        for xx in range(w):
            if (y + xx) % 2 == colour and labels[y, xx] == INTERIOR:
                relax(image, rhs, labels, y, xx)


@cuda.jit
def both_colours_rewritten(image, rhs, labels, colour):
    """Updates its colour and stores the other colour's pixels back unchanged."""
    x, y = cuda.grid(2)
    h, w = labels.shape
    if y < h and x < w and labels[y, x] == INTERIOR:
        if (y + x) % 2 == colour:
            relax(image, rhs, labels, y, x)
        else:
            for ch in range(3):
                image[ch, y, x] = image[ch, y, x]


@cuda.jit
def atomic_stores(image, rhs, labels, colour):
    """The update written with atomic exchanges."""
    x, y = cuda.grid(2)
    h, w = labels.shape
    if y < h and x < w and (y + x) % 2 == colour and labels[y, x] == INTERIOR:
        d = float32((y > 0) + (y < h - 1) + (x > 0) + (x < w - 1))
        for ch in range(3):
            s = rhs[ch, y, x]
            if y > 0 and labels[y - 1, x] == INTERIOR:
                s += image[ch, y - 1, x]
            if y + 1 < h and labels[y + 1, x] == INTERIOR:
                s += image[ch, y + 1, x]
            if x > 0 and labels[y, x - 1] == INTERIOR:
                s += image[ch, y, x - 1]
            if x + 1 < w and labels[y, x + 1] == INTERIOR:
                s += image[ch, y, x + 1]
            cuda.atomic.exch(image, (ch, y, x), min(max(s / d, float32(0.0)), float32(255.0)))


WRONG = [one_thread_sweeps_the_grid, one_thread_per_row, both_colours_rewritten, atomic_stores]


# ----------------------------------------------------------------------------- right, written differently
@cuda.jit
def early_returns(image, rhs, labels, colour):
    x, y = cuda.grid(2)
    h, w = labels.shape
    if y >= h or x >= w:
        return
    if (x + y) & 1 != colour:
        return
    if labels[y, x] != INTERIOR:
        return
    relax(image, rhs, labels, y, x)


@cuda.jit
def unrolled_channels(image, rhs, labels, colour):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    h, w = labels.shape
    if row < h and col < w and labels[row, col] == INTERIOR and (row + col) % 2 == colour:
        n = float32(0.0)
        r = rhs[0, row, col]
        g = rhs[1, row, col]
        b = rhs[2, row, col]
        for dy, dx in ((-1, 0), (1, 0), (0, -1), (0, 1)):
            yy, xx = row + dy, col + dx
            if 0 <= yy < h and 0 <= xx < w:
                n += float32(1.0)
                if labels[yy, xx] == INTERIOR:
                    r += image[0, yy, xx]
                    g += image[1, yy, xx]
                    b += image[2, yy, xx]
        image[0, row, col] = min(max(r / n, float32(0.0)), float32(255.0))
        image[1, row, col] = min(max(g / n, float32(0.0)), float32(255.0))
        image[2, row, col] = min(max(b / n, float32(0.0)), float32(255.0))


@cuda.jit
def labels_first(image, rhs, labels, colour):
    """Reads the label before the colour test, and relaxes through the shared device function."""
    x, y = cuda.grid(2)
    h, w = labels.shape
    if x < w and y < h:
        strict = labels[y, x] == INTERIOR
        if strict and (x + y) % 2 == colour:
            relax(image, rhs, labels, y, x)


RIGHT = [early_returns, unrolled_channels, labels_first]


@pytest.mark.parametrize("kernel", WRONG, ids=lambda k: k.__name__)
def test_a_wrong_technique_with_right_results_earns_at_most_half(kernel):
    result = grade(kernel)
    assert result.points <= POINTS / 2, str(result)
    assert any(o.technique and not o.passed for o in result.outcomes), str(result)


@pytest.mark.parametrize("kernel", RIGHT, ids=lambda k: k.__name__)
def test_the_technique_written_differently_earns_full_marks(kernel):
    result = grade(kernel)
    assert result.points == POINTS, str(result)

