"""Does the profiler hit the ground truths of coalescing, bank conflicts and divergence exactly?"""

import numpy as np
import pytest
from numba import cuda, float32, int64

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


@cuda.jit
def histogram_shared_then_global(data, bins):
    local = cuda.shared.array(5, int64)
    t = cuda.threadIdx.x
    if t < 5:
        local[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(local, data[i], 1)
    cuda.syncthreads()
    if t < 5:
        cuda.atomic.add(bins, t, local[t])


def test_global_atomics_are_counted_apart_from_shared_ones():
    data = np.arange(50) % 5
    bins = np.zeros(5, np.int64)
    report = profile(histogram_shared_then_global, 2, 32, data, bins)
    np.testing.assert_array_equal(bins, 10)
    assert report.total.atomics == 50 + 2 * 5 and report.total.global_atomics == 2 * 5
    assert report.line("cuda.atomic.add(local").global_atomics == 0
    assert profile(histogram_atomic, 2, 32, data, np.zeros(5, np.int64)).total.global_atomics == 50


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


# ----------------------------------------------------------------------------- span, barriers, shared bytes
@cuda.jit
def one_thread_sums(x, out):
    """Thread 0 of each block sums the whole array; the others only return."""
    t = cuda.threadIdx.x
    if t != 0:
        return
    acc = 0.0
    for k in range(x.size):
        acc += x[k]
    out[cuda.blockIdx.x] = acc


def test_span_counts_the_statements_of_the_busiest_thread_and_warp():
    x = np.ones(10, np.float32)
    report = profile(one_thread_sums, 2, 64, x, np.zeros(2, np.float32))
    # Thread 0: t =, if, acc =, the loop header (counted once), 10 adds, the store = 15 statements;
    # the others: t =, if, return.
    assert report.max_thread_instructions == 15
    assert report.total.active_lanes == 2 * (15 + 63 * 3)
    assert report.blocks == 2 and report.threads == 128 and report.warps == 4
    # Warp 0 of a block issues the 15 instructions of its lane 0 plus its other lanes' return.
    assert report.max_warp_instructions == 16
    assert report.total.warp_instructions == 2 * (16 + 3)  # warp 1: t =, if, return
    assert report.thread_span == pytest.approx(15 * 128 / (2 * (15 + 63 * 3)))
    assert report.warp_span == pytest.approx(16 * 4 / (2 * 19))
    assert report.barriers == 0 and report.barriers_per_block == 0 and report.shared_bytes_per_block == 0


@cuda.jit
def even_copy(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i]


def test_span_of_evenly_shared_work_is_one():
    x = np.arange(128, dtype=np.float32)
    report = profile(even_copy, 2, 64, x, np.zeros(128, np.float32))
    assert report.max_thread_instructions == 3 and report.thread_span == 1.0 and report.warp_span == 1.0


@cuda.jit
def staged_twice(x, out):
    """Two shared tiles (64 float32 + 16 x 2 float64 = 512 bytes), three barriers per block,
    one syncwarp per warp."""
    tile = cuda.shared.array(64, float32)
    pairs = cuda.shared.array((16, 2), np.float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    if t < 16:
        pairs[t, 0] = tile[t] + tile[t + 16]
        pairs[t, 1] = 0
    cuda.syncthreads()
    cuda.syncwarp()
    if t == 0:
        out[cuda.blockIdx.x] = pairs[0, 0]
    cuda.syncthreads()


def test_barriers_syncwarps_and_shared_bytes_per_block_are_counted():
    x = np.arange(150, dtype=np.float32)  # 3 blocks of 64, the last one partial
    out = np.zeros(3, np.float32)
    report = profile(staged_twice, 3, 64, x, out)
    assert report.shared_bytes_per_block == 64 * 4 + 16 * 2 * 8
    assert report.barriers == 9 and report.max_block_barriers == 3 and report.barriers_per_block == 3
    assert report.syncwarps == 3 * 2
    np.testing.assert_array_equal(out, [x[0] + x[16], x[64] + x[80], x[128] + x[144]])
    metrics = report.launch_metrics()
    assert metrics["shared_bytes_per_block"] == 512 and metrics["threads_per_block"] == 64


@cuda.jit
def dynamic_tile(x, out):
    tile = cuda.shared.array(0, float32)
    t = cuda.threadIdx.x
    tile[t] = x[t]
    cuda.syncthreads()
    out[t] = tile[31 - t]


def test_dynamic_shared_memory_counts_the_launch_bytes_once():
    x = np.arange(32, dtype=np.float32)
    out = np.zeros(32, np.float32)
    report = profile(dynamic_tile, 1, 32, x, out, sharedmem=32 * 4)
    assert report.shared_bytes_per_block == 128 and report.barriers == 1
    np.testing.assert_array_equal(out, x[::-1])


# ----------------------------------------------------------------------------- a sample of the blocks
@cuda.jit
def doubled(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = 2 * x[i]


@cuda.jit
def first_warp_does_the_block(x, out):
    """The block's elements all copied by its first warp while the others wait at the barrier."""
    t = cuda.threadIdx.x
    base = cuda.blockIdx.x * cuda.blockDim.x
    if t < 32:
        for k in range(t, cuda.blockDim.x, 32):
            if base + k < x.size:
                out[base + k] = 2 * x[base + k]
                out[base + k] += 0
    cuda.syncthreads()


def test_a_sample_of_blocks_runs_only_those_blocks_and_counts_them_alone():
    x = np.arange(1, 1001, dtype=np.float32)
    whole = profile(doubled, 8, 128, x, np.zeros_like(x))
    out = np.zeros_like(x)
    sample = profile(doubled, 8, 128, x, out, blocks=[3, (7,)])
    assert sample.sampled and not whole.sampled
    assert sample.blocks == 2 and whole.blocks == 8
    written = np.flatnonzero(out)
    np.testing.assert_array_equal(written, np.r_[384:512, 896:1000])  # block 3 and the partial block 7
    np.testing.assert_array_equal(out[written], 2 * x[written])
    assert sample.total.global_load_requests == 4 + 4  # 4 warps each; block 7's last warps still load
    # Block 3: 4 full warps of 4 sectors; block 7 holds 104 elements: 3 full warps and one of 8 lanes (1 sector).
    assert sample.total.global_load_sectors == 16 + 13 and whole.total.global_load_sectors == 7 * 16 + 13


@pytest.mark.parametrize("blocks, message", [([8], "not in the grid"), ([1, 1], "given twice"),
                                             ([], "no block to run"), ([(0, 1)], "not in the grid")])
def test_a_sample_outside_the_grid_or_repeated_is_refused(blocks, message):
    x = np.ones(64, np.float32)
    with pytest.raises(ValueError, match=message):
        profile(doubled, 8, 8, x, np.zeros_like(x), blocks=blocks)


@cuda.jit
def grid_synced(x):
    cuda.cg.this_grid().sync()
    x[cuda.grid(1)] += 1


def test_a_sample_of_a_grid_synced_kernel_is_refused():
    with pytest.raises(ValueError, match="syncs its grid"):
        profile(grid_synced, 4, 32, np.zeros(128, np.float32), blocks=[1])


def test_warp_share_is_one_when_warps_share_the_block_and_grows_when_one_warp_does_it():
    x = np.arange(1, 4 * 256 + 1, dtype=np.float32)
    even = profile(doubled, 4, 256, x, np.zeros_like(x))
    lone = profile(first_warp_does_the_block, 4, 256, x, np.zeros_like(x), blocks=[0, 2])
    assert even.warp_share == pytest.approx(1.0)
    assert lone.warp_share > 3  # 8 warps: the first runs 8 turns of a 3-line loop, the others 2 lines
    assert even.launch_metrics()["warp_share"] == even.warp_share
    one_warp = profile(doubled, 4, 32, x[:128], np.zeros(128, np.float32))
    assert one_warp.warp_share == 1.0


@cuda.jit
def first_warp_does_odd_blocks(x, out):
    """Every warp doubles its own elements in even blocks; in odd blocks the first warp does the block's."""
    t = cuda.threadIdx.x
    base = cuda.blockIdx.x * cuda.blockDim.x
    if cuda.blockIdx.x % 2 == 0:
        if base + t < x.size:
            out[base + t] = 2 * x[base + t]
    elif t < 32:
        for k in range(t, cuda.blockDim.x, 32):
            if base + k < x.size:
                out[base + k] = 2 * x[base + k]
    cuda.syncthreads()


def test_the_worst_block_shows_one_warp_doing_the_work_in_every_other_block_and_no_partial_block():
    x = np.arange(1, 3 * 128 + 41, dtype=np.float32)  # 4 blocks of 4 warps, the last one with 40 elements
    out = np.zeros_like(x)
    even = profile(doubled, 4, 128, x, out)
    assert even.warp_share == pytest.approx(1.0) and even.worst_warp_share == pytest.approx(1.0)
    np.testing.assert_array_equal(out, 2 * x)
    hidden = profile(first_warp_does_odd_blocks, 4, 128, x, out, blocks=[0, 1, 2])
    assert hidden.warp_share == pytest.approx(1.0)  # the median of three blocks, two of them even
    # Block 1: its first warp runs 4 turns of a 3-line loop while the three others run their 5 lines and wait.
    assert hidden.worst_warp_share > 1.8 and hidden.launch_metrics()["worst_warp_share"] == hidden.worst_warp_share
