"""What a GPU refuses at launch, refused here too; module globals frozen as a GPU compilation freezes them.

Every simulated launch (``kernel[grid, block](*args)``) passes :func:`refuse` before it runs.
Each refusal is a :class:`LaunchError` naming the limit, the value given and what a GPU does:

* a grid or block given with NumPy integers (numba-cuda launches through ``cuda.core``'s
  ``LaunchConfig``, which takes Python ints only: "LaunchConfig.grid must be an int, or a tuple
  with up to 3 ints");
* a block of more than 1,024 threads, or of more than 1,024 x 1,024 x 64 (CUDA C++
  Programming Guide, "Compute Capabilities", Table "Technical Specifications per Compute
  Capability"); a grid of more than 2**31 - 1 x 65,535 x 65,535 blocks; a zero-sized grid
  or block (``cuLaunchKernel`` answers ``CUDA_ERROR_INVALID_VALUE``);
* more than 48 KB of shared memory per block, static (the ``cuda.shared.array`` of the
  kernel, as numba-cuda lowers them: ``addrspace(3)`` globals) plus dynamic: a larger
  dynamic size needs an opt-in (``cudaFuncSetAttribute``) that numba-cuda does not make,
  and ptxas refuses more static shared memory ("uses too much shared data");
* an argument that is a Python list, set or dict (numba-cuda types a list as a reflected
  list, which needs the NRT, not available in kernels);
* a kernel compiled with a list of explicit signatures called with arguments that convert to
  none of them ("No matching definition for argument type(s)", as numba-cuda's dispatcher
  says); a kernel compiled for one signature is launched without a type check, its arrays'
  bytes read as the signature's types (:func:`reinterpret`), and an array of another element
  size or dimension, which a GPU would read past its end, is refused.

**Compile-time globals.** A GPU kernel is compiled at its first launch for given argument
types, and the module globals it reads (numbers, tuples, arrays) become constants of that
compilation: changing them on the host later changes nothing for that kernel.
:func:`frozen_globals` keeps the values seen at the first launch of each (kernel, argument
types) and puts them back into the module for the duration of every later launch.
"""

from __future__ import annotations

import math
from contextlib import contextmanager

import numpy as np

__all__ = ["LaunchError", "MAX_BLOCK_DIM", "MAX_GRID_DIM", "MAX_SHARED_BYTES", "MAX_THREADS_PER_BLOCK",
           "frozen_globals", "refuse", "refuse_shared", "reinterpret"]

#: Limits of every GPU numba-cuda 0.30 supports (compute capability 3.5 and later).
MAX_THREADS_PER_BLOCK = 1024
MAX_BLOCK_DIM = (1024, 1024, 64)
MAX_GRID_DIM = (2**31 - 1, 65535, 65535)
MAX_SHARED_BYTES = 48 * 1024


class LaunchError(ValueError):
    """A launch that a GPU refuses (the message names the limit and what a GPU does)."""


def _dims(dim):
    return tuple(int(d) for d in dim) + (1,) * (3 - len(dim))


def refuse(fn, grid_dim, block_dim, dynshared, args, signature=None, launch_bound=None):
    """Raise :class:`LaunchError` if a GPU would refuse this launch; return nothing otherwise.

    Parameters
    ----------
    fn : function
        The kernel's Python function (for the messages).
    grid_dim, block_dim : tuple of int
        The launch configuration (1 to 3 entries).
    dynshared : int
        Bytes of dynamic shared memory.
    args : tuple
        The launch's arguments.
    signature : tuple of numba types, optional
        The argument types of the kernel's explicit signature.
    launch_bound : int, optional
        The kernel's most threads per block, from ``cuda.jit(launch_bounds=...)``.
    """
    name = getattr(fn, "__name__", "kernel")
    for what, dim in (("grid", grid_dim), ("block", block_dim)):
        if not all(isinstance(d, int) for d in dim):
            # numba-cuda checks numbers.Integral (errors.normalize_kernel_dimensions), then launches through
            # cuda.core's LaunchConfig, which takes Python ints only: a NumPy integer fails there.
            raise LaunchError(
                f"{name}[{grid_dim}, {block_dim}]: LaunchConfig.{what} must be an int, or a tuple with up to 3 ints "
                f"(got {tuple(dim)!r}); numba-cuda launches through cuda.core's LaunchConfig, which refuses NumPy "
                "integers. Convert the sizes with int(...).")
    grid, block = _dims(grid_dim), _dims(block_dim)
    if 0 in grid or 0 in block or min(grid + block) < 0:
        raise LaunchError(
            f"{name}[{grid_dim}, {block_dim}]: a grid or block with a zero (or negative) size; a GPU refuses the "
            "launch (cuLaunchKernel returns CUDA_ERROR_INVALID_VALUE). Skip the launch when there is no work.")
    threads = math.prod(block)
    if threads > MAX_THREADS_PER_BLOCK or any(b > m for b, m in zip(block, MAX_BLOCK_DIM)):
        raise LaunchError(
            f"{name}[{grid_dim}, {block_dim}]: a block of {' x '.join(map(str, block))} = {threads} threads; a GPU "
            f"allows at most {MAX_THREADS_PER_BLOCK} threads per block (and at most "
            f"{' x '.join(map(str, MAX_BLOCK_DIM))} in x, y, z) and refuses the launch (CUDA_ERROR_INVALID_VALUE). "
            "Use more blocks of fewer threads.")
    if launch_bound is not None and threads > launch_bound:
        raise LaunchError(
            f"{name}[{grid_dim}, {block_dim}]: a block of {threads} threads, but the kernel was compiled with "
            f"launch_bounds of {launch_bound} threads per block, and a kernel launched with more threads per block "
            "than its bound fails to launch on a GPU (CUDA C++ Programming Guide, 'Launch Bounds'). Launch at most "
            "that many threads per block.")
    if any(g > m for g, m in zip(grid, MAX_GRID_DIM)):
        raise LaunchError(
            f"{name}[{grid_dim}, {block_dim}]: a grid of {' x '.join(map(str, grid))} blocks; a GPU allows at most "
            f"{' x '.join(map(str, MAX_GRID_DIM))} and refuses the launch (CUDA_ERROR_INVALID_VALUE).")
    if dynshared > MAX_SHARED_BYTES:
        raise LaunchError(
            f"{name}: {dynshared} bytes of dynamic shared memory; a GPU gives a block at most {MAX_SHARED_BYTES} "
            "bytes without an opt-in numba-cuda does not make, and refuses the launch (CUDA_ERROR_INVALID_VALUE).")
    for position, arg in enumerate(args):
        if isinstance(arg, (list, set, dict)):
            raise LaunchError(
                f"{name}: argument {position} is a Python {type(arg).__name__}; numba-cuda cannot pass it to a GPU "
                "kernel (a reflected list needs the NRT, which kernels do not have) and refuses to compile. Pass a "
                "NumPy array (np.asarray(...)) or a device array.")
    if signature is not None:
        _match_signature(name, signature, args)


def _match_signature(name, signature, args):
    """Raise as numba-cuda's dispatcher does when ``args`` do not convert to the explicit ``signature``."""
    from ._typed_ops import _context
    from ._typing_base import argument_type

    given = [argument_type(a) for a in args]
    if len(given) == len(signature):
        ctx = _context()
        if all(g is None or g == s or ctx.can_convert(g, s) is not None for g, s in zip(given, signature)):
            return
    raise LaunchError(
        f"{name} was compiled for the explicit signature ({', '.join(map(str, signature))}) only; a GPU refuses "
        f"this call: No matching definition for argument type(s) {', '.join(str(g) for g in given)}. Pass "
        "arguments of the signature's types, or drop the signature so that numba-cuda compiles for the arguments.")


def reinterpret(fn, signature, args):
    """The arguments of a launch of a kernel compiled for one explicit signature, as a GPU passes them.

    numba-cuda launches such a kernel without checking the argument types: an array is passed
    as its pointer, shape and strides, and the kernel reads its bytes as the signature's element
    type (a uint32 array given to ``int32[:]`` is read as int32). An array of another element
    size or number of dimensions would be read past its elements or with a wrong shape on a GPU
    (undefined): that is refused here.

    Parameters
    ----------
    fn : function
        The kernel's Python function (for the messages).
    signature : tuple of numba types
        The signature's argument types.
    args : tuple
        The launch's arguments.

    Returns
    -------
    tuple
        The arguments, arrays of another element type of the same size replaced by views.
    """
    from numba.core import types

    if len(signature) != len(args):
        return args
    out = list(args)
    for position, (nbtype, arg) in enumerate(zip(signature, args)):
        if not isinstance(nbtype, types.Array):
            continue
        dtype, ndim = getattr(arg, "dtype", None), getattr(arg, "ndim", None)
        if dtype is None or not hasattr(arg, "view"):
            continue
        want = np.dtype(str(nbtype.dtype)) if isinstance(nbtype.dtype, types.Number) else None
        if want is None or (dtype == want and ndim == nbtype.ndim):
            continue
        if ndim != nbtype.ndim or np.dtype(dtype).itemsize != want.itemsize:
            raise LaunchError(
                f"{getattr(fn, '__name__', 'kernel')} was compiled for the explicit signature "
                f"({', '.join(map(str, signature))}); argument {position} is a {ndim}-d {dtype} array. numba-cuda "
                f"launches such a kernel without checking types, and the GPU would read the array's bytes as a "
                f"{nbtype.ndim}-d {want} array (past its end, or with a wrong shape: undefined). Pass a {want} "
                "array, or compile without a signature.")
        out[position] = arg.view(want)  # the same bytes, read as the signature's type (as on a GPU)
    return tuple(out)


def refuse_shared(fn, typing, dynshared):
    """Raise :class:`LaunchError` if the kernel's static shared memory (from numba-cuda's lowering,
    :attr:`~course_lib.sim._typing.KernelTyping.shared_bytes`) plus ``dynshared`` bytes exceed 48 KB."""
    static = getattr(typing, "shared_bytes", 0) or 0
    if static + dynshared > MAX_SHARED_BYTES:
        what = f"{static} bytes of static shared memory" + (f" and {dynshared} dynamic" if dynshared else "")
        raise LaunchError(
            f"{getattr(fn, '__name__', 'kernel')}: {what} per block; a GPU gives a block at most {MAX_SHARED_BYTES} "
            "bytes (48 KB) without an opt-in numba-cuda does not make: ptxas refuses the kernel (\"uses too much "
            "shared data\") or the launch fails. Use smaller tiles, or fewer or narrower shared arrays.")


# ---------------------------------------------------------------------------------------------
# Compile-time globals
# ---------------------------------------------------------------------------------------------
#: (code of the kernel, argument types) -> {(id of a globals dict, name): value seen at the first launch}.
_frozen: dict = {}


def _freezable(value):
    """True for what numba freezes as a constant of the compiled kernel (numbers, tuples of them, arrays)."""
    if isinstance(value, (bool, int, float, complex, np.number, np.bool_, np.ndarray)):
        return True
    return isinstance(value, tuple) and all(_freezable(v) for v in value)


def _reads(fn, seen):
    """(globals dict, name) of every freezable global that ``fn`` and the device functions it calls read."""
    from ._kernel_refs import _global_names

    code = getattr(fn, "__code__", None)
    if code is None or id(fn) in seen:
        return
    seen.add(id(fn))
    namespace = fn.__globals__
    for name in _global_names(code):
        value = namespace.get(name)
        if _freezable(value):
            yield namespace, name
        else:
            inner = getattr(value, "py_func", None) or getattr(value, "fn", None)
            if callable(inner) and hasattr(inner, "__code__"):
                yield from _reads(inner, seen)


def _same(a, b):
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b, equal_nan=True))
    try:
        return bool(a == b) or (a != a and b != b)
    except Exception:
        return False


@contextmanager
def frozen_globals(fn, argtypes):
    """Within the ``with`` block, the globals ``fn`` reads hold the values of its first launch for ``argtypes``.

    Parameters
    ----------
    fn : function
        The kernel's Python function.
    argtypes : tuple
        The numba types of the launch's arguments (a new tuple is a new compilation on a GPU).
    """
    key = (fn.__code__, argtypes)
    frozen = _frozen.get(key)
    if frozen is None:
        frozen = {}
        for namespace, name in _reads(fn, set()):
            value = namespace[name]
            frozen[(id(namespace), name)] = (namespace, name, value.copy() if isinstance(value, np.ndarray) else value)
        _frozen[key] = frozen
        yield
        return
    restore = []
    for namespace, name, value in frozen.values():
        current = namespace.get(name, _MISSING)
        if current is _MISSING or not _same(current, value):
            restore.append((namespace, name, current))
            namespace[name] = value
    try:
        yield
    finally:
        for namespace, name, current in restore:
            if current is _MISSING:
                namespace.pop(name, None)
            else:
                namespace[name] = current


_MISSING = object()
