"""Problem set 4, question 3 (``ps4.q3``): the split of an image into its two colours' packed arrays, as one kernel
reading every pixel once. Part of problem set 4 (:mod:`course_lib.poisson.questions`, which lists it in ``QUESTIONS``).
"""

from __future__ import annotations

import numpy as np

from ..grading.authoring.harness import Launch, fail, kernel, question, result_test
from ..grading.authoring.signature import (Feature, at_most, load_sectors_per_request, no_atomics, sample_blocks,
                                           signature_test)
from ._questions_layout import (SAMPLED_BLOCKS, colour_cells, draw_block, packed_width, pixel_grid, ran_mask,
                               sectors_per_row_of_lanes, threads_ran)


def split_case(shape, seed, block, blocks=None):
    """One split launch's data: planes of values in [1, 255) drawn from ``seed``, the blocks and the sample."""
    planes = np.random.default_rng(seed).uniform(1, 255, (3, *shape)).astype(np.float32)
    return {"planes": planes, "block": tuple(block), "blocks": blocks}


def launch_split(answer, d):
    planes = np.asarray(d["planes"], np.float32)
    packed = (3, planes.shape[1], packed_width(planes.shape[2]))
    # NaN shows a cell left unwritten; a padding cell must stay NaN.
    return Launch(answer.kernel(), pixel_grid(*planes.shape[1:], d["block"]), d["block"],
                  {"planes": planes, "red": np.full(packed, np.nan, np.float32),
                   "black": np.full(packed, np.nan, np.float32)},
                  outputs=("red", "black"), axes={"planes": (1, 2), "red": (1, 2), "black": (1, 2)},
                  blocks=d.get("blocks"))


def expect_split(d):
    return {"red": colour_cells(d["planes"], 0, fill=np.nan), "black": colour_cells(d["planes"], 1, fill=np.nan)}


def same_cells(got, expected, name):
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape:
        raise fail(f"{name} has shape {got.shape}, expected {expected.shape}")
    wrong = ~((got == expected) | (np.isnan(got) & np.isnan(expected)))
    if wrong.any():
        y, k = (int(i) for i in np.argwhere(wrong)[0][1:])
        raise fail(f"{name}: {int(wrong.sum())} of {expected.size} cells differ from the split; first at row {y}, cell "
                   f"{k} (pixel x = {2 * k + (y + (name == 'black')) % 2}): got {got[(0, y, k)]}, expected "
                   f"{expected[(0, y, k)]}", "value")


def _pixels_ran(d):
    planes = np.asarray(d["planes"])
    return int(np.sum(ran_mask(planes.shape[1:], d["block"], d.get("blocks"))))


def _twelve_per_pixel(d):
    moved = 12 * _pixels_ran(d)
    return moved, moved


def split_span(d):
    """Busiest thread over the mean, one thread per pixel: 4 statements for a pixel moved, 1 for any other thread."""
    planes = np.asarray(d["planes"])
    grid = pixel_grid(*planes.shape[1:], d["block"])
    moved, threads = _pixels_ran(d), threads_ran(grid, d["block"], d.get("blocks"))
    return 4 * threads / (4 * moved + threads - moved) if moved else 1.0


SPLIT_SIGNATURE = (
    Feature("global bytes loaded", lambda m, d: m["global_load_bytes"], _twelve_per_pixel,
            "every pixel's three values are read once", "12 bytes per pixel"),
    Feature("global bytes stored", lambda m, d: m["global_store_bytes"], _twelve_per_pixel,
            "every pixel's three values are written once, to its colour's array", "12 bytes per pixel"),
    no_atomics("every cell is written by the thread of its pixel", "one owner per cell"),
    load_sectors_per_request(at_most(lambda d: sectors_per_row_of_lanes(d["block"])),
                             "consecutive lanes (threadIdx.x) take consecutive pixels x of a row",
                             "<= bytes / 32 + 1 sectors per row"),
    Feature("global store sectors per request", lambda m, d: m["store_sectors_per_request"],
            at_most(lambda d: sectors_per_row_of_lanes(d["block"])),
            "consecutive pixels of a row go to consecutive cells (k = x // 2) of their colour's array",
            "half a warp's row per store, consecutive cells"),
    Feature("thread span (busiest thread's statements / mean)", lambda m, d: m["thread_span"],
            at_most(lambda d: 2 * split_span(d)), "one thread per pixel, on every grid", "4 statements per pixel"),
)


def drawn_split(rng, info):
    """A split drawn at grading time: a large image and blocks of 32 x 1 (one warp), 32 x 8 or 64 x 16; three
    blocks profiled."""
    shape = (int(rng.integers(64, 201)), int(rng.integers(260, 601)))
    block = ((32, 1), (32, 8), (64, 16))[int(rng.integers(3))]
    return split_case(shape, int(rng.integers(1 << 20)), block,
                      sample_blocks(rng, pixel_grid(*shape, block), SAMPLED_BLOCKS))


def _split_label(d):
    _, height, width = np.shape(d["planes"])
    drawn, sampled = ("", "") if d.get("blocks") is None else ("drawn ", f", {len(d['blocks'])} of them sampled")
    return f"{drawn}{height} x {width}, {d['block'][0]} x {d['block'][1]} blocks{sampled}"


def _split_test(name, points, make, hidden=False):
    return result_test(name, points, inputs=make, launch=launch_split, expect=expect_split, compare=same_cells,
                       axes={"red": (1, 2), "black": (1, 2)}, label=_split_label, hidden=hidden)


Q3 = question(
    "ps4.q3", "split the image into its colours on the GPU", 2, answer=kernel("split_kernel"),
    tolerance="exact values",
    tests=[
        _split_test("a 6 x 9 image in 8 x 8 blocks", 0.5, lambda rng, info: split_case((6, 9), 1, (8, 8))),
        _split_test("hidden: drawn sizes and blocks", 0.5, lambda rng, info: split_case(
            (int(rng.integers(1, 20)), int(rng.integers(1, 50))), int(rng.integers(1 << 20)), draw_block(rng)),
            hidden=True),
        signature_test("the split, measured", 1,
                       configs=[lambda rng, info: split_case((12, 40), 2, (32, 4)),
                                lambda rng, info: split_case((19, 23), 3, (16, 16)), drawn_split],
                       launch=launch_split, expect=expect_split, compare=same_cells, features=SPLIT_SIGNATURE,
                       label=_split_label),
    ])
