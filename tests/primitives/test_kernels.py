"""The kernels one launch at a time, and their factories' checks."""

import numpy as np
import pytest
from numba import cuda, float32

from course_lib.primitives import kernels
from course_lib.registry import all_kernels
from course_lib.sim import check


def test_factories_refuse_bad_parameters():
    with pytest.raises(ValueError, match="block"):
        kernels.blelloch_scan_kernel(48)
    with pytest.raises(ValueError, match="dtype"):
        kernels.block_reduce_kernel(32, "float64")
    with pytest.raises(ValueError, match="bins"):
        kernels.histogram_private_kernel(0)


@pytest.mark.parametrize("padded", [False, True])
def test_blelloch_tile_scan_and_totals(padded):
    x = (np.arange(150) % 5).astype(np.float32)
    out, sums = np.zeros(150, np.float32), np.zeros(3, np.float32)
    kernels.blelloch_scan_kernel(32, "float32", padded)[3, 32](x, out, sums)
    for b in range(3):
        tile = x[64 * b:64 * (b + 1)]
        assert np.array_equal(out[64 * b:64 * b + tile.size], np.cumsum(tile) - tile)
        assert sums[b] == tile.sum()


def test_hillis_steele_tile_is_inclusive():
    x = np.ones(40, np.int32)
    out, sums = np.zeros(40, np.int32), np.zeros(2, np.int32)
    kernels.hillis_steele_scan_kernel(32, "int32")[2, 32](x, out, sums)
    assert out.tolist() == list(range(1, 33)) + list(range(1, 9)) and sums.tolist() == [32, 8]


def test_primitives_kernels_are_registered_with_clean_examples():
    specs = [s for s in all_kernels() if s.name.startswith("primitives.")]
    assert len(specs) >= 12
    for spec in specs:
        griddim, blockdim, args = spec.example_launch()
        report = check(spec.get_pyfunc(), griddim, blockdim, *args)
        assert report.ok, (spec.name, report)


@cuda.jit
def _unsynchronised_scan(x, out):
    temp = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    temp[t] = x[t]
    offset = 1
    while offset < 32:
        if t >= offset:
            temp[t] += temp[t - offset]  # in place and without a barrier: reads a neighbour's partial sum
        offset *= 2
    out[t] = temp[t]


def test_a_scan_without_its_barrier_is_a_race():
    report = check(_unsynchronised_scan, 1, 32, np.ones(32, np.float32), np.zeros(32, np.float32))
    assert not report.ok
