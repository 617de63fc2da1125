"""Instrumented launches: every array access of a simulated kernel goes to an observer.

:func:`launch` runs one kernel launch in the simulator like ``kernel[grid, block](*args)``
does, except that array arguments and shared arrays are wrapped in
:class:`TracedArray` (indexing as Numba compiles it: a negative index wraps around
and is reported, one outside the array is reported and refused; each element access is
reported with the byte offset it touches and the kernel source line doing it), atomics
are marked as such, and the block scheduler reports barriers and thread exits to the observer.
:mod:`course_lib.sim._check` and :mod:`course_lib.sim._profile` are the two observers.
"""

from __future__ import annotations

import inspect
import os
import sys
from itertools import count

import numpy as np

from numba.cuda import types
from numba.cuda.np import numpy_support

from . import _engine, _typing
from ._forwarded import forwarded
from ._traced_bytes import bytewise_where_widths_meet
from ._uninit import _never_written, _root, _uninitialized_entry, forget_uninitialized, track_uninitialized

__all__ = ["Observer", "TracedArray", "forget_uninitialized", "launch", "py_function", "is_kernel_code",
           "track_uninitialized"]

_alloc_ids = count(1)


def py_function(kernel):
    """The plain Python function of a kernel (simulator kernel, GPU dispatcher or function)."""
    fn = getattr(kernel, "py_func", None) or getattr(kernel, "fn", None) or kernel
    if not callable(fn) or not hasattr(fn, "__code__"):
        raise ValueError(f"expected a @cuda.jit kernel or its Python function, got {kernel!r}")
    return fn


class Observer:
    """What a launch reports to (every method is optional to override)."""

    def thread_tracer(self, v):
        """A ``sys.settrace`` function for the simulated thread ``v``, or None."""
        return None

    def block_started(self, grid_point, threads):
        pass

    #: The simulated thread running now (set by :meth:`resumed`).
    current = None

    def __init__(self):
        # (id(code), bytecode offset) of an access site -> (file, line). Reading
        # frame.f_lineno decodes the line table, too slow for every access; code
        # objects are keyed by id (their hash and equality compare whole bytecode)
        # and kept alive for as long as the cache, so ids cannot be reused.
        self.sites = {}
        self._codes = []

    def site_line(self, frame):
        """(file, line) of the instruction ``frame`` is executing (cached per access site)."""
        key = (id(frame.f_code), frame.f_lasti)
        line = self.sites.get(key)
        if line is None:
            line = self.sites[key] = (frame.f_code.co_filename, frame.f_lineno)
            self._codes.append(frame.f_code)
        return line

    def resumed(self, v):
        """The simulated thread ``v`` takes the baton (starts, or returns from a wait)."""
        self.current = v

    def block_finished(self, grid_point):
        pass

    def thread_exited(self, v):
        pass

    def barrier(self, waiting, threads):
        pass

    def warp_deadlock(self, coll, missing, err):
        pass

    def access(self, array, offset, write, index, frame):
        """Thread :attr:`current` reads (or writes) the element at byte ``offset`` of ``array``."""

    def out_of_bounds(self, array, index, write, frame):
        """Thread :attr:`current` uses an index outside the shape of ``array``."""

    def negative_index(self, array, index, wrapped, write, frame):
        """Thread :attr:`current` uses a negative index, which Numba wraps to ``wrapped`` (on a GPU too)."""

    def warp_undefined(self, coll, v, src, in_mask):
        """Lane ``v`` of a shuffle reads lane ``src``, which does not take part (exited if ``in_mask``)."""

    def warp_operation(self, coll):
        """The lanes of a warp complete the collective ``coll`` (a shuffle, vote, match or syncwarp)."""

    def atomic(self, array, frame):
        """Thread :attr:`current` starts an atomic operation on ``array``."""

    def shared_allocated(self, nbytes, dynamic):
        """A block's ``cuda.shared.array`` of ``nbytes`` is declared (once per source line, as compiled);
        ``dynamic`` for a view of the launch's dynamic shared memory."""


class TracedArray:
    """An array seen by a simulated kernel, reporting each element access.

    Parameters
    ----------
    array : numpy.ndarray
        The memory (the simulator's device arrays are NumPy arrays).
    name : str
        Name shown in reports (the kernel parameter, or the shared array's variable).
    space : {"global", "shared"}
    observer : Observer
    alloc : int, optional
        Allocation id; views share it, so offsets are relative to the allocation start.
    base : int, optional
        Byte offset of ``array[0, ...]`` inside the allocation.
    root : numpy.ndarray, optional
        The whole allocation (``array`` itself by default).
    uninit : numpy.ndarray of bool, optional
        For device memory that was never written: which bytes of the allocation have been
        written since (see :func:`track_uninitialized`).

    Notes
    -----
    Indexing follows what Numba compiles, on a GPU as in the simulator: a negative index
    ``-size <= i < 0`` wraps around to ``i + size`` (reported to the observer as a likely
    bug); other indices outside the shape are reported, read 0 and write nothing.
    """

    __slots__ = ("_a", "name", "space", "_obs", "alloc", "itemsize", "_base", "_shape", "_strides", "_ndim", "_root",
                 "uninit", "bytewise", "_record")

    def __init__(self, array, name, space, observer, alloc=None, base=0, root=None, uninit=None, bytewise=False):
        self._record = array.dtype.fields is not None
        # Memory that views of several widths can reach (dynamic shared memory, records' fields): a race checker
        # compares its accesses byte by byte, not by element start.
        self.bytewise = bytewise or self._record
        self._a = array
        self.name = name
        self.space = space
        self._obs = observer
        self.alloc = next(_alloc_ids) if alloc is None else alloc
        self.itemsize = array.itemsize
        self._base = base
        self._shape = array.shape
        self._strides = array.strides
        self._ndim = array.ndim
        self._root = array if root is None else root
        self.uninit = uninit

    # Element access ----------------------------------------------------------
    def _locate(self, idx, write, frame):
        """Byte offset of ``idx``: None for a sub-array, False if out of bounds (reported)."""
        try:  # fast paths: one or two integer indices, as kernels almost always use
            if self._ndim == 1:
                n = self._shape[0]
                if -n <= idx < 0:
                    self._obs.negative_index(self, (idx,), (idx + n,), write, frame)
                    idx = idx + n
                inside = 0 <= idx < n
                off = self._base + idx * self._strides[0]
            elif self._ndim == 2:
                i, j = idx
                n, m = self._shape
                if i < 0 or j < 0:
                    wi = i + n if -n <= i < 0 else i
                    wj = j + m if -m <= j < 0 else j
                    if 0 <= wi < n and 0 <= wj < m:
                        self._obs.negative_index(self, (i, j), (wi, wj), write, frame)
                        i, j = wi, wj
                inside = 0 <= i < n and 0 <= j < m
                off = self._base + i * self._strides[0] + j * self._strides[1]
            else:
                raise TypeError
            if type(off) is not int and not isinstance(off, np.integer):
                raise TypeError
        except (TypeError, ValueError):
            return self._locate_general(idx, write, frame)
        if inside:
            return int(off)
        self._obs.out_of_bounds(self, idx if type(idx) is tuple else (idx,), write, frame)
        return False

    def _locate_general(self, idx, write, frame):
        if type(idx) is not tuple:
            idx = (idx,)
        if len(idx) != self._ndim:
            return None
        if not all(isinstance(i, (int, np.integer)) for i in idx):
            return None
        wrapped = self._wrap(idx, write, frame)
        if wrapped is None:
            return False
        off = self._base
        for i, s in zip(wrapped, self._strides):
            off += int(i) * s
        return off

    def __getitem__(self, idx):
        frame = sys._getframe(1)
        if self._record:
            return self._record_item(idx, frame)
        # Reads are most of a kernel's accesses: in-bounds 1-D and 2-D cases skip _locate.
        if self._ndim == 1:
            if type(idx) is int and 0 <= idx < self._shape[0]:
                self._obs.access(self, self._base + idx * self._strides[0], False, idx, frame)
                return self._a[idx]
        elif self._ndim == 2 and type(idx) is tuple and len(idx) == 2:
            i, j = idx
            if type(i) is int and type(j) is int and 0 <= i < self._shape[0] and 0 <= j < self._shape[1]:
                self._obs.access(self, self._base + i * self._strides[0] + j * self._strides[1], False, idx, frame)
                return self._a[idx]
        off = self._locate(idx, False, frame)
        if off is None:
            return self._view(self._a[idx])
        if off is False:
            return self._a.dtype.type(0)  # an out-of-bounds read yields 0 and is reported
        self._obs.access(self, off, False, idx, frame)
        return self._a[idx]

    def __setitem__(self, idx, value):
        frame = sys._getframe(1)
        off = self._locate(idx, True, frame)
        if off is None:
            self._a[idx] = value
            return
        if off is False:
            return  # an out-of-bounds write is dropped and reported
        self._obs.access(self, off, True, idx, frame)
        self._a[idx] = value

    def _view(self, sub):
        if not isinstance(sub, np.ndarray):
            return sub
        base = sub.__array_interface__["data"][0] - self._root.__array_interface__["data"][0]
        return TracedArray(sub, self.name, self.space, self._obs, self.alloc, base, self._root, self.uninit,
                           self.bytewise)

    def _record_item(self, idx, frame):
        """``records[i]``: no access yet (a GPU computes the record's address); its fields are read and written
        through the returned :class:`TracedRecord`, each access covering the field's bytes."""
        off = self._locate(idx, False, frame)
        if off is None:
            return self._view(self._a[idx])
        if off is False:
            return self._a.dtype.type(0) if self._a.dtype.fields is None else np.zeros((), self._a.dtype)[()]
        from ._traced_bytes import TracedRecord

        return TracedRecord(self, off, self._a[idx], idx)

    def atomic_index(self, index, frame):
        """The index an atomic operates on: wrapped if negative (reported), None if outside
        the array (reported once, as a write)."""
        idx = index if type(index) is tuple else (index,)
        if len(idx) != self._ndim or not all(isinstance(i, (int, np.integer)) for i in idx):
            return index  # let the simulator's atomic complain as it does
        wrapped = self._wrap(idx, True, frame)
        if wrapped is None or type(index) is tuple:
            return wrapped
        return wrapped[0]

    def _wrap(self, idx, write, frame):
        """The tuple of integers ``idx`` with negative indices wrapped as Numba does (reported),
        or None if it lies outside the array (reported)."""
        wrapped = tuple(i + n if -n <= i < 0 else i for i, n in zip(idx, self._shape))
        if any(not 0 <= i < n for i, n in zip(wrapped, self._shape)):
            self._obs.out_of_bounds(self, idx, write, frame)
            return None
        if wrapped != idx:
            self._obs.negative_index(self, idx, wrapped, write, frame)
        return wrapped

    # What kernels ask of arrays ----------------------------------------------
    shape = forwarded("_shape")
    ndim = forwarded("_ndim")
    size = forwarded("_a.size")
    dtype = forwarded("_a.dtype")
    strides = forwarded("_strides")

    def __len__(self):
        return len(self._a)

    def __getattr__(self, name):
        return getattr(self._a, name)

    def __array__(self, dtype=None, copy=None):
        return self._a if dtype is None else self._a.astype(dtype)

    def __repr__(self):
        return f"<{self.space} array {self.name} {self._a.dtype}{list(self._shape)}>"


class _TracedShared:
    """``cuda.shared`` of an instrumented launch: arrays are traced and named after their variable."""

    def __init__(self, stock, observer):
        self._stock = stock
        self._obs = observer
        self._allocations = {}
        self._dynamic = next(_alloc_ids)  # every dynamic shared array is a view of one buffer
        self._alloc_of_line = {}  # (file, line, call) -> allocation id, the same in every block of the launch

    def for_block(self):
        """The allocator of one block: its own arrays (shared memory belongs to a block), with the
        launch's allocation ids (a report names one shared array, whichever block races on it)."""
        from numba.cuda.simulator.kernelapi import FakeCUDAShared

        block = _TracedShared(FakeCUDAShared(self._stock._dynshared_size), self._obs)
        block._dynamic, block._alloc_of_line = self._dynamic, self._alloc_of_line
        return block

    def array(self, shape, dtype, alignment=None):
        frame = sys._getframe(1)
        key = (frame.f_code.co_filename, frame.f_lineno, frame.f_lasti)
        traced = self._allocations.get(key)
        if traced is None:
            # One allocation per call site, as on a GPU (two calls on one line are two arrays), the same in
            # every thread of the block (the stock allocator cannot be asked from here: it names by line).
            name = _assigned_name(frame) or "shared"
            if shape == 0:
                raw = self._stock.array(shape, dtype, alignment)  # dynamic shared memory
                traced = TracedArray(raw, name, "shared", self._obs, alloc=self._dynamic, bytewise=True)
            else:
                if isinstance(dtype, types.Type):
                    dtype = numpy_support.as_dtype(dtype)
                raw = np.zeros(shape, dtype)
                alloc = self._alloc_of_line.get(key)
                if alloc is None:
                    alloc = self._alloc_of_line[key] = next(_alloc_ids)
                traced = TracedArray(raw, name, "shared", self._obs, alloc=alloc)
            self._allocations[key] = traced
            self._obs.shared_allocated(raw.nbytes, shape == 0)
        return traced


def _assigned_name(frame):
    import linecache

    text = linecache.getline(frame.f_code.co_filename, frame.f_lineno, frame.f_globals).strip()
    name = text.split("=", 1)[0].strip() if "=" in text else ""
    return name if name.isidentifier() else None


class _TracedAtomic:
    """``cuda.atomic`` of an instrumented launch: the accesses inside are marked atomic."""

    def __init__(self, stock, observer):
        self._stock = stock
        self._obs = observer

    def __getattr__(self, name):
        op = getattr(self._stock, name)
        obs = self._obs

        def atomic(array, *rest):
            v = obs.current
            frame = sys._getframe(1)
            obs.atomic(array, frame)
            if isinstance(array, TracedArray) and rest and name != "compare_and_swap":
                index = array.atomic_index(rest[0], frame)
                if index is None:  # outside the array: reported once, as a write; nothing happens
                    return array.dtype.type(0)
                rest = (index,) + rest[1:]
            v.in_atomic = frame  # the accesses inside are the kernel line's, and atomic
            try:
                return op(array, *rest)
            finally:
                v.in_atomic = None

        return atomic


_LIBRARY_DIRS = None


def is_kernel_code(code, _cache={}):
    """True if a code object may be kernel code: not Python's, NumPy's, Numba's or this package's.

    Kernels live in notebooks, scripts, tests and ``course_lib`` (wherever it is
    installed); everything else installed (the simulator, NumPy, the standard library)
    and ``course_lib.sim`` itself (but its lesson kernels) is machinery whose lines the
    profiler must not count.
    """
    known = _cache.get(code)
    if known is None:
        global _LIBRARY_DIRS
        if _LIBRARY_DIRS is None:
            import sysconfig

            paths = sysconfig.get_paths()
            libs = {os.path.abspath(paths[k]) + os.sep for k in ("stdlib", "platstdlib", "purelib", "platlib")}
            course = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
            _LIBRARY_DIRS = (tuple(libs), course, os.path.dirname(os.path.abspath(__file__)) + os.sep)
        libs, course, sim_dir = _LIBRARY_DIRS
        if code.co_filename.startswith("<frozen "):
            known = False  # importlib, abc... of the standard library
        else:
            path = os.path.abspath(code.co_filename)
            machinery = path.startswith(sim_dir) and os.path.basename(path) != "kernels.py"
            known = not machinery and (path.startswith(course) or not path.startswith(libs))
        _cache[code] = known
    return known


def _device_memory(arg, retr):
    """The simulator's conversion of a kernel argument (as FakeCUDAKernel.__call__ does it)."""
    from numba.cuda.simulator.args import ArgHint, InOut
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    if isinstance(arg, np.ndarray) and arg.ndim > 0:
        return InOut(arg).to_device(retr)
    if isinstance(arg, ArgHint):
        return arg.to_device(retr)
    if isinstance(arg, np.void):
        return FakeCUDAArray(arg)
    return arg


def block_points(blocks, grid_dim) -> list:
    """Block indices as 3-D grid points, checked against the grid.

    Parameters
    ----------
    blocks : sequence of int or tuple of int
        Block indices: an int is a block of a 1-D grid (its x index), a tuple ``(x, y[, z])``.
    grid_dim : tuple of 3 int

    Returns
    -------
    list of tuple of 3 int
        Distinct points, in the given order.

    Raises
    ------
    ValueError
        An index outside the grid, a repeated block, or no block at all.
    """
    points = []
    for b in blocks:
        point = (int(b),) if isinstance(b, (int, np.integer)) else tuple(int(v) for v in b)
        point = point + (0,) * (3 - len(point))
        if len(point) != 3 or not all(0 <= v < g for v, g in zip(point, grid_dim)):
            raise ValueError(f"block {b!r} is not in the grid {tuple(grid_dim)}")
        if point in points:
            raise ValueError(f"block {b!r} is given twice")
        points.append(point)
    if not points:
        raise ValueError("no block to run: give at least one block index")
    return points


def launch(kernel, griddim, blockdim, args, observer, *, seed=None, sharedmem=0, blocks=None):
    """Run ``kernel[griddim, blockdim, 0, sharedmem](*args)`` in the simulator, observed.

    Parameters
    ----------
    kernel : simulator kernel, GPU dispatcher or Python function
    griddim, blockdim : int or tuple of int
    args : sequence
        Kernel arguments; NumPy arrays are copied in and back as in a normal launch.
    observer : Observer
    seed : int, optional
        Shuffle the order in which blocks start, threads start and threads leave
        barriers, with this seed. ``None`` keeps the simulator's order (blocks and warps in
        an order drawn from :data:`course_lib.sim._engine.order_rng`).
    sharedmem : int
        Bytes of dynamic shared memory.
    blocks : sequence of tuple of int, optional
        Run only these blocks (3-D grid points, see :func:`block_points`), in this order; the others
        do not run. ``None`` runs the whole grid.
    """
    from numba.cuda.errors import normalize_kernel_dimensions
    from numba.cuda.simulator import kernel as sim_kernel
    from numba.cuda.simulator import kernelapi
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    from . import _hooks

    _hooks.install()
    fn = py_function(kernel)
    grid_dim, block_dim = normalize_kernel_dimensions(griddim, blockdim)
    names = list(inspect.signature(fn).parameters)
    if len(names) != len(args):
        raise ValueError(f"{fn.__name__} takes {len(names)} arguments ({', '.join(names)}), got {len(args)}")
    _typing.before_launch(fn, args)  # refuses what a GPU would not compile (course_lib.sim._typing)
    module = kernelapi.FakeCUDAModule(grid_dim, block_dim, sharedmem)
    module._shared = _TracedShared(module._shared, observer)
    module._atomic = _TracedAtomic(module._atomic, observer)
    fence = getattr(observer, "fence", None)
    if fence is not None:  # the checker follows fences (the PTX memory model's release/acquire patterns)
        module.threadfence = module.threadfence_system = lambda: fence()
        module.threadfence_block = lambda: fence(scope_block=True)
    rng = np.random.default_rng(seed) if seed is not None else None
    sampled = blocks is not None
    blocks = list(np.ndindex(*grid_dim)) if blocks is None else block_points(blocks, grid_dim)
    if rng is not None:  # else run_grid draws the simulator's own order
        rng.shuffle(blocks)
    with _engine.launch_lock:  # one simulated launch at a time (see _engine.launch_lock)
        initcheck = getattr(observer, "initcheck", False)
        roots = {}  # id(root) -> (root, alloc id): arguments that are views of one allocation share it
        with sim_kernel._push_kernel_context(module):
            retr = []
            fake_args = []
            for name, arg in zip(names, args):
                mem = _device_memory(arg, retr)
                if isinstance(mem, FakeCUDAArray) and isinstance(mem._ary, np.ndarray):
                    ary = mem._ary
                    root = _root(ary)
                    _, alloc = roots.setdefault(id(root), (root, next(_alloc_ids)))
                    # A view (d[1:]) starts inside its allocation, which a GPU aligns to 256 bytes.
                    base = ary.__array_interface__["data"][0] - root.__array_interface__["data"][0]
                    uninit = None
                    entry = _uninitialized_entry(root) if _never_written else None
                    if entry is not None:
                        if not initcheck:
                            del _never_written[id(root)]  # an unobserved launch may write it
                        else:
                            if entry[1] is None:
                                entry[1] = np.zeros(root.nbytes, np.bool_)
                            uninit = entry[1]
                    mem = TracedArray(ary, name, "global", observer, alloc, base, root, uninit)
                fake_args.append(mem)
            bytewise_where_widths_meet([m for m in fake_args if isinstance(m, TracedArray)])
            with sim_kernel.swapped_cuda_module(fn, module):
                _engine.observer, _engine.thread_order_rng = observer, rng
                try:
                    _engine.run_grid(fn, grid_dim, block_dim, False, fake_args, module,
                                     order=blocks if rng is not None or sampled else None)
                finally:
                    _engine.observer, _engine.thread_order_rng = None, None
            for write_back in retr:
                write_back()
        for root, _ in roots.values():
            entry = _uninitialized_entry(root) if _never_written else None
            if entry is not None and entry[1] is not None and entry[1].all():
                del _never_written[id(root)]
    return grid_dim, block_dim
