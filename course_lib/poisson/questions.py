"""Problem set 4 (``solutions/ps4_poisson.ipynb``), on the shared harness (:mod:`course_lib.grading.authoring.harness`).

- ``ps4.q1`` (6 points): **red-black Gauss-Seidel in place**. Answer: ``check("ps4.q1", red_black_kernel)``, a
  kernel ``(image, rhs, labels, colour)`` updating, in place, the strict-interior pixels with
  ``(y + x) % 2 == colour``; one iteration is a launch for colour 0 then one for colour 1
  (:func:`run_red_black`). Graded on the cloned image against a NumPy red-black reference (two
  tolerances), a clean race check of one launch (in place but race-free, proven by the checker),
  and the technique's signature (``RED_BLACK_SIGNATURE``), measured by the profiler on two launches
  (a 16 x 24 image in 8 x 8 blocks of 64 threads; a 13 x 11 one, partial blocks on both axes).
  Features and bounds, from the cost model of one red-black half-step (one thread per pixel, which
  updates its own pixel when it is strict interior and of the launch's colour, from its four
  neighbours of the other colour):

  * global bytes stored: exactly 12 per strict-interior pixel of the colour (3 float32);
  * atomic operations: none (each pixel is written by its own thread);
  * global load sectors per request: at most 8 (a warp of an 8 x 8 block covers 4 rows of 8
    consecutive pixels, at most 2 sectors a row);
  * thread span (busiest thread over the mean): at most 2 x the model's (10 statements for a pixel
    updated, 1 for any other thread): one thread sweeping many pixels shows here.
- ``ps4.q2`` (2 points): predict and measure the bytes one launch stores and loads. Answer:
  ``{"kernel": red_black_kernel, "predicted_store_bytes": f(labels, colour), "measure": g(kernel, problem,
  colour)}``. The grader calls ``g`` on the student's kernel and on decoys of its own (kernels with the same
  arguments and another traffic, updating nothing), on problems and colours drawn at grading time, and
  measures each launch itself.
- ``ps4.q3`` (2 points): classify the mask's pixels (NumPy). Answer: ``classify(mask)``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from ..grading.authoring.harness import (Answer, Launch, calls_test, fail, function, guarded, inner, kernel,
                                         measurement, question, race_test, result_test, unguard)
from ..grading.authoring.measuring import kernel_measurement_test
from ..grading.authoring.signature import Feature, at_most, no_atomics, signature_test
from .data import cat_in_coffee, synthetic_pair
from .reference import INTERIOR, classify_mask, compare_images, compose, jacobi_step_reference, prepare

PROBLEM_SET = "ps4"
#: The two tolerances: a pixel may differ by at most 2 levels, and at most 1% of the pixels may differ.
MAX_PIXEL_DIFF, MAX_FRACTION = 2, 0.01
BLOCK = (8, 8)
#: Guard pixels around the planes; the labels' guard holds INTERIOR, so a neighbour read past the image
#: without a bounds check adds the planes' guard value and shows, on a GPU too.
LABEL_GUARD = INTERIOR
#: The problem measured in q2 (the notebook builds the same one).
MEASURE_SHAPE, MEASURE_SEED = (12, 14), 6


# ----------------------------------------------------------------------------- q1
def clone_case(source, target, mask, iterations):
    """``inputs`` data: the prepared problem (labels, B + C, initial guess) and the iteration count."""
    prep = prepare(source, target, mask)
    return {"target": target, "mask": mask, "labels": prep.labels, "rhs": prep.rhs, "guess": prep.guess,
            "iterations": int(iterations)}


def case(make, iterations):
    return lambda rng, info: clone_case(*make(rng), iterations)


def _grid(shape):
    h, w = shape
    return (math.ceil(w / BLOCK[0]), math.ceil(h / BLOCK[1]))


def run_red_black(red_black, labels, rhs, guess, iterations):
    """The host loop: ``iterations`` times a launch for colour 0 then colour 1, every array in a guard frame.

    Returns
    -------
    dict
        ``image``: float32 of shape (3, H + 2 GUARD, W + 2 GUARD), the iterate with its frame.
    """
    from numba import cuda

    d_image = cuda.to_device(guarded(np.asarray(guess, np.float32), axes=(1, 2)))
    d_rhs = cuda.to_device(guarded(np.asarray(rhs, np.float32), axes=(1, 2)))
    d_labels = cuda.to_device(guarded(np.asarray(labels, np.uint8), axes=(0, 1), fill=LABEL_GUARD))
    views = inner(d_image, axes=(1, 2)), inner(d_rhs, axes=(1, 2)), inner(d_labels, axes=(0, 1))
    for _ in range(iterations):
        for colour in (0, 1):
            red_black[_grid(np.shape(labels)), BLOCK](*views, np.int32(colour))
    cuda.synchronize()
    return {"image": d_image.copy_to_host()}


def red_black_reference(labels, rhs, guess, iterations, colours=(0, 1)):
    """The grader's red-black Gauss-Seidel: a Jacobi step kept only on one colour at a time (NumPy)."""
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
    return run_red_black(answer.kernel(), d["labels"], d["rhs"], d["guess"], d["iterations"])


def judge_clone(d, got):
    labels, h_w = np.asarray(d["labels"]), np.shape(d["labels"])
    if not isinstance(got, dict) or "image" not in got:
        raise fail("the iterate did not come back")
    image = unguard(got["image"], (3, *h_w), name="image", axes=(1, 2))
    values = image[:, labels == INTERIOR]
    if not np.all(np.isfinite(values)) or (values.size and (values.min() < 0 or values.max() > 255)):
        raise fail("the iterate leaves [0, 255] or is not finite at strict-interior pixels: clamp, and read only "
                   "neighbours inside the image", "bounds")
    want = red_black_reference(labels, d["rhs"], d["guess"], d["iterations"])
    result = compare_images(compose(d["target"], labels, image), compose(d["target"], labels, want),
                            max_pixel_diff=MAX_PIXEL_DIFF, max_fraction=MAX_FRACTION)
    if not result.passed:
        raise fail(f"{h_w[0]} x {h_w[1]} image, {d['iterations']} iterations: {result.message}", "value")


def clone_test(name, points, make, iterations, hidden=False):
    return result_test(name, points, inputs=case(make, iterations), run=_run, judge=judge_clone, hidden=hidden)


def one_launch(rng, info, colour=0):
    d = clone_case(*synthetic_pair(9, 10, seed=2), 1)
    d["colour"] = colour
    return d


def launch_colour(answer, d):
    return Launch(answer.kernel(), _grid(np.shape(d["labels"])), BLOCK,
                  {"image": np.array(d["guess"], np.float32), "rhs": np.asarray(d["rhs"]),
                   "labels": np.asarray(d["labels"]), "colour": np.int32(d["colour"])}, outputs=("image",))


def expect_colour(d):
    return {"image": red_black_reference(d["labels"], d["rhs"], d["guess"], 1, colours=(d["colour"],))}


def colour_pixels(labels, colour):
    labels = np.asarray(labels)
    y, x = np.indices(labels.shape)
    return int(np.sum((labels == INTERIOR) & ((y + x) % 2 == colour)))


def _stores_own_colour(d):
    own = 12 * colour_pixels(d["labels"], d["colour"])
    return own, own


def model_span(d):
    """Busiest thread over the mean of one thread per pixel: 10 for a pixel updated, 1 for any other thread."""
    labels = np.asarray(d["labels"])
    updated = colour_pixels(labels, d["colour"])
    gx, gy = _grid(labels.shape)
    threads = gx * gy * BLOCK[0] * BLOCK[1]
    return 10 * threads / (10 * updated + threads - updated) if updated else 1.0


RED_BLACK_SIGNATURE = (
    Feature("global bytes stored", lambda m, d: m["global_store_bytes"], _stores_own_colour,
            "a launch updates only its colour's strict-interior pixels, in place, 3 float32 each",
            "12 bytes per pixel of the colour"),
    no_atomics("every pixel is updated by its own thread with a plain store", "one owner per pixel"),
    Feature("global load sectors per request", lambda m, d: m["load_sectors_per_request"], at_most(8),
            "consecutive lanes (threadIdx.x) take consecutive pixels of a row (x), so a warp's loads share sectors",
            "4 rows of 8 pixels per warp, <= 2 sectors each"),
    Feature("thread span (busiest thread's statements / mean)", lambda m, d: m["thread_span"],
            at_most(lambda d: 2 * model_span(d)),
            "one thread per pixel, each updating at most its own pixel", "10 statements per pixel updated"),
)


def signature_launch(shape, seed, colour):
    def make(rng, info):
        d = clone_case(*synthetic_pair(*shape, seed=seed), 1)
        d["colour"] = colour
        return d

    return make


def _close_images(got, expected, name):
    err = np.abs(np.asarray(got, np.float64) - np.asarray(expected, np.float64))
    if err.size and err.max() > 1e-3 * 255:
        raise fail(f"{name}: {int(np.sum(err > 0.255))} values differ from the red-black reference (max error "
                   f"{err.max():.3g})", "value")


def _blob(rng):
    return synthetic_pair(13, 11, seed=3)


def _edge(rng):
    source, target, _ = synthetic_pair(10, 12, seed=8)
    mask = np.zeros((10, 12), bool)
    mask[:7, 5:] = True  # touches the top and right edges and the top-right corner
    return source, target, mask


def _random(rng):
    h, w = int(rng.integers(4, 17)), int(rng.integers(4, 17))
    return synthetic_pair(h, w, seed=int(rng.integers(1 << 30)), fill=float(rng.uniform(0.3, 0.7)))


_KERNEL = kernel("red_black_kernel")

Q1 = question(
    "ps4.q1", "red-black Gauss-Seidel in place", 6, answer=_KERNEL,
    tolerance=f"at most {MAX_PIXEL_DIFF} levels per pixel and at most {MAX_FRACTION:.0%} of the pixels differing, "
              "against a NumPy red-black reference",
    hints={"race": "update only the pixels of the launch's colour: their neighbours all have the other colour, which "
                   "nobody writes in this launch",
           "bounds": "guard x < W and y < H, and every neighbour; D counts only neighbours inside the image",
           "value": "new = clamp((A + rhs) / D, 0, 255) with A the sum of the strict-interior neighbours' current "
                    "values, written in place to the pixels with (y + x) % 2 == colour",
           "technique": "a launch must store only its colour's strict-interior pixels (3 floats each)"},
    tests=[
        clone_test("blob mask, 3 iterations", 1.5, _blob, 3),
        clone_test("mask touching the image edge, 4 iterations", 1, _edge, 4),
        clone_test("hidden: random sizes and masks", 0.5, _random, 2, hidden=True),
        clone_test("hidden: the classic pair", 0.5, lambda rng: cat_in_coffee((20, 30)), 3, hidden=True),
        race_test("in place but race-free: the checker on one launch", 1.5, technique=True, inputs=one_launch,
                  launch=launch_colour, expect=expect_colour, compare=_close_images),
        signature_test("the red-black technique, measured (profiler; 16 x 24 and 13 x 11 images)", 1,
                       configs=[signature_launch((16, 24), 4, 1), signature_launch((13, 11), 5, 0)],
                       launch=launch_colour, expect=expect_colour, compare=_close_images,
                       features=RED_BLACK_SIGNATURE,
                       label=lambda d: f"{np.shape(d['labels'])[0]} x {np.shape(d['labels'])[1]} image, colour "
                                       f"{d['colour']}"),
    ])


# ----------------------------------------------------------------------------- q2
def measure_problem():
    return synthetic_pair(*MEASURE_SHAPE, seed=MEASURE_SEED)


def _store_args(rng, info):
    masks = [measure_problem()[2], synthetic_pair(9, 10, seed=2)[2], synthetic_pair(15, 7, seed=int(rng.integers(99)))[2]]
    return [(classify_mask(m), colour) for m in masks for colour in (0, 1)]


@cuda.jit
def read_rhs_and_labels(image, rhs, labels, colour):
    """A decoy for ``measure`` (traffic only, nothing updated): every pixel reads its label and its three rhs."""
    x, y = cuda.grid(2)
    h, w = labels.shape
    if y < h and x < w and labels[y, x] + rhs[0, y, x] + rhs[1, y, x] + rhs[2, y, x] < -1e30:
        image[0, y, x] = 0


@cuda.jit
def read_four_neighbours(image, rhs, labels, colour):
    """A decoy for ``measure`` (traffic only, nothing updated): every inner pixel reads its 4 neighbours' red."""
    x, y = cuda.grid(2)
    h, w = labels.shape
    if 0 < y < h - 1 and 0 < x < w - 1:
        s = image[0, y - 1, x] + image[0, y + 1, x] + image[0, y, x - 1] + image[0, y, x + 1]
        if s < -1e30:
            image[0, y, x] = 0


#: The grader's own kernels that ``measure`` must measure as well (their traffic differs from the technique's).
MEASURE_DECOYS = {"a kernel reading the labels and rhs": read_rhs_and_labels,
                  "a kernel reading four neighbours": read_four_neighbours}


def _measure_configs(rng, info):
    """(height, width, seed, colour): the measured problem with a colour drawn now, and a problem drawn now."""
    return [(*MEASURE_SHAPE, MEASURE_SEED, int(rng.integers(2))),
            (int(rng.integers(8, 15)), int(rng.integers(8, 15)), int(rng.integers(1 << 20)), int(rng.integers(2)))]


def _measure_arguments(config):
    h, w, seed, colour = config
    return synthetic_pair(h, w, seed=seed), colour


def _measure_launch(kernel_obj, config):
    h, w, seed, colour = config
    c = clone_case(*synthetic_pair(h, w, seed=seed), 1)
    c["colour"] = colour
    return launch_colour(Answer(kernel_obj, {}), c)


Q2 = question(
    "ps4.q2", "predict the stores, measure the traffic", 2,
    answer={"kernel": _KERNEL, "predicted_store_bytes": function("predicted_store_bytes"), "measure": measurement()},
    tolerance="bytes exact; measurements within 1% of the course's profiler",
    tests=[
        calls_test("the predicted bytes stored by one launch", 1, key="predicted_store_bytes", args=_store_args,
                   expect=lambda labels, colour: 12 * colour_pixels(labels, colour),
                   hint="3 float32 values for each strict-interior pixel of the launch's colour"),
        kernel_measurement_test("your measure(), on your kernel and on the grader's, on drawn problems", 1,
                                key="measure", kernel_key="kernel", decoys=MEASURE_DECOYS, configs=_measure_configs,
                                arguments=_measure_arguments, launch=_measure_launch,
                                measure=lambda metrics, config: metrics["global_load_bytes"], rtol=0.01,
                                hint="measure(kernel, problem, colour): poisson.prepare(*problem), one launch of "
                                     "`kernel` on (8, 8) blocks under profile(), report.total.global_load_bytes"),
    ])


# ----------------------------------------------------------------------------- q3
def _rect(rng):
    mask = np.zeros((6, 7), bool)
    mask[1:5, 2:6] = True
    return mask


def _edge_mask(rng):
    mask = np.zeros((5, 6), bool)
    mask[:4, :3] = True
    mask[4, 5] = True  # a lone pixel in the corner: border, its neighbours are outside
    return mask


def _mask_args(make):
    return lambda rng, info: [(make(rng),)]


def _labels_explained(arguments, want):
    return "0 outside, 1 inside border, 2 strict interior; neighbours beyond the image edge do not count"


def _classify_test(name, points, make, hidden=False):
    return calls_test(name, points, what="classify", args=_mask_args(make), expect=classify_mask,
                      explain=_labels_explained, hidden=hidden)


Q3 = question(
    "ps4.q3", "strict interior and inside border", 2, answer=function("classify"), tolerance="exact labels",
    tests=[
        _classify_test("a rectangle", 0.75, _rect),
        _classify_test("a mask touching the image edge", 0.75, _edge_mask),
        _classify_test("hidden: random masks", 0.5, lambda rng: rng.random((int(rng.integers(1, 12)),
                                                                             int(rng.integers(1, 12)))) < 0.75,
                       hidden=True),
    ])

QUESTIONS = (Q1, Q2, Q3)
