"""The two-tolerance image comparison used by tests and graders."""

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
