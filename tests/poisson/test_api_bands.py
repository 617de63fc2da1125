"""The one-launch clone spread over the SMs (``method="persistent_bands"``, ``layout="bands"``): bit-identical
to the reference, one launch and one grid barrier per sweep, nothing allocated on a repeated call, and a grid
that a cooperative launch may have."""

import numpy as np
import pytest

from course_lib import poisson
from course_lib.poisson import _persistent_buffers, api, kernels
from course_lib.poisson.reference import INTERIOR
from course_lib.sim import CooperativeLaunchError, max_cooperative_grid_blocks, record


@pytest.fixture(autouse=True)
def empty_pool():
    api.release_buffers()
    yield
    api.release_buffers()


def _one_row():
    source, target, _ = poisson.synthetic_pair(3, 11, seed=5)
    mask = np.zeros((3, 11), bool)
    mask[:, 1:10] = True  # touches the top and bottom edges: one row of strict interior
    return source, target, mask


def _mask_at_the_edges():
    source, target, _ = poisson.synthetic_pair(13, 7, seed=12)  # 13 rows: a prime, bands of unequal height
    mask = np.ones((13, 7), bool)
    mask[12, 6] = False
    return source, target, mask


CASES = {"blob 17 x 23": lambda: poisson.synthetic_pair(17, 23, seed=3, fill=0.7), "one row": _one_row,
         "mask at the edges 13 x 7": _mask_at_the_edges}


def _reference_planes(source, target, mask, iterations):
    prep = poisson.prepare(source, target, mask)
    planes = prep.guess.copy()
    for _ in range(iterations):
        planes = poisson.jacobi_step_reference(planes, prep)
    return planes, prep.labels == INTERIOR


@pytest.mark.parametrize("case", CASES)
def test_the_bands_give_the_reference_s_iterate_and_the_shared_layout_s_image(case):
    source, target, mask = CASES[case]()
    iterations = 3
    solver = poisson.PersistentSolver(source, target, mask, layout="bands")
    solver.run(iterations)
    assert solver.grid > 3  # more than one block per channel
    planes, interior = _reference_planes(source, target, mask, iterations)
    got = solver.planes()
    np.testing.assert_array_equal(got[:, interior], planes[:, interior])
    assert not got[:, ~interior].any()
    shared = poisson.PersistentSolver(source, target, mask, layout="shared")
    shared.run(iterations)
    np.testing.assert_array_equal(solver.result(), shared.result())


def test_one_launch_one_grid_barrier_per_sweep_and_nothing_allocated_again(monkeypatch):
    from course_lib.sim import _baton

    calls = []
    original = _baton.Carrier.grid_sync

    def counting(self, line):
        calls.append(1)
        return original(self, line)

    monkeypatch.setattr(_baton.Carrier, "grid_sync", counting)
    source, target, mask = poisson.synthetic_pair(9, 13, seed=1, fill=0.6)
    expected = poisson.seamless_clone(source, target, mask, iterations=4, method="numpy")
    logs = []
    for iterations in (4, 4, 0):
        calls.clear()
        with record() as log:
            image = poisson.seamless_clone(source, target, mask, iterations=iterations, method="persistent_bands")
        logs.append(log.counts())
        solver = api._persistent_buffers()[next(iter(api._persistent_buffers()))]
        assert len(calls) == iterations * solver.grid * solver.block  # every thread, once per sweep
        if iterations:
            np.testing.assert_array_equal(image, expected)
    first, again, none = logs
    assert first["launches"] == again["launches"] == none["launches"] == 1
    assert (again["HtoD_count"], again["DtoH_count"], again["allocations"]) == (1, 1, 0)
    assert first["allocations"] == 4  # packed inputs, image, iterate, the bands' boundary rows


def test_the_grid_keeps_to_the_cooperative_limit_and_a_larger_one_is_refused(monkeypatch):
    # As on a GPU with 132 SMs: one band per row would make 3 x 23 blocks, more than the simulator lets a
    # cooperative grid have; the bands grow thicker until the grid fits.
    monkeypatch.setattr(_persistent_buffers, "_sm_count", lambda: 132)
    source, target, mask = poisson.synthetic_pair(23, 9, seed=4, fill=0.7)
    solver = poisson.PersistentSolver(source, target, mask, layout="bands")
    limit = max_cooperative_grid_blocks(solver.block)
    assert 3 * 23 > limit >= solver.grid and solver.grid % 3 == 0
    solver.run(2)
    planes, interior = _reference_planes(source, target, mask, 2)
    np.testing.assert_array_equal(solver.planes()[:, interior], planes[:, interior])
    band_rows, edges = solver.work
    too_many = -(-limit // 3) + 1  # bands of a grid past the limit
    with pytest.raises(CooperativeLaunchError):
        solver.kernel[3 * too_many, solver.block](solver.d_packed, np.int32(1), np.int32(1),
                                                  np.zeros((2, 3, too_many, 2, 9), np.float32),
                                                  np.zeros((23, 9, 3), np.uint8), np.zeros((3, 23, 9), np.float32))


def test_the_plan_spreads_a_classic_crop_over_the_sms():
    # The 333 x 500 cat's crop is 69 x 122: on 132 SMs, bands of 2 rows, 105 blocks of 256 threads.
    band_rows, bands, capacity, threads = _persistent_buffers.band_plan(69, 122, sms=132, threads=256)
    assert (band_rows, bands) == (2, 35) and 3 * bands <= 132
    assert (band_rows + 2) * 124 <= capacity <= 12288
    one_row = _persistent_buffers.band_plan(5, 40, sms=132, threads=64)
    assert one_row[:2] == (1, 5)


def test_a_crop_too_wide_for_the_bands_is_refused():
    with pytest.raises(ValueError, match="layout='grid'"):
        _persistent_buffers.band_plan(3, 4095)
    with pytest.raises(ValueError, match="capacity"):
        kernels.jacobi_banded_kernel(20000, 32)
    with pytest.raises(ValueError, match="threads"):
        kernels.jacobi_banded_kernel(256, 0)
