"""What a repeated one-launch clone costs the host: buffers pooled per crop shape, inputs checked once."""

import pytest

from course_lib import poisson
from course_lib.poisson import api
from course_lib.sim import record

from .test_kernels import TOLERANCES


@pytest.fixture(autouse=True)
def empty_pool():
    api.release_buffers()
    yield
    api.release_buffers()


def _clone(source, target, mask, iterations=3):
    with record() as log:
        image = poisson.seamless_clone(source, target, mask, iterations=iterations)
    return image, log


def test_a_second_clone_of_the_same_crop_shape_allocates_nothing():
    first_pair = poisson.synthetic_pair(9, 13, seed=1, fill=0.6)
    image, first = _clone(*first_pair)
    poisson.assert_images_match(image, poisson.jacobi_reference(*first_pair, 3), **TOLERANCES)
    assert len(first.allocations) == 3  # packed inputs, image, iterate
    other_source, other_target, _ = poisson.synthetic_pair(9, 13, seed=2, fill=0.6)
    for pair in (first_pair, (other_source, other_target, first_pair[2])):  # other images, same crop shape
        image, log = _clone(*pair)
        poisson.assert_images_match(image, poisson.jacobi_reference(*pair, 3), **TOLERANCES)
        s = log.summary()
        assert len(log.allocations) == 0
        assert (s["launches"], s["HtoD_count"], s["DtoH_count"]) == (1, 1, 1)


def test_pooled_buffers_do_not_mix_crops_of_other_shapes():
    pairs = [poisson.synthetic_pair(h, w, seed=h, fill=0.6) for h, w in ((7, 11), (8, 11), (7, 11))]
    for pair in pairs:
        image, _ = _clone(*pair, iterations=2)
        poisson.assert_images_match(image, poisson.jacobi_reference(*pair, 2), **TOLERANCES)


def test_a_public_solver_keeps_its_own_buffers():
    pair = poisson.synthetic_pair(7, 11, seed=3, fill=0.6)
    solver = poisson.PersistentSolver(*pair)
    solver.run(2)
    other = poisson.synthetic_pair(7, 11, seed=4, fill=0.6)
    _clone(*other, iterations=5)  # a pooled clone between the solver's run and its result
    poisson.assert_images_match(solver.result(), poisson.jacobi_reference(*pair, 2), **TOLERANCES)


def test_the_inputs_are_checked_once(monkeypatch):
    """The public door checks the images; the crop it cuts goes to the solver unchecked."""
    from course_lib.poisson import reference

    calls = []
    original = reference.check_problem

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(api, "check_problem", counting)
    monkeypatch.setattr(reference, "check_problem", counting)
    pair = poisson.synthetic_pair(7, 11, seed=3, fill=0.6)
    for method in ("persistent", "numpy"):
        calls.clear()
        poisson.seamless_clone(*pair, iterations=1, method=method)
        assert len(calls) == 1, method
    with pytest.raises(ValueError, match="method"):
        poisson.seamless_clone(*pair, iterations=1, method="gauss")


def test_the_pool_keeps_the_last_shapes_and_finds_them_again():
    pairs = [poisson.synthetic_pair(7, 7 + i, seed=1, fill=0.6) for i in range(api.POOL_SHAPES)]
    for pair in pairs:
        _clone(*pair, iterations=0)
    assert len(api._persistent_buffers()) == api.POOL_SHAPES
    image, log = _clone(*pairs[0], iterations=0)  # the oldest shape is still there: nothing allocated
    assert len(log.allocations) == 0
    poisson.assert_images_match(image, poisson.jacobi_reference(*pairs[0], 0), **TOLERANCES)
    _clone(*poisson.synthetic_pair(9, 15, seed=2, fill=0.6), iterations=0)  # one more shape drops the oldest
    assert len(api._persistent_buffers()) == api.POOL_SHAPES
