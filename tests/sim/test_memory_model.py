"""``check()`` follows the PTX memory model for fences and atomics; shuffles read five bits.

Sources: PTX ISA, "Memory Consistency Model" (a fence followed by a strong write is a
release pattern; an atomic that observes the value a release wrote, or a later value of
its release sequence of read-modify-writes, synchronises with it), CUDA C++ Programming
Guide, "Memory Fence Functions" (the sum over blocks in which the last block to finish,
told by ``atomicInc``, reads the partial sums the others wrote before ``__threadfence()``),
and PTX ISA ``shfl.sync`` (the lane or delta operand ``b`` is used as ``b[4:0]``).
"""

import numpy as np
import pytest
from numba import boolean, cuda, float32

from course_lib import device
from course_lib.sim import FULL_MASK, check

from .test_check import line_of

pytestmark = pytest.mark.skipif(not device.is_simulator(), reason="tests the simulator's own semantics")


def _last_block_sum(fence):
    """The CUDA guide's example ("Memory Fence Functions"), with or without its fence."""

    @cuda.jit
    def sum_over_blocks(x, partial, count, total):
        tid = cuda.threadIdx.x
        tile = cuda.shared.array(32, float32)
        last = cuda.shared.array(1, boolean)
        tile[tid] = x[cuda.blockIdx.x * 32 + tid]
        cuda.syncthreads()
        if tid == 0:
            acc = float32(0)
            for k in range(32):
                acc += tile[k]
            partial[cuda.blockIdx.x] = acc
            if fence:
                cuda.threadfence()  # the partial sum is visible before the count says so
            ticket = cuda.atomic.inc(count, 0, cuda.gridDim.x)
            last[0] = ticket == cuda.gridDim.x - 1
        cuda.syncthreads()
        if last[0] and tid == 0:
            acc = float32(0)
            for b in range(cuda.gridDim.x):
                acc += partial[b]
            total[0] = acc
            count[0] = 0  # ready for the next launch

    return sum_over_blocks


def _arguments():
    return np.arange(4 * 32, dtype=np.float32), np.zeros(4, np.float32), np.zeros(1, np.uint32), np.zeros(1, np.float32)


@pytest.mark.parametrize("seed", [None, 1, 2])
def test_the_guides_fence_and_atomic_sum_over_blocks_is_race_free(seed):
    args = _arguments()
    report = check(_last_block_sum(True), 4, 32, *args, seed=seed)
    assert report.ok, str(report)
    assert args[3][0] == np.arange(128).sum() and args[2][0] == 0


def test_the_same_sum_without_the_fence_is_a_race():
    kernel = _last_block_sum(False)
    report = check(kernel, 4, 32, *_arguments())
    races = [p for p in report.problems if p.kind == "race" and p.array == "partial"]
    assert races, str(report)
    assert {line_of(kernel, "partial[cuda.blockIdx.x] = acc"), line_of(kernel, "acc += partial[b]")} <= {
        line for p in races for line in _lines(p)}
    assert "threadfence" in str(races[0])


def _lines(problem):
    return {int(text.split(":")[1].split()[0]) for text in problem.lines if ":" in text}


def _message_passing(fence_kind):
    @cuda.jit
    def producer_consumer(data, flag, out):
        if cuda.blockIdx.x == 0:
            data[0] = 42
            if fence_kind == 1:
                cuda.threadfence()
            elif fence_kind == 2:
                cuda.threadfence_block()  # orders for this block only: not a release to another block
            cuda.atomic.exch(flag, 0, 1)
        else:
            while cuda.atomic.add(flag, 0, 0) == 0:  # an atomic load each time round
                pass
            out[0] = data[0]

    return producer_consumer


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fence_kind, race", [(1, False), (0, True), (2, True)])
def test_message_passing_between_blocks_needs_a_gpu_scope_fence(fence_kind, race):
    data, flag, out = np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(1, np.int32)
    report = check(_message_passing(fence_kind), 2, 1, data, flag, out, seed=3)
    assert out[0] == 42
    assert (not report.ok) is race, str(report)
    if race:
        assert [p.array for p in report.problems if p.kind == "race"] == ["data"]


@cuda.jit
def shuffles(x, out):
    i = cuda.threadIdx.x
    v = x[i]
    out[0, i] = cuda.shfl_down_sync(FULL_MASK, v, 33)  # delta 33 is delta 1
    out[1, i] = cuda.shfl_up_sync(FULL_MASK, v, 34)  # delta 34 is delta 2
    out[2, i] = cuda.shfl_xor_sync(FULL_MASK, v, 33)  # lane mask 33 is 1
    out[3, i] = cuda.shfl_sync(FULL_MASK, v, -1)  # lane -1 is lane 31


def test_shuffles_use_the_low_five_bits_of_lane_and_delta():
    x = np.arange(32, dtype=np.int32) * 10
    out = np.zeros((4, 32), np.int32)
    shuffles[1, 32](x, out)
    lane = np.arange(32)
    assert out[0].tolist() == np.where(lane + 1 < 32, x[np.minimum(lane + 1, 31)], x).tolist()
    assert out[1].tolist() == np.where(lane >= 2, x[np.maximum(lane - 2, 0)], x).tolist()
    assert out[2].tolist() == x[lane ^ 1].tolist()
    assert out[3].tolist() == [x[31]] * 32
