"""Does the profiler hit the ground truths of coalescing, bank conflicts and divergence exactly?"""

import numpy as np
import pytest
from numba import cuda, float32

from course_lib import device
from course_lib.sim import profile

pytestmark = pytest.mark.skipif(not device.is_simulator(), reason="runs the profiler in this process")


@cuda.jit
def strided_copy(x, out, stride):
    i = cuda.grid(1)
    out[i] = x[i * stride]


@pytest.mark.parametrize("stride, sectors", [(1, 4), (2, 8), (4, 16), (8, 32), (32, 32)])
def test_global_sectors_per_request_follow_the_stride(stride, sectors):
    x = np.arange(64 * stride, dtype=np.float32)
    out = np.zeros(64, np.float32)
    report = profile(strided_copy, 2, 32, x, out, stride)
    row = report.line("out[i] = x[i * stride]")
    assert row.global_load_requests == 2 and row.global_store_requests == 2
    assert row.load_sectors_per_request == sectors
    assert row.store_sectors_per_request == 4  # 32 consecutive float32
    assert row.global_load_bytes == row.global_store_bytes == 64 * 4
    np.testing.assert_array_equal(out, x[::stride][:64])


@cuda.jit
def copy_float64(x, out):
    i = cuda.grid(1)
    out[i] = x[i]


def test_32_consecutive_float64_are_8_sectors():
    x = np.arange(32.0)
    report = profile(copy_float64, 1, 32, x, np.zeros(32))
    assert report.line("out[i] = x[i]").load_sectors_per_request == 8


@cuda.jit
def tile_column_read(out, padded):
    tile = cuda.shared.array((32, 32), float32)
    tile_padded = cuda.shared.array((32, 33), float32)
    t = cuda.threadIdx.x
    for k in range(32):
        tile[t, k] = k
        tile_padded[t, k] = k
    cuda.syncthreads()
    if padded:
        out[t] = tile_padded[t, 5]  # column: lane t reads word 33 t + 5, banks all differ
    else:
        out[t] = tile[t, 5]  # column: lane t reads word 32 t + 5, all in bank 5
    shared_row = tile[5, t]  # row: consecutive words, one per bank
    broadcast = tile[0, 0]  # every lane reads the same word
    out[t] += shared_row + broadcast


@pytest.mark.parametrize("padded, degree", [(0, 32), (1, 1)])
def test_column_of_a_32x32_tile_is_a_32_way_conflict_and_padding_removes_it(padded, degree):
    report = profile(tile_column_read, 1, 32, np.zeros(32, np.float32), padded)
    row = report.line("out[t] = tile_padded[t, 5]" if padded else "out[t] = tile[t, 5]")
    assert row.shared_requests == 1 and row.shared_wavefronts == degree
    assert report.line("shared_row = tile[5, t]").bank_conflict_degree == 1
    broadcast = report.line("broadcast = tile[0, 0]")
    assert broadcast.shared_requests == 1 and broadcast.bank_conflict_degree == 1
    assert report.line("tile[t, k] = k").bank_conflict_degree == 32  # row-wise writes of a column-major walk


@cuda.jit
def triangle_loop(out):
    t = cuda.threadIdx.x
    acc = 0
    for k in range(t):
        acc += k  # lane t runs this t times
    out[t] = acc


def test_lane_i_looping_i_times_gives_the_matching_simt_efficiency():
    out = np.zeros(32, np.int64)
    report = profile(triangle_loop, 1, 32, out)
    body = report.line("acc += k")
    # Execution k (1-based) of the body is shared by the lanes t >= k: 32 - k of them.
    assert body.warp_instructions == 31
    assert body.active_lanes == sum(32 - k for k in range(1, 32))
    assert body.simt_efficiency == pytest.approx(496 / (31 * 32))
    assert report.line("out[t] = acc").simt_efficiency == 1.0
    np.testing.assert_array_equal(out, np.arange(32) * (np.arange(32) - 1) // 2)


@cuda.jit
def half_warp_branch(out):
    t = cuda.threadIdx.x
    if t % 2 == 0:
        out[t] = 1.0
    else:
        out[t] = 2.0


def test_divergent_branch_runs_each_side_at_half_efficiency():
    report = profile(half_warp_branch, 1, 64, np.zeros(64))
    assert report.line("out[t] = 1.0").simt_efficiency == 0.5
    assert report.line("out[t] = 2.0").warp_instructions == 2  # one per warp
    assert report.line("out[t] = 1.0").store_sectors_per_request == 8  # 16 float64 spread over 256 bytes


@cuda.jit
def half_warp_shuffle_sum(x, out):
    i = cuda.grid(1)
    v = x[i]
    if cuda.laneid < 16:  # one half of each warp sums its 16 values, the other half idles
        offset = 8
        while offset > 0:
            v += cuda.shfl_down_sync(0xFFFF, v, offset)
            offset //= 2
    out[i] = v


def test_shuffles_are_counted_once_per_warp_whatever_the_lanes_taking_part():
    x = np.arange(96, dtype=np.float32)
    out = np.zeros(96, np.float32)
    report = profile(half_warp_shuffle_sum, 1, 96, x, out)
    assert report.line("cuda.shfl_down_sync").shuffles == 3 * 4  # 3 warps, 4 steps each
    assert report.total.shuffles == 12 and report.total.atomics == 0
    assert report.line("out[i] = v").shuffles == 0
    assert out[0] == x[:16].sum() and out[32] == x[32:48].sum()
    assert "shuffles" in str(report)


@cuda.jit
def histogram_atomic(data, bins):
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(bins, data[i], 1)


def test_atomics_are_counted_per_lane_and_totals_add_up():
    data = np.arange(50) % 5
    bins = np.zeros(5, np.int64)
    report = profile(histogram_atomic, 2, 32, data, bins)
    assert report.line("cuda.atomic.add").atomics == 50
    assert report.total.atomics == 50
    assert report.total.global_load_requests == sum(r.global_load_requests for r in report.lines)
    np.testing.assert_array_equal(bins, 10)
    assert "total" in str(report) and "<table>" in report._repr_html_()
    with pytest.raises(ValueError, match="no executed line"):
        report.line("not in the kernel")
