"""Are the simulator hooks in place, and would an upgrade of numba-cuda that breaks them be noticed?"""

import re
from importlib.metadata import version
from pathlib import Path

import pytest

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
