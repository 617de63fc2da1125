"""Compile every reference kernel to PTX and SASS resources, with no GPU needed.

Run as ``python -m course_lib.compile_check [--cc 80 90] [--json FILE]``. It needs the
real CUDA target of numba-cuda, so it forces ``COURSE_BACKEND=gpu`` for its own
process; the simulator cannot compile anything. The toolkit pieces (NVVM to make PTX,
nvJitLink to assemble it and report registers and shared memory) come from the
``numba-cuda[cu13]`` / ``[cu12]`` wheels.

Tests call :func:`run_in_subprocess`, because a process that already runs the
simulator cannot switch to the real target.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import asdict, dataclass

__all__ = ["CompileResult", "KernelPTX", "compile_all", "compile_kernel", "main", "ptx_resources", "run_in_subprocess"]

#: sm_75 (Colab's T4), sm_80 (A100), sm_90 (H100/H200).
DEFAULT_CCS = ((7, 5), (8, 0), (9, 0))
#: Per-SM limits for occupancy: threads, blocks, 32-bit registers, shared bytes usable by blocks, and shared
#: bytes the system reserves per block (CUDA C Programming Guide, "Compute Capabilities" table).
SM_LIMITS = {(7, 5): (1024, 16, 65536, 65536, 0), (8, 0): (2048, 32, 65536, 167936, 1024),
             (8, 6): (1536, 16, 65536, 102400, 1024), (9, 0): (2048, 32, 65536, 233472, 1024)}
#: Streaming multiprocessors of the smallest GPU the course supports: Colab's T4 (sm_75).
T4_SMS = 40
#: Threads per block of each cooperative kernel's largest launch (the grid-barrier kernels launch with at most
#: ``max_cooperative_grid_blocks(block)`` blocks): poisson's default block on a GPU, ica's block of C <= 256
#: channels; hac's registered kernels name their block.
COOPERATIVE_BLOCKS = {"poisson.jacobi_cooperative_kernel": 256, "ica.persistent_step_kernel": 256,
                      "ica.split_step_kernel": 256}  # the split step launches 256 threads per block on a GPU


@dataclass
class CompileResult:
    """Outcome of compiling one kernel for one compute capability."""

    kernel: str
    cc: str
    ok: bool
    registers: int | None = None
    shared_bytes: int | None = None
    spill_bytes: int | None = None
    ptx_lines: int | None = None
    error: str = ""
    #: Blocks of the kernel's launch block resident per SM (grid-barrier kernels only): a cooperative grid
    #: holds at most this many per SM (``T4_SMS`` times it on a T4, for sm_75).
    cooperative_blocks_per_sm: int | None = None


_RESOURCES = re.compile(r"used (\d+) registers.*?(\d+) bytes smem", re.S)
_SPILLS = re.compile(r"(\d+) bytes spill stores")


def ptx_resources(ptx: str, cc) -> tuple[int | None, int | None, int | None]:
    """Registers, static shared memory and spill bytes reported by ptxas through nvJitLink.

    Parameters
    ----------
    ptx : str
        From ``cuda.compile_ptx``.
    cc : (int, int)
        Compute capability to assemble for.

    Returns
    -------
    (registers per thread, static shared bytes per block, spill bytes), each None where ptxas
    did not report it (or without the CUDA toolkit wheels).
    """
    try:
        from cuda.bindings import nvjitlink
    except ImportError:  # pragma: no cover - only without the toolkit wheels
        return None, None, None
    handle = nvjitlink.create(2, [f"-arch=sm_{cc[0]}{cc[1]}", "-verbose"])
    try:
        data = ptx.encode()
        nvjitlink.add_data(handle, nvjitlink.InputType.PTX, data, len(data), "kernel")
        if "cudaCGSynchronize" in ptx:  # a grid barrier (cooperative launch) calls into the device runtime
            from numba.cuda.cudadrv.libs import get_cudalib

            nvjitlink.add_file(handle, nvjitlink.InputType.LIBRARY, get_cudalib("cudadevrt", static=True))
        nvjitlink.complete(handle)
        size = nvjitlink.get_info_log_size(handle)
        log = bytearray(size)
        nvjitlink.get_info_log(handle, log)
    finally:
        nvjitlink.destroy(handle)
    text = log.decode(errors="replace")
    # The kernel's own line comes last (the device runtime's functions, when linked, come before it).
    found = ([None] + list(_RESOURCES.finditer(text)))[-1]
    spill = _SPILLS.search(text)
    if not found:
        return None, None, int(spill.group(1)) if spill else None
    return int(found.group(1)), int(found.group(2)), int(spill.group(1)) if spill else None


@contextmanager
def _device_of(cc):
    """numba-cuda compiles an ``@overload`` (``cuda.cg.this_grid()`` is one) for the current device's
    compute capability: without a GPU, name the one being compiled for."""
    from numba.cuda import dispatcher

    class _Device:
        compute_capability = tuple(cc)

    original = dispatcher.get_current_device
    dispatcher.get_current_device = _Device
    try:
        yield
    finally:
        dispatcher.get_current_device = original


def compile_all(ccs=DEFAULT_CCS) -> list[CompileResult]:
    """Compile every registered kernel for each compute capability.

    Must run in a process whose backend is ``"gpu"`` (a GPU is not needed).

    Returns
    -------
    list of CompileResult
    """
    import course_lib
    from course_lib.registry import all_kernels

    if course_lib.backend() != "gpu":
        raise RuntimeError("the compile check needs COURSE_BACKEND=gpu (no GPU is needed, only the toolkit wheels)")
    from numba import cuda

    results = []
    for spec in all_kernels():
        library = None  # typed and lowered once; NVVM makes each architecture's PTX from the same IR
        for cc in ccs:
            label = f"sm_{cc[0]}{cc[1]}"
            try:
                if library is None:
                    with _device_of(cc):
                        library = _lowered(spec.get_pyfunc(), spec.signature, cc, spec.fastmath)
                ptx = _ptx(library, cc)
                regs, smem, spill = ptx_resources(ptx, cc)
                result = CompileResult(spec.name, label, True, regs, smem, spill, ptx.count("\n"))
                if "cudaCGSynchronize" in ptx:
                    result.cooperative_blocks_per_sm = cooperative_blocks_per_sm(spec.name, cc, regs, smem)
                results.append(result)
            except Exception as exc:  # report every failure, not just the first
                results.append(CompileResult(spec.name, label, False, error=f"{type(exc).__name__}: {exc}"))
    return results


def launch_block(kernel_name: str) -> int:
    """Threads per block of a cooperative kernel's largest launch (:data:`COOPERATIVE_BLOCKS`, or ``block=N``
    in its registered name)."""
    found = re.search(r"block=(\d+)\b", kernel_name)
    if found:
        return int(found.group(1))
    base = kernel_name.split("[")[0]
    if base not in COOPERATIVE_BLOCKS:
        raise KeyError(f"{kernel_name} synchronises its grid but declares no launch block: add it to "
                       "course_lib.compile_check.COOPERATIVE_BLOCKS")
    return COOPERATIVE_BLOCKS[base]


def blocks_per_sm(cc, block: int, registers: int, shared_bytes: int) -> int:
    """Blocks of ``block`` threads resident on one SM of compute capability ``cc`` (the occupancy calculator's
    model: threads, blocks, registers allocated per warp in units of 256, shared memory in units of 256 bytes
    plus the per-block reservation)."""
    threads, blocks, regs_per_sm, shared_per_sm, reserved = SM_LIMITS[tuple(cc)]
    warps = -(-block // 32)
    by_threads = threads // (warps * 32)
    regs_per_warp = -(-registers * 32 // 256) * 256
    by_registers = (regs_per_sm // regs_per_warp) // warps if regs_per_warp else blocks
    shared = -(-(shared_bytes or 0) // 256) * 256 + reserved
    by_shared = shared_per_sm // shared if shared else blocks
    return max(0, min(blocks, by_threads, by_registers, by_shared))


def cooperative_blocks_per_sm(kernel_name: str, cc, registers, shared_bytes) -> int | None:
    """:func:`blocks_per_sm` at the kernel's launch block; None where ptxas reported no registers."""
    if registers is None:
        return None
    return blocks_per_sm(cc, launch_block(kernel_name), registers, shared_bytes or 0)


def _lowered(pyfunc, signature, cc, fastmath):
    """The kernel typed and lowered to NVVM IR, as ``cuda.compile_ptx`` does before its PTX (numba-cuda's
    ``compiler._compile_pyfunc_with_fixup``, called with ``compile_ptx``'s defaults)."""
    from numba.cuda import compiler

    library, _ = compiler._compile_pyfunc_with_fixup(
        pyfunc, signature, debug=None, lineinfo=False, device=False, fastmath=fastmath, cc=cc, opt=None,
        abi="numba", abi_info=None, forceinline=False, launch_bounds=None, lto=False)
    return library


def _ptx(library, cc) -> str:
    codes = library.get_asm_strs(cc=cc)
    if len(codes) != 1:
        raise RuntimeError(f"the kernel compiles to {len(codes)} PTX modules, expected one")
    return codes[0]


def format_table(results) -> str:
    """A plain-text table of the results."""
    rows = [("kernel", "arch", "ok", "regs", "smem B", "spill B", "PTX lines", "coop blocks/SM")]
    for r in results:
        rows.append((r.kernel, r.cc, "yes" if r.ok else "NO", str(r.registers or "-"),
                     str(r.shared_bytes if r.shared_bytes is not None else "-"),
                     str(r.spill_bytes if r.spill_bytes is not None else "-"), str(r.ptx_lines or "-"),
                     "-" if r.cooperative_blocks_per_sm is None else str(r.cooperative_blocks_per_sm)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)) for row in rows]
    lines += [f"{r.kernel} ({r.cc}): {r.error}" for r in results if not r.ok]
    return "\n".join(lines)


def run_in_subprocess(ccs=DEFAULT_CCS, timeout=900) -> list[CompileResult]:
    """Run the compile check in a fresh process with the real CUDA target."""
    env = dict(os.environ, COURSE_BACKEND="gpu", NUMBA_ENABLE_CUDASIM="0")
    args = [sys.executable, "-m", "course_lib.compile_check", "--json", "-", "--cc"]
    args += [f"{a}{b}" for a, b in ccs]
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"compile check crashed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    return [CompileResult(**row) for row in json.loads(proc.stdout)]


@dataclass
class KernelPTX:
    """What NVVM made of one kernel: see :func:`compile_kernel`."""

    kernel: str
    cc: str
    ptx: str
    registers: int | None
    shared_bytes: int | None
    spill_bytes: int | None


def compile_kernel(kernel, signature: str, *, cc=(9, 0), fastmath: bool = False, timeout: float = 300) -> KernelPTX:
    """Compile one kernel to PTX for ``cc`` in a child process where the simulator is off.

    Works from a notebook running the simulator, for the course's kernels and for kernels
    written in a cell (sent by value, as :mod:`course_lib.sim.remote` does); no GPU is needed.
    Lessons use it to show what the hardware will really run.

    Parameters
    ----------
    kernel : @cuda.jit kernel or its Python function
    signature : str
        Numba signature, e.g. ``"void(float64[::1], float64[::1])"``.
    cc : (int, int)
        Compute capability.
    fastmath : bool
        Compile as ``cuda.jit(fastmath=True)`` would.
    timeout : float
        Seconds before the child is stopped.

    Returns
    -------
    KernelPTX
        The PTX text and the registers, static shared memory and spill bytes ptxas reports.

    Raises
    ------
    RuntimeError
        If the child process fails (the message carries its error).
    """
    from .sim._instrument import py_function
    from .sim._transport import _by_name, _dumps

    fn = py_function(kernel)
    named = _by_name(kernel) if kernel is not fn else None
    target = ("name", named) if named else ("function", fn)
    request = _dumps({"target": target, "signature": signature, "cc": tuple(cc), "fastmath": fastmath}, [fn])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, COURSE_BACKEND="gpu", NUMBA_ENABLE_CUDASIM="0")
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    proc = subprocess.run([sys.executable, "-m", "course_lib.compile_check", "--serve-one"], input=request,
                          capture_output=True, env=env, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"compiling {fn.__name__} failed:\n{proc.stderr.decode(errors='replace')[-3000:]}")
    import pickle

    return KernelPTX(**pickle.loads(proc.stdout))


def _serve_one() -> int:
    """Child side of :func:`compile_kernel`: a pickled request on stdin, a KernelPTX as a dict on stdout."""
    import pickle

    from course_lib import device

    device.configure(force="gpu")
    from numba import cuda

    from .sim._transport import _lookup

    request = pickle.loads(sys.stdin.buffer.read())
    kind, target = request["target"]
    kernel = _lookup(*target) if kind == "name" else target
    py_func = getattr(kernel, "py_func", kernel)
    cc = request["cc"]
    with _device_of(cc):
        ptx, _ = cuda.compile_ptx(py_func, request["signature"], cc=cc, fastmath=request["fastmath"])
    regs, smem, spill = ptx_resources(ptx, cc)
    # A plain dict: under ``python -m`` this module is __main__, so its classes would not unpickle.
    result = asdict(KernelPTX(py_func.__name__, f"sm_{cc[0]}{cc[1]}", ptx, regs, smem, spill))
    sys.stdout.buffer.write(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
    return 0


def main(argv=None) -> int:
    if (sys.argv[1:] if argv is None else list(argv)) == ["--serve-one"]:
        return _serve_one()
    parser = argparse.ArgumentParser(prog="python -m course_lib.compile_check", description=__doc__.splitlines()[0])
    parser.add_argument("--cc", nargs="+", default=["75", "80", "90"], help="compute capabilities, e.g. 75 80 90")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON ('-' for stdout)")
    ns = parser.parse_args(argv)
    from course_lib import device

    if sys.modules.get("numba.cuda") is not None and device._numba_cuda_mode() == "sim":
        # `import course_lib` already set up the simulator (and its hooks imported
        # numba.cuda): start again in a process that uses the real CUDA target.
        env = dict(os.environ, COURSE_BACKEND="gpu", NUMBA_ENABLE_CUDASIM="0")
        argv = sys.argv[1:] if argv is None else list(argv)
        return subprocess.run([sys.executable, "-m", "course_lib.compile_check", *argv], env=env).returncode
    device.configure(force="gpu")
    ccs = [(int(c[:-1]), int(c[-1])) for c in ns.cc]
    results = compile_all(ccs)
    if ns.json == "-":
        json.dump([asdict(r) for r in results], sys.stdout)
    else:
        print(format_table(results))
        if ns.json:
            with open(ns.json, "w") as fh:
                json.dump([asdict(r) for r in results], fh, indent=1)
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
