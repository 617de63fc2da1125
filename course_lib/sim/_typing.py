"""Kernels typed as numba types them for a GPU, and every value computed in that type.

The simulator runs a kernel body as Python on NumPy scalars, whose promotion rules are
not numba's: with float32 ``x``, ``acc = 0.0; acc += x[i]`` accumulates in float32 under
NumPy 2 (the Python float is "weak") but in float64 on a GPU (numba types the literal as
float64); ``int32 * int32`` wraps in NumPy and widens to int64 in numba; ``math.sqrt`` of
a float32 is float64 in Python and float32 on a GPU. Two things put numba's typing back:

* **Static typing before a launch** (:func:`before_launch`). The kernel is typed and
  lowered by numba-cuda's own compiler (``numba.cuda.compiler.compile_cuda``: typing
  and LLVM lowering, no NVVM, no GPU) for the numba types of the launch's arguments, in a
  child process where the simulator is off (a process running the simulator cannot load
  the real CUDA target). What would not compile for a GPU is refused with numba's own
  message (:class:`GPUTypingError`), e.g. ``cuda.syncthreads_count(x > 0)`` with a bool.
  The answer is cached per kernel source and argument types, in memory and on disk
  (``$XDG_CACHE_HOME/course_lib/sim-typing``), so a kernel is typed once, not per launch.
* **Typed arithmetic while it runs.** The recompiled copy of every kernel and device
  function (:mod:`course_lib.sim._lines`) evaluates each arithmetic operator, augmented
  assignment, unary operator and ``math`` call through :func:`binop`, :func:`unop` and
  :func:`call`, which compute in the types numba's typing gives for the operand types
  (first the signatures the static typing found in this kernel, else numba's own CPU typing
  context, whose rules for scalars are the same): a Python float is float64, a Python int
  int64, ``int32 * int32`` is an int64 product, ``uint32 << int`` a uint64 shift,
  ``math.sqrt(float32)`` a float32 square root. Integer results wrap at their width and
  floating-point overflow and division by zero give inf/NaN silently, as on a GPU, with
  no NumPy warning (a ``debug=True`` launch still raises on division by zero).

The static typing also tells which lines compute in float64 and which in float32
(:func:`float_ops`): :func:`course_lib.sim.check` reports float64 arithmetic in a kernel
whose arrays are float32, and :func:`course_lib.sim.profile` counts float64 operations
apart from float32 ones.

Limits: values carry the type of the operation that made them, so a variable that numba
unifies across paths (float32 on one branch, float64 on the other) keeps each value's own
type here; the builtins ``min``, ``max`` and ``abs``, and ``round`` with one argument, run as
Python runs them; the float64 lines of :func:`float_ops` are the kernel's own (device functions
are not listed).
Kernels whose source cannot be read, or whose arguments numba cannot type, run with the
runtime typing only. ``COURSE_SIM_TYPING=0`` switches both parts off.
"""

from __future__ import annotations

import ast
import atexit
import hashlib
import inspect
import math
import operator
import os
import pickle
import struct
import subprocess
import sys
import threading
from dataclasses import dataclass, field

import numpy as np

__all__ = ["ENV_SWITCH", "FLOAT64_FIX", "GPUTypingError", "KernelTyping", "argument_type", "before_launch", "binop",
           "call", "convert_arguments", "first_typing_seconds", "float64_lines", "float_ops", "kernel_typing", "prestart", "quiet", "rewrite", "signature_argtypes", "stats",
           "typed_copy_names", "unop", "untyped", "wait_ready", "wrap_quiet"]

#: Set to "0" to run kernels without numba's typing (Python/NumPy semantics, as the stock simulator).
ENV_SWITCH = "COURSE_SIM_TYPING"
#: Seconds a launch waits for the typing process's answer before it runs without the static typing
#: (the process then counts as unavailable for the rest of this one).
REPLY_SECONDS = 30.0


class GPUTypingError(TypeError):
    """The kernel would not compile for a GPU for these argument types (numba's message follows)."""


@dataclass
class KernelTyping:
    """What numba's CUDA typing says about one kernel for one set of argument types.

    Attributes
    ----------
    error : str or None
        Numba's message when the kernel does not compile for a GPU.
    ops : dict
        ``(operator name, operand numba types) -> (cast-to numba types, result numba type)``
        for the operators and math calls numba typed in the kernel.
    float_lines : dict
        ``line -> {"float64": n, "float32": n}``: floating-point operations per source line
        of the kernel (its own lines; device functions are typed on their own).
    float64_details : dict
        ``line -> list of str``: what computes in float64 on that line (e.g. ``"float32 * float64"``).
    array_dtypes : tuple of str
        Element types of the kernel's array arguments.
    """

    error: str | None = None
    ops: dict = field(default_factory=dict)
    float_lines: dict = field(default_factory=dict)
    float64_details: dict = field(default_factory=dict)
    array_dtypes: tuple = ()

    def __reduce__(self):
        # Pickled by its fields: the default protocol would add __slotnames__ to the class, which the
        # grader's tamper check (course_lib.grading.tamper) rightly counts as a change of the machinery.
        return KernelTyping, (self.error, self.ops, self.float_lines, self.float64_details, self.array_dtypes)


_stats = {"typed": 0, "memory_hits": 0, "disk_hits": 0, "seconds": 0.0, "unavailable": 0}


def stats() -> dict:
    """Counters of this process: kernels typed by the child, cache hits, seconds spent typing."""
    return dict(_stats)


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1") != "0"


# ---------------------------------------------------------------------------------------------
# Numba types of runtime values
# ---------------------------------------------------------------------------------------------
def _numba_types():
    from numba.core import types

    return types


_SCALAR_TYPES: dict = {}


def _scalar_type(pytype):
    """The numba type of a scalar of Python type ``pytype``, or None (not a number)."""
    try:
        return _SCALAR_TYPES[pytype]
    except KeyError:
        pass
    types = _numba_types()
    if pytype is bool or pytype is np.bool_:
        out = types.boolean
    elif pytype is int:
        out = types.int64
    elif pytype is float:
        out = types.float64
    elif pytype is complex:
        out = types.complex128
    elif isinstance(pytype, type) and issubclass(pytype, (np.integer, np.floating, np.complexfloating)):
        from numba.np.numpy_support import from_dtype

        try:
            out = from_dtype(np.dtype(pytype))
        except Exception:
            out = None
        if out is not None and getattr(out, "bitwidth", 64) < 32 and isinstance(out, types.Float):
            out = None  # float16: numba-cuda types it with its own rules; leave it to NumPy
    else:
        out = None
    _SCALAR_TYPES[pytype] = out
    return out


def argument_type(arg):
    """The numba type a GPU launch gives the argument ``arg``, or None if it cannot tell."""
    from numba import typeof

    ary = arg
    for attr in ("_item", "_ary"):  # simulator device arrays (possibly wrapped) hold an ndarray
        inner = getattr(ary, attr, None)
        if inner is not None:
            ary = getattr(inner, "_ary", inner)
    if isinstance(ary, np.ndarray):
        if ary.ndim == 0:
            return None
        try:
            return typeof(ary)
        except Exception:
            return None
    if isinstance(arg, (bool, int, float, complex, np.number, np.bool_, tuple)):
        try:
            return typeof(arg)
        except Exception:
            return None
    return None


def signature_argtypes(func_or_sig):
    """The argument types of an explicit ``cuda.jit`` signature, or None.

    Parameters
    ----------
    func_or_sig : str, numba Signature, list or other
        The first argument of ``cuda.jit``: ``"void(float32[:], int32)"``, ``void(float32[:], int32)``
        or a list holding one of these. Anything else (a function, None, several signatures,
        among which numba would choose per launch) gives None.
    """
    if isinstance(func_or_sig, (list, tuple)):
        if len(func_or_sig) != 1:
            return None
        func_or_sig = func_or_sig[0]
    if not isinstance(func_or_sig, str) and type(func_or_sig).__name__ != "Signature":
        return None
    from numba.core import sigutils

    try:
        args, _ = sigutils.normalize_signature(func_or_sig)
    except Exception:  # numba's own jit reports a malformed signature at compile time, as it does here
        return None
    return tuple(args)


def convert_arguments(argtypes, args):
    """Scalar arguments converted to the types of an explicit signature, as numba converts them.

    A kernel (or device function) compiled for ``void(int32[:], int32)`` receives an int32
    even when it is launched with a Python int, and ``void(float32[:], float32)`` a float32
    for a Python float: the kernel computes with the signature's types, not the caller's.

    Parameters
    ----------
    argtypes : tuple of numba types
        The signature's argument types (:func:`signature_argtypes`).
    args : tuple
        The call's arguments; arrays and values of other kinds are passed unchanged.

    Returns
    -------
    tuple
        The arguments, with numbers converted (integers wrap to the width, as a C cast does).
    """
    if len(argtypes) != len(args):
        return args  # numba refuses the call; the simulator reports the wrong count its own way
    types = _numba_types()
    out = list(args)
    for i, (nbtype, value) in enumerate(zip(argtypes, args)):
        if not isinstance(nbtype, (types.Integer, types.Float, types.Boolean, types.Complex)):
            continue
        if not isinstance(value, (bool, int, float, complex, np.number, np.bool_)):
            continue
        if isinstance(nbtype, types.Integer) and isinstance(value, (float, complex, np.inexact)):
            continue  # not a conversion numba makes implicitly
        if isinstance(nbtype, types.Boolean):
            out[i] = bool(value)
            continue
        dtype = np.dtype(str(nbtype))
        out[i] = np.asarray(value).astype(dtype)[()]
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# Static typing in a child process, cached
# ---------------------------------------------------------------------------------------------
_memory: dict = {}
_lock = threading.Lock()
_child = None
_broken = False  # the typing process failed once: not tried again in this process


def _cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "course_lib", "sim-typing")


def _globals_fingerprint(fn):
    """Simple values the kernel reads from its globals/closure (they change its typing)."""
    out = []
    code = fn.__code__
    for name in sorted(_global_names(code)):
        value = fn.__globals__.get(name)
        if isinstance(value, (bool, int, float, str, tuple, np.dtype, np.number)) or isinstance(value, type):
            out.append((name, repr(value)))
        elif hasattr(value, "py_func") or hasattr(value, "fn"):  # a device function: its source types too
            dev = getattr(value, "py_func", None) or getattr(value, "fn", None)
            try:
                out.append((name, inspect.getsource(dev)))
            except (OSError, TypeError):
                out.append((name, repr(dev)))
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            out.append((name, repr(cell.cell_contents)))
        except ValueError:
            pass
    return out


def _global_names(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, type(code)):
            names |= _global_names(const)
    return names


def _referenced(fn):
    """(name, value) of the globals and closure variables the function's code reads."""
    out = [(name, fn.__globals__.get(name)) for name in sorted(_global_names(fn.__code__))]
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            out.append((name, cell.cell_contents))
        except ValueError:  # a cell not filled yet
            pass
    return out


def _registered_overloads():
    """Ids of the Python functions given a numba implementation with ``overload`` in this process."""
    from numba.core.typing import templates as core_templates

    ids = set()
    registries = [core_templates.builtin_registry]
    try:
        from numba.cuda.typing import templates as cuda_templates

        registries.append(cuda_templates.builtin_registry)
    except ImportError:
        pass
    for registry in registries:
        ids.update(id(value) for value, _ in getattr(registry, "globals", ()))
    return ids


def unreproducible_global(fn, _seen=None):
    """The name of a global (or closure variable) the typing process cannot see as this process does, or None.

    The typing process compiles with the real CUDA target, so it cannot type what exists
    only in this one: a function given a numba implementation here with ``overload``, or an
    object of the simulator itself (its vector types, say). Such a kernel runs with the
    runtime typing only, rather than being refused for what a GPU would compile.
    """
    seen = set() if _seen is None else _seen
    if id(fn) in seen:
        return None
    seen.add(id(fn))
    overloads = None
    for name, value in _referenced(fn):
        if value is None or isinstance(value, (bool, int, float, str, np.number)):
            continue
        kind = type(value).__name__
        owner = value.__module__ if isinstance(value, type) else type(value).__module__
        simulated = isinstance(owner, str) and owner.startswith("numba.cuda.simulator")
        if simulated and kind not in ("FakeCUDAKernel", "FakeCUDAModule"):
            return name
        dev = getattr(value, "py_func", None) or (getattr(value, "fn", None) if kind == "FakeCUDAKernel" else None)
        if callable(dev) and hasattr(dev, "__code__"):
            inner = unreproducible_global(dev, seen)
            if inner is not None:
                return f"{name}.{inner}"
        elif callable(value) and hasattr(value, "__code__"):
            if overloads is None:
                overloads = _registered_overloads()
            if id(value) in overloads:
                return name
    return None


def _key(fn, argtypes, debug):
    from importlib.metadata import version

    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        return None
    text = repr((version("numba-cuda"), fn.__qualname__, fn.__code__.co_filename, fn.__code__.co_firstlineno,
                 source, _globals_fingerprint(fn), tuple(str(t) for t in argtypes), bool(debug)))
    return hashlib.sha256(text.encode()).hexdigest()


def kernel_typing(fn, argtypes, debug=False):
    """The :class:`KernelTyping` of the Python function ``fn`` for the numba types ``argtypes``.

    Returns None when the typing cannot be had (no numba-cuda toolkit, a kernel numba cannot
    pickle or read): the kernel then runs with the runtime typing only.
    """
    key = (fn.__code__, tuple(argtypes), bool(debug), id(fn.__globals__))
    found = _memory.get(key)
    if found is not None:
        _stats["memory_hits"] += 1
        return found
    import time

    if unreproducible_global(fn) is not None:
        _stats["unavailable"] += 1
        _memory[key] = False
        return None
    start = time.perf_counter()
    disk_key = _key(fn, argtypes, debug)
    path = os.path.join(_cache_dir(), disk_key + ".pickle") if disk_key else None
    result = None
    if path and os.path.exists(path):
        try:
            with open(path, "rb") as fh:
                result = pickle.load(fh)
            _stats["disk_hits"] += 1
        except Exception:
            result = None
    if result is None:
        result = _type_in_child(fn, argtypes, debug)
        if result is None:
            _stats["unavailable"] += 1
            _memory[key] = False
            return None
        _stats["typed"] += 1
        if path:
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                tmp = f"{path}.{os.getpid()}.tmp"
                with open(tmp, "wb") as fh:
                    pickle.dump(result, fh, protocol=pickle.HIGHEST_PROTOCOL)
                os.replace(tmp, path)
            except OSError:
                pass
    _stats["seconds"] += time.perf_counter() - start
    _memory[key] = result
    return result


#: Typing processes told to end that had not ended yet (referenced, so that nothing warns about them).
_retired: list = []


class _Child:
    """A child process with the real CUDA target that types kernels on request."""

    def __init__(self):
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ, COURSE_BACKEND="gpu", NUMBA_ENABLE_CUDASIM="0")
        env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        self.proc = subprocess.Popen([sys.executable, "-m", "course_lib.sim._typing"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.owner = os.getpid()  # a forked process must not talk to its parent's child

    def usable(self):
        return self.owner == os.getpid() and self.proc.poll() is None

    def ask(self, payload: bytes):
        import select

        self.proc.stdin.write(struct.pack("<Q", len(payload)) + payload)
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], REPLY_SECONDS)
        if not ready:  # stopped, or starved: the kernel runs with the runtime typing only
            raise TimeoutError(f"no typing within {REPLY_SECONDS} s")
        head = self.proc.stdout.read(8)
        if len(head) != 8:
            raise EOFError("the typing process ended")
        (size,) = struct.unpack("<Q", head)
        return pickle.loads(self.proc.stdout.read(size))

    def discard(self):
        """Drop this handle before making another, without leaving open pipes or a process to warn about:
        our ends of the pipes are closed; a copy inherited through ``fork`` belongs to another process,
        which reaps its child itself, so this one records it as not to be waited for."""
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        if self.owner != os.getpid():
            self.proc.returncode = -1  # not our child: nothing to reap here
        else:
            self.proc.poll()

    def close(self):
        """End the child: it exits when it reads the end of its input (once loaded, if it is still
        loading). Never signalled: a grading sandbox forbids signals to other processes."""
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        if self.proc.poll() is None:  # still loading: it ends by itself once loaded; kept until then
            _retired.append(self.proc)


def prestart():
    """Start the typing process now, in the background, so that the first launch finds it ready
    (it takes a few seconds to load numba-cuda's compiler; a grader's time limits run later)."""
    global _child
    if not enabled():
        return
    with _lock:
        if not _broken and (_child is None or not _child.usable()):
            if _child is not None:
                _child.discard()
            try:
                _child = _Child()
            except OSError:
                _child = None


def wait_ready() -> bool:
    """Block until the typing process has loaded numba-cuda's compiler and typed a first kernel.

    A grading worker calls this before it reports itself ready, so that the few seconds the
    compiler takes to load fall in the worker's start-up time, not in a student's time limit.

    Returns
    -------
    bool
        True when static typing is available in this process.
    """
    if not enabled():
        return False
    prestart()
    return _type_in_child(_warm_up, (argument_type(np.zeros(1, np.float32)),), False) is not None


def _type_in_child(fn, argtypes, debug):
    global _child
    from ._transport import _by_name, _dumps

    named = _by_name(fn)
    target = ("name", named) if named else ("function", fn)
    try:
        payload = _dumps({"target": target, "argtypes": tuple(argtypes), "debug": bool(debug)}, [fn])
    except Exception:
        return None
    global _broken
    with _lock:
        if _broken:
            return None
        try:
            if _child is None or not _child.usable():
                if _child is not None:
                    _child.discard()
                _child = _Child()
            reply = _child.ask(payload)
        except Exception:  # it died, hangs or answered nonsense: no static typing in this process any more
            if _child is not None:
                _child.close() if _child.owner == os.getpid() else _child.discard()
            _child = None
            _broken = True
            return None
    if "unavailable" in reply:
        return None
    return reply["typing"]


def _shutdown():
    if _child is not None and _child.owner == os.getpid():
        _child.close()


atexit.register(_shutdown)


def before_launch(fn, args, debug=False):
    """Type ``fn`` for ``args`` as a GPU launch would; raise :class:`GPUTypingError` if it does not compile.

    Parameters
    ----------
    fn : function
        The kernel's Python function.
    args : sequence
        The launch's arguments (ndarrays, device arrays, scalars).
    debug : bool
        The kernel's ``debug`` option.

    Returns
    -------
    KernelTyping or None
        None when the typing is switched off (``COURSE_SIM_TYPING=0``) or cannot be had.
    """
    if not enabled():
        return None
    fn = _original(fn)
    argtypes = [argument_type(a) for a in args]
    if any(t is None for t in argtypes):
        return None
    typing = kernel_typing(fn, argtypes, debug)
    if typing and typing.ops:
        _launch_ops.update(typing.ops)
    if typing and typing.error:
        raise GPUTypingError(
            f"{fn.__name__}({', '.join(map(str, argtypes))}) would not compile for a GPU; numba-cuda says:\n"
            f"{typing.error}"
        )
    return typing


def _original(fn):
    """The kernel as written, not a copy recompiled by course_lib.sim._lines (counters, ticks)."""
    from ._marks import REWRITTEN

    return getattr(fn, REWRITTEN, None) or fn


def float_ops(fn, args, debug=False):
    """The :class:`KernelTyping` of a launch of ``fn`` with ``args`` (None if not available)."""
    if not enabled():
        return None
    fn = _original(fn)
    argtypes = [argument_type(a) for a in args]
    if any(t is None for t in argtypes):
        return None
    typing = kernel_typing(fn, argtypes, debug)
    return typing or None


def float64_lines(fn, args, debug=False):
    """Lines of ``fn`` that compute in float64 on a GPU although its arrays are float32.

    Parameters
    ----------
    fn : function
        The kernel's Python function.
    args : sequence
        The launch's arguments.

    Returns
    -------
    list of (line, list of str)
        Each source line (of ``fn``'s file) with float64 arithmetic, and what computes in
        float64 there (e.g. ``"float32 * float64 -> float64"``); empty unless the kernel has a
        float32 array and no float64 array (where float64 is then not what was meant).
    """
    typing = float_ops(fn, args, debug)
    if not typing or typing.error or "float32" not in typing.array_dtypes or "float64" in typing.array_dtypes:
        return []
    return sorted(typing.float64_details.items())


#: What :func:`course_lib.sim.check` says about a line with float64 arithmetic in a float32 kernel.
FLOAT64_FIX = (
    "computes in float64 on a GPU (numba types a Python float such as 0.0 or 0.1 as float64, and float32 with "
    "float64 gives float64; math on float64 too): float64 arithmetic runs at a fraction of the float32 rate "
    "(1/64 on most GeForce GPUs, 1/2 on data-centre ones). Fix: write the literal as float32(0.1) (from numba "
    "import float32), start accumulators at float32(0.0), or cast with float32(...)"
)


class untyped:
    """``with untyped(fn, *device_functions):`` runs them with Python/NumPy arithmetic, as the stock
    simulator does (for measuring what the typing costs; see :mod:`course_lib.sim.bench`)."""

    def __init__(self, *functions):
        self.functions = functions

    def _forget_copies(self):
        from ._marks import _FAIR

        for fn in self.functions:
            getattr(fn, "__dict__", {}).pop(_FAIR, None)

    def __enter__(self):
        self.saved = os.environ.get(ENV_SWITCH)
        os.environ[ENV_SWITCH] = "0"
        self._forget_copies()
        return self

    def __exit__(self, *exc):
        if self.saved is None:
            os.environ.pop(ENV_SWITCH, None)
        else:
            os.environ[ENV_SWITCH] = self.saved
        self._forget_copies()
        return False


def first_typing_seconds(fn, args):
    """Wall-clock seconds numba-cuda takes to type ``fn`` for ``args`` with no cache, or None if it cannot.

    The typing process is made ready (started, loaded) before the timing.
    """
    import tempfile
    import time

    argtypes = [argument_type(a) for a in args]
    saved = os.environ.get("XDG_CACHE_HOME")
    memory = dict(_memory)
    try:
        seconds = None
        for _ in range(2):  # the first round waits for the child to be ready (loaded, warmed up)
            with tempfile.TemporaryDirectory() as tmp:
                os.environ["XDG_CACHE_HOME"] = tmp
                _memory.clear()
                start = time.perf_counter()
                typing = kernel_typing(_original(fn), argtypes)
                seconds = time.perf_counter() - start if typing else None
        return seconds
    finally:
        _memory.clear()
        _memory.update(memory)
        if saved is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = saved


# ---------------------------------------------------------------------------------------------
# Child side
# ---------------------------------------------------------------------------------------------
_OPERATOR_NAMES = {
    operator.add: "add", operator.sub: "sub", operator.mul: "mul", operator.truediv: "truediv",
    operator.floordiv: "floordiv", operator.mod: "mod", operator.pow: "pow", operator.lshift: "lshift",
    operator.rshift: "rshift", operator.and_: "and_", operator.or_: "or_", operator.xor: "xor",
    operator.iadd: "add", operator.isub: "sub", operator.imul: "mul", operator.itruediv: "truediv",
    operator.ifloordiv: "floordiv", operator.imod: "mod", operator.ipow: "pow", operator.ilshift: "lshift",
    operator.irshift: "rshift", operator.iand: "and_", operator.ior: "or_", operator.ixor: "xor",
    operator.neg: "neg", operator.pos: "pos", operator.invert: "invert",
}
_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**",
           "lshift": "<<", "rshift": ">>", "and_": "&", "or_": "|", "xor": "^", "neg": "-", "pos": "+",
           "invert": "~"}


def _analyse(cres, argtypes):
    """A :class:`KernelTyping` from numba's compile result (child side)."""
    from numba.core import types

    try:  # numba-cuda keeps its own copy of numba's IR
        from numba.cuda.core import ir
    except ImportError:  # pragma: no cover
        from numba.core import ir

    typemap, calltypes = cres.fndesc.typemap, cres.fndesc.calltypes
    out = KernelTyping()
    out.array_dtypes = tuple(str(t.dtype) for t in argtypes if isinstance(t, types.Array))

    def operand_types(names):
        return tuple(types.unliteral(typemap[n]) for n in names)

    # Operations on constants only (-math.inf, 2.0 * math.pi) are folded by the compiler: no instruction.
    definition = {}
    annotation = getattr(cres, "type_annotation", None)
    for block in (getattr(annotation, "blocks", None) or {}).values():
        for stmt in block.body:
            if isinstance(stmt, ir.Assign):
                definition.setdefault(stmt.target.name, stmt.value)

    def constant(name, depth=0):
        value = definition.get(name)
        if depth > 8 or value is None:
            return False
        if isinstance(value, (ir.Const, ir.Global, ir.FreeVar)):
            return True
        if isinstance(value, ir.Var):
            return constant(value.name, depth + 1)
        if isinstance(value, ir.Expr):
            if value.op == "getattr":
                return constant(value.value.name, depth + 1)
            if value.op in ("binop", "inplace_binop"):
                return constant(value.lhs.name, depth + 1) and constant(value.rhs.name, depth + 1)
            if value.op == "unary":
                return constant(value.value.name, depth + 1)
        return False

    for inst, sig in calltypes.items():
        if not isinstance(inst, ir.Expr) or sig is None:
            continue
        name, operands = None, None
        if inst.op in ("binop", "inplace_binop"):
            name = _OPERATOR_NAMES.get(inst.fn)
            operands = (inst.lhs.name, inst.rhs.name)
        elif inst.op == "unary":
            name = _OPERATOR_NAMES.get(inst.fn)
            operands = (inst.value.name,)
        elif inst.op == "call":
            key = getattr(typemap.get(inst.func.name), "typing_key", None)  # math.sqrt itself, for math calls
            if getattr(key, "__module__", None) == "math" and not inst.kws:
                name = "math." + key.__name__
                operands = tuple(v.name for v in inst.args)
        if name is None or any(n not in typemap for n in operands):
            continue
        given = operand_types(operands)
        result = sig.return_type
        out.ops.setdefault((name, given), (tuple(sig.args), result))
        if all(constant(n) for n in operands):
            continue
        kinds = [t for t in (*sig.args, result) if isinstance(t, types.Float)]
        if not kinds:
            continue
        line = inst.loc.line
        counts = out.float_lines.setdefault(line, {"float64": 0, "float32": 0})
        width = max(t.bitwidth for t in kinds)
        if width == 64:
            counts["float64"] += 1
            sym = _SYMBOL.get(name)
            if sym is None:
                what = f"{name}({', '.join(map(str, given))}) -> {result}"
            elif len(given) == 1:
                what = f"{sym}{given[0]} -> {result}"
            else:
                what = f"{given[0]} {sym} {given[1]} -> {result}"
            out.float64_details.setdefault(line, []).append(what)
        elif width == 32:
            counts["float32"] += 1
    return out


def _warm_up(x):  # pragma: no cover - compiled by the child before its first request
    x[0] = x[0] * 2 + 1


def _serve():  # pragma: no cover - runs in the child
    from course_lib import device

    device.configure(force="gpu")
    try:
        from numba.core import errors
        from numba.cuda.compiler import compile_cuda
    except Exception:
        compile_cuda = None
    from ._transport import _lookup

    if compile_cuda is not None:  # warm numba's typing and lowering up while the parent gets on with its work
        try:
            from numba.core import types

            compile_cuda(_warm_up, None, (types.float32[::1],), cc=(8, 0))
        except Exception:
            pass
    inp, outp = sys.stdin.buffer, sys.stdout.buffer
    while True:
        head = inp.read(8)
        if len(head) != 8:
            return
        (size,) = struct.unpack("<Q", head)
        try:
            request = pickle.loads(inp.read(size))
            kind, target = request["target"]
            kernel = _lookup(*target) if kind == "name" else target
            py_func = getattr(kernel, "py_func", kernel)
            if compile_cuda is None:
                reply = {"unavailable": "numba-cuda's compiler cannot be loaded"}
            else:
                try:
                    cres = compile_cuda(py_func, None, request["argtypes"], debug=request["debug"], cc=(8, 0))
                    reply = {"typing": _analyse(cres, request["argtypes"])}
                except errors.NumbaError as err:
                    reply = {"typing": KernelTyping(error=str(err).strip())}
        except Exception as err:  # anything else: the parent runs without static typing
            reply = {"unavailable": f"{type(err).__name__}: {err}"}
        data = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        outp.write(struct.pack("<Q", len(data)) + data)
        outp.flush()


# ---------------------------------------------------------------------------------------------
# Runtime: operators computed in numba's types
# ---------------------------------------------------------------------------------------------
#: Signatures the static typing of the launched kernels found (CUDA typing), consulted first.
_launch_ops: dict = {}
_impls: dict = {}
_typing_context = None

_PYOPS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
    "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow, "lshift": operator.lshift,
    "rshift": operator.rshift, "and_": operator.and_, "or_": operator.or_, "xor": operator.xor,
    "neg": operator.neg, "pos": operator.pos, "invert": operator.invert,
}
_AST_OPS = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv",
    ast.Mod: "mod", ast.Pow: "pow", ast.LShift: "lshift", ast.RShift: "rshift", ast.BitAnd: "and_",
    ast.BitOr: "or_", ast.BitXor: "xor", ast.USub: "neg", ast.UAdd: "pos", ast.Invert: "invert",
}
#: math functions whose float32 (and float64) versions NumPy computes elementwise in that precision.
_UFUNCS = {
    "sqrt": np.sqrt, "exp": np.exp, "log": np.log, "log2": np.log2, "log10": np.log10, "sin": np.sin,
    "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "atan2": np.arctan2,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh,
    "atanh": np.arctanh, "fabs": np.fabs, "expm1": np.expm1, "log1p": np.log1p, "hypot": np.hypot,
    "copysign": np.copysign, "fmod": np.fmod, "pow": np.power, "isnan": np.isnan, "isinf": np.isinf,
    "isfinite": np.isfinite, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
}


_MATH_NAMES = frozenset(name for name in dir(math) if not name.startswith("_") and callable(getattr(math, name)))


def _context():
    global _typing_context
    if _typing_context is None:
        from numba.core.registry import cpu_target

        ctx = cpu_target.typing_context
        ctx.refresh()
        _typing_context = ctx
    return _typing_context


def _resolve(name, given):
    """(cast-to types, result type) numba gives operator ``name`` on ``given`` types, or None."""
    found = _launch_ops.get((name, given))
    if found is not None:
        return found
    ctx = _context()
    try:
        if name.startswith("math."):
            fnty = ctx.resolve_value_type(getattr(math, name[5:]))
            sig = ctx.resolve_function_type(fnty, given, {})
        else:
            sig = ctx.resolve_function_type(_PYOPS[name], given, {})
    except Exception:
        return None
    if sig is None:
        return None
    return tuple(sig.args), sig.return_type


def _scalar_ctor(nbtype):
    types = _numba_types()
    if nbtype == types.boolean:
        return bool
    return np.dtype(str(nbtype)).type


def _int_arg(ctor):
    """An integer argument of a ``math`` function: wrapped to its numba type, passed as a Python int."""
    return lambda v: int(ctor(v))


def _make_int(pyop, result, name, python_ints=False):
    """``python_ints``: the operands are Python ints and the result int64, which stays a Python int
    (within int64's range: the simulator's indices are Python ints, and they are cheaper)."""
    bits = result.bitwidth
    mask = (1 << bits) - 1
    half = 1 << (bits - 1)
    ctor = np.dtype(str(result)).type
    signed = result.signed
    dividing = name in ("floordiv", "mod")

    if python_ints and not dividing:
        low, high = -half, half

        def impl(*operands):
            r = pyop(*operands)
            if low <= r < high:
                return r
            r &= mask
            return r - (1 << bits) if r >= half else r

        return impl

    def impl(*operands):
        values = [int(v) for v in operands]
        if dividing and values[1] == 0:
            # numba-cuda's "numpy" error model gives 0 (numba/cuda/cpython/numbers.py, _int_divmod_impl);
            # a debug=True launch (the "python" error model) raises, as its launches here do.
            if np.geterr()["divide"] == "raise":
                raise ZeroDivisionError("integer division or modulo by zero")
            return ctor(0)
        r = pyop(*values)
        if type(r) is not int:  # e.g. int ** negative int
            return np.float64(r)
        r &= mask
        if signed and r >= half:
            r -= 1 << bits
        return ctor(r)

    return impl


def _make(name, given, pytypes):
    """The function computing operator ``name`` on operands of numba types ``given`` (Python types
    ``pytypes``) as numba does."""
    types = _numba_types()
    resolved = _resolve(name, given)
    if resolved is None:
        return None
    args, result = resolved
    if isinstance(result, types.Boolean):
        pyop = _PYOPS.get(name)
        if pyop is None:
            return None
        return lambda *operands: bool(pyop(*(bool(v) for v in operands)))
    if isinstance(result, types.Integer) and not name.startswith("math."):
        if any(not isinstance(t, (types.Integer, types.Boolean)) for t in args):
            return None
        python_ints = result == types.int64 and all(t is int for t in pytypes) and name != "pow"
        return _make_int(_PYOPS[name], result, name, python_ints)
    if isinstance(result, (types.Float, types.Complex)) and not name.startswith("math."):
        # Operands are converted to the signature's types (to the result type when they are
        # integers, as numba's int / int), then the operation runs in that precision.
        casts = [_scalar_ctor(result if isinstance(t, (types.Integer, types.Boolean)) else t) for t in args]
        pyop = _PYOPS[name]
        out = _scalar_ctor(result)
        if len(casts) == 1:
            c0 = casts[0]
            return pyop if pytypes[0] is c0 is out else (lambda a: out(pyop(c0(a))))
        c0, c1 = casts
        if pytypes[0] is c0 and pytypes[1] is c1 and c0 is c1 is out and name in ("add", "sub", "mul"):
            return pyop  # NumPy computes float32 op float32 in float32, float64 op float64 in float64, as numba
        return lambda a, b: out(pyop(c0(a), c1(b)))
    if name.startswith("math."):
        fname = name[5:]
        ufunc = _UFUNCS.get(fname)
        # ``math`` functions take their integer arguments (ldexp's exponent) as Python ints only.
        casts = [_int_arg(_scalar_ctor(t)) if isinstance(t, types.Integer) else _scalar_ctor(t) for t in args]
        if isinstance(result, types.Float):
            out = _scalar_ctor(result)
            if ufunc is not None and all(isinstance(t, types.Float) for t in args):
                return lambda *operands: out(ufunc(*(c(v) for c, v in zip(casts, operands))))
            fn = getattr(math, fname)

            def impl(*operands):
                try:
                    return out(fn(*(c(v) for c, v in zip(casts, operands))))
                except ValueError:
                    return out(math.nan)
                except OverflowError:
                    return out(math.inf)

            return impl
        if isinstance(result, types.Integer):
            fn = getattr(math, fname)
            ctor = _scalar_ctor(result)
            return lambda *operands: ctor(fn(*(c(v) for c, v in zip(casts, operands))))
        if isinstance(result, types.Boolean) and ufunc is not None:
            return lambda *operands: bool(ufunc(*(c(v) for c, v in zip(casts, operands))))
    return None


def _impl(name, operands):
    key = (name, *map(type, operands))
    try:
        return _impls[key]
    except KeyError:
        pass
    given = tuple(_scalar_type(type(v)) for v in operands)
    impl = None if any(t is None for t in given) else _make(name, given, tuple(map(type, operands)))
    _impls[key] = impl
    return impl


def binop(name, a, b):
    """``a <op> b`` computed as numba computes it for the operands' types (``name``: e.g. ``"mul"``)."""
    impl = _impls.get((name, type(a), type(b)), _impls)
    if impl is _impls:
        impl = _impl(name, (a, b))
    if impl is None:
        return _PYOPS[name](a, b)
    return impl(a, b)


def unop(name, a):
    """``-a``, ``+a`` or ``~a`` computed as numba computes it for the operand's type."""
    impl = _impls.get((name, type(a)), _impls)
    if impl is _impls:
        impl = _impl(name, (a,))
    if impl is None:
        return _PYOPS[name](a)
    return impl(a)


def _round_ndigits(x, ndigits):
    """``round(x, ndigits)`` of a float as numba-cuda lowers it (``cudaimpl.round_to_impl``: CPython's
    fallback ``double_round``, in float64 whatever ``x``'s type, the result in ``x``'s type)."""
    out = type(x) if isinstance(x, np.floating) else float
    value = float(x)
    if math.isinf(value) or math.isnan(value):
        return x
    if ndigits >= 0:
        pow1, pow2 = (10.0 ** (ndigits - 22), 1e22) if ndigits > 22 else (10.0 ** ndigits, 1.0)
        y = (value * pow1) * pow2
        if math.isinf(y):
            return x
    else:
        pow1 = 10.0 ** (-ndigits)
        y = value / pow1
    z = float(round(y))  # half to even, as the GPU's rint
    if math.fabs(y - z) == 0.5:
        z = 2.0 * round(y / 2.0)
    z = (z / pow2) / pow1 if ndigits >= 0 else z * pow1
    return out(z)


def call(fn, *args):
    """``fn(*args)``; a function of the ``math`` module, and ``round(x, ndigits)`` of a float, are
    computed in the types numba gives them."""
    if fn is round:
        if len(args) == 2 and isinstance(args[0], (float, np.floating)) \
                and isinstance(args[1], (int, np.integer)) and not isinstance(args[1], bool):
            return _round_ndigits(args[0], int(args[1]))
        return fn(*args)
    if getattr(fn, "__module__", None) != "math" or not args:
        return fn(*args)
    name = "math." + fn.__name__
    impl = _impls.get((name, *map(type, args)), _impls)
    if impl is _impls:
        impl = _impl(name, args)
    if impl is None:
        return fn(*args)
    return impl(*args)


class _Quiet:
    """Floating-point overflow, underflow, invalid operations and division by zero give
    inf/NaN silently, as on a GPU (a launch that raises on division by zero keeps raising)."""

    __slots__ = ("saved",)
    _depth = threading.local()  # nested calls (a kernel calling device functions) set it once

    def __enter__(self):
        depth = getattr(self._depth, "n", 0)
        self._depth.n = depth + 1
        if depth:
            self.saved = None
            return
        saved = np.geterr()
        self.saved = saved
        np.seterr(over="ignore", under="ignore", invalid="ignore",
                  divide="raise" if saved["divide"] == "raise" else "ignore")

    def __exit__(self, *exc):
        self._depth.n -= 1
        if self.saved is not None:
            np.seterr(**self.saved)
        return False


def quiet():
    return _Quiet()


# ---------------------------------------------------------------------------------------------
# The source rewrite (applied by course_lib.sim._lines to every recompiled kernel)
# ---------------------------------------------------------------------------------------------
_BINOP, _UNOP, _CALL, _QUIET = "__course_binop__", "__course_unop__", "__course_call__", "__course_quiet__"


def typed_copy_names() -> dict:
    """Names the rewritten code refers to, and their values."""
    return {_BINOP: binop, _UNOP: unop, _CALL: call, _QUIET: quiet}


def _simple(node):
    """An expression that can be evaluated twice with no side effect (a name, a constant, ...)."""
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.Attribute):
        return _simple(node.value)
    if isinstance(node, ast.Tuple):
        return all(_simple(e) for e in node.elts)
    if isinstance(node, ast.BinOp):
        return _simple(node.left) and _simple(node.right)
    if isinstance(node, ast.UnaryOp):
        return _simple(node.operand)
    return False


def _load(node):
    """A copy of the store target ``node`` as an expression that loads it."""
    import copy

    node = copy.deepcopy(node)
    for sub in ast.walk(node):
        if hasattr(sub, "ctx"):
            sub.ctx = ast.Load()
    return node


class TypedOps(ast.NodeTransformer):
    """Arithmetic through :func:`binop`/:func:`unop`/:func:`call`; the body inside ``with quiet():``."""

    def visit_BinOp(self, node):
        self.generic_visit(node)
        name = _AST_OPS.get(type(node.op))
        if name is None:  # @ (matmul)
            return node
        call_ = ast.Call(ast.Name(_BINOP, ast.Load()), [ast.Constant(name), node.left, node.right], [])
        return ast.copy_location(call_, node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        name = _AST_OPS.get(type(node.op))
        if name is None:  # not
            return node
        call_ = ast.Call(ast.Name(_UNOP, ast.Load()), [ast.Constant(name), node.operand], [])
        return ast.copy_location(call_, node)

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        name = _AST_OPS.get(type(node.op))
        target = node.target
        if name is None:
            return node
        if isinstance(target, ast.Name) or (isinstance(target, ast.Subscript) and _simple(target.value)
                                            and _simple(target.slice)):
            value = ast.Call(ast.Name(_BINOP, ast.Load()), [ast.Constant(name), _load(target), node.value], [])
            return ast.copy_location(ast.Assign([target], value), node)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        # math.sqrt(x), or sqrt(x) after `from math import sqrt` (call() checks that it is math's).
        named = (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "math") \
            or (isinstance(func, ast.Name) and func.id in _MATH_NAMES) \
            or (isinstance(func, ast.Name) and func.id == "round" and len(node.args) == 2)
        if named and not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args):
            call_ = ast.Call(ast.Name(_CALL, ast.Load()), [func, *node.args], [])
            return ast.copy_location(call_, node)
        return node

    def visit_FunctionDef(self, node):
        if getattr(self, "_seen", False):
            return node  # nested functions: not kernel code
        self._seen = True
        self.generic_visit(node)
        return node


def rewrite(fdef):
    """Arithmetic of the function definition ``fdef`` through numba's types, in place (:class:`TypedOps`)."""
    if enabled():
        TypedOps().visit(fdef)
    return fdef


def wrap_quiet(fdef):
    """The body of ``fdef`` (after its docstring) inside ``with quiet():``, in place."""
    if not enabled():
        return fdef
    body = fdef.body
    first = 1 if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None),
                                                                         ast.Constant) else 0
    if len(body) > first:
        with_ = ast.With([ast.withitem(ast.Call(ast.Name(_QUIET, ast.Load()), [], []), None)], body[first:])
        ast.copy_location(with_, body[first])
        fdef.body = body[:first] + [with_]
    return fdef


if __name__ == "__main__":
    # Under ``python -m`` this module is __main__: serve with the importable one, whose
    # KernelTyping the parent can unpickle.
    from course_lib.sim._typing import _serve as serve

    serve()
