"""The simulator tells the truth: CUDA semantics, each as a buggy kernel and its fixed twin.

Each section pairs a kernel with a defect (which ``check`` must report, with the right
kind and line) with its fix (which must run, give the right answer and check clean):
fair scheduling of spinning threads, exited lanes in warp operations, races that a
partial syncwarp, aliased dynamic shared arrays or a mixed plain/atomic access hide,
negative indices as Numba compiles them, profiler and recorder figures, state left
behind by a debug launch, and reads of memory or lanes that hold nothing defined.
"""

import os
import re
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from numba import cuda, float32, float64, int32

from course_lib import device
from course_lib.sim._record import Wait
from course_lib.sim import FULL_MASK, check, profile, record
from course_lib.sim._record import Launch, Transfer

from .test_check import assert_flags, line_of

pytestmark = pytest.mark.skipif(not device.is_simulator(), reason="tests the simulator's own semantics")


# 1. Fair scheduling: a thread spinning on a flag that another warp sets ends --------------


@cuda.jit
def spin_on_plain_flag(flag, out):
    t = cuda.threadIdx.x
    if t == 0:
        while flag[0] == 0:  # BUG: a plain load; the compiler may hoist it out of the loop
            pass
        out[0] = 1
    if t == 63:  # another warp, and the last thread to start
        flag[0] = 1


@cuda.jit
def spin_on_atomic_flag(flag, out):
    t = cuda.threadIdx.x
    if t == 0:
        while cuda.atomic.add(flag, 0, 0) == 0:  # an atomic load each time round
            pass
        out[0] = 1
    if t == 63:
        cuda.atomic.exch(flag, 0, 1)


@cuda.jit(device=True)
def wait_for(flag):
    while cuda.atomic.cas(flag, 0, 1, 1) == 0:
        pass


@cuda.jit
def spin_in_a_device_function(flag, out):
    t = cuda.threadIdx.x
    if t == 5:
        wait_for(flag)
        out[0] = 1
    if t == 40:
        cuda.atomic.exch(flag, 0, 1)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("kernel", [spin_on_plain_flag, spin_on_atomic_flag, spin_in_a_device_function])
def test_a_thread_spinning_on_a_flag_set_by_another_warp_terminates(kernel):
    flag, out = np.zeros(1, np.int32), np.zeros(1, np.int32)
    kernel[1, 64](flag, out)  # on the old scheduler thread 0 never gave the baton back
    assert out[0] == 1 and flag[0] == 1


@pytest.mark.timeout(120)
def test_spinning_on_a_plain_load_is_a_race_and_an_atomic_spin_is_clean():
    report = check(spin_on_plain_flag, 1, 64, np.zeros(1, np.int32), np.zeros(1, np.int32))
    assert_flags(report, "race", spin_on_plain_flag, "while flag[0] == 0", "flag[0] = 1", array="flag")
    for seed in (None, 1, 2):
        out = np.zeros(1, np.int32)
        report = check(spin_on_atomic_flag, 1, 64, np.zeros(1, np.int32), out, seed=seed)
        assert report.ok and out[0] == 1, str(report)


# 2. Tail-guarded warp operations: exited lanes do not take part ----------------------------


@cuda.jit
def tail_guarded_butterfly(x, out, width):
    i = cuda.grid(1)
    if i >= x.size:
        return
    v = x[i]
    mask = 1
    while mask < width:
        v += cuda.shfl_xor_sync(FULL_MASK, v, mask)
        mask *= 2
    out[i] = v
    out[i] += cuda.popc(cuda.ballot_sync(FULL_MASK, True)) * 1000


@cuda.jit
def tail_lanes_skip_the_shuffle(x, out):
    i = cuda.grid(1)
    if i < x.size:  # BUG: the lanes past the end are alive and wait at the barrier instead
        out[i] = cuda.shfl_xor_sync(FULL_MASK, x[i], 1)
    cuda.syncthreads()


@pytest.mark.parametrize("n, block", [(40, 64), (40, 40), (8, 8)])
def test_after_a_tail_return_the_remaining_lanes_shuffle_and_vote_among_themselves(n, block):
    """n = 40: warp 1 keeps lanes 0-7 (returned, or missing from a partial warp of 40 threads)."""
    x = np.arange(n, dtype=np.int64)
    out = np.zeros(n, np.int64)
    report = check(tail_guarded_butterfly, 1, block, x, out, 8)
    assert report.ok, str(report)
    groups = x.reshape(-1, 8).sum(axis=1)
    lanes_left = [min(32, n - 32 * w) for w in range(-(-n // 32))]
    np.testing.assert_array_equal(out, np.repeat(groups, 8) + 1000 * np.repeat(lanes_left, 32)[:n])


def test_reading_an_exited_lane_is_reported_and_an_alive_absent_lane_is_an_error():
    x = np.arange(40, dtype=np.int64)
    report = check(tail_guarded_butterfly, 1, 64, x, np.zeros(40, np.int64), 16)  # lane 0 of warp 1 reads lane 8
    p = assert_flags(report, "warp", tail_guarded_butterfly, "cuda.shfl_xor_sync(FULL_MASK, v, mask)")
    assert re.search(r"lane [0-7] of warp 1 .* reads lane (8|9|1[0-5]), which has exited", p.message), p.message
    assert "undefined" in p.message and p.count == 8
    report = check(tail_lanes_skip_the_shuffle, 1, 64, x, np.zeros(40, np.int64))
    p = assert_flags(report, "warp", tail_lanes_skip_the_shuffle, "cuda.shfl_xor_sync(FULL_MASK, x[i], 1)")
    assert "lane 8 waits at syncthreads" in p.message


# 3a. A syncwarp orders only the lanes of its mask --------------------------------------------


@cuda.jit
def half_warp_syncwarp_then_read_across(out):
    s = cuda.shared.array(32, int32)
    t = cuda.threadIdx.x
    s[t] = t
    if t < 16:
        cuda.syncwarp(0x0000FFFF)  # BUG: orders the lower half only, then reads the upper half
    out[t] = s[31 - t]


@cuda.jit
def full_warp_syncwarp_then_read_across(out):
    s = cuda.shared.array(32, int32)
    t = cuda.threadIdx.x
    s[t] = t
    cuda.syncwarp(FULL_MASK)
    out[t] = s[31 - t]


@cuda.jit
def half_warp_syncwarp_then_read_within(out):
    s = cuda.shared.array(32, int32)
    t = cuda.threadIdx.x
    s[t] = t
    if t < 16:
        cuda.syncwarp(0x0000FFFF)
        out[t] = s[15 - t]  # only lanes of the mask: ordered


def test_a_partial_mask_syncwarp_orders_only_the_lanes_in_its_mask():
    report = check(half_warp_syncwarp_then_read_across, 1, 32, np.zeros(32, np.int32))
    p = assert_flags(report, "race", half_warp_syncwarp_then_read_across, "out[t] = s[31 - t]", "s[t] = t",
                     array="s")
    assert "syncwarp naming both lanes" in p.message
    for kernel in (full_warp_syncwarp_then_read_across, half_warp_syncwarp_then_read_within):
        out = np.zeros(32, np.int32)
        report = check(kernel, 1, 32, out)
        assert report.ok, str(report)
    np.testing.assert_array_equal(out[:16], 15 - np.arange(16))


# 3b. Dynamic shared arrays are one buffer -------------------------------------------------------


@cuda.jit
def two_dynamic_arrays(x, y, out):
    a = cuda.shared.array(0, float32)
    b = cuda.shared.array(0, float32)  # BUG: the same memory as a
    t = cuda.threadIdx.x
    n = cuda.blockDim.x
    a[t] = x[t]
    b[n - 1 - t] = y[t]
    cuda.syncthreads()
    out[t] = a[t] + b[t]


@cuda.jit
def one_dynamic_array_split(x, y, out):
    dynamic = cuda.shared.array(0, float32)
    n = cuda.blockDim.x
    a = dynamic[:n]
    b = dynamic[n:]
    t = cuda.threadIdx.x
    a[t] = x[t]
    b[n - 1 - t] = y[t]
    cuda.syncthreads()
    out[t] = a[t] + b[t]


def test_dynamic_shared_arrays_alias_one_buffer():
    x = np.arange(32, dtype=np.float32)
    y = 100 * np.arange(32, dtype=np.float32)
    report = check(two_dynamic_arrays, 1, 32, x, y, np.zeros(32, np.float32), sharedmem=2 * 32 * 4)
    assert_flags(report, "race", two_dynamic_arrays, "b[n - 1 - t] = y[t]", "a[t] = x[t]")
    out = np.zeros(32, np.float32)
    report = check(one_dynamic_array_split, 1, 32, x, y, out, sharedmem=2 * 32 * 4)
    assert report.ok, str(report)
    np.testing.assert_array_equal(out, x + y[::-1])


# 3c. An atomic and a plain access to one address race -----------------------------------------

NBINS = 8


@cuda.jit
def shared_histogram_unsynced_zeroing(data, bins):
    local = cuda.shared.array(NBINS, int32)
    t = cuda.threadIdx.x
    if t < NBINS:
        local[t] = 0
    # BUG: no syncthreads: a fast thread's atomic.add can land before the bin is zeroed
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(local, data[i], 1)
    cuda.syncthreads()
    if t < NBINS:
        cuda.atomic.add(bins, t, local[t])


@cuda.jit
def shared_histogram(data, bins):
    local = cuda.shared.array(NBINS, int32)
    t = cuda.threadIdx.x
    if t < NBINS:
        local[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(local, data[i], 1)
    cuda.syncthreads()
    if t < NBINS:
        cuda.atomic.add(bins, t, local[t])


def test_zeroing_a_shared_histogram_without_a_barrier_races_with_the_atomics():
    data = np.random.default_rng(5).integers(0, NBINS, size=100)
    report = check(shared_histogram_unsynced_zeroing, 2, 64, data, np.zeros(NBINS, np.int32))
    p = assert_flags(report, "race", shared_histogram_unsynced_zeroing, "local[t] = 0",
                     "cuda.atomic.add(local, data[i], 1)", array="local")
    assert "atomic" in p.message
    bins = np.zeros(NBINS, np.int32)
    report = check(shared_histogram, 2, 64, data, bins)
    assert report.ok, str(report)
    np.testing.assert_array_equal(bins, np.bincount(data, minlength=NBINS))


# 4. Negative indices wrap around, on a GPU too ------------------------------------------------


@cuda.jit
def shift_right_unguarded(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i - 1]


@cuda.jit
def shift_right_guarded(x, out):
    i = cuda.grid(1)
    if 0 < i < x.size:
        out[i] = x[i - 1]


@cuda.jit
def stencil_2d_unguarded(a, out):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        out[i, j] = a[i, j - 1]


def test_a_negative_index_reads_the_other_end_and_is_reported_with_the_wrapped_element():
    x = np.arange(1.0, 9.0)
    out = np.zeros_like(x)
    report = check(shift_right_unguarded, 1, 8, x, out)
    p = assert_flags(report, "negative-index", shift_right_unguarded, "out[i] = x[i - 1]", array="x")
    assert p.index == (-1,) and "x[7]" in p.message
    np.testing.assert_array_equal(out, np.roll(x, 1))  # what a GPU computes with Numba's wrap-around
    shift_right_unguarded[1, 8](x, out)  # the plain simulator agrees
    np.testing.assert_array_equal(out, np.roll(x, 1))
    assert check(shift_right_guarded, 1, 8, x, np.zeros_like(x)).ok
    a = np.arange(12.0).reshape(3, 4)
    out2 = np.zeros_like(a)
    report = check(stencil_2d_unguarded, 1, (3, 4), a, out2)
    p = assert_flags(report, "negative-index", stencil_2d_unguarded, "a[i, j - 1]", array="a")
    assert p.index[1] == -1 and "a[0, 3]" in p.message
    np.testing.assert_array_equal(out2, np.roll(a, 1, axis=1))


PTX_SCRIPT = textwrap.dedent("""
    import course_lib
    assert course_lib.backend() == "gpu", course_lib.backend()
    from numba import cuda

    def shift(x, out, k):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i - k]

    ptx, _ = cuda.compile_ptx(shift, "void(float32[::1], float32[::1], int64)", cc=(8, 0))
    print(ptx)
""")


@pytest.mark.timeout(600)
def test_numba_compiles_the_wrap_around_into_the_ptx():
    """The PTX of ``x[i - k]`` adds the extent when the index is negative (no GPU needed)."""
    env = dict(os.environ, COURSE_BACKEND="gpu", NUMBA_ENABLE_CUDASIM="0")
    proc = subprocess.run([sys.executable, "-c", PTX_SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 and "NVVM" in proc.stderr:
        pytest.skip("the CUDA toolkit wheels (NVVM) are not installed")
    assert proc.returncode == 0, proc.stderr[-3000:]
    ptx = proc.stdout
    # sign of the index (shift right by 63, or a compare with 0) selecting the extent to add
    wraps = re.search(r"shr\.s64\s+%rd\d+, %rd\d+, 63;\s*and\.b64", ptx) or re.search(
        r"setp\.lt\.s64[^\n]*\n\s*selp\.b64", ptx)
    assert wraps, ptx[-3000:]


# 5. Profiler and recorder --------------------------------------------------------------------


@cuda.jit
def copy_with_a_docstring(x, out):
    """Copies: ``out[i] = x[i]`` (this docstring quotes the statement below)."""
    i = cuda.grid(1)
    out[i] = x[i]


def test_a_view_offset_counts_in_the_sector_alignment():
    d = cuda.to_device(np.arange(64, dtype=np.float32))
    aligned = profile(copy_with_a_docstring, 1, 32, d[0:32], np.zeros(32, np.float32))
    shifted = profile(copy_with_a_docstring, 1, 32, d[1:33], np.zeros(32, np.float32))
    assert aligned.line("out[i] = x[i]").load_sectors_per_request == 4
    assert shifted.line("out[i] = x[i]").load_sectors_per_request == 5  # bytes 4..131 span 5 sectors


def test_line_finds_the_executed_statement_never_the_docstring():
    report = profile(copy_with_a_docstring, 1, 32, np.arange(32, dtype=np.float32), np.zeros(32, np.float32))
    row = report.line("out[i] = x[i]")
    assert row.line == line_of(copy_with_a_docstring, "    out[i] = x[i]") and row.source == "out[i] = x[i]"
    assert row.warp_instructions == 1 and row.global_load_requests == 1
    assert all("docstring" not in r.source for r in report.lines)


@cuda.jit
def double_it(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] *= 2


def test_device_to_device_copies_and_the_order_of_implicit_copies_around_a_launch():
    x = np.arange(16, dtype=np.float64)
    with record() as log:
        d_a = cuda.to_device(x)
        d_b = cuda.device_array_like(x)
        d_b.copy_to_device(d_a)  # device to device
        d_b.copy_to_device(x)  # host to device
        double_it[1, 16](x)  # a NumPy argument: copied in, launched, copied back, waited for
    assert log.events == [
        Transfer("HtoD", 128), Transfer("DtoD", 128), Transfer("HtoD", 128),
        Transfer("HtoD", 128), Launch("double_it", (1, 1, 1), (16, 1, 1)), Transfer("DtoH", 128), Wait("stream"),
    ]
    assert log.summary()["DtoD_count"] == 1 and "device->device: 1 copies" in str(log)


@cuda.jit
def histogram_unguarded(data, bins):
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(bins, data[i], 1)  # BUG: data may hold values past the last bin


@cuda.jit
def histogram_guarded(data, bins):
    i = cuda.grid(1)
    if i < data.size and data[i] < bins.size:
        cuda.atomic.add(bins, data[i], 1)


def test_an_out_of_bounds_atomic_is_reported_once_as_a_write_at_the_kernel_line():
    data = np.array([0, 1, 9, 2, 9], np.int64)
    report = check(histogram_unguarded, 1, 8, data, np.zeros(4, np.int64))
    problems = [p for p in report.problems if p.kind == "out-of-bounds"]
    assert len(problems) == 1, str(report)
    p = assert_flags(report, "out-of-bounds", histogram_unguarded, "cuda.atomic.add(bins, data[i], 1)")
    assert p.count == 2 and "writes bins[9]" in p.message and len(p.lines) == 1
    bins = np.zeros(4, np.int64)
    assert check(histogram_guarded, 1, 8, data, bins).ok
    np.testing.assert_array_equal(bins, [1, 1, 1, 0])


@cuda.jit
def shared_float64_reads(out):
    tile = cuda.shared.array((32, 32), float64)
    t = cuda.threadIdx.x
    for k in range(32):
        tile[t, k] = k
    cuda.syncthreads()
    row = tile[3, t]  # 32 consecutive float64: 256 bytes, 2 wavefronts, no conflict
    column = tile[t, 3]  # stride of 256 bytes: every lane in the same two banks
    out[t] = row + column


def test_float64_shared_requests_take_two_wavefronts_without_a_conflict():
    report = profile(shared_float64_reads, 1, 32, np.zeros(32))
    row = report.line("row = tile[3, t]")
    assert row.shared_wavefronts_per_request == 2 and row.bank_conflict_degree == 1
    column = report.line("column = tile[t, 3]")
    assert column.shared_wavefronts_per_request == 32 and column.bank_conflict_degree == 16
    assert "shd wavefr/req" in str(report) and "x ideal" in str(report)


# 6. No state left behind ----------------------------------------------------------------------


@cuda.jit(debug=True)
def divide_debug(r, x, y):
    r[0] = y[0] / x[0]


@cuda.jit
def divide_plain(r, x, y):
    r[0] = y[0] / x[0]
    r[1] = y[0]


def test_a_debug_launch_leaves_no_floating_point_traps_on_pooled_threads():
    r, x, y = np.zeros(2), np.zeros(1), np.ones(1)
    with pytest.raises(FloatingPointError):
        divide_debug[1, 1](r, x, y)  # debug=True: division by zero raises, as in the stock simulator
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for _ in range(3):  # whichever pooled carrier runs it
            divide_plain[1, 1](r, x, y)
    assert np.isinf(r[0]) and r[1] == 1


# 7. Reads of what holds nothing defined ---------------------------------------------------------


@cuda.jit
def accumulate(x, total):
    i = cuda.grid(1)
    if i < x.size:
        total[i] += x[i]


@cuda.jit
def assign(x, total):
    i = cuda.grid(1)
    if i < x.size:
        total[i] = x[i]


def test_reading_never_written_device_memory_is_reported():
    x = np.arange(40, dtype=np.float32)
    d_total = cuda.device_array(40, np.float32)  # BUG: garbage on a GPU; accumulate reads it
    report = check(accumulate, 2, 32, x, d_total)
    p = assert_flags(report, "uninitialized", accumulate, "total[i] += x[i]", array="total")
    # Reported at the first read: thread 0 of whichever block starts first (a GPU promises no block order).
    assert p.count == 40 and p.index in {(0,), (32,)}
    d_total = cuda.device_array(40, np.float32)
    assert check(assign, 2, 32, x, d_total).ok  # written first
    assert check(accumulate, 2, 32, x, d_total).ok  # then read: check saw the writes
    d_zeroed = cuda.device_array(40, np.float32)
    d_zeroed.copy_to_device(np.zeros(40, np.float32))
    assert check(accumulate, 2, 32, x, d_zeroed).ok
    np.testing.assert_array_equal(d_zeroed.copy_to_host(), x)
    d_partial = cuda.device_array(40, np.float32)
    assert check(assign, 1, 32, x[:32], d_partial).ok
    report = check(accumulate, 2, 32, x, d_partial)
    assert [p.count for p in report.problems if p.kind == "uninitialized"] == [8]


@cuda.jit
def broadcast_from_outside_the_mask(x, out):
    i = cuda.grid(1)
    if cuda.laneid < 16:
        out[i] = cuda.shfl_sync(0x0000FFFF, x[i], 20)  # BUG: lane 20 is not in the mask


@cuda.jit
def broadcast_from_inside_the_mask(x, out):
    i = cuda.grid(1)
    if cuda.laneid < 16:
        out[i] = cuda.shfl_sync(0x0000FFFF, x[i], 15)


def test_a_shuffle_reading_a_lane_outside_the_mask_is_reported():
    x = np.arange(32, dtype=np.float32)
    report = check(broadcast_from_outside_the_mask, 1, 32, x, np.zeros(32, np.float32))
    p = assert_flags(report, "warp", broadcast_from_outside_the_mask, "cuda.shfl_sync(0x0000FFFF, x[i], 20)")
    assert "reads lane 20, which is not in the mask 0x0000ffff" in p.message and p.count == 16
    out = np.zeros(32, np.float32)
    assert check(broadcast_from_inside_the_mask, 1, 32, x, out).ok
    np.testing.assert_array_equal(out[:16], 15)
