"""seamless_clone: inputs are validated with clear errors; nothing is modified; the crop is invisible."""

import numpy as np
import pytest

from course_lib import poisson


@pytest.fixture
def pair():
    return poisson.synthetic_pair(9, 10, seed=3)


def test_default_mask_is_the_non_white_source_pixels():
    source, target, mask = poisson.cat_in_coffee((24, 36))
    np.testing.assert_array_equal(mask, poisson.nonwhite_mask(source))
    a = poisson.seamless_clone(source, target, iterations=4, method="cpu")
    b = poisson.seamless_clone(source, target, mask, iterations=4, method="cpu")
    np.testing.assert_array_equal(a, b)


def test_cropping_to_the_mask_changes_nothing():
    """The API solves on the mask's bounding box (+1 pixel); the reference on the whole image."""
    source, target, mask = poisson.cat_in_coffee((40, 60))
    expected = poisson.jacobi_reference(source, target, mask, 30)
    np.testing.assert_array_equal(poisson.seamless_clone(source, target, mask, iterations=30, method="numpy"),
                                  expected)
    np.testing.assert_array_equal(poisson.seamless_clone(source, target, mask, iterations=30, method="cpu"),
                                  expected)


def test_inputs_are_not_modified_and_outside_pixels_are_the_target(pair):
    source, target, mask = pair
    copies = [a.copy() for a in pair]
    out = poisson.seamless_clone(source, target, mask, iterations=3, method="cpu")
    for before, after in zip(copies, pair):
        np.testing.assert_array_equal(before, after)
    interior = poisson.classify_mask(mask) == poisson.INTERIOR
    np.testing.assert_array_equal(out[~interior], target[~interior])
    assert out.dtype == np.uint8 and out.shape == target.shape


def test_zero_iterations_pastes_the_source_interior(pair):
    source, target, mask = pair
    out = poisson.seamless_clone(source, target, mask, iterations=0, method="cpu")
    interior = poisson.classify_mask(mask) == poisson.INTERIOR
    np.testing.assert_array_equal(out[interior], source[interior])


def test_clone_history_snapshots_and_residuals():
    source, target, mask = poisson.cat_in_coffee((40, 60))
    history = poisson.clone_history(source, target, mask, (0, 5, 50), method="cpu")
    assert history.iterations == [0, 5, 50]
    np.testing.assert_array_equal(history.image_at(50), poisson.jacobi_reference(source, target, mask, 50))
    assert history.residuals[0] > history.residuals[1] > history.residuals[2]
    with pytest.raises(ValueError, match="no snapshot after 7"):
        history.image_at(7)


def _bad(pair, **change):
    source, target, mask = pair
    args = dict(source=source, target=target, mask=mask)
    args.update(change)
    return args


@pytest.mark.parametrize("change,message", [
    (dict(target=np.zeros((9, 11, 3), np.uint8)), r"same size, got \(9, 10\) and \(9, 11\)"),
    (dict(mask=np.zeros((9, 10), bool)), "mask is empty"),
    (dict(mask=np.ones((9, 10), bool)), "covers the whole image"),
    (dict(mask=np.eye(9, 10, dtype=bool)), "no strict-interior pixel"),
    (dict(source=np.zeros((9, 10, 3), np.float32)), "source must have dtype uint8"),
    (dict(target=np.zeros((9, 10, 3), np.int64)), "target must have dtype uint8"),
    (dict(source=np.zeros((9, 10), np.uint8)), r"source must have shape \(H, W, 3\)"),
    (dict(source=np.zeros((9, 10, 4), np.uint8)), r"source must have shape \(H, W, 3\)"),
    (dict(source=[[[0, 0, 0]]]), "source must have dtype uint8"),
    (dict(source=np.zeros((0, 10, 3), np.uint8)), "source must not be empty"),
    (dict(mask=np.ones((9, 10), np.uint8)), "mask must be a boolean array"),
    (dict(mask=np.ones((10, 9), bool)), r"mask must have the images' shape \(9, 10\), got shape \(10, 9\)"),
])
def test_bad_input_is_a_clear_error(pair, change, message):
    with pytest.raises(ValueError, match=message):
        poisson.seamless_clone(**_bad(pair, **change), iterations=1, method="cpu")


def test_white_source_gives_an_empty_derived_mask(pair):
    _, target, _ = pair
    with pytest.raises(ValueError, match=r"mask derived from the source \(its non-white pixels\) is empty"):
        poisson.seamless_clone(np.full_like(target, 255), target, iterations=1)


@pytest.mark.parametrize("kwargs,message", [
    (dict(method="gpu"), "method must be one of .*got 'gpu'"),
    (dict(iterations=-1), "non-negative integer"),
    (dict(iterations=2.5), "non-negative integer"),
    (dict(iterations=True), "non-negative integer"),
    (dict(method="cpu", fused=(2, 8, 8)), "fused only applies"),
    (dict(method="jacobi_fused", fused=(4, 8, 8)), "must exceed 2 \\* halo"),
    (dict(method="jacobi_fused", fused="big"), "fused must be"),
])
def test_bad_options_are_clear_errors(pair, kwargs, message):
    with pytest.raises(ValueError, match=message):
        poisson.seamless_clone(*pair, **kwargs)


def test_naive_paste(pair):
    source, target, mask = pair
    out = poisson.naive_paste(source, target, mask)
    np.testing.assert_array_equal(out[mask], source[mask])
    np.testing.assert_array_equal(out[~mask], target[~mask])


@pytest.mark.parametrize("method", ["persistent", "jacobi", "jacobi_fused"])
def test_clone_history_with_the_kernels_matches_the_cpu(method):
    source, target, mask = poisson.synthetic_pair(10, 9, seed=5)
    kernel = poisson.clone_history(source, target, mask, (0, 2, 5), method=method)
    cpu = poisson.clone_history(source, target, mask, (0, 2, 5), method="cpu")
    for a, b in zip(kernel.images, cpu.images):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(kernel.residuals, cpu.residuals, rtol=1e-6)


def test_clone_history_rejects_empty_checkpoints(pair):
    with pytest.raises(ValueError, match="checkpoints is empty"):
        poisson.clone_history(*pair, checkpoints=())
