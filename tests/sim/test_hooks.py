"""Are the simulator hooks in place, and would an upgrade of numba-cuda that breaks them be noticed?"""

import re
from importlib.metadata import version
from pathlib import Path

import pytest
from numba import cuda

from course_lib import device, sim
from course_lib.sim import _hooks

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not device.is_simulator(), reason="the hooks exist only in simulator mode")


def test_numba_cuda_is_the_pinned_version():
    """course_lib.sim patches internals of numba-cuda's simulator (see course_lib/sim/_hooks.py).

    If this fails after an upgrade, run tests/sim: when they pass, move the pin in
    pyproject.toml and PINNED_NUMBA_CUDA together; when they fail, port _hooks.py and
    _engine.py to the new simulator first.
    """
    pins = re.findall(r"numba-cuda(?:\[\w+\])?==([\w.]+)", (ROOT / "pyproject.toml").read_text())
    assert pins and set(pins) == {_hooks.PINNED_NUMBA_CUDA}, (
        f"pyproject.toml pins numba-cuda {sorted(set(pins))}, course_lib.sim was written for "
        f"{_hooks.PINNED_NUMBA_CUDA}: keep them equal"
    )
    assert version("numba-cuda") == _hooks.PINNED_NUMBA_CUDA, (
        f"numba-cuda {version('numba-cuda')} is installed but course_lib.sim's hooks were written for "
        f"{_hooks.PINNED_NUMBA_CUDA}; install the pinned version or port the hooks (see this test's docstring)"
    )


def test_the_simulator_internals_the_hooks_replace_are_there():
    _hooks.verify()  # raises HookError naming what moved


def test_import_course_lib_installed_the_hooks():
    from numba.cuda.simulator import kernel, kernelapi

    assert sim.installed()
    assert kernel.BlockManager is sim._engine.ScheduledBlockManager
    for name in ("shfl_down_sync", "ballot_sync", "syncwarp", "activemask"):
        assert callable(getattr(kernelapi.FakeCUDAModule, name)), name


def test_uninstall_restores_the_stock_simulator_exactly():
    from numba.cuda.simulator import kernel, kernelapi

    before = dict(vars(kernelapi.FakeCUDAModule))
    sim.uninstall()
    try:
        assert kernel.BlockManager.__module__ == "numba.cuda.simulator.kernel"
        assert kernel.FakeCUDAKernel.__call__.__module__ == "numba.cuda.simulator.kernel"
        assert not hasattr(kernelapi.FakeCUDAModule, "shfl_down_sync")
    finally:
        sim.install()
    assert dict(vars(kernelapi.FakeCUDAModule)) == before


def test_verify_explains_a_broken_hook(monkeypatch):
    from numba.cuda.simulator import kernel

    monkeypatch.delattr(kernel.BlockThread, "syncthreads_count")
    with pytest.raises(_hooks.HookError, match="BlockThread.syncthreads_count is gone.*numba-cuda==0.30.4"):
        _hooks.verify()


def test_a_device_function_of_another_module_sees_the_simulated_cuda_until_the_launch_ends():
    """The launch's simulated ``cuda`` stays in a device function's module while the launch runs (one swap
    per launch, not per call), and the module's own ``cuda`` is back afterwards, also when the kernel raises."""
    import types

    import numpy as np

    from course_lib.sim import _engine

    other = types.ModuleType("course_test_other_module")
    exec("from numba import cuda\n\n@cuda.jit(device=True)\ndef lane():\n    return cuda.threadIdx.x\n",
         other.__dict__)

    @cuda.jit
    def fill(out, fail):
        i = cuda.threadIdx.x
        out[i] = other.lane() + other.lane()
        if fail and i == 3:
            raise ValueError("stop")

    out = np.zeros(8, np.int64)
    fill[1, 8](out, False)
    assert out.tolist() == [2 * i for i in range(8)]
    assert other.cuda is cuda and not _engine._held_swaps
    with pytest.raises(ValueError):
        fill[1, 8](out, True)
    assert other.cuda is cuda and not _engine._held_swaps


def test_shared_arrays_are_named_by_their_line_without_reading_the_whole_stack(monkeypatch):
    """Two ``cuda.shared.array`` lines are two arrays, shared by the threads of a block and fresh in each block,
    and naming them reads the caller's frame only (the stock allocator read every frame's source line)."""
    import traceback

    import numpy as np
    from numba import int32

    def refused(*args, **kwargs):
        raise AssertionError("the whole stack was read")

    monkeypatch.setattr(traceback, "extract_stack", refused)

    @cuda.jit
    def two_arrays(out):
        first = cuda.shared.array(4, int32)
        second = cuda.shared.array(4, int32)
        t = cuda.threadIdx.x
        first[t] = t + 1
        second[t] = 10 * (t + 1)
        cuda.syncthreads()
        out[cuda.blockIdx.x, t] = first[3 - t] + second[3 - t]  # another thread's elements: one array per block

    out = np.zeros((2, 4), np.int32)
    two_arrays[2, 4](out)
    assert out.tolist() == [[44, 33, 22, 11]] * 2
