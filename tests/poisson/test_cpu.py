"""direct_clone (the exact solve on the mask's box) against the trusted reference exact_solve, on awkward cases.

Tolerance: the two solve the same system in float64 (different orders of unknowns and of
elimination), so their solutions differ by rounding only (~1e-12 levels); after the clamp
and the truncation to 8 bits an image may differ by one level where a value lies that close
to an integer. Stated: at most 1 level, on at most 0.1 % of the pixels (in practice: none).
"""

import numpy as np
import pytest

from course_lib import poisson
from course_lib.poisson.cpu import _direct_solve

TOLERANCE = {"max_pixel_diff": 1, "max_fraction": 0.001}


def _agrees(source, target, mask):
    fast = poisson.direct_clone(source, target, mask)
    exact, exact_planes = poisson.exact_solve(source, target, mask)
    assert fast.dtype == np.uint8 and fast.shape == target.shape
    poisson.assert_images_match(fast, exact, **TOLERANCE)
    outside = ~(poisson.classify_mask(mask) == poisson.INTERIOR)
    np.testing.assert_array_equal(fast[outside], target[outside])  # only strict-interior pixels change
    return fast, exact_planes


@pytest.mark.parametrize("size", [(24, 36), (31, 37), (53, 41)])  # the cat, and prime sizes
def test_agrees_with_the_reference_on_the_cat(size):
    _agrees(*poisson.cat_in_coffee(size))


def test_the_planes_agree_with_the_reference_to_rounding():
    source, target, mask = poisson.cat_in_coffee((31, 37))
    _, exact_planes = poisson.exact_solve(source, target, mask)
    planes = _direct_solve(poisson.prepare(source, target, mask))  # on the whole image, not cropped
    inside = poisson.classify_mask(mask) == poisson.INTERIOR
    np.testing.assert_allclose(planes[:, inside], exact_planes[:, inside], rtol=0, atol=1e-9)


def test_one_strict_interior_pixel(single_interior_pair):
    source, target, mask = single_interior_pair
    fast, planes = _agrees(source, target, mask)
    # One unknown: 4 I = B + C, so I is (B + C) / 4, clamped and truncated.
    prep = poisson.prepare(source, target, mask)
    expected = np.clip(prep.rhs[:, 2, 2].astype(np.float64) / 4, 0, 255).astype(np.uint8)
    np.testing.assert_array_equal(fast[2, 2], expected)


def test_a_mask_touching_the_image_edge_and_corner(edge_pair):
    _agrees(*edge_pair)  # there D is 3 or 2, as in every implementation


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_blobs_with_holes_and_several_pieces(seed):
    source, target, _ = poisson.synthetic_pair(29, 43, seed=seed)
    mask = poisson.blob_mask((29, 43), seed=seed, fill=0.45)
    if not (poisson.classify_mask(mask) == poisson.INTERIOR).any() or mask.all():
        pytest.skip("this blob has no strict interior")
    _agrees(source, target, mask)


def test_a_mask_away_from_every_edge_equals_the_converged_iterations():
    source, target, _ = poisson.synthetic_pair(13, 17, seed=4)
    mask = np.zeros((13, 17), bool)
    mask[4:9, 5:12] = True
    fast, planes = _agrees(source, target, mask)
    if 0 <= planes.min() and planes.max() <= 255:  # no clamp: Jacobi's limit is the solution itself
        iterated = poisson.seamless_clone(source, target, mask, iterations=3000, method="cpu")
        poisson.assert_images_match(iterated, fast, **TOLERANCE)


def test_the_default_mask_and_the_inputs_untouched():
    source, target, mask = poisson.cat_in_coffee((24, 36))
    before = (source.copy(), target.copy())
    np.testing.assert_array_equal(poisson.direct_clone(source, target), poisson.direct_clone(source, target, mask))
    np.testing.assert_array_equal(source, before[0])
    np.testing.assert_array_equal(target, before[1])


@pytest.mark.parametrize("make_mask,message", [
    (lambda m: np.zeros_like(m), "the mask is empty"),
    (lambda m: np.ones_like(m), "covers the whole image"),
    (lambda m: np.eye(*m.shape, dtype=bool), "no strict-interior pixel"),
    (lambda m: np.pad(np.ones((1, 1), bool), ((3, m.shape[0] - 4), (5, m.shape[1] - 6))), "no strict-interior pixel"),
])
def test_masks_with_nothing_to_solve_are_clear_errors(make_mask, message):
    source, target, mask = poisson.cat_in_coffee((24, 36))
    with pytest.raises(ValueError, match=message):
        poisson.direct_clone(source, target, make_mask(mask))
