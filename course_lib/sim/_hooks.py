"""Installation of the simulator hooks, and their exact restoration.

Three things of numba-cuda's simulator are changed, all reversibly:

1. ``numba.cuda.simulator.kernel.BlockManager`` (the module global that
   ``FakeCUDAKernel.__call__`` instantiates for every block) becomes
   :class:`~course_lib.sim._engine.ScheduledBlockManager`, and a call of a device
   function whose module already sees the simulated ``cuda`` module (the usual case:
   kernel and device functions in one module) skips the stock swap of that module's
   globals, which costs more than the call itself; kernels and device functions run
   as copies that tick the scheduler at loop back-edges (:func:`~course_lib.sim._engine.fair`),
   and so do the simulator's atomics, so that spinning threads let the others run;
   ``kernel[grid, block]`` returns a configured copy (as on a GPU) and launches from
   several host threads run one at a time (:data:`~course_lib.sim._engine.launch_lock`);
   ``cuda.jit`` keeps an explicit signature, and a call converts its scalar arguments to
   the signature's types, as numba does (:func:`_signed`);
2. ``FakeCUDAModule`` (what ``cuda`` means inside a simulated kernel) gains the warp
   primitives it lacks: ``shfl_sync``, ``shfl_up_sync``, ``shfl_down_sync``,
   ``shfl_xor_sync``, ``ballot_sync``, ``all_sync``, ``any_sync``, ``eq_sync``,
   ``match_any_sync``, ``match_all_sync``, ``syncwarp``, ``activemask`` and
   ``lanemask_lt``, and a ``popc`` that counts negative values' bits as a GPU does;
   ``fma``, ``cbrt``, ``brev``, ``clz`` and ``ffs`` as the GPU computes them
   (:mod:`~course_lib.sim._intrinsics`); ``cuda.shared`` answers with the running block's
   own allocator (blocks interleave: see :func:`~course_lib.sim._engine.run_grid`);
   ``cuda.cg.this_grid().sync()`` is a grid barrier, ``max_cooperative_grid_blocks``
   reports the simulated GPU's limit, and events record timestamps; device arrays transpose
   into a copy and refuse a reshape that needs one, as numba-cuda's (:mod:`~course_lib.sim._device_arrays`);
   ``numba.cuda.random`` seeds its generators in exact 64-bit arithmetic (:mod:`~course_lib.sim._xoroshiro`);
3. for :func:`course_lib.sim.record` only, transfer and launch functions are wrapped
   for the duration of the ``with`` block (see :mod:`course_lib.sim._record`).

These rely on internals of numba-cuda, which is pinned in ``pyproject.toml``;
:func:`verify` (and ``tests/sim/test_hooks.py``) fails loudly if an upgrade moves them.
"""

from __future__ import annotations

import copy
import functools

import numpy as np

from . import _convert, _device_arrays, _engine, _intrinsics, _launch, _typed_ops, _typing, _uninit, _xoroshiro
from ._marks import _FAIR

__all__ = ["install", "installed", "uninstall", "verify", "HookError", "PINNED_NUMBA_CUDA"]

#: The numba-cuda release whose simulator internals these hooks were written against.
PINNED_NUMBA_CUDA = "0.30.4"

_WARP_NAMES = (
    "shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync", "ballot_sync", "all_sync", "any_sync",
    "eq_sync", "match_any_sync", "match_all_sync", "syncwarp", "activemask", "lanemask_lt",
)
_saved: dict | None = None


class HookError(RuntimeError):
    """numba-cuda's simulator no longer looks the way course_lib.sim expects."""


def _current():
    import threading

    t = threading.current_thread()
    if not isinstance(t, _engine.Carrier):
        raise HookError(
            "a warp primitive ran outside a thread of course_lib's block scheduler; "
            "was the kernel launched before `import course_lib` installed the simulator hooks?"
        )
    return t


def _collective(kind):
    """The method ``cuda.<kind>(mask, value[, operand])`` of the simulated cuda module."""
    if kind.startswith("shfl"):
        def primitive(self, mask, value, operand):
            return _current().warp_collective(kind, mask, (value, operand), _engine._caller_line(2))
    else:  # votes (value is the predicate) and matches
        def primitive(self, mask, value):
            return _current().warp_collective(kind, mask, value, _engine._caller_line(2))

    primitive.__name__ = kind
    primitive.__doc__ = f"Simulated ``cuda.{kind}`` with lockstep semantics among the lanes of ``mask``."
    return primitive


def syncwarp(self, mask=_engine.FULL_MASK):
    """Simulated ``cuda.syncwarp``: the lanes of ``mask`` wait for each other."""
    _current().warp_collective("syncwarp", mask, None, _engine._caller_line(2))


def activemask(self):
    """Simulated ``cuda.activemask``: the lanes of the warp that reach this call together."""
    return _current().activemask()


def lanemask_lt(self):
    """Simulated ``cuda.lanemask_lt``: bits of the lanes below this one."""
    return np.uint32((1 << _current().v.lane) - 1)


def _shared(self):
    """``cuda.shared`` of the running block (each block has its own shared memory)."""
    import threading

    t = threading.current_thread()
    if type(t) is _engine.Carrier and t.manager is not None and t.manager.shared is not None:
        return t.manager.shared
    return self._shared


def grid_sync(self):
    """Simulated ``cuda.cg.this_grid().sync()``: every thread of every block arrives before any passes."""
    _current().grid_sync(_engine._caller_line(2))


def max_cooperative_grid_blocks(self, blockdim, dynsmemsize=0):
    """Largest cooperative grid of blocks of ``blockdim`` threads (and ``dynsmemsize`` bytes of dynamic
    shared memory) on the simulated GPU, with numba-cuda's signature."""
    return _engine.max_cooperative_grid_blocks(blockdim, dynsmemsize)


@functools.lru_cache(maxsize=None)
def _warp_methods():
    methods = {name: _collective(name) for name in _WARP_NAMES if name.endswith("_sync")}
    methods.update(syncwarp=syncwarp, activemask=activemask, lanemask_lt=lanemask_lt, popc=_intrinsics.popc,
                   fma=_intrinsics.fma, cbrt=_intrinsics.cbrt, brev=_intrinsics.brev, clz=_intrinsics.clz,
                   ffs=_intrinsics.ffs, shared=property(_shared))
    return methods


def _kernel_array_getitem():
    """``FakeWithinKernelCUDAArray.__getitem__`` (an array argument indexed in kernel code) reading an element
    in one call: the stock one makes three Python calls per element (itself, ``FakeCUDAArray.__getitem__``
    and ``__wrap_if_fake``), in the inner loop of most kernels. Slices and records go the stock way."""
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray, FakeWithinKernelCUDAArray

    ndarray, void = np.ndarray, np.void

    def __getitem__(self, idx):
        item = self._item
        if type(item) is FakeCUDAArray:
            value = item._ary[idx]
            if type(value) is not ndarray and type(value) is not void:
                return value  # what FakeCUDAArray.__getitem__ returns for an element, not wrapped
        value = item.__getitem__(idx)
        return FakeWithinKernelCUDAArray(value) if isinstance(value, FakeCUDAArray) else value

    return __getitem__


def _shared_array():
    """``FakeCUDAShared.array``, the stock allocator of ``cuda.shared.array`` outside the race checker and
    profiler, naming an allocation by its call site (file, line and call instruction: the stock one names it by
    line alone, and aliases two arrays declared on one line), read from the caller's frame alone: the stock one calls ``traceback.extract_stack``, which reads every frame of the stack and its
    source line, for every thread of every block (a third of a barrier-heavy kernel's time)."""
    import sys

    from numba.cuda import types  # the stock allocator's imports
    from numba.cuda.np import numpy_support

    def array(self, shape, dtype, alignment=None):
        if alignment is not None:
            raise RuntimeError("Array alignment is not supported in cudasim")
        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        if shape == 0:  # dynamic shared memory: every request is a view of the launch's one buffer
            count = self._dynshared_size // dtype.itemsize
            return np.frombuffer(self._dynshared.data, dtype=dtype, count=count)
        frame = sys._getframe(1)
        # The call site, not only its line: two cuda.shared.array calls on one line are two arrays on a GPU
        # (two addrspace(3) globals); the offset of the call instruction tells them apart.
        caller = (frame.f_code.co_filename, frame.f_lineno, frame.f_lasti)
        found = self._allocations.get(caller)
        if found is None:
            found = self._allocations[caller] = np.empty(shape, dtype)
        return found

    return array


def _class_methods():
    """(class, name, replacement) of the other simulator classes the hooks change."""
    from numba.cuda.simulator import api, kernel, kernelapi
    from numba.cuda.simulator.cudadrv import devicearray

    return [
        (kernelapi.FakeCUDAShared, "array", _shared_array()),
        (devicearray.FakeWithinKernelCUDAArray, "__getitem__", _kernel_array_getitem()),
        (kernelapi.GridGroup, "sync", grid_sync),
        (kernel.FakeOverload, "max_cooperative_grid_blocks", max_cooperative_grid_blocks),
        (api.Event, "__init__", _intrinsics.event_init),
        (api.Event, "record", _intrinsics.event_record),
        (api.Event, "query", _intrinsics.event_query),
        (api.Event, "elapsed_time", _intrinsics.event_elapsed_time),
        (kernel.FakeCUDAKernel, "forall", forall),
        (kernelapi.FakeCUDAFp16, "hfma", _intrinsics.hfma),
        (kernelapi.FakeCUDAFp16, "hfloor", _intrinsics.hfloor),
        (kernelapi.FakeCUDAFp16, "hmax", _intrinsics.hmax),
        (kernelapi.FakeCUDAFp16, "hmin", _intrinsics.hmin),
        *_device_arrays.class_methods(),
        *_xoroshiro.module_functions(),
    ]


def _device_call(stock_call):
    from numba.cuda.simulator import kernel, kernelapi
    from numba.cuda.simulator.cudadrv import devicearray

    swapped = kernelapi._swap_refcount
    swapped_cuda_module = kernelapi.swapped_cuda_module
    fair = _engine.fair
    on_carrier = _engine.on_carrier
    launching = _engine.launch_lock
    hold = _engine.hold_device_globals

    forget = _uninit.forget_uninitialized
    fake_array = devicearray.FakeCUDAArray
    convert = _typing.convert_arguments
    refuse, refuse_shared, frozen = _launch.refuse, _launch.refuse_shared, _launch.frozen_globals
    reinterpret = _launch.reinterpret
    argument_type = _typing.argument_type
    flushing = _typed_ops.flushing_subnormals

    def __call__(self, *args):
        argtypes = self.__dict__.get(SIGNATURE)
        if argtypes is not None:  # an explicit signature: numba converts the scalars to its types
            args = convert(argtypes, args)
        if self._device or on_carrier():  # a call from kernel code (or a device function from host code)
            fn = self.fn
            if swapped.get(id(fn.__globals__)):  # its globals already hold the launch's simulated cuda module
                # fair(fn)'s copy, kept on fn, read here: this runs for every device-function call of a kernel.
                ticking = getattr(fn, _FAIR, None)
                return (ticking or fair(fn))(*args)
            if on_carrier():  # kernel code: swapped until the launch ends (_engine.hold_device_globals)
                hold(fn, kernel._kernel_context)
                return fair(fn)(*args)  # loops of device functions tick too
            with swapped_cuda_module(fn, kernel._kernel_context):  # a device function called from host code
                return fair(fn)(*args)
        if self.grid_dim is not None and self.block_dim is not None:  # else the stock call says what is missing
            specialized = argtypes is not None and self.__dict__.get(SPECIALIZED, False)
            if specialized:  # one signature: no type check on a GPU, the arrays' bytes read as its types
                args = reinterpret(self.fn, argtypes, args)
            refuse(self.fn, self.grid_dim, self.block_dim, self.dynshared_size, args,
                   None if specialized else argtypes, self.__dict__.get(LAUNCH_BOUND))
        with launching:  # one simulated launch at a time, whichever host thread launches
            if _uninit._never_written:
                for arg in args:  # an unobserved launch may write its arguments
                    if isinstance(arg, fake_array):
                        forget(arg)
            with frozen(self.fn, tuple(argument_type(a) for a in args)):  # globals as at the first compilation
                typing = _typing.before_launch(self.fn, args, self._debug)  # refuses what a GPU would not compile
                if typing is not None:
                    refuse_shared(self.fn, typing, self.dynshared_size)
                with flushing(getattr(self, "_fastmath", False), args):  # fastmath: float32 subnormals flushed
                    return stock_call(self, *args)

    __call__.__doc__ = stock_call.__doc__
    return __call__


#: Attribute of a simulated kernel that holds the argument types of its explicit signature.
SIGNATURE = "_course_signature_argtypes"
#: Attribute of a simulated kernel compiled for one signature, not a list: numba-cuda's dispatcher is then
#: "specialized" and launches it without checking the argument types (``dispatcher.py``, ``call``).
SPECIALIZED = "_course_signature_specialized"


def _signed(stock_jit):
    """``cuda.jit`` that remembers an explicit signature on the kernel it makes.

    The stock simulator drops the signature, so a kernel compiled for ``void(int32[:], int32)``
    and launched with a Python int computes with a 64-bit value; on a GPU numba converts the
    argument to int32 first. The launch converts scalars to the signature's types (see
    :func:`course_lib.sim._typing.convert_arguments`).
    """

    @functools.wraps(stock_jit)
    def jit(func_or_sig=None, *args, **kwargs):
        bound = launch_bound(kwargs.pop("launch_bounds", None))
        for option in CODEGEN_OPTIONS:  # a GPU's jit takes them; they change the machine code, not the results
            kwargs.pop(option, None)
        made = stock_jit(func_or_sig, *args, **kwargs)
        argtypes = _typing.signature_argtypes(func_or_sig)
        if argtypes is None and bound is None or not callable(made):
            return made

        def marked(kernel):
            if argtypes is not None:
                kernel.__dict__[SIGNATURE] = argtypes
                kernel.__dict__[SPECIALIZED] = not isinstance(func_or_sig, (list, tuple))
            if bound is not None:
                kernel.__dict__[LAUNCH_BOUND] = bound
            return kernel

        if hasattr(made, "py_func"):  # a kernel already: cuda.jit(function, launch_bounds=...)
            return marked(made)

        @functools.wraps(made)
        def jitwrapper(fn):
            return marked(made(fn))

        return jitwrapper

    return jit


#: Options of numba-cuda's ``cuda.jit`` that the stock simulator's does not take and that change only the
#: machine code a GPU runs (line tables, a register cap, link-time optimisation, NVVM inlining). Others it takes
#: (``extensions``: typing extensions) change what compiles, so the stock simulator's refusal stands for them.
CODEGEN_OPTIONS = ("lineinfo", "max_registers", "lto", "forceinline")
#: Attribute of a simulated kernel made with ``launch_bounds``: its most threads per block.
LAUNCH_BOUND = "_course_launch_bound"


def launch_bound(bounds):
    """The most threads per block of ``cuda.jit(launch_bounds=...)`` (an int, or a tuple of one to three ints:
    threads per block, blocks per SM, blocks per cluster), or None without one."""
    if bounds is None:
        return None
    items = tuple(bounds) if isinstance(bounds, (tuple, list)) else (bounds,)
    if not 1 <= len(items) <= 3 or not all(isinstance(b, int) and not isinstance(b, bool) and b > 0 for b in items):
        raise ValueError(f"launch_bounds={bounds!r}: an int, or a tuple of one to three positive ints (threads per "
                         "block, blocks per SM, blocks per cluster)")
    return items[0]


def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
    """``kernel.forall(ntasks)``: no launch for no tasks, as numba-cuda's ``ForAll`` (numba issue #5017),
    rather than a launch of zero blocks, which a GPU refuses."""
    if ntasks == 0:
        return lambda *args: None
    return _STOCK_FORALL[0](self, ntasks, tpb, stream, sharedmem)


_STOCK_FORALL: list = []


def _configured(stock_getitem):
    """``kernel[grid, block, ...]`` gives a configured copy, as numba-cuda's dispatcher does on a GPU.

    The stock simulator stores the configuration on the kernel itself: two host threads
    launching one kernel with different grids overwrite each other's, and a dynamic
    shared-memory size outlives the launch that gave it.
    """

    def __getitem__(self, configuration):
        return stock_getitem(copy.copy(self), configuration)

    __getitem__.__doc__ = stock_getitem.__doc__
    return __getitem__


def _ticking(op, name):
    """An atomic of the simulated cuda module that counts as a step of the running thread.

    Its operands are first converted to the array's element type, as numba-cuda converts them
    (``compile_ptx`` of ``cuda.atomic.add(uint32_array, 0, -1)``: ``atom.global.add.u32 ..., -1``,
    i.e. 0xFFFFFFFF added modulo 2**32), not left to NumPy, which refuses -1 as a uint32.
    """
    tick = _engine.tick
    operand = _convert.operand

    if name == "compare_and_swap":  # (array, old, value)
        def atomic(self, array, old, value):
            result = op(self, array, operand(array, old), operand(array, value))
            tick()
            return result
    elif name == "cas":  # (array, index, old, value)
        def atomic(self, array, index, old, value):
            result = op(self, array, index, operand(array, old), operand(array, value))
            tick()
            return result
    else:  # (array, index, value)
        def atomic(self, array, index, value):
            result = op(self, array, index, operand(array, value))
            tick()
            return result

    functools.update_wrapper(atomic, op)

    return atomic


def _allocating(original):
    """``device_array``: the new allocation is tracked as never written (for the initcheck)."""

    @functools.wraps(original)
    def device_array(*args, **kwargs):
        return _uninit.track_uninitialized(original(*args, **kwargs))

    return device_array


def _writing(original):
    """A host-side write into a device array: it is no longer never-written memory."""

    @functools.wraps(original)
    def write(self, *args, **kwargs):
        _uninit.forget_uninitialized(self)
        return original(self, *args, **kwargs)

    return write


_ATOMIC_NAMES = ("add", "sub", "and_", "or_", "xor", "inc", "dec", "exch", "max", "min", "nanmax", "nanmin",
                 "compare_and_swap", "cas")


def verify():
    """Check that the simulator internals the hooks replace are where they are expected.

    Raises
    ------
    HookError
        Naming what moved, the pinned version and what to do.
    """
    from importlib.metadata import version

    from numba.cuda.simulator import kernel, kernelapi

    problems = []
    if not isinstance(getattr(kernel, "BlockManager", None), type):
        problems.append("numba.cuda.simulator.kernel.BlockManager is gone")
    thread = getattr(kernel, "BlockThread", None)
    for name in ("syncthreads", "syncthreads_count", "syncthreads_and", "syncthreads_or", "run"):
        if not callable(getattr(thread, name, None)):
            problems.append(f"BlockThread.{name} is gone")
    module = getattr(kernelapi, "FakeCUDAModule", None)
    for name in ("syncthreads", "laneid", "shared", "atomic", "threadIdx", "blockIdx"):
        if not hasattr(module, name):
            problems.append(f"FakeCUDAModule.{name} is gone")
    for name in ("_push_kernel_context", "swapped_cuda_module", "FakeCUDAKernel"):
        if not hasattr(kernel, name):
            problems.append(f"numba.cuda.simulator.kernel.{name} is gone")
    if not isinstance(getattr(kernelapi, "_swap_refcount", None), dict):
        problems.append("numba.cuda.simulator.kernelapi._swap_refcount is gone")
    from numba.cuda.simulator.cudadrv import devicearray

    within = getattr(devicearray, "FakeWithinKernelCUDAArray", None)
    if not callable(getattr(within, "__getitem__", None)) or not hasattr(devicearray, "FakeCUDAArray"):
        problems.append("devicearray.FakeWithinKernelCUDAArray.__getitem__ is gone")
    if not hasattr(kernelapi, "FakeCUDAShared") or not hasattr(kernelapi, "FakeCUDAAtomic"):
        problems.append("FakeCUDAShared / FakeCUDAAtomic are gone")
    if not callable(getattr(getattr(kernelapi, "GridGroup", None), "sync", None)):
        problems.append("kernelapi.GridGroup.sync is gone")
    if not callable(getattr(getattr(kernel, "FakeOverload", None), "max_cooperative_grid_blocks", None)):
        problems.append("kernel.FakeOverload.max_cooperative_grid_blocks is gone")
    from numba.cuda.simulator import api

    if not callable(getattr(getattr(api, "Event", None), "elapsed_time", None)):
        problems.append("api.Event.elapsed_time is gone")
    if not hasattr(kernel, "_get_kernel_context"):
        problems.append("numba.cuda.simulator.kernel._get_kernel_context is gone")
    if problems:
        raise HookError(
            "course_lib.sim cannot hook Numba's CUDA simulator: " + "; ".join(problems) + ". "
            f"These hooks were written for numba-cuda=={PINNED_NUMBA_CUDA} (installed: {version('numba-cuda')}). "
            "Install the pinned version (pip install 'numba-cuda==" + PINNED_NUMBA_CUDA + "') or port "
            "course_lib/sim/_hooks.py and _engine.py to the new simulator."
        )


def installed() -> bool:
    """True while the hooks are in place."""
    return _saved is not None


def install():
    """Install the block scheduler and the warp primitives into the simulator (idempotent)."""
    global _saved
    if _saved is not None:
        return
    verify()
    from numba.cuda.simulator import kernel, kernelapi

    module = kernelapi.FakeCUDAModule
    saved = {"BlockManager": kernel.BlockManager, "call": kernel.FakeCUDAKernel.__call__,
             "getitem": kernel.FakeCUDAKernel.__getitem__, "methods": {}, "atomics": {}}
    for name, method in _warp_methods().items():
        saved["methods"][name] = module.__dict__.get(name, _MISSING)
        setattr(module, name, method)
    saved["classes"] = []
    if not _STOCK_FORALL:
        _STOCK_FORALL.append(kernel.FakeCUDAKernel.forall)
    for cls, name, method in _class_methods():
        saved["classes"].append((cls, name, cls.__dict__.get(name, _MISSING)))
        setattr(cls, name, method)
    for name in _ATOMIC_NAMES:
        op = kernelapi.FakeCUDAAtomic.__dict__.get(name)
        if op is not None:
            saved["atomics"][name] = op
            setattr(kernelapi.FakeCUDAAtomic, name, _ticking(op, name))
    kernel.BlockManager = _engine.ScheduledBlockManager
    kernel.FakeCUDAKernel.__call__ = _device_call(saved["call"])
    kernel.FakeCUDAKernel.__getitem__ = _configured(saved["getitem"])
    # Initcheck: device_array allocations are tracked until something writes them.
    import sys

    from numba.cuda.simulator.cudadrv import devicearray

    allocate = devicearray.device_array
    saved["modules"] = [m for m in list(sys.modules.values())
                        if getattr(m, "device_array", None) is allocate and m.__name__.startswith("numba")]
    for m in saved["modules"]:
        m.device_array = _allocating(allocate)
    saved["device_array"] = allocate
    from numba.cuda.simulator import api

    stock_jit = api.jit
    saved["jit_modules"] = [m for m in list(sys.modules.values())
                            if getattr(m, "jit", None) is stock_jit and m.__name__.startswith("numba")]
    signed = _signed(stock_jit)
    for m in saved["jit_modules"]:
        m.jit = signed
    saved["jit"] = stock_jit
    array_type = devicearray.FakeCUDAArray
    saved["array_methods"] = {name: array_type.__dict__[name] for name in ("__setitem__", "copy_to_device")}
    for name, method in saved["array_methods"].items():
        setattr(array_type, name, _writing(method))
    _saved = saved
    # numba's typing process (course_lib.sim._typing) starts at the first launch that needs it, not here:
    # importing course_lib starts no process (a grader's sandbox counts and kills the processes it did not start).


def uninstall():
    """Put the simulator back exactly as it was before :func:`install`."""
    global _saved
    if _saved is None:
        return
    from numba.cuda.simulator import kernel, kernelapi

    module = kernelapi.FakeCUDAModule
    for name, original in _saved["methods"].items():
        if original is _MISSING:
            delattr(module, name)
        else:
            setattr(module, name, original)
    for name, op in _saved["atomics"].items():
        setattr(kernelapi.FakeCUDAAtomic, name, op)
    for cls, name, original in _saved["classes"]:
        if original is _MISSING:
            delattr(cls, name)
        else:
            setattr(cls, name, original)
    kernel.BlockManager = _saved["BlockManager"]
    kernel.FakeCUDAKernel.__call__ = _saved["call"]
    kernel.FakeCUDAKernel.__getitem__ = _saved["getitem"]
    for m in _saved["modules"]:
        m.device_array = _saved["device_array"]
    for m in _saved["jit_modules"]:
        m.jit = _saved["jit"]
    from numba.cuda.simulator.cudadrv import devicearray

    for name, method in _saved["array_methods"].items():
        setattr(devicearray.FakeCUDAArray, name, method)
    _saved = None


_MISSING = object()
