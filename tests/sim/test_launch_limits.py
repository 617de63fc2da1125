"""Launches a GPU refuses are refused by the simulator too; globals are frozen at the first compilation.

Sources: CUDA C++ Programming Guide, "Compute Capabilities", Table "Technical Specifications
per Compute Capability" (1,024 threads per block; block dimensions 1,024 x 1,024 x 64; grid
2**31 - 1 x 65,535 x 65,535; 48 KB of shared memory per block without an opt-in), the CUDA
Driver API (``cuLaunchKernel``: CUDA_ERROR_INVALID_VALUE), the Guide's "Launch Bounds" (a kernel launched with
more threads per block than its bound fails to launch), numba-cuda's ``cuda.jit`` (its options), its dispatcher ("No
matching definition for argument type(s)") and its documentation ("Kernel functions may read
global variables: their values are frozen as constants at compile time").
"""

import numpy as np
import pytest
from numba import cuda, float32, float64

from course_lib import device
from course_lib.sim._launch import MAX_SHARED_BYTES, LaunchError

pytestmark = pytest.mark.skipif(not device.is_simulator(), reason="tests the simulator's own semantics")


@cuda.jit
def count_threads(out):
    cuda.atomic.add(out, 0, 1)


@pytest.mark.parametrize("block", [1025, 2048, (32, 33), (1, 1, 65), (1025, 1)])
def test_a_block_over_the_hardware_limits_is_refused(block):
    with pytest.raises(LaunchError, match="1024 threads per block"):
        count_threads[1, block](np.zeros(1, np.int64))


@pytest.mark.parametrize("block", [1024, (32, 32), (16, 8, 8), (1, 1, 64)])
def test_a_block_at_the_limits_runs(block):
    out = np.zeros(1, np.int64)
    count_threads[1, block](out)
    assert out[0] == np.prod(block)


def _fill(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = i


@pytest.mark.parametrize("make", [
    lambda: cuda.jit(launch_bounds=(64, 2), lineinfo=True, max_registers=32, lto=False, forceinline=True)(_fill),
    lambda: cuda.jit("void(float64[:])", launch_bounds=64, lineinfo=True)(_fill),
    lambda: cuda.jit(_fill, launch_bounds=64, max_registers=40),
], ids=["decorator", "signature", "function"])
def test_a_gpu_s_jit_options_are_taken_and_launch_bounds_refuse_larger_blocks(make):
    kernel, a = make(), np.zeros(100)
    kernel[2, 64](a)
    assert (a == np.arange(100)).all()
    with pytest.raises(LaunchError, match="launch_bounds of 64 threads per block"):
        kernel[1, 65](a)


@pytest.mark.parametrize("bounds", [(1, 2, 3, 4), (), 0, 32.0, (64, "2")])
def test_malformed_launch_bounds_are_refused(bounds):
    with pytest.raises(ValueError, match="launch_bounds="):
        cuda.jit(launch_bounds=bounds)(_fill)


def test_a_grid_over_the_hardware_limit_is_refused():
    with pytest.raises(LaunchError, match="65535"):
        count_threads[(1, 65536), 1](np.zeros(1, np.int64))


@pytest.mark.parametrize("grid, block", [(0, 32), (4, 0), ((2, 0), 32), (1, (32, 0))])
def test_a_zero_sized_grid_or_block_is_refused(grid, block):
    with pytest.raises(LaunchError, match="CUDA_ERROR_INVALID_VALUE"):
        count_threads[grid, block](np.zeros(1, np.int64))


def test_a_list_argument_is_refused():
    with pytest.raises(LaunchError, match="Python list"):
        count_threads[1, 1]([0])


ROWS_FITTING = MAX_SHARED_BYTES // (32 * 8)  # 192 rows of 32 float64: exactly 48 KB


@cuda.jit
def shared_exactly_48k(out):
    tile = cuda.shared.array((ROWS_FITTING, 32), float64)
    tile[0, 0] = 2.0
    out[0] = tile[0, 0]


@cuda.jit
def shared_over_48k(out):
    a = cuda.shared.array((ROWS_FITTING, 32), float64)
    b = cuda.shared.array(1, float32)  # 4 bytes too many
    a[0, 0] = 1.0
    b[0] = 2.0
    out[0] = a[0, 0] + b[0]


@cuda.jit
def dynamic_shared(out):
    buf = cuda.shared.array(0, float32)
    buf[0] = 3.0
    out[0] = buf[0]


def test_static_shared_memory_up_to_48_kb_runs():
    out = np.zeros(1)
    shared_exactly_48k[1, 1](out)
    assert out[0] == 2.0


def test_static_shared_memory_over_48_kb_is_refused():
    # numba-cuda lowers each cuda.shared.array to an addrspace(3) global: 49,152 + 4 bytes here.
    with pytest.raises(LaunchError, match="49156 bytes of static shared memory"):
        shared_over_48k[1, 1](np.zeros(1))


def test_dynamic_shared_memory_over_48_kb_is_refused():
    out = np.zeros(1, np.float32)
    dynamic_shared[1, 1, 0, MAX_SHARED_BYTES](out)
    assert out[0] == 3.0
    with pytest.raises(LaunchError, match="dynamic shared memory"):
        dynamic_shared[1, 1, 0, MAX_SHARED_BYTES + 4](out)


@cuda.jit("void(float32[:], int32)")
def fill_float32(out, value):
    out[cuda.grid(1)] = value


@cuda.jit(["void(float32[:], int32)"])
def fill_float32_listed(out, value):
    out[cuda.grid(1)] = value


@cuda.jit("void(int32[:])")
def decrement_int32(values):
    values[cuda.grid(1)] -= 1


def test_a_call_that_matches_no_listed_signature_is_refused():
    # A list of signatures: numba-cuda's dispatcher resolves the call among them (dispatcher.py, _cuda_call).
    out = np.zeros(4, np.float32)
    fill_float32_listed[1, 4](out, 7)  # a Python int converts to int32: numba accepts it
    assert out.tolist() == [7.0] * 4
    with pytest.raises(LaunchError, match="No matching definition for argument type"):
        fill_float32_listed[1, 4](np.zeros(4, np.float64), 7)  # float64 array for float32[:]


def test_one_signature_reads_the_arrays_bytes_as_its_types():
    # One signature: the dispatcher is "specialized" and launches without a type check (dispatcher.py,
    # CUDADispatcher.call); the kernel reads a uint32 array's bytes as int32 (numba-cuda's own
    # test_atomics.test_atomic_sub3 relies on it).
    values = np.array([0, 5, 2**31 + 1, 2**32 - 1], np.uint32)
    decrement_int32[1, 4](values)
    assert values.tolist() == [2**32 - 1, 4, 2**31, 2**32 - 2]
    with pytest.raises(LaunchError, match="read the array's bytes as a 1-d float32 array"):
        fill_float32[1, 4](np.zeros(4, np.float64), 7)  # 8-byte elements read as 4-byte ones: refused
    with pytest.raises(LaunchError, match="explicit signature"):
        fill_float32[1, 4](np.zeros((2, 2), np.float32), 7)  # 2-D for 1-D


def test_forall_of_no_tasks_launches_nothing():
    out = np.zeros(4, np.float32)
    fill_float32.forall(0)(out, 1)  # numba-cuda's ForAll returns without a launch (numba issue #5017)
    assert not out.any()


SCALE = 2


@cuda.jit
def scaled(x, out):
    out[0] = x[0] * SCALE


def test_a_global_is_frozen_at_the_first_compilation():
    global SCALE
    out = np.zeros(1, np.int64)
    scaled[1, 1](np.ones(1, np.int64), out)
    assert out[0] == 2
    try:
        SCALE = 3
        scaled[1, 1](np.ones(1, np.int64), out)
        assert out[0] == 2  # the compiled kernel keeps SCALE = 2
        assert SCALE == 3  # and the host sees its own value after the launch
        out_f = np.zeros(1, np.float64)
        scaled[1, 1](np.ones(1, np.float64), out_f)  # new argument types: a new compilation reads 3
        assert out_f[0] == 3.0
    finally:
        SCALE = 2
