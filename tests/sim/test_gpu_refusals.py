"""What numba-cuda refuses to compile or a GPU refuses to launch is refused by the simulator before any
thread runs, with numba-cuda's own message or one naming the limit.

Sources are cited per test; numba-cuda's behaviour was checked with ``numba.cuda.compile_ptx`` /
``numba.cuda.compiler.compile_cuda`` (numba-cuda 0.30.4, no simulator) and by reading its launch path.
"""

import numpy as np
import pytest
from numba import cuda

from course_lib import device

pytestmark = pytest.mark.skipif(device.backend() != "sim", reason="refusals of the simulator (a GPU refuses by itself)")


def _typing_error():
    from course_lib.sim._typing import GPUTypingError

    return GPUTypingError


@cuda.jit(device=True)
def _grid_barrier():
    cuda.cg.this_grid().sync()


@cuda.jit(device=True)
def _grid_barrier_twice_removed():
    _grid_barrier()


@cuda.jit
def _syncs_through_a_device_function(x):
    i = cuda.grid(1)
    x[i] = 1  # must not run: the launch is refused before any block starts
    _grid_barrier_twice_removed()
    x[i] += 1


def test_a_grid_sync_in_a_device_function_refuses_a_too_large_grid_before_any_block_runs():
    # CUDA C++ Programming Guide, "Grid Synchronization": a cooperative launch whose blocks cannot all be
    # resident fails (cudaErrorCooperativeLaunchTooLarge); numba-cuda launches cooperatively whenever the
    # linked code (device functions included) uses the grid group (_Kernel.cooperative).
    from course_lib.sim import CooperativeLaunchError

    x = np.zeros(64 * 64, np.int64)
    with pytest.raises(CooperativeLaunchError, match="COOPERATIVE_LAUNCH_TOO_LARGE"):
        _syncs_through_a_device_function[64, 64](x)
    assert not x.any()  # nothing ran


def test_max_cooperative_grid_blocks_has_numba_cudas_signature():
    # numba-cuda: _Kernel.max_cooperative_grid_blocks(self, blockdim, dynsmemsize=0).
    overload = _syncs_through_a_device_function.overloads[None]
    assert overload.max_cooperative_grid_blocks(64) == overload.max_cooperative_grid_blocks(64, 0) == 32
    assert overload.max_cooperative_grid_blocks((8, 8), dynsmemsize=0) == 32
    # 100 KB of dynamic shared memory (+1 KB reserved) per block: 2 blocks in 228 KB.
    assert overload.max_cooperative_grid_blocks(64, 100 * 1024) == 2
    assert overload.max_cooperative_grid_blocks(64, 300 * 1024) == 0
    x = np.zeros(2 * 64, np.int64)
    _syncs_through_a_device_function[2, 64](x)  # a grid that fits runs
    assert (x == 2).all()


@cuda.jit
def _returns_a_value(x):
    x[0] = 1
    return 5


@cuda.jit
def _allocates_with_numpy(x):
    scratch = np.zeros(4)
    x[0] = scratch[0]


@cuda.jit
def _builds_a_list(x):
    items = [1, 2, 3]
    x[0] = items[0]


def test_a_kernel_returning_a_value_is_refused():
    # numba-cuda compiles a kernel for a void return (_Kernel: compile_cuda(py_func, types.void, ...));
    # compile_ptx says "CUDA kernel must have void return type.", compile_cuda with void:
    # "No conversion from Literal[int](5) to none".
    x = np.zeros(1, np.float64)
    with pytest.raises(_typing_error(), match="No conversion from Literal\\[int\\]\\(5\\) to none"):
        _returns_a_value[1, 1](x)
    assert x[0] == 0


@pytest.mark.parametrize("kernel, message", [
    (_allocates_with_numpy, "No implementation of function Function\\(<built-in function zeros>\\)"),
    (_builds_a_list, "NRT required but not enabled"),
])
def test_what_numba_cuda_cannot_compile_is_refused_with_its_message(kernel, message):
    # compile_cuda(..., types.void, (float64[::1],), cc=(8, 0)) of these kernels: a TypingError for
    # np.zeros (its overload needs the NRT), "NRT required but not enabled" when lowering a list.
    x = np.zeros(1, np.float64)
    with pytest.raises(_typing_error(), match=message):
        kernel[1, 1](x)
    assert x[0] == 0


@cuda.jit
def _writes_one(x):
    x[cuda.grid(1)] = 1


@pytest.mark.parametrize("grid, block", [(np.int64(2), 32), (2, np.int32(32)), ((2, np.int64(1)), 32)])
def test_numpy_integer_sizes_are_refused_as_cuda_core_refuses_them(grid, block):
    # numba-cuda 0.30.4 launches through cuda.core's LaunchConfig (dispatcher.py, _Kernel.launch), whose check
    # reads "LaunchConfig.grid must be an int, or a tuple with up to 3 ints (got (np.int64(2), 1, 1))".
    from course_lib.sim._launch import LaunchError

    x = np.zeros(64, np.int64)
    with pytest.raises(LaunchError, match="must be an int, or a tuple with up to 3 ints"):
        _writes_one[grid, block](x)
    assert not x.any()
    _writes_one[int(np.int64(2)), 32](x)
    assert x.all()


def test_a_float_grid_is_refused_as_numba_cuda_refuses_it():
    # numba-cuda's errors.normalize_kernel_dimensions: "griddim must be a sequence of integers".
    with pytest.raises(TypeError, match="griddim must be a sequence of integers"):
        _writes_one[2.0, 32]
