"""Where kernels run: a real CUDA GPU, or Numba's CUDA simulator on the CPU.

Importing :mod:`course_lib` calls :func:`configure` before anything imports
``numba.cuda``. Without a usable GPU it switches Numba to its CUDA simulator, so the
same ``@cuda.jit`` kernels run on a laptop. ``COURSE_BACKEND=gpu|sim`` overrides the
detection.

The choice has to be made before ``numba.cuda`` is first imported, because Numba
reads ``NUMBA_ENABLE_CUDASIM`` once, at that import. If a notebook imported
``numba.cuda`` first and the mode it got differs from the one requested,
:func:`configure` raises :class:`BackendError` saying what to do.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from dataclasses import dataclass

__all__ = [
    "BackendError",
    "DeviceInfo",
    "backend",
    "configure",
    "info",
    "is_gpu",
    "is_simulator",
    "numpy_incompatibility",
    "pick",
]

_VALID = ("gpu", "sim")
_backend: str | None = None


class BackendError(RuntimeError):
    """The CUDA backend cannot be set up as requested."""


def _driver_device_count() -> int:
    """Number of CUDA devices the driver reports, 0 without a driver.

    Uses the driver library through ctypes so that ``numba.cuda`` is not imported
    (importing it would fix the simulator choice too early).
    """
    names = ["libcuda.so.1", "libcuda.so", ctypes.util.find_library("cuda"), "nvcuda.dll"]
    for name in filter(None, names):
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        try:
            if lib.cuInit(0) != 0:
                return 0
            count = ctypes.c_int(0)
            if lib.cuDeviceGetCount(ctypes.byref(count)) != 0:
                return 0
            return count.value
        except AttributeError:
            return 0
    return 0


def _requested_backend() -> str:
    requested = os.environ.get("COURSE_BACKEND", "").strip().lower()
    if requested and requested not in _VALID:
        raise BackendError(
            f"COURSE_BACKEND={requested!r} is not understood: use 'gpu', 'sim' or leave it unset "
            "to detect a GPU automatically."
        )
    if requested:
        return requested
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
        return "sim"
    return "gpu" if _driver_device_count() > 0 else "sim"


def _numba_cuda_mode() -> str | None:
    """'sim' or 'gpu' if ``numba.cuda`` is already imported, else None."""
    module = sys.modules.get("numba.cuda")
    if module is None:
        return None
    jit = getattr(module, "jit", None)
    return "sim" if jit is not None and "simulator" in getattr(jit, "__module__", "") else "gpu"


def configure(force: str | None = None) -> str:
    """Choose the backend once, before ``numba.cuda`` is imported, and return it.

    Parameters
    ----------
    force : {"gpu", "sim"}, optional
        Use this backend instead of the detected one. Allowed until ``numba.cuda`` is
        imported (the compile check uses it: it needs the real target, no GPU).

    Returns
    -------
    str
        ``"gpu"`` or ``"sim"``.

    Raises
    ------
    BackendError
        If ``numba.cuda`` was already imported in the other mode, or
        ``COURSE_BACKEND`` has an unknown value.
    """
    global _backend
    if force is not None:
        if force not in _VALID:
            raise BackendError(f"unknown backend {force!r}; use 'gpu' or 'sim'")
        if _backend != force:
            _backend = None
            os.environ["COURSE_BACKEND"] = force
    if _backend is not None:
        return _backend
    wanted = _requested_backend()
    current = _numba_cuda_mode()
    if current is not None and current != wanted:
        got = "the CUDA simulator" if current == "sim" else "the real CUDA target"
        raise BackendError(
            f"numba.cuda was imported before course_lib and is using {got}, but this session "
            f"needs backend {wanted!r}. Restart the kernel (or Python) and run "
            "`import course_lib` before anything imports numba.cuda, or set "
            f"COURSE_BACKEND={current} to keep what numba.cuda already chose."
        )
    if wanted == "gpu":
        problem = numpy_incompatibility()
        if problem:
            raise BackendError(problem)
    if wanted == "sim":
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    else:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "0"
    # Numba's config module (numba-cuda aliases it as numba.cuda.core.config) reads the
    # environment when it is first imported, which can happen before numba.cuda (pytest
    # imports numba.core.errors to resolve warning filters, for instance), so it must
    # follow the choice too.
    for name in ("numba.core.config", "numba.cuda.core.config"):
        config = sys.modules.get(name)
        if config is not None:
            config.ENABLE_CUDASIM = int(wanted == "sim")
    _backend = wanted
    if wanted == "gpu":  # an untouched stub kernel raises on a GPU as in the simulator (see stub_kernels)
        from . import stub_kernels

        stub_kernels.install()
    return wanted


def numpy_incompatibility(numpy_module=None, numba_cuda_root=None) -> str | None:
    """Why the installed numba-cuda cannot compile for a real GPU with this NumPy, or None.

    numba-cuda 0.30 registers ``np.row_stack`` in ``numba/cuda/np/arrayobj.py``, which the real
    CUDA target imports (the simulator does not), and NumPy 2.5 removed ``row_stack``: every
    kernel then fails to compile with an ``AttributeError`` far from its cause. This reads that
    file as text, so it imports neither ``numba.cuda`` nor anything that would fix the backend.

    Parameters
    ----------
    numpy_module : module, optional
        The NumPy to check (default: ``numpy``).
    numba_cuda_root : str or os.PathLike, optional
        The ``numba_cuda`` package folder (default: found with :func:`importlib.util.find_spec`).

    Returns
    -------
    str or None
        The problem and its fix, or None when the two agree (or numba-cuda is not installed).
    """
    import importlib.util
    from pathlib import Path

    if numpy_module is None:
        import numpy as numpy_module
    if hasattr(numpy_module, "row_stack"):
        return None
    if numba_cuda_root is None:
        spec = importlib.util.find_spec("numba_cuda")
        if spec is None or not spec.submodule_search_locations:
            return None
        numba_cuda_root = list(spec.submodule_search_locations)[0]
    arrayobj = Path(numba_cuda_root) / "numba" / "cuda" / "np" / "arrayobj.py"
    try:
        needs_row_stack = "np.row_stack" in arrayobj.read_text(encoding="utf-8")
    except OSError:
        return None
    if not needs_row_stack:
        return None
    return (f"NumPy {numpy_module.__version__} has no np.row_stack, which the installed numba-cuda needs to "
            "compile kernels for a real GPU (numba/cuda/np/arrayobj.py): every kernel would fail to compile. "
            "Install the course's NumPy with `python -m pip install 'numpy<2.5'` (requirements/lock.txt pins "
            "it), or run in the simulator with COURSE_BACKEND=sim.")


def backend() -> str:
    """The active backend: ``"gpu"`` or ``"sim"``."""
    return configure()


def is_simulator() -> bool:
    """True when kernels run in Numba's CUDA simulator."""
    return backend() == "sim"


def is_gpu() -> bool:
    """True when kernels run on a real CUDA GPU."""
    return backend() == "gpu"


def pick(*, sim, gpu):
    """Choose a problem size (or any setting) for the active backend.

    The simulator costs roughly 100-200 microseconds per simulated thread, so lessons
    use small inputs there and full-size inputs on a GPU, from the same code.

    Examples
    --------
    >>> n = pick(sim=256, gpu=1 << 20)
    """
    return sim if is_simulator() else gpu


# FP32 lanes per SM by compute capability (CUDA C Programming Guide, arithmetic throughput table).
_FP32_LANES_PER_SM = {(6, 0): 64, (7, 0): 64, (7, 5): 64, (8, 0): 64}


@dataclass(frozen=True)
class DeviceInfo:
    """What the course needs to know about the device kernels run on.

    Attributes
    ----------
    backend : str
        ``"gpu"`` or ``"sim"``.
    name : str
        Device name, or ``"CUDA simulator"``.
    compute_capability : tuple of int or None
    sm_count : int
        Streaming multiprocessors (the simulator reports 1).
    memory_bytes : int or None
        Global memory size.
    max_threads_per_block : int
    max_shared_memory_per_block : int
        Bytes of static shared memory a block may use.
    fp32_peak_flops : float or None
        Peak FP32 (non-tensor) FLOP/s: SMs x FP32 lanes x 2 (FMA) x clock.
    memory_bandwidth : float or None
        Peak DRAM bandwidth in bytes/s: memory clock x bus width x 2 (DDR) / 8.
    """

    backend: str
    name: str
    compute_capability: tuple | None
    sm_count: int
    memory_bytes: int | None
    max_threads_per_block: int
    max_shared_memory_per_block: int
    fp32_peak_flops: float | None
    memory_bandwidth: float | None

    def __str__(self) -> str:
        if self.backend == "sim":
            return (
                "CUDA simulator (Numba): kernels run on the CPU, one block after another; "
                "timings say nothing about a GPU."
            )
        cc = ".".join(map(str, self.compute_capability))
        parts = [
            f"{self.name} (compute capability {cc})",
            f"{self.sm_count} SMs",
            f"{self.memory_bytes / 2**30:.1f} GiB",
        ]
        if self.fp32_peak_flops:
            parts.append(f"FP32 peak {self.fp32_peak_flops / 1e12:.1f} TFLOP/s")
        if self.memory_bandwidth:
            parts.append(f"memory bandwidth {self.memory_bandwidth / 1e9:.0f} GB/s")
        return ", ".join(parts)

    def _repr_html_(self) -> str:
        return f"<b>Device:</b> {self}"

    def as_dict(self) -> dict:
        """The fields as a JSON-friendly dict."""
        out = dict(self.__dict__)
        if out["compute_capability"] is not None:
            out["compute_capability"] = list(out["compute_capability"])
        return out


def info() -> DeviceInfo:
    """Describe the active device (GPU name, SMs, memory, peaks) or the simulator."""
    from numba import cuda

    if is_simulator():
        return DeviceInfo("sim", "CUDA simulator", None, 1, None, 1024, 48 * 1024, None, None)
    dev = cuda.get_current_device()
    cc = tuple(dev.compute_capability)
    sms = dev.MULTIPROCESSOR_COUNT
    lanes = _FP32_LANES_PER_SM.get(cc, 128)
    name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
    clock_hz = _attribute(dev, "CLOCK_RATE", 1e3) or _lookup(_BOOST_CLOCK_HZ, name)
    mem_clock_hz = _attribute(dev, "MEMORY_CLOCK_RATE", 1e3)
    bus_bits = _attribute(dev, "GLOBAL_MEMORY_BUS_WIDTH", 1)
    bandwidth = mem_clock_hz * bus_bits * 2 / 8 if mem_clock_hz and bus_bits else _lookup(_BANDWIDTH, name)
    _free, total = cuda.current_context().get_memory_info()
    return DeviceInfo(
        backend="gpu",
        name=name,
        compute_capability=cc,
        sm_count=sms,
        memory_bytes=int(total),
        max_threads_per_block=dev.MAX_THREADS_PER_BLOCK,
        max_shared_memory_per_block=dev.MAX_SHARED_MEMORY_PER_BLOCK,
        fp32_peak_flops=sms * lanes * 2 * clock_hz if clock_hz else None,
        memory_bandwidth=bandwidth,
    )


# Fallbacks where the driver no longer reports clocks (CUDA 13 deprecates those attributes).
_BOOST_CLOCK_HZ = {"H100 PCIe": 1.755e9, "H100": 1.98e9, "H200": 1.98e9, "A100": 1.41e9, "L40S": 2.52e9}
_BANDWIDTH = {"H100 PCIe": 2.0e12, "H100 NVL": 3.9e12, "H100": 3.35e12, "H200": 4.8e12,
              "A100-SXM4-80GB": 2.039e12, "A100-PCIE-80GB": 1.935e12, "A100": 1.555e12, "L40S": 0.864e12}


def _attribute(dev, name, scale):
    """A device attribute times ``scale``, or None where the driver does not report it."""
    try:
        value = getattr(dev, name)
    except Exception:  # attribute removed from the driver API, or unsupported
        return None
    return value * scale if value else None


def _lookup(table, device_name):
    """First entry whose key occurs in the device name (tables list specific names first)."""
    for key, value in table.items():
        if key in device_name:
            return value
    return None
