"""The NumPy reference does exactly the source's method, and converges to the exact solve."""

import numpy as np
import pytest

from course_lib import poisson
from course_lib.poisson import BORDER, INTERIOR, OUTSIDE


def test_classification_of_a_block():
    mask = np.zeros((5, 6), bool)
    mask[1:4, 1:5] = True
    labels = poisson.classify_mask(mask)
    expected = np.zeros((5, 6), np.uint8)
    expected[1:4, 1:5] = BORDER
    expected[2, 2:4] = INTERIOR
    np.testing.assert_array_equal(labels, expected)


def test_mask_touching_the_edge_has_interior_pixels_on_the_edge():
    mask = np.zeros((4, 5), bool)
    mask[:3, :3] = True
    labels = poisson.classify_mask(mask)
    # (0, 0) is a corner: its two in-image neighbours are in the mask.
    assert labels[0, 0] == INTERIOR and labels[1, 0] == INTERIOR and labels[0, 1] == INTERIOR
    assert labels[1, 1] == INTERIOR and labels[2, 0] == BORDER and labels[0, 2] == BORDER
    assert labels[3, 0] == OUTSIDE
    np.testing.assert_array_equal(poisson.neighbour_counts((4, 5))[[0, 0, 1], [0, 1, 1]], [2, 3, 4])


def test_single_interior_pixel_by_hand(single_interior_pair):
    """One unknown with four border neighbours: I = mean of T over them + S(p) - mean of S over them."""
    source, target, mask = single_interior_pair
    s, t = source.astype(np.float64), target.astype(np.float64)
    nbrs = [(1, 2), (3, 2), (2, 1), (2, 3)]
    value = sum(t[q] + s[2, 2] - s[q] for q in nbrs) / 4
    expected = target.copy()
    expected[2, 2] = np.clip(value, 0, 255).astype(np.uint8)
    for iterations in (1, 7):
        np.testing.assert_array_equal(poisson.jacobi_reference(source, target, mask, iterations), expected)


def test_one_step_by_hand_on_an_edge_pixel():
    """D = 3 on the image edge; A sums only interior neighbours; B only border ones."""
    source = np.zeros((3, 4, 3), np.uint8)
    target = np.zeros((3, 4, 3), np.uint8)
    source[..., 0] = [[10, 20, 30, 40], [50, 60, 70, 80], [90, 100, 110, 120]]
    target[..., 0] = 200
    mask = np.zeros((3, 4), bool)
    mask[:2, :3] = True
    prep = poisson.prepare(source, target, mask)
    assert prep.labels[0, 0] == INTERIOR and prep.labels[0, 1] == INTERIOR and prep.labels[1, 0] == BORDER
    # Pixel (0, 0): neighbours (1, 0) border and (0, 1) interior; D = 2.
    c = (10 - 50) + (10 - 20)
    np.testing.assert_equal(prep.rhs[0, 0, 0], c + 200)
    nxt = poisson.jacobi_step_reference(prep.guess, prep)
    np.testing.assert_allclose(nxt[0, 0, 0], (20 + c + 200) / 2)
    # Pixel (0, 1): neighbours (1, 1) border, (0, 0) interior, (0, 2) border; D = 3.
    c01 = (20 - 60) + (20 - 10) + (20 - 30)
    np.testing.assert_allclose(nxt[0, 0, 1], np.clip((10 + c01 + 400) / 3, 0, 255))
    # Non-interior pixels are untouched.
    np.testing.assert_array_equal(nxt[:, prep.labels != INTERIOR], prep.guess[:, prep.labels != INTERIOR])


def test_step_refuses_to_run_in_place():
    source, target, mask = poisson.synthetic_pair(6, 6)
    prep = poisson.prepare(source, target, mask)
    with pytest.raises(ValueError, match="different buffer"):
        poisson.jacobi_step_reference(prep.guess, prep, out=prep.guess)


def test_clamping_to_0_255():
    """A bright source gradient pasted into a white target drives values past 255: they are clamped."""
    source = np.zeros((7, 7, 3), np.uint8)
    source[3, 3] = 250  # a bright peak in the source
    target = np.full((7, 7, 3), 250, np.uint8)
    mask = np.ones((7, 7), bool)
    mask[0, :] = False
    _, snapshots = poisson.jacobi_reference(source, target, mask, 50, keep=[1, 50])
    assert snapshots[50].max() == 255 and snapshots[50].min() >= 0
    assert poisson.exact_solve(source, target, mask)[1].max() > 255


def test_jacobi_converges_to_the_exact_sparse_solve():
    source, target, mask = poisson.synthetic_pair(12, 10, seed=3)
    result, planes = poisson.exact_solve(source, target, mask)
    prep = poisson.prepare(source, target, mask)
    assert poisson.residual(planes, prep) < 1e-9
    interior = prep.labels == INTERIOR
    if 0 <= planes[:, interior].min() and planes[:, interior].max() <= 255:
        _, snaps = poisson.jacobi_reference(source, target, mask, 3000, keep=[3000])
        np.testing.assert_allclose(snaps[3000][:, interior], planes[:, interior], atol=1e-2)
        assert poisson.compare_images(poisson.jacobi_reference(source, target, mask, 3000), result,
                                      max_pixel_diff=1, max_fraction=0.05)


def test_residual_decreases():
    source, target, mask = poisson.cat_in_coffee((40, 60))
    prep = poisson.prepare(source, target, mask)
    _, snaps = poisson.jacobi_reference(source, target, mask, 100, keep=[0, 10, 100])
    r = [poisson.residual(snaps[k], prep) for k in (0, 10, 100)]
    assert r[0] > r[1] > r[2] > 0


def test_opencv_comparison_runs_and_is_close_to_the_exact_solve():
    source, target, mask = poisson.cat_in_coffee((60, 90))
    opencv = poisson.opencv_clone(source, target, mask)
    exact, _ = poisson.exact_solve(source, target, mask)
    assert opencv.shape == target.shape and opencv.dtype == np.uint8
    np.testing.assert_array_equal(opencv[~mask][:10], target[~mask][:10])
    # OpenCV fixes the guidance field, not the border pixels, so it is not equal to the
    # exact solve; it is still far closer to it than a naive paste.
    naive = poisson.naive_paste(source, target, mask)
    diff = np.abs(opencv.astype(int) - exact.astype(int))[mask].mean()
    assert diff < 0.6 * np.abs(naive.astype(int) - exact.astype(int))[mask].mean()
    identity = poisson.opencv_clone(target, target, mask)
    assert np.abs(identity.astype(int) - target.astype(int)).max() <= 1


# ---- from test_poisson_compare.py

import numpy as np


import pytest


from course_lib.poisson import assert_images_match, compare_images


@pytest.fixture
def image(rng):
    return rng.integers(0, 256, (10, 20, 3), dtype=np.uint8)


def test_equal_images_match_even_with_zero_tolerance(image):
    result = compare_images(image, image.copy(), max_pixel_diff=0, max_fraction=0)
    assert result and result.max_diff == 0 and result.differing_pixels == 0 and result.worst_pixel is None


def test_small_differences_on_few_pixels_pass(image):
    other = image.copy()
    other[3, 4, 1] = image[3, 4, 1] ^ 1  # differs by exactly 1
    result = compare_images(other, image, max_pixel_diff=2, max_fraction=0.01)
    assert result.passed and result.differing_pixels == 1 and result.fraction_differing == 1 / 200
    assert "images match" in result.message


def test_one_large_difference_fails_with_its_position(image):
    other = image.copy()
    other[7, 11] = 255 - image[7, 11] // 2 if image[7, 11, 0] < 100 else image[7, 11] // 2
    result = compare_images(other, image, max_pixel_diff=2, max_fraction=0.5)
    assert not result and "row 7, column 11" in result.message and result.max_diff > 2
    with pytest.raises(AssertionError, match="images differ"):
        assert_images_match(other, image, max_pixel_diff=2, max_fraction=0.5)


def test_too_many_small_differences_fail(image):
    other = image.copy()
    flip = np.zeros(image.shape[:2], bool)
    flip[:, :1] = True  # 10 of 200 pixels = 5%
    other[flip] = np.where(image[flip] > 0, image[flip] - 1, 1)
    assert not compare_images(other, image, max_pixel_diff=1, max_fraction=0.01)
    assert compare_images(other, image, max_pixel_diff=1, max_fraction=0.05)


def test_unsigned_difference_does_not_wrap():
    a = np.array([[[0, 0, 0]]], np.uint8)
    b = np.array([[[255, 0, 0]]], np.uint8)
    assert compare_images(a, b).max_diff == 255 and compare_images(b, a).max_diff == 255


@pytest.mark.parametrize("a,b,kwargs,message", [
    (np.zeros((2, 2, 3), np.uint8), np.zeros((2, 3, 3), np.uint8), {}, "different shapes"),
    (np.zeros((2, 2, 3), np.float32), np.zeros((2, 2, 3), np.uint8), {}, "actual must have dtype uint8"),
    (np.zeros(5, np.uint8), np.zeros(5, np.uint8), {}, r"shape \(H, W\) or \(H, W, C\)"),
    (np.zeros((2, 2), np.uint8), np.zeros((2, 2), np.uint8), {"max_fraction": 1.5}, "max_fraction must be a finite number >= 0 and <= 1"),
])
def test_bad_arguments(a, b, kwargs, message):
    with pytest.raises(ValueError, match=message):
        compare_images(a, b, **kwargs)
