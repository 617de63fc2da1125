"""Do the lesson-0 kernels compute what they claim, and are the buggy ones caught?"""

import numpy as np
import pytest

from course_lib import device
from course_lib.sim import check, kernels, profile

pytestmark = pytest.mark.skipif(not device.is_simulator(), reason="the lesson's kernels are checked in the simulator")


def test_whoami_numbers_warps_and_lanes_within_each_block():
    out = np.zeros((2 * 48, 4), np.int32)
    kernels.whoami_kernel[2, 48](out)
    t = np.tile(np.arange(48), 2)
    np.testing.assert_array_equal(out, np.column_stack([np.repeat([0, 1], 48), t, t // 32, t % 32]))


@pytest.mark.parametrize("n", [1, 31, 32, 33, 45])
def test_reverse_reverses_each_block_sized_chunk(n):
    x = np.arange(1, n + 1, dtype=np.float32)
    out = np.zeros_like(x)
    blocks = -(-n // 32)
    kernels.reverse_kernel[blocks, 32](x, out)
    padded = np.zeros(blocks * 32, np.float32)
    padded[:n] = x
    np.testing.assert_array_equal(out, padded.reshape(blocks, 32)[:, ::-1].ravel()[:n])
    assert check(kernels.reverse_kernel, blocks, 32, x, np.zeros_like(x)).ok


def test_reverse_with_early_exit_is_a_barrier_problem_only_for_a_partial_block():
    x = np.arange(64, dtype=np.float32)
    assert check(kernels.reverse_early_exit_kernel, 2, 32, x, np.zeros_like(x)).ok
    report = check(kernels.reverse_early_exit_kernel, 2, 32, x[:40], np.zeros(40, np.float32))
    assert report.kinds() == {"barrier"}


def test_histograms(rng):
    data = rng.integers(0, 8, size=150)
    bins = np.zeros(8, np.int64)
    kernels.histogram_atomic_kernel[3, 64](data, bins)
    np.testing.assert_array_equal(bins, np.bincount(data, minlength=8))
    report = check(kernels.histogram_racy_kernel, 3, 64, data, np.zeros(8, np.int64))
    assert report.kinds() == {"race"} and report.problems[0].array == "bins"


@pytest.mark.parametrize("kernel", [kernels.transpose_tile_kernel, kernels.transpose_padded_kernel])
def test_transposes(kernel, rng):
    a = rng.random((32, 32), dtype=np.float32)
    out = np.zeros_like(a)
    kernel[1, (32, 32)](a, out)
    np.testing.assert_array_equal(out, a.T)


def test_branch_kernels_agree_and_only_one_diverges(rng):
    x = rng.random(64, dtype=np.float32)
    results = {}
    for kernel in (kernels.branch_per_lane_kernel, kernels.branch_per_warp_kernel):
        out = np.zeros_like(x)
        report = profile(kernel, 1, 64, x, out)
        results[kernel] = (out, report.total.simt_efficiency)
    lane_out, lane_eff = results[kernels.branch_per_lane_kernel]
    warp_out, warp_eff = results[kernels.branch_per_warp_kernel]
    up, down = x.copy(), x.copy()
    for _ in range(8):
        up, down = up * np.float32(0.5) + np.float32(1.0), down * np.float32(2.0) - np.float32(1.0)
    i = np.arange(64)
    np.testing.assert_allclose(lane_out, np.where(i % 2 == 0, up, down), rtol=1e-6)
    np.testing.assert_allclose(warp_out, np.where((i // 32) % 2 == 0, up, down), rtol=1e-6)
    assert warp_eff == 1.0 and lane_eff < 0.7  # the branch bodies run at 0.5, the rest at 1


def test_copy_strided_and_warp_sum(rng):
    x = rng.random(64 * 3, dtype=np.float32)
    out = np.zeros(64, np.float32)
    kernels.copy_strided_kernel[2, 32](x, out, 3)
    np.testing.assert_array_equal(out, x[::3])
    total = np.zeros(1, np.float32)
    kernels.warp_sum_kernel[2, 64](x[:128], total)
    assert total[0] == pytest.approx(x[:128].sum(), rel=1e-5)
