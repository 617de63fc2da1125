"""The checker finds nothing in the unit's kernels, and finds the race of a fusion without atomics."""

import numpy as np
import pytest
from numba import cuda

from course_lib.registry import all_kernels
from course_lib.sim import check

SPECS = [s for s in all_kernels() if s.name.startswith("hac.") and s.example is not None]


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_reference_kernel_is_clean(spec):
    grid, block, args = spec.example_launch()
    report = check(spec.get_pyfunc(), grid, block, *args)
    assert report.ok, str(report)


@cuda.jit
def racy_scatter(src, dst, weights, k, acc):
    e = cuda.grid(1)
    if e < weights.shape[0] and src[e] == k:
        acc[dst[e]] += weights[e]  # read-modify-write of a shared slot: the scatter-add race


def test_fusion_without_atomics_is_a_race():
    src = np.array([9, 9, 9, 2], np.int32)
    dst = np.array([2, 4, 2, 9], np.int32)
    report = check(racy_scatter, 1, 32, src, dst, np.ones(4, np.float32), np.int32(9), np.zeros(10, np.float32))
    assert not report.ok
