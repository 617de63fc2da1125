"""Do the simulator's warp primitives give what a GPU gives?

Expected values are computed with NumPy from the CUDA semantics (warps of 32 lanes
numbered by linear thread id, x fastest; shuffles of width 32 keep the caller's value
when the source lane is past the warp's edge).
"""

import numpy as np
import pytest
from numba import cuda

from course_lib import device
from course_lib.sim import FULL_MASK, WarpError

pytestmark = pytest.mark.skipif(not device.is_simulator(), reason="tests the simulator's own warp primitives")


@cuda.jit
def warp_sum_kernel(x, out):
    i = cuda.grid(1)
    v = x[i]
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(FULL_MASK, v, offset)
        offset //= 2
    if cuda.laneid == 0:
        out[i // 32] = v


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_shuffle_reduction_sums_each_warp(dtype, rng):
    x = rng.integers(-50, 50, size=128).astype(dtype)
    out = np.zeros(4, dtype)
    warp_sum_kernel[2, 64](x, out)
    np.testing.assert_array_equal(out, x.reshape(4, 32).sum(axis=1))


@cuda.jit
def shuffle_modes_kernel(x, delta, down, up, xor, bcast):
    i = cuda.grid(1)
    v = x[i]
    down[i] = cuda.shfl_down_sync(FULL_MASK, v, delta)
    up[i] = cuda.shfl_up_sync(FULL_MASK, v, delta)
    xor[i] = cuda.shfl_xor_sync(FULL_MASK, v, delta)
    bcast[i] = cuda.shfl_sync(FULL_MASK, v, delta + 32)  # source lanes wrap modulo the width 32


@pytest.mark.parametrize("delta", [1, 5, 16, 31])
def test_shuffle_modes_match_cuda_semantics(delta):
    x = np.arange(64, dtype=np.int32) * 10
    outs = [np.zeros(64, np.int32) for _ in range(4)]
    shuffle_modes_kernel[1, 64](x, delta, *outs)
    lane = np.arange(64) % 32
    base = np.arange(64) - lane
    down = np.where(lane + delta < 32, x[base + np.minimum(lane + delta, 31)], x)
    up = np.where(lane - delta >= 0, x[base + np.maximum(lane - delta, 0)], x)
    xor = x[base + (lane ^ delta)]
    bcast = x[base + delta % 32]
    for got, want in zip(outs, (down, up, xor, bcast)):
        np.testing.assert_array_equal(got, want)


@cuda.jit
def butterfly_kernel(x, out):
    i = cuda.grid(1)
    v = x[i]
    mask = 1
    while mask < 32:
        v += cuda.shfl_xor_sync(FULL_MASK, v, mask)
        mask *= 2
    out[i] = v


def test_xor_butterfly_gives_every_lane_the_total(rng):
    x = rng.integers(0, 100, size=96).astype(np.int64)
    out = np.zeros_like(x)
    butterfly_kernel[3, 32](x, out)
    np.testing.assert_array_equal(out, np.repeat(x.reshape(3, 32).sum(axis=1), 32))


@cuda.jit
def warp_scan_kernel(x, out):
    i = cuda.grid(1)
    lane = cuda.laneid
    v = x[i]
    d = 1
    while d < 32:
        other = cuda.shfl_up_sync(FULL_MASK, v, d)
        if lane >= d:
            v += other
        d *= 2
    out[i] = v


def test_shfl_up_scan_is_an_inclusive_prefix_sum_per_warp(rng):
    x = rng.integers(-9, 9, size=64).astype(np.int32)
    out = np.zeros_like(x)
    warp_scan_kernel[1, 64](x, out)
    np.testing.assert_array_equal(out, np.cumsum(x.reshape(2, 32), axis=1).ravel())


@cuda.jit
def vote_kernel(x, ballot, all_, any_, eq, count):
    i = cuda.grid(1)
    p = x[i] > 0
    ballot[i] = cuda.ballot_sync(FULL_MASK, p)
    all_[i] = cuda.all_sync(FULL_MASK, p)
    any_[i] = cuda.any_sync(FULL_MASK, p)
    eq[i] = cuda.eq_sync(FULL_MASK, p)
    count[i] = cuda.popc(cuda.ballot_sync(FULL_MASK, p))


@pytest.mark.parametrize("pattern", ["random", "all", "none", "lane31"])
def test_votes_match_cuda_semantics(pattern, rng):
    x = {
        "random": rng.integers(-1, 2, size=64),
        "all": np.ones(64),
        "none": np.zeros(64),
        "lane31": (np.arange(64) % 32 == 31).astype(int),
    }[pattern].astype(np.int32)
    outs = [np.zeros(64, np.int64) for _ in range(5)]
    vote_kernel[1, 64](x, *outs)
    p = (x > 0).reshape(2, 32)
    # Numba types the ballot as int32 on a GPU: negative when lane 31 votes true.
    bits = (p * (1 << np.arange(32, dtype=np.int64))).sum(axis=1).astype(np.uint32).view(np.int32)
    want = [bits, p.all(axis=1), p.any(axis=1), p.all(axis=1) | ~p.any(axis=1), p.sum(axis=1)]
    for got, w in zip(outs, want):
        np.testing.assert_array_equal(got, np.repeat(w.astype(np.int64), 32))


@cuda.jit
def partial_mask_kernel(x, out, active):
    i = cuda.grid(1)
    lane = cuda.laneid
    if lane < 16:
        # Only the lower half-warp takes part: its mask names exactly those lanes.
        v = x[i]
        offset = 8
        while offset > 0:
            v += cuda.shfl_down_sync(0x0000FFFF, v, offset)
            offset //= 2
        out[i] = v
        active[i] = cuda.ballot_sync(0x0000FFFF, True)
    else:
        out[i] = cuda.shfl_xor_sync(0xFFFF0000, x[i], 1)
        active[i] = cuda.activemask()


def test_partial_masks_involve_only_the_named_lanes():
    x = np.arange(32, dtype=np.int64)
    out = np.zeros(32, np.int64)
    active = np.zeros(32, np.int64)
    partial_mask_kernel[1, 32](x, out, active)
    assert out[0] == x[:16].sum()
    np.testing.assert_array_equal(out[16:], x[16:] ^ 1)
    np.testing.assert_array_equal(active[:16], 0xFFFF)
    np.testing.assert_array_equal(active[16:], 0xFFFF0000)


@cuda.jit
def match_and_syncwarp_kernel(x, any_out, all_out, lt_out):
    i = cuda.grid(1)
    any_out[i] = cuda.match_any_sync(FULL_MASK, x[i])
    mask, same = cuda.match_all_sync(FULL_MASK, x[i] // 100)
    all_out[i] = mask if same else -1
    cuda.syncwarp(FULL_MASK)
    lt_out[i] = cuda.lanemask_lt()


@cuda.jit
def tail_warp_sum_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        # The usual guard for a partial last warp: shuffle among the lanes still here.
        mask = cuda.activemask()
        v = x[i]
        offset = 16
        while offset > 0:
            other = cuda.shfl_down_sync(mask, v, offset)
            if cuda.laneid + offset < 32 and (mask >> (cuda.laneid + offset)) & 1:
                v += other
            offset //= 2
        if cuda.laneid == 0:
            out[i // 32] = v


@pytest.mark.parametrize("n", [1, 31, 33, 40])
def test_activemask_names_the_lanes_that_took_the_branch(n, rng):
    x = rng.integers(0, 10, size=n).astype(np.int64)
    out = np.zeros(2, np.int64)
    tail_warp_sum_kernel[1, 64](x, out)
    np.testing.assert_array_equal(out[: (n + 31) // 32], [x[:32].sum(), x[32:].sum()][: (n + 31) // 32])


@cuda.jit
def ballot_into_int32(x, out):
    i = cuda.grid(1)
    out[i] = cuda.ballot_sync(FULL_MASK, x[i] > 0)


def test_a_ballot_with_lane_31_fits_an_int32_array_as_on_a_gpu():
    out = np.zeros(32, np.int32)
    ballot_into_int32[1, 32](np.ones(32, np.int32), out)
    np.testing.assert_array_equal(out, -1)


def test_match_and_lanemask():
    x = (np.arange(32) % 3).astype(np.int32)
    outs = [np.zeros(32, np.int64) for _ in range(3)]
    match_and_syncwarp_kernel[1, 32](x, *outs)
    lanes = np.arange(32)
    for lane in range(32):
        assert outs[0][lane] == np.uint32(sum(1 << j for j in lanes[x == x[lane]])).view(np.int32)
    np.testing.assert_array_equal(outs[1], np.uint32(FULL_MASK).view(np.int32))  # -1, as int32 on a GPU
    np.testing.assert_array_equal(outs[2], (1 << lanes) - 1)


@cuda.jit
def lanes_2d_kernel(warp, lane):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    # The lane that holds (tx, ty) sends its linear id; lanes follow x fastest.
    linear = ty * cuda.blockDim.x + tx
    warp[ty, tx] = cuda.shfl_sync(FULL_MASK, linear, 0) // 32
    lane[ty, tx] = cuda.laneid


def test_lanes_of_a_2d_block_are_numbered_x_fastest():
    warp = np.zeros((8, 8), np.int32)
    lane = np.zeros((8, 8), np.int32)
    lanes_2d_kernel[1, (8, 8)](warp, lane)
    linear = np.arange(64).reshape(8, 8)
    np.testing.assert_array_equal(warp, linear // 32)
    np.testing.assert_array_equal(lane, linear % 32)


@cuda.jit
def syncthreads_vote_kernel(x, out):
    i = cuda.threadIdx.x
    p = 1 if x[i] > 0 else 0  # an integer: numba-cuda's syncthreads_count/and/or refuse a bool
    out[0] = cuda.syncthreads_count(p)
    out[1] = cuda.syncthreads_and(p)
    out[2] = cuda.syncthreads_or(p)


@pytest.mark.parametrize("values", [[1, 0, 1, 1, 0], [1, 1, 1, 1, 1], [0, 0, 0, 0, 0]])
def test_syncthreads_count_and_or(values):
    x = np.array(values * 10, dtype=np.int32)
    out = np.zeros(3, np.int64)
    syncthreads_vote_kernel[1, x.size](x, out)
    p = x > 0
    np.testing.assert_array_equal(out, [p.sum(), p.all(), p.any()])


# Exited lanes do not take part; an alive lane that never arrives is an error, never a hang


@cuda.jit
def early_exit_shuffle_kernel(x, out):
    i = cuda.grid(1)
    if i == 3:
        return
    out[i] = cuda.shfl_down_sync(FULL_MASK, x[i], 1)


def test_lanes_that_exited_before_a_full_mask_shuffle_do_not_take_part():
    """CUDA guide: only the non-exited threads named in the mask take part."""
    x = np.arange(32, dtype=np.float32) * 10
    out = np.full(32, -1, np.float32)
    early_exit_shuffle_kernel[1, 32](x, out)
    lanes = np.array([lane for lane in range(31) if lane not in (2, 3)])
    np.testing.assert_array_equal(out[lanes], x[lanes + 1])  # lane 2 reads the exited lane 3: undefined
    assert out[3] == -1 and out[31] == x[31]


@cuda.jit
def tail_guarded_ballot_kernel(x, out):
    i = cuda.grid(1)
    if i >= x.size:
        return
    out[i] = cuda.popc(cuda.ballot_sync(FULL_MASK, x[i] > 0))


@pytest.mark.parametrize("n, block", [(40, 64), (16, 16), (33, 40), (64, 64)])
def test_a_tail_guarded_full_mask_ballot_counts_the_remaining_lanes(n, block):
    """After ``if i >= n: return`` (and in a partial last warp) the ballot covers the lanes left."""
    x = (np.arange(n) % 3 != 0).astype(np.int32)
    out = np.zeros(n, np.int64)
    tail_guarded_ballot_kernel[1, block](x, out)
    want = [x[w * 32:(w + 1) * 32].sum() for w in range((n + 31) // 32)]
    np.testing.assert_array_equal(out, np.repeat(want, 32)[:n])


@cuda.jit
def shuffle_vs_barrier_kernel(x, out):
    i = cuda.grid(1)
    if i < 16:
        out[i] = cuda.shfl_down_sync(FULL_MASK, x[i], 1)
    else:
        cuda.syncthreads()


@cuda.jit
def mask_without_self_kernel(x, out):
    i = cuda.grid(1)
    out[i] = cuda.shfl_down_sync(0x1, x[i], 1)


@cuda.jit
def vote_vs_other_vote_kernel(x, out):
    i = cuda.grid(1)
    if i < 16:
        out[i] = cuda.ballot_sync(FULL_MASK, x[i] > 0)
    else:
        out[i] = cuda.any_sync(FULL_MASK, x[i] > 0)


@pytest.mark.parametrize(
    "kernel, block, message",
    [
        (shuffle_vs_barrier_kernel, 32, "lane 16 waits at syncthreads"),
        (mask_without_self_kernel, 32, "does not name the lane itself"),
        (vote_vs_other_vote_kernel, 32, "different warp operations with the same mask"),
    ],
)
def test_an_alive_lane_that_never_arrives_is_an_error(kernel, block, message):
    x = np.zeros(block, np.float32)
    out = np.zeros(block, np.float32)
    with pytest.raises(WarpError, match=message):
        kernel[1, block](x, out)


def test_the_simulator_keeps_working_after_an_error():
    x = np.ones(32, np.float32)
    with pytest.raises(WarpError):
        shuffle_vs_barrier_kernel[1, 32](x, np.zeros(32, np.float32))
    out = np.zeros(1, np.float32)
    warp_sum_kernel[1, 32](x, out)
    assert out[0] == 32


@cuda.jit
def fails_while_others_wait(x, out):
    t = cuda.threadIdx.x
    if t == 5:
        out[t] = x[t + 100]  # IndexError in plain launches, as in the stock simulator
    cuda.syncthreads()
    out[t] = x[t]


def test_an_error_in_one_thread_names_it_and_unwinds_the_waiting_ones():
    x = np.arange(32, dtype=np.float32)
    with pytest.raises(IndexError, match=r"tid=\[5, 0, 0\] ctaid=\[0, 0, 0\]"):
        fails_while_others_wait[1, 32](x, np.zeros(32, np.float32))
    out = np.zeros(32, np.float32)
    warp_sum_kernel[1, 32](x, out)
    assert out[0] == x.sum()
