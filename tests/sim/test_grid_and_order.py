"""Blocks as a GPU runs them: grid-wide barriers, blocks waiting for blocks, no tidy start order.

Tests of the simulator's own scheduler (limits, errors, seeds, check and profile) run in the
simulator only; the results of grid-synchronised and flag-waiting kernels are checked on a GPU too.

Expectations and their sources:

* CUDA C++ Programming Guide, "Cooperative Groups", "Grid Synchronization": ``grid.sync()``
  is a barrier for every thread of the grid, and the grid of a cooperative launch may not
  exceed what can be resident at once (``cudaOccupancyMaxActiveBlocksPerMultiprocessor``
  times the SMs), which numba-cuda reports as ``overloads[sig].max_cooperative_grid_blocks``
  and the driver enforces with ``CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE``.
* CUDA C++ Programming Guide, "Thread Hierarchy": "Thread blocks are required to execute
  independently: it must be possible to execute them in any order, in parallel or in series."
  Nothing orders the warps of a block either (until a barrier); the lanes of a warp run together.
* CUDA C++ Programming Guide, "Independent Thread Scheduling" / forward progress of resident
  blocks: a block spinning on a flag that another *resident* block sets ends.
"""

import os
import subprocess
import sys
import time

import numpy as np
import pytest
from numba import cuda

from course_lib import sim
from course_lib.sim import _engine, check
from tests.conftest import sim_only

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@cuda.jit
def reverse_across_blocks(x, tmp, out):
    """Phase 1 copies x, phase 2 reads what *other* blocks wrote: needs a grid barrier between."""
    grid = cuda.cg.this_grid()
    i = cuda.grid(1)
    n = x.size
    if i < n:
        tmp[i] = x[i]
    grid.sync()
    if i < n:
        out[i] = tmp[n - 1 - i]


@cuda.jit
def grid_sum(x, partial, out):
    """Grid-wide reduction: block sums, grid barrier, thread 0 adds the block sums."""
    grid = cuda.cg.this_grid()
    i = cuda.grid(1)
    acc = cuda.shared.array(64, np.int64)
    t = cuda.threadIdx.x
    acc[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    if t == 0:
        s = 0
        for k in range(cuda.blockDim.x):
            s += acc[k]
        partial[cuda.blockIdx.x] = s
    grid.sync()
    if i == 0:
        s = 0
        for b in range(cuda.gridDim.x):
            s += partial[b]
        out[0] = s


@pytest.mark.parametrize("blocks, threads", [(1, 1), (1, 33), (3, 32), (7, 33), (5, 64)])
def test_grid_sync_orders_every_block_before_any_reads(blocks, threads):
    n = blocks * threads - (1 if threads > 1 else 0)
    x = np.arange(n, dtype=np.int64) * 3 + 1
    out = np.zeros(n, np.int64)
    reverse_across_blocks[blocks, threads](x, np.zeros(n, np.int64), out)
    np.testing.assert_array_equal(out, x[::-1])


@pytest.mark.parametrize("blocks", [1, 2, 7])
def test_a_grid_wide_reduction_with_grid_sync_is_exact(blocks):
    x = np.arange(blocks * 64 - 5, dtype=np.int64) - 40
    out = np.zeros(1, np.int64)
    grid_sum[blocks, 64](x, np.zeros(blocks, np.int64), out)
    assert out[0] == x.sum()


@sim_only
def test_max_cooperative_grid_blocks_is_what_the_simulated_gpu_holds():
    overload = reverse_across_blocks.overloads[None]
    per_sm = min(_engine.MAX_BLOCKS_PER_SM, _engine.MAX_THREADS_PER_SM // 256)
    assert overload.max_cooperative_grid_blocks(256) == per_sm * _engine.SIM_SM_COUNT
    assert overload.max_cooperative_grid_blocks((16, 16)) == overload.max_cooperative_grid_blocks(256)
    assert overload.max_cooperative_grid_blocks(32) == _engine.MAX_BLOCKS_PER_SM * _engine.SIM_SM_COUNT
    with pytest.raises(ValueError, match="positive"):
        sim.max_cooperative_grid_blocks(0)


@sim_only
def test_the_largest_cooperative_grid_runs_and_one_more_block_is_refused():
    limit = sim.max_cooperative_grid_blocks(32)
    n = limit * 32
    x = np.arange(n, dtype=np.int64)
    out = np.zeros(n, np.int64)
    reverse_across_blocks[limit, 32](x, np.zeros(n, np.int64), out)
    np.testing.assert_array_equal(out, x[::-1])
    out[:] = -1
    with pytest.raises(sim.CooperativeLaunchError, match="COOPERATIVE_LAUNCH_TOO_LARGE"):
        reverse_across_blocks[limit + 1, 32](np.arange(n + 32), np.zeros(n + 32, np.int64), np.zeros(n + 32, np.int64))
    assert (out == -1).all()  # refused before it ran, as the driver refuses the launch


@cuda.jit(device=True)
def sync_the_grid():
    cuda.cg.this_grid().sync()


@cuda.jit
def syncs_in_a_device_function(out):
    sync_the_grid()
    out[cuda.grid(1)] = 1


@sim_only
def test_a_grid_barrier_in_a_device_function_over_the_limit_is_refused_too():
    limit = sim.max_cooperative_grid_blocks(64)
    with pytest.raises(sim.CooperativeLaunchError, match="max_cooperative_grid_blocks"):
        syncs_in_a_device_function[limit + 1, 64](np.zeros((limit + 1) * 64, np.int64))
    out = np.zeros(3 * 64, np.int64)
    syncs_in_a_device_function[3, 64](out)
    assert (out == 1).all()


@cuda.jit
def only_block_zero_syncs(out):
    if cuda.blockIdx.x == 0:
        cuda.cg.this_grid().sync()
    out[cuda.grid(1)] = 1


@sim_only
def test_a_grid_barrier_that_some_blocks_never_reach_is_an_error_not_a_hang():
    with pytest.raises(sim.BarrierError, match="reached by 1 of the 3 blocks"):
        only_block_zero_syncs[3, 32](np.zeros(96, np.int64))


@cuda.jit
def grid_sync_against_syncthreads(out):
    if cuda.threadIdx.x == 0:
        cuda.cg.this_grid().sync()
    else:
        cuda.syncthreads()
    out[cuda.grid(1)] = 1


@sim_only
def test_threads_of_a_block_split_between_grid_sync_and_syncthreads_is_an_error_naming_both():
    with pytest.raises(sim.BarrierError, match="grid.sync .* while others wait at syncthreads") as err:
        grid_sync_against_syncthreads[2, 32](np.zeros(64, np.int64))
    assert str(err.value).count("test_grid_and_order.py:") == 2


# check() ------------------------------------------------------------------------------------


@cuda.jit
def reverse_without_grid_sync(x, tmp, out):
    i = cuda.grid(1)
    n = x.size
    if i < n:
        tmp[i] = x[i]
    cuda.syncthreads()  # orders a block, not the grid
    if i < n:
        out[i] = tmp[n - 1 - i]


@cuda.jit
def race_after_grid_sync(x, out):
    grid = cuda.cg.this_grid()
    i = cuda.grid(1)
    out[i] = x[i]
    grid.sync()
    out[0] = i  # every thread of every block writes out[0]: a race across blocks, barrier or not


@sim_only
def test_check_treats_grid_sync_as_ordering_across_blocks():
    n = 4 * 32
    x = np.arange(n, dtype=np.int64)
    report = check(reverse_across_blocks, 4, 32, x, np.zeros(n, np.int64), np.zeros(n, np.int64))
    assert report.ok, str(report)
    report = check(grid_sum, 3, 64, x[:150], np.zeros(3, np.int64), np.zeros(1, np.int64))
    assert report.ok, str(report)


@sim_only
def test_check_still_reports_races_across_blocks_without_or_after_a_grid_barrier():
    n = 4 * 32
    x = np.arange(n, dtype=np.int64)
    report = check(reverse_without_grid_sync, 4, 32, x, np.zeros(n, np.int64), np.zeros(n, np.int64))
    assert "race" in report.kinds()
    assert any("different blocks" in p.message for p in report.problems)
    report = check(race_after_grid_sync, 2, 32, x[:64], np.zeros(64, np.int64))
    assert "race" in report.kinds()
    assert any("out[0] = i" in line for p in report.problems for line in p.lines)


@sim_only
def test_profile_keeps_blocks_that_meet_at_a_grid_barrier_apart():
    """Each warp's 32 int64 loads are one request of 8 sectors (256 contiguous bytes), whichever
    blocks run between its two halves (CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory")."""
    n = 4 * 32
    x = np.arange(n, dtype=np.int64)
    total = sim.profile(reverse_across_blocks, 4, 32, x, np.zeros(n, np.int64), np.zeros(n, np.int64)).total
    assert total.global_load_requests == 8 and total.global_store_requests == 8  # 4 warps, 2 of each
    assert total.global_load_sectors == 64 and total.global_store_sectors == 64
    assert total.simt_efficiency == 1.0


# Blocks waiting for blocks ----------------------------------------------------------------


@cuda.jit
def wait_for_flag(flag, out):
    if cuda.blockIdx.x == 0:
        while cuda.atomic.add(flag, 0, 0) == 0:  # spins until the last block sets it
            pass
        out[0] = 1
    elif cuda.blockIdx.x == cuda.gridDim.x - 1 and cuda.threadIdx.x == 0:
        cuda.atomic.exch(flag, 0, 1)


@cuda.jit
def wait_for_every_block(counter, out):
    """Each block checks in; block 0 waits for all of them (a hand-made grid barrier)."""
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(counter, 0, 1)
        if cuda.blockIdx.x == 0:
            while cuda.atomic.add(counter, 0, 0) < cuda.gridDim.x:
                pass
            out[0] = counter[0]


@pytest.mark.parametrize("blocks", [2, 3, 8])
def test_a_block_spinning_on_a_flag_another_block_sets_ends(blocks):
    flag, out = np.zeros(1, np.int32), np.zeros(1, np.int32)
    start = time.monotonic()
    wait_for_flag[blocks, 32](flag, out)
    assert out[0] == 1 and flag[0] == 1
    assert time.monotonic() - start < _engine.HANG_SECONDS  # it progressed, it was not stopped
    counter = np.zeros(1, np.int32)
    wait_for_every_block[blocks, 32](counter, out)
    assert out[0] == blocks


@cuda.jit
def spin_forever(flag):
    while flag[0] == 0:  # nothing sets it
        pass


@sim_only
def test_a_launch_in_which_no_block_progresses_is_stopped_naming_the_blocks_and_the_line(monkeypatch):
    monkeypatch.setattr(_engine, "HANG_SECONDS", 0.5)
    start = time.monotonic()
    with pytest.raises(sim.HangError) as err:
        spin_forever[2, 4](np.zeros(1, np.int32))
    assert time.monotonic() - start < 10
    message = str(err.value)
    assert "block (0, 0, 0)" in message and "block (1, 0, 0)" in message
    line = spin_forever.py_func.__code__.co_firstlineno + 3  # the decorator's line + 3: the spinning loop's body
    assert f"test_grid_and_order.py:{line}" in message
    # The simulator is usable afterwards (the suspended threads were unwound).
    out = np.zeros(1, np.int32)
    wait_for_flag[2, 32](np.zeros(1, np.int32), out)
    assert out[0] == 1


# Start order ----------------------------------------------------------------------------


@cuda.jit
def compact_positive(x, out, count):
    """Stream compaction with an atomic counter: the slots follow the order threads get there."""
    i = cuda.grid(1)
    if i < x.size and x[i] > 0:
        out[cuda.atomic.add(count, 0, 1)] = x[i]


@cuda.jit
def start_order(order, counter):
    t = cuda.threadIdx.x
    order[cuda.blockIdx.x * cuda.blockDim.x + t] = cuda.atomic.add(counter, 0, 1)


def _compact(n=300, blocks=5, threads=64):
    x = np.arange(1, n + 1, dtype=np.int64)
    out, count = np.zeros(n, np.int64), np.zeros(1, np.int32)
    compact_positive[blocks, threads](x, out, count)
    return out


@pytest.fixture
def restore_seed():
    seed = sim.get_seed()
    yield
    sim.set_seed(seed)


@sim_only
def test_blocks_and_warps_start_in_an_order_a_gpu_could_use_not_index_order(restore_seed):
    sim.set_seed(7)
    out = _compact()
    np.testing.assert_array_equal(np.sort(out), np.arange(1, 301))  # every element, once
    assert not (np.diff(out) > 0).all()  # but not the tidy order a GPU does not promise
    order, counter = np.zeros(4 * 128, np.int64), np.zeros(1, np.int32)
    firsts = set()
    for _ in range(6):
        counter[:] = 0
        start_order[4, 128](order, counter)
        for block in order.reshape(4, 4, 32):  # 4 blocks of 4 warps
            for warp in block:
                np.testing.assert_array_equal(np.diff(warp), 1)  # the lanes of a warp run together
        firsts.add(int(np.argmin(order)) // 128)
    assert len(firsts) > 1  # different blocks start first in different launches


@sim_only
def test_the_order_repeats_for_a_seed_and_differs_between_seeds(restore_seed):
    sim.set_seed(11)
    first = _compact()
    sim.set_seed(11)
    np.testing.assert_array_equal(_compact(), first)
    sim.set_seed(12)
    assert not np.array_equal(_compact(), first)


@sim_only
def test_set_seed_refuses_what_is_not_a_non_negative_integer():
    for bad in (-1, 1.5, "3", True):
        with pytest.raises(ValueError, match="non-negative integer"):
            sim.set_seed(bad)


@sim_only
def test_the_seed_comes_from_course_sim_seed_in_a_fresh_process():
    code = "import course_lib; from course_lib import sim; print(sim.get_seed())"
    env = dict(os.environ, COURSE_SIM_SEED="4242", NUMBA_ENABLE_CUDASIM="1", COURSE_BACKEND="sim")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=300)
    assert proc.stdout.strip() == "4242", proc.stderr[-2000:]
    env["COURSE_SIM_SEED"] = "abc"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=300)
    assert proc.returncode != 0 and "COURSE_SIM_SEED must be an integer" in proc.stderr


@cuda.jit
def long_serial_sum(n, out):
    s = 0
    for k in range(n):  # one thread working for longer than the hang limit: its variables change
        s += k
    out[0] = s


@sim_only
def test_a_long_loop_that_works_is_not_taken_for_a_hang(monkeypatch):
    monkeypatch.setattr(_engine, "HANG_SECONDS", 0.02)
    out = np.zeros(1, np.int64)
    start = time.monotonic()
    long_serial_sum[1, 1](2_000_000, out)
    assert time.monotonic() - start > 0.02  # it ran past the limit
    assert out[0] == 2_000_000 * 1_999_999 // 2
