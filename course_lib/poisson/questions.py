"""Problem set 4 (``solutions/ps4_poisson.ipynb``), on the shared harness (:mod:`course_lib.grading.authoring.harness`).

The layout every question uses: **colour-separated arrays**. A pixel (y, x) is red (colour 0) when (y + x) is
even and black (colour 1) otherwise. The cells of one colour are packed row by row into an array of width
``Wc = (W + 1) // 2``: cell (y, k) of colour c holds pixel (y, 2k + (y + c) % 2) (:func:`colour_columns`); when
W is odd, the last cell of some rows lies past the image (a padding cell: label 0, value 0). In this layout the
four neighbours of a cell, all of the other colour, are cells of the other array in the same row and in the rows
above and below (working out which is q1's crux); consecutive threads along a row of cells read and write
consecutive addresses, where the checkerboard on the full image leaves every other lane idle and strides its
stores by two.

- ``ps4.q1`` (6 points): **red-black Gauss-Seidel on colour-separated arrays**. Answer: ``check("ps4.q1",
  half_sweep_kernel)``, a kernel ``(mine, other, rhs, labels, width, colour)`` that updates, in place, the
  strict-interior cells of ``mine`` (the launch's colour) from the four neighbours in ``other``; the cells of
  both arrays outside the strict interior hold 0, so every in-image neighbour is added and
  ``D`` counts them from (y, x) and ``width``. One iteration is a launch for colour 0 then one for colour 1
  (:func:`run_half_sweeps`) on blocks of the grader's choice, one thread per cell (grid
  ``(ceil(Wc / bx), ceil(H / by))``). Graded on the cloned image against a NumPy red-black reference on the full
  image (two tolerances), one launch under the checker (nothing written out of bounds, ``other`` untouched), and
  the technique's signature (``HALF_SWEEP_SIGNATURE``), measured by the profiler on four launches:

  * fixed: masks covering about 90% of the image (so most warps have all lanes busy), a 20 x 70 image in blocks
    of 32 x 8 (eight warps, partial blocks on both axes), and a 13 x 21 image in blocks of 32 x 1 (one warp,
    thirteen blocks);
  * drawn at grading time from the grading ``rng``: an image of 64-200 rows and 260-600 columns in blocks of
    32 x 8, 64 x 8 or 32 x 16 (colour 0), and one of 40-200 rows and 70-600 columns in one-warp blocks of 32 x 1
    (colour 1), grids of 24 to 2,000 blocks, masks covering 80-95%, so both colours run on one-warp blocks and
    on blocks of several warps; three blocks of each drawn launch are profiled
    (:func:`~course_lib.grading.authoring.signature.sample_blocks`: first, last or interior, unknown to the
    answer), and the bounds are the model's over those blocks.

  Features and bounds, from the cost model of one half-sweep (one thread per cell of the colour, which updates
  it when it is strict interior, from its four neighbours, with consecutive lanes on consecutive cells):

  * global bytes stored: exactly 12 per strict-interior cell that ran (3 float32);
  * atomic operations: none (each cell is written by its own thread);
  * global load sectors per request: at most the model's for a row of lanes (5 when a warp takes 32
    consecutive cells of one row, 8 for 8-wide blocks): lanes taking consecutive *rows* of a column (x and y
    swapped) read 8 rows per request in 8-row blocks and miss;
  * thread span (busiest thread over the mean): at most 2 x the model's (10 statements for a cell updated,
    1 for any other thread): one thread walking a row shows here, and the drawn launches' sampled blocks show
    a kernel that changes method with the grid, the block shape or the image size.
- ``ps4.q2`` (2 points): predict and measure the bytes one launch stores and loads. Answer:
  ``{"kernel": half_sweep_kernel, "predicted_store_bytes": f(labels, colour), "measure": g(kernel, problem,
  colour)}``. The grader calls ``g`` on the student's kernel and on decoys of its own (kernels with the same
  arguments and another traffic, updating nothing), on problems and colours drawn at grading time, and
  measures each launch itself (blocks of 32 x 4).
- ``ps4.q3`` (2 points): **split the image into its colours on the GPU**. Answer: ``check("ps4.q3",
  split_kernel)``, a kernel ``(planes, red, black)``, one thread per pixel (grid ``(ceil(W / bx),
  ceil(H / by))``), writing each pixel of the (3, H, W) planes to its colour's array. Graded by the arrays
  (exact, on fixed and drawn sizes) and by the signature ``SPLIT_SIGNATURE`` on a 12 x 40 image in 32 x 4
  blocks, a 19 x 23 one in 16 x 16 blocks (a warp spans two rows) and a drawn one (64-200 x 260-600 pixels in
  32 x 1 (one warp), 32 x 8 or 64 x 16 blocks, grids of 20 blocks or more, three of them profiled, drawn as in q1): 12 bytes loaded
  and 12 stored per pixel, no atomics, load and store sectors per request at most the model's for consecutive
  lanes on consecutive pixels of a row, thread span at most 2 x the model's (4 statements per pixel moved).
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ..grading.authoring.harness import (Answer, Launch, calls_test, fail, function, guarded, inner, kernel,
                                         measurement, question, race_test, result_test, unguard)
from ..grading.authoring.measuring import kernel_measurement_test
from ..grading.authoring.signature import (Feature, at_most, load_sectors_per_request, no_atomics, sample_blocks,
                                           signature_test)
from .data import cat_in_coffee, synthetic_pair
from .reference import INTERIOR, classify_mask, compare_images, compose, jacobi_step_reference, prepare
from ._questions_layout import (SAMPLED_BLOCKS, colour_cells, colour_columns, draw_block, merge_colours, packed_grid,
                               packed_width, pixel_grid, ran_mask, sectors_per_row_of_lanes, threads_ran)
from ._questions_q3 import (Q3, SPLIT_SIGNATURE, drawn_split, expect_split, launch_split, same_cells, split_case,
                           split_span)
from ..grading.resources import answer_key

# The answer keys are the grader's (grading_resources/keys/ps4_poisson.py), read when a value is judged.
_predicted_stores = answer_key("ps4", "_predicted_stores")

PROBLEM_SET = "ps4"
#: The two tolerances: a pixel may differ by at most 2 levels, and at most 1% of the pixels may differ.
MAX_PIXEL_DIFF, MAX_FRACTION = 2, 0.01
#: Blocks of the results tests (several warps, 32 consecutive cells of a row per warp).
BLOCK = (32, 4)
#: Guard cells around the arrays; the labels' guard holds INTERIOR, so a thread past the last cell that is not
#: bounds-checked updates a guard cell and shows, on a GPU too.
LABEL_GUARD = INTERIOR
#: The problem measured in q2 (the notebook builds the same one).
MEASURE_SHAPE, MEASURE_SEED = (12, 14), 6
# ----------------------------------------------------------------------------- q1
def clone_case(source, target, mask, iterations):
    """``inputs`` data: the prepared problem (labels, B + C, initial guess) and the iteration count."""
    prep = prepare(source, target, mask)
    return {"target": target, "mask": mask, "labels": prep.labels, "rhs": prep.rhs, "guess": prep.guess,
            "iterations": int(iterations)}


def interior_only(values, labels):
    """``values`` (3, H, W) with 0 outside the strict interior: those cells add nothing to a neighbour's sum."""
    return np.where(np.asarray(labels) == INTERIOR, np.asarray(values, np.float32), np.float32(0)).astype(np.float32)


def run_half_sweeps(half_sweep, labels, rhs, guess, iterations, block=BLOCK):
    """The host loop: ``iterations`` times a launch for colour 0 then colour 1 on colour-separated arrays.

    Every array is packed by :func:`colour_cells` and framed by guard cells; the values start as ``guess`` at the
    strict interior and 0 elsewhere.

    Parameters
    ----------
    half_sweep : numba.cuda kernel
        ``(mine, other, rhs, labels, width, colour)``, as ps4.q1 asks.
    labels : ndarray
        uint8 of shape (H, W).
    rhs, guess : ndarray
        float32 of shape (3, H, W): B + C and the initial iterate.
    iterations : int
    block : tuple of int
        (bx, by); the grid is one thread per cell of a colour.

    Returns
    -------
    dict
        ``red``, ``black``: float32 of shape (3, H + 2 GUARD, Wc + 2 GUARD), each colour's cells with the frame.
    """
    from numba import cuda

    labels = np.asarray(labels, np.uint8)
    height, width = labels.shape
    start = interior_only(guess, labels)
    cells = [cuda.to_device(guarded(colour_cells(start, c), axes=(1, 2))) for c in (0, 1)]
    rhs_cells = [cuda.to_device(guarded(colour_cells(np.asarray(rhs, np.float32), c), axes=(1, 2))) for c in (0, 1)]
    label_cells = [cuda.to_device(guarded(colour_cells(labels, c), axes=(0, 1), fill=LABEL_GUARD)) for c in (0, 1)]
    grid = packed_grid(height, width, block)
    for _ in range(iterations):
        for c in (0, 1):
            half_sweep[grid, block](inner(cells[c], axes=(1, 2)), inner(cells[1 - c], axes=(1, 2)),
                                    inner(rhs_cells[c], axes=(1, 2)), inner(label_cells[c], axes=(0, 1)),
                                    np.int32(width), np.int32(c))
    cuda.synchronize()
    return {"red": cells[0].copy_to_host(), "black": cells[1].copy_to_host()}


def red_black_reference(labels, rhs, guess, iterations, colours=(0, 1)):
    """The grader's red-black Gauss-Seidel on the full image: a Jacobi step kept only on one colour at a time."""
    from .reference import Prepared

    prep = Prepared(np.asarray(labels), np.asarray(rhs, np.float32), np.asarray(guess, np.float32))
    y, x = np.indices(prep.labels.shape)
    image = prep.guess.copy()
    for _ in range(iterations):
        for colour in colours:
            # The pixels of one colour read only the other colour's, unchanged in this half-step.
            image = np.where((y + x) % 2 == colour, jacobi_step_reference(image, prep), image)
    return image


def _run(answer, d):
    return run_half_sweeps(answer.kernel(), d["labels"], d["rhs"], d["guess"], d["iterations"], d["block"])


def judge_clone(d, got):
    labels, (height, width) = np.asarray(d["labels"]), np.shape(d["labels"])
    if not isinstance(got, dict) or "red" not in got or "black" not in got:
        raise fail("the colour arrays did not come back")
    packed = (3, height, packed_width(width))
    red, black = (unguard(got[name], packed, name=name, axes=(1, 2)) for name in ("red", "black"))
    image = merge_colours(red, black, width)
    values = image[:, labels == INTERIOR]
    if not np.all(np.isfinite(values)) or (values.size and (values.min() < 0 or values.max() > 255)):
        raise fail("the iterate leaves [0, 255] or is not finite at strict-interior pixels: clamp, and read only "
                   "neighbours inside the image", "bounds")
    want = red_black_reference(labels, d["rhs"], d["guess"], d["iterations"])
    result = compare_images(compose(d["target"], labels, image), compose(d["target"], labels, want),
                            max_pixel_diff=MAX_PIXEL_DIFF, max_fraction=MAX_FRACTION)
    if not result.passed:
        raise fail(f"{height} x {width} image, {d['iterations']} iterations, blocks of {d['block'][0]} x "
                   f"{d['block'][1]}: {result.message}", "value")


def clone_test(name, points, make, iterations, hidden=False):
    def inputs(rng, info):
        d = clone_case(*make(rng), iterations)
        d["block"] = draw_block(rng) if hidden else BLOCK
        return d

    return result_test(name, points, inputs=inputs, run=_run, judge=judge_clone, hidden=hidden)


def half_sweep_case(shape, seed, colour, block, blocks=None, fill=0.35):
    """One launch's data: a synthetic problem (its mask covering about ``fill`` of the image), the colour, the
    blocks and the sampled blocks (None: all)."""
    d = clone_case(*synthetic_pair(*shape, seed=seed, fill=fill), 1)
    d.update(colour=int(colour), block=tuple(block), blocks=blocks)
    return d


def launch_half_sweep(answer, d):
    labels, colour = np.asarray(d["labels"]), d["colour"]
    height, width = labels.shape
    start = interior_only(d["guess"], labels)
    return Launch(answer.kernel(), packed_grid(height, width, d["block"]), d["block"],
                  {"mine": colour_cells(start, colour), "other": colour_cells(start, 1 - colour),
                   "rhs": colour_cells(np.asarray(d["rhs"], np.float32), colour),
                   "labels": colour_cells(labels, colour),
                   "width": np.int32(width), "colour": np.int32(colour)},
                  outputs=("mine", "other"), axes={"mine": (1, 2), "other": (1, 2), "rhs": (1, 2), "labels": (0, 1)},
                  blocks=d.get("blocks"))


def expect_half_sweep(d):
    labels, colour = np.asarray(d["labels"]), d["colour"]
    start = interior_only(d["guess"], labels)
    after = red_black_reference(labels, d["rhs"], start, 1, colours=(colour,))
    return {"mine": colour_cells(interior_only(after, labels), colour), "other": colour_cells(start, 1 - colour)}


def colour_pixels(labels, colour):
    """Strict-interior pixels of one colour."""
    labels = np.asarray(labels)
    y, x = np.indices(labels.shape)
    return int(np.sum((labels == INTERIOR) & ((y + x) % 2 == colour)))


def _updated_cells(d):
    """Strict-interior cells of the launch's colour whose threads ran (every block, or the sample)."""
    cells = colour_cells(np.asarray(d["labels"]), d["colour"]) == INTERIOR
    return int(np.sum(cells & ran_mask(cells.shape, d["block"], d.get("blocks"))))


def _stores_updated(d):
    stored = 12 * _updated_cells(d)
    return stored, stored


def half_sweep_span(d):
    """Busiest thread over the mean, one thread per cell: 10 for a cell updated, 1 for any other thread."""
    height, width = np.shape(d["labels"])
    grid = packed_grid(height, width, d["block"])
    updated, threads = _updated_cells(d), threads_ran(grid, d["block"], d.get("blocks"))
    return 10 * threads / (10 * updated + threads - updated) if updated else 1.0


HALF_SWEEP_SIGNATURE = (
    Feature("global bytes stored", lambda m, d: m["global_store_bytes"], _stores_updated,
            "a launch updates only its colour's strict-interior cells, in place, 3 float32 each",
            "12 bytes per strict-interior cell of the colour"),
    no_atomics("every cell is updated by its own thread with a plain store", "one owner per cell"),
    load_sectors_per_request(at_most(lambda d: sectors_per_row_of_lanes(d["block"])),
                             "consecutive lanes (threadIdx.x) take consecutive cells k of a row, so a warp's loads "
                             "share sectors", "a warp's lanes on consecutive cells of a row: <= bytes / 32 + 1 sectors "
                             "per row"),
    Feature("thread span (busiest thread's statements / mean)", lambda m, d: m["thread_span"],
            at_most(lambda d: 2 * half_sweep_span(d)),
            "one thread per cell, each updating at most its own cell, on every grid", "10 statements per cell updated"),
)


#: Mask coverage of the signature's launches: most warps' lanes all busy, so a request's sectors show the access
#: pattern rather than how many lanes a sparse mask leaves active.
SIGNATURE_FILL = 0.9


def fixed_half_sweep(shape, seed, colour, block):
    return lambda rng, info: half_sweep_case(shape, seed, colour, block, fill=SIGNATURE_FILL)


def drawn_half_sweep(blocks_choice, min_height, min_width, colour):
    """A launch drawn at grading time: a large image and blocks; a few of its blocks are profiled.

    ``colour`` is the one the fixed launch of the same kind of block does not run, so that both colours are
    measured on one-warp blocks and on blocks of several warps.
    """
    def make(rng, info):
        shape = (int(rng.integers(min_height, 201)), int(rng.integers(min_width, 601)))
        block = blocks_choice[int(rng.integers(len(blocks_choice)))]
        grid = packed_grid(*shape, block)
        return half_sweep_case(shape, int(rng.integers(1 << 20)), colour, block,
                               sample_blocks(rng, grid, SAMPLED_BLOCKS), fill=float(rng.uniform(0.8, 0.95)))

    return make


def _close_images(got, expected, name):
    err = np.abs(np.asarray(got, np.float64) - np.asarray(expected, np.float64))
    if err.size and not np.all(err <= 1e-3 * 255):
        raise fail(f"{name}: {int(np.sum(~(err <= 0.255)))} values differ from the red-black reference (max error "
                   f"{np.nanmax(err):.3g})", "value")


def _launch_label(d):
    height, width = np.shape(d["labels"])
    drawn, sampled = ("", "") if d.get("blocks") is None else ("drawn ", f", {len(d['blocks'])} of them sampled")
    return f"{drawn}{height} x {width}, colour {d['colour']}, {d['block'][0]} x {d['block'][1]} blocks{sampled}"


def _blob(rng):
    return synthetic_pair(13, 11, seed=3)


def _edge(rng):
    source, target, _ = synthetic_pair(10, 12, seed=8)
    mask = np.zeros((10, 12), bool)
    mask[:7, 5:] = True  # touches the top and right edges and the top-right corner
    return source, target, mask


def _random(rng):
    h, w = int(rng.integers(4, 17)), int(rng.integers(4, 40))
    return synthetic_pair(h, w, seed=int(rng.integers(1 << 30)), fill=float(rng.uniform(0.3, 0.7)))


_KERNEL = kernel("half_sweep_kernel")

Q1 = question(
    "ps4.q1", "red-black Gauss-Seidel on colour-separated arrays", 6, answer=_KERNEL,
    tolerance=f"at most {MAX_PIXEL_DIFF} levels per pixel and at most {MAX_FRACTION:.0%} of the pixels differing, "
              "against a NumPy red-black reference",
    tests=[
        clone_test("blob mask, 3 iterations", 1.25, _blob, 3),
        clone_test("mask touching the image edge, 4 iterations", 0.75, _edge, 4),
        clone_test("hidden: random sizes, masks and blocks", 0.5, _random, 2, hidden=True),
        clone_test("hidden: the classic pair", 0.5, lambda rng: cat_in_coffee((20, 30)), 3, hidden=True),
        race_test("one launch under the checker: only `mine` written, nothing out of bounds", 1,
                  inputs=lambda rng, info: half_sweep_case((9, 10), 2, 0, (8, 8)), launch=launch_half_sweep,
                  expect=expect_half_sweep, compare=_close_images),
        signature_test("the half-sweep technique, measured", 2,
                       configs=[fixed_half_sweep((20, 70), 4, 1, (32, 8)), fixed_half_sweep((13, 21), 5, 0, (32, 1)),
                                drawn_half_sweep(((32, 8), (64, 8), (32, 16)), 64, 260, 0),
                                drawn_half_sweep(((32, 1),), 40, 70, 1)],
                       launch=launch_half_sweep, expect=expect_half_sweep, compare=_close_images,
                       features=HALF_SWEEP_SIGNATURE, label=_launch_label),
    ])


# ----------------------------------------------------------------------------- q2
#: The blocks of the launch q2 measures.
MEASURE_BLOCK = (32, 4)


def measure_problem():
    return synthetic_pair(*MEASURE_SHAPE, seed=MEASURE_SEED)


def _store_args(rng, info):
    masks = [measure_problem()[2], synthetic_pair(9, 10, seed=2)[2],
             synthetic_pair(15, 7, seed=int(rng.integers(99)))[2]]
    return [(classify_mask(m), colour) for m in masks for colour in (0, 1)]


@cuda.jit
def read_rhs_and_labels(mine, other, rhs, labels, width, colour):
    """A decoy for ``measure`` (traffic only, nothing updated): every cell reads its label and its three rhs."""
    k, y = cuda.grid(2)
    h, wc = labels.shape
    if y < h and k < wc and labels[y, k] + rhs[0, y, k] + rhs[1, y, k] + rhs[2, y, k] < -1e30:
        mine[0, y, k] = 0


@cuda.jit
def read_vertical_neighbours(mine, other, rhs, labels, width, colour):
    """A decoy for ``measure`` (traffic only, nothing updated): every inner cell reads the cells above and below."""
    k, y = cuda.grid(2)
    h, wc = labels.shape
    if 0 < y < h - 1 and k < wc:
        s = other[0, y - 1, k] + other[0, y + 1, k] + other[1, y - 1, k]
        if s < -1e30:
            mine[0, y, k] = 0


#: The grader's own kernels that ``measure`` must measure as well (their traffic differs from the technique's).
MEASURE_DECOYS = {"a kernel reading the labels and rhs": read_rhs_and_labels,
                  "a kernel reading the cells above and below": read_vertical_neighbours}


def _measure_configs(rng, info):
    """(height, width, seed, colour): the measured problem with a colour drawn now, and a problem drawn now."""
    return [(*MEASURE_SHAPE, MEASURE_SEED, int(rng.integers(2))),
            (int(rng.integers(8, 15)), int(rng.integers(8, 40)), int(rng.integers(1 << 20)), int(rng.integers(2)))]


def _measure_arguments(config):
    h, w, seed, colour = config
    return synthetic_pair(h, w, seed=seed), colour


def _measure_launch(kernel_obj, config):
    h, w, seed, colour = config
    return launch_half_sweep(Answer(kernel_obj, {}), half_sweep_case((h, w), seed, colour, MEASURE_BLOCK))


Q2 = question(
    "ps4.q2", "predict the stores, measure the traffic", 2,
    answer={"kernel": _KERNEL, "predicted_store_bytes": function("predicted_store_bytes"), "measure": measurement()},
    tolerance="bytes exact; measurements within 1% of the course's profiler",
    tests=[
        calls_test("the predicted bytes stored by one launch", 1, key="predicted_store_bytes", args=_store_args,
                   expect=_predicted_stores),
        kernel_measurement_test("your measure(), on your kernel and on the grader's, on drawn problems", 1,
                                key="measure", kernel_key="kernel", decoys=MEASURE_DECOYS, configs=_measure_configs,
                                arguments=_measure_arguments, launch=_measure_launch,
                                measure=lambda metrics, config: metrics["global_load_bytes"], rtol=0.01),
    ])


QUESTIONS = (Q1, Q2, Q3)
