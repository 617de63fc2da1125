"""Problem set 4: right answers get full marks, typical wrong ones partial or 0 with a reason."""

from pathlib import Path

import numpy as np
import pytest
from numba import cuda, float32

from course_lib import device, poisson
from course_lib.grading import get_question, run_tests
from course_lib.poisson import kernels

ROOT = Path(__file__).resolve().parents[2]
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
        if x >= w or y >= h or labels[y, x] != INTERIOR:
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


def grade(question_id, answer, **options):
    return run_tests(get_question(question_id), answer, hidden=True, seed=7, options=options)


def test_correct_but_different_kernel_gets_full_marks():
    result = grade("ps4.q1", channel_grid_kernel)
    assert result.passed and result.points == 6, str(result)


def test_in_place_update_loses_points_with_a_helpful_message():
    result = grade("ps4.q1", in_place_kernel)
    assert result.points < 6, str(result)
    first = next(o for o in result.outcomes if not o.passed)
    assert "images differ" in first.message and "Hint: read I_k only from prev" in first.message
    if device.is_simulator():
        race = next(o for o in result.outcomes if o.name == "hidden: race check")
        assert not race.passed and "no thread may write what another thread reads" in race.message


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


def test_classification_question():
    assert grade("ps4.q2", poisson.classify_mask).passed

    def ignores_edge(mask):
        padded = np.pad(mask, 1)  # treats the outside of the image as outside the mask
        return poisson.classify_mask(padded)[1:-1, 1:-1]

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


def test_untouched_problem_set_runs_to_the_end_and_scores_zero(notebooks):
    nb, errors = notebooks.execute(ROOT / "problem_sets" / "ps4_poisson.ipynb")
    assert not errors, [e["ename"] + ": " + e["evalue"] for e in errors]
    assert "ps4 total: 0/10" in notebooks.score(nb)


@pytest.mark.skipif(device.is_simulator(), reason="nbval runs the solution notebook in the simulator already")
def test_solution_scores_full_marks_on_gpu(notebooks):
    nb, errors = notebooks.execute(ROOT / "solutions" / "ps4_poisson.ipynb")
    assert not errors and "ps4 total: 10/10" in notebooks.score(nb)
