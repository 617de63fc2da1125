"""Problem set 4: right answers get full marks, typical wrong ones partial or 0 with a reason."""


import numpy as np
import pytest
from numba import cuda, float32

from course_lib import device, poisson
from course_lib.grading import get_question, run_tests
from course_lib.grading.core import TestFailure
from course_lib.poisson import kernels, questions

INTERIOR = poisson.INTERIOR


@cuda.jit
def channel_grid_kernel(prev, rhs, labels, nxt):
    """Correct but written differently: D counted first, neighbours summed right to left."""
    x, y = cuda.grid(2)
    h, w = labels.shape
    if x < w and y < h and labels[y, x] == INTERIOR:
        d = float32((x > 0) + (x < w - 1) + (y > 0) + (y < h - 1))
        for c in range(3):
            s = rhs[c, y, x]
            if x < w - 1 and labels[y, x + 1] == INTERIOR:
                s += prev[c, y, x + 1]
            if x > 0 and labels[y, x - 1] == INTERIOR:
                s += prev[c, y, x - 1]
            if y < h - 1 and labels[y + 1, x] == INTERIOR:
                s += prev[c, y + 1, x]
            if y > 0 and labels[y - 1, x] == INTERIOR:
                s += prev[c, y - 1, x]
            nxt[c, y, x] = min(max(s / d, float32(0.0)), float32(255.0))


def _make(variant):
    """Wrong kernels, one typical mistake each."""

    def kernel(prev, rhs, labels, nxt):
        x, y = cuda.grid(2)
        h, w = labels.shape
        if variant != "unguarded" and (x >= w or y >= h):
            return  # the unguarded variant forgets this: threads past the image write beyond it
        if labels[y, x] != INTERIOR:
            return
        d = float32(4.0) if variant == "d_always_4" else float32((x > 0) + (x < w - 1) + (y > 0) + (y < h - 1))
        for c in range(3):
            a = float32(0.0)
            if y > 0 and labels[y - 1, x] == INTERIOR:
                a += prev[c, y - 1, x]
            if y < h - 1 and labels[y + 1, x] == INTERIOR:
                a += prev[c, y + 1, x]
            if x > 0 and labels[y, x - 1] == INTERIOR:
                a += prev[c, y, x - 1]
            if x < w - 1 and labels[y, x + 1] == INTERIOR:
                a += prev[c, y, x + 1]
            v = (a + rhs[c, y, x]) / d
            if variant != "no_clamp":
                v = min(max(v, float32(0.0)), float32(255.0))
            if variant == "in_place":
                prev[c, y, x] = v  # the neighbours read this buffer in the same launch
            nxt[c, y, x] = v

    kernel.__name__ = f"jacobi_{variant}"
    return cuda.jit(kernel)


in_place_kernel = _make("in_place")
no_clamp_kernel = _make("no_clamp")
d_always_4_kernel = _make("d_always_4")
unguarded_kernel = _make("unguarded")


def grade(question_id, answer, **options):
    return run_tests(get_question(question_id), answer, hidden=True, seed=7, options=options)


def test_correct_but_different_kernel_gets_full_marks():
    result = grade("ps4.q1", channel_grid_kernel)
    assert result.passed and result.points == 6, str(result)


@pytest.mark.skipif(not device.is_simulator(), reason="on a GPU the in-place race changes the result only when "
                    "warps happen to interleave (no race checker there); the simulator runs threads one by one")
def test_in_place_update_loses_points_with_a_helpful_message():
    result = grade("ps4.q1", in_place_kernel)
    assert result.points < 6, str(result)
    first = next(o for o in result.outcomes if not o.passed)
    assert "images differ" in first.message and "Hint: read I_k only from prev" in first.message
    race = next(o for o in result.outcomes if o.name == "hidden: race check")
    assert not race.passed and "Hint" not in race.message  # a hidden test shows only its name and result


def test_writing_outside_the_image_fails_every_test():
    """The simulator faults on the index; a GPU does not, but the guard frame around the buffers changes."""
    result = grade("ps4.q1", unguarded_kernel)
    assert result.points == 0, str(result)
    first = result.outcomes[0]
    assert "outside the image" in first.message and "guard x < W and y < H" in first.message, first.message


def test_guard_frame_catches_a_write_past_the_image():
    """The judge itself (whatever the backend): one changed guard value, just below the image, fails."""
    test = get_question("ps4.q1").tests[0]
    rng = np.random.default_rng(0)
    data = test.inputs(rng, {})
    outputs = test.produce(channel_grid_kernel, data)
    test.judge(data, outputs, {})  # untouched guards pass
    h, w = data["mask"].shape
    outputs["next"][1, questions.GUARD + h, questions.GUARD + 2] = 0.0
    with pytest.raises(TestFailure, match=f"wrote outside the image: 1 values beyond the {h} x {w} image changed "
                                          f"\\(e.g. at row {h}, column 2\\)"):
        test.judge(data, outputs, {})


def test_missing_clamp_fails_the_clamp_test_only():
    result = grade("ps4.q1", no_clamp_kernel)
    failed = [o.name for o in result.outcomes if not o.passed]
    assert "values are clamped to [0, 255]" in failed and 0 < result.points < 6, str(result)
    assert "Hint: clamp every new value" in str(result)


def test_ignoring_the_image_edge_fails_the_edge_test():
    result = grade("ps4.q1", d_always_4_kernel)
    failed = [o.name for o in result.outcomes if not o.passed]
    assert "mask touching the image edge" in failed and "D counts only the neighbours" in str(result)
    assert result.points < 6


def test_reference_kernel_and_non_kernels_are_rejected():
    result = grade("ps4.q1", kernels.jacobi_step_kernel)
    assert result.points == 0 and "course's own reference kernel" in result.error
    assert "must be a @cuda.jit kernel" in grade("ps4.q1", lambda *a: None).error


def _classify(mask, outside_edge=True):
    """A student's classify, written with shifts; ``outside_edge=False`` is the classic mistake."""
    padded = np.pad(mask, 1, constant_values=outside_edge)
    all_in = padded[:-2, 1:-1] & padded[2:, 1:-1] & padded[1:-1, :-2] & padded[1:-1, 2:]
    return np.where(mask, np.where(all_in, 2, 1), 0).astype(np.uint8)


def _classify_with_scipy(mask):
    """Another right answer: an erosion that counts the outside of the image as in the mask."""
    from scipy import ndimage

    inner = ndimage.binary_erosion(mask, ndimage.generate_binary_structure(2, 1), border_value=1)
    return mask.astype(np.uint8) + inner.astype(np.uint8)


def test_classification_question():
    assert grade("ps4.q2", _classify).passed
    assert grade("ps4.q2", _classify_with_scipy).passed  # other packages' functions are fine

    def ignores_edge(mask):
        return _classify(mask, outside_edge=False)  # treats the outside of the image as outside the mask

    wrong = grade("ps4.q2", ignores_edge)
    assert 0 < wrong.points < 2 and "neighbours outside the image do not count" in str(wrong)
    assert "answer with your function" in grade("ps4.q2", 3).error


def test_traffic_question():
    right = {"bytes_per_iteration": lambda p: 37 * p, "launch_bound": lambda p, bw, t: 37 * p / bw < t}
    assert grade("ps4.q3", right).passed
    wrong = dict(right, bytes_per_iteration=lambda p: 36 * p)
    result = grade("ps4.q3", wrong)
    assert result.points == 1 and "plus the 1-byte label" in str(result)
    assert "answer with a dict" in grade("ps4.q3", {"launch_bound": right["launch_bound"]}).error
    assert grade("ps4.q3", dict(right, launch_bound=lambda p, bw, t: np.bool_(37 * p / bw < t))).passed


def _helper_calling_the_library(mask):
    return poisson.reference.classify_mask(mask)


@pytest.mark.parametrize("answer", [
    poisson.classify_mask,
    lambda mask: poisson.classify_mask(mask),
    lambda mask: _helper_calling_the_library(mask),
    lambda mask: np.asarray([poisson.classify_mask(m) for m in [mask]][0]),
], ids=["the function", "a lambda", "through a helper", "in a comprehension"])
def test_classification_by_the_library_is_rejected(answer):
    result = grade("ps4.q2", answer)
    assert result.points == 0 and "course's own" in result.error and "write your own" in result.error, str(result)


def test_traffic_from_the_library_is_rejected():
    from course_lib.poisson.bench import BYTES_PER_PIXEL_ITERATION
    from course_lib.poisson import bench

    right_launch = lambda p, bw, t: 37 * p / bw < t  # noqa: E731
    for cheat in (lambda p: BYTES_PER_PIXEL_ITERATION * p, lambda p: bench.BYTES_PER_PIXEL_ITERATION * p):
        result = grade("ps4.q3", {"bytes_per_iteration": cheat, "launch_bound": right_launch})
        assert result.points == 0 and "BYTES_PER_PIXEL_ITERATION" in result.error, str(result)
    result = grade("ps4.q3", {"bytes_per_iteration": lambda p: 37 * p,
                              "launch_bound": lambda p, bw, t: poisson.questions._launch_judge is None})
    assert result.points == 0 and "_launch_judge" in result.error, str(result)


def test_every_test_is_split_so_the_grader_judges_outside_the_notebook():
    from course_lib.grading import questions_of

    assert all(t.split for q in questions_of("ps4") for t in q.tests)
