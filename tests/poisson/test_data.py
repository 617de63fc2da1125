"""Images come offline from scikit-image's wheel; masks are drawn or seeded."""

import numpy as np
import pytest

from course_lib import poisson


@pytest.mark.parametrize("name", ["astronaut", "chelsea", "coffee", "rocket"])
def test_photos_load_offline(name):
    image = poisson.load_photo(name, (30, 40))
    assert image.shape == (30, 40, 3) and image.dtype == np.uint8 and image.flags.c_contiguous
    assert image.std() > 5


def test_unknown_photo():
    with pytest.raises(ValueError, match="name must be one of .*got 'bear'"):
        poisson.load_photo("bear")


@pytest.mark.parametrize("size", [(24, 36), (333, 500)])
def test_cat_in_coffee(size):
    source, target, mask = poisson.cat_in_coffee(size)
    assert source.shape == target.shape == size + (3,) and mask.shape == size
    assert source.dtype == target.dtype == np.uint8
    assert 0.01 < mask.mean() < 0.2
    assert np.all(source[~mask] == 255) and not np.any(np.all(source[mask] == 255, axis=-1))
    assert (poisson.classify_mask(mask) == poisson.INTERIOR).any()


def test_blob_mask_is_seeded_connected_and_sized():
    from scipy import ndimage

    a = poisson.blob_mask((40, 50), seed=3, fill=0.3)
    np.testing.assert_array_equal(a, poisson.blob_mask((40, 50), seed=3, fill=0.3))
    assert ndimage.label(a)[1] == 1 and 0.05 < a.mean() <= 0.31
    assert not np.array_equal(a, poisson.blob_mask((40, 50), seed=4, fill=0.3))


def test_drawn_masks():
    assert poisson.rectangle_mask((5, 6), 1, 2, 3, 10).sum() == 3 * 4
    assert poisson.ellipse_mask((21, 21), radii=(5, 5)).sum() == pytest.approx(np.pi * 25, rel=0.15)
    tri = poisson.polygon_mask((10, 10), [0, 9, 9], [0, 0, 9])
    assert tri[8, 1] and not tri[1, 8]


@pytest.mark.parametrize("call,message", [
    (lambda: poisson.blob_mask((0, 5)), "shape must be .*positive integer"),
    (lambda: poisson.blob_mask((5, 5), fill=1.5), "fill must be a finite number > 0 and < 1"),
    (lambda: poisson.cat_in_coffee((4, 4)), "at least 8 x 8"),
    (lambda: poisson.object_on_white(np.zeros((3, 3, 3), np.uint8), np.ones((3, 3), bool), (4, 4), 2, 2),
     "does not fit"),
])
def test_bad_arguments(call, message):
    with pytest.raises(ValueError, match=message):
        call()
