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
  message (:class:`GPUTypingError`), e.g. ``cuda.syncthreads_count(x > 0)`` with a bool, a kernel
  that returns a value (compiled, as numba-cuda compiles kernels, for a void return) or calls
  ``np.zeros``. Only a missing driver or library makes a kernel "untypable" (run with the runtime
  typing alone): the typing process answers numba-cuda's questions about "the current device"
  with compute capability 8.0, which it compiles for.
  The answer is cached per kernel source and argument types, in memory and on disk
  (``$XDG_CACHE_HOME/course_lib/sim-typing``), so a kernel is typed once, not per launch. A
  grading worker also reads a second, read-only folder of answers (:data:`SEED_ENV`): the
  course's own kernels, typed by the grader before any student's code ran
  (:mod:`course_lib.grading.running.bytecode`); what the worker types itself goes to its own cache.
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

Where numba unifies a variable across paths (an int on one branch, a float on the other: a
float64 after they meet), the assignments whose value it converts are converted where the
kernel makes them (:attr:`KernelTyping.unified`, applied by :mod:`course_lib.sim._typed_rewrite`).

Limits: that conversion is at the assignment, not where the paths meet (a use of the narrower
value on the way differs), and in the kernel's own code only (a device function's variables keep
each value's type); the builtins ``min``, ``max`` and ``abs``, and ``round`` with one argument, run as
Python runs them; the float64 lines of :func:`float_ops` are the kernel's own (device functions
are not listed).
Kernels whose source cannot be read, or whose arguments numba cannot type, run with the
runtime typing only. ``COURSE_SIM_TYPING=0`` switches both parts off.

This module is the static half (the cache and the typing process's client); the typing
process itself is :mod:`course_lib.sim._typing_child`, the typed arithmetic and the source
rewrite :mod:`course_lib.sim._typed_ops`, what both halves share (the switch, numba
types of values and signatures) :mod:`course_lib.sim._typing_base`, and what a kernel's code
reaches (its globals, closure and attributes) :mod:`course_lib.sim._kernel_refs`. The names
of the others that the simulator uses are re-exported here.
"""

from __future__ import annotations

import atexit
import os
import pickle
import struct
import subprocess
import sys
import threading
import time
import weakref
from dataclasses import dataclass, field

import numpy as np

from .._docs import fill_doc
from ._kernel_refs import _globals_fingerprint, graded_refusal, unreproducible_global
from ._typing_cache import SEED_ENV, _cache_dir, _cached_path, _key, _nrt
from ._typed_ops import binop, call, launch_ops, unop
from ._intrinsics import launch_arg_types
from ._typed_rewrite import quiet, rewrite, typed_copy_names, unified_assignments, wrap_quiet
from ._typing_base import ENV_SWITCH, argument_type, convert_arguments, enabled, signature_argtypes

__all__ = ["ENV_SWITCH", "FLOAT64_FIX", "SEED_ENV", "GPUTypingError", "KernelTyping", "argument_type", "before_launch", "binop",
           "call", "convert_arguments", "first_typing_seconds", "float64_lines", "float_ops", "kernel_typing",
           "prestart", "quiet", "require", "required", "rewrite", "signature_argtypes", "stats", "typed_copy_names",
           "unop", "untyped", "wait_ready", "wrap_quiet"]

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
    untypable : str or None
        Why numba-cuda's compiler could not type the kernel without a GPU (an error other
        than a typing error: the kernel reaches for something only a driver can answer).
    shared_bytes : int
        Bytes of static shared memory per block, as numba-cuda lowers the kernel's
        ``cuda.shared.array`` calls (its ``addrspace(3)`` globals, device functions included).
    unified : dict
        ``(line, variable) -> numba type``: assignments whose value numba converts to the type the
        variable's versions unify to where paths merge (``v = 1`` on one path, ``v = 1.5`` on another:
        float64); see :func:`course_lib.sim._typing_child._unified`.
    intrinsic_args : dict
        ``(line, name) -> numba type`` of the argument of ``cuda.clz``/``popc``/``ffs`` calls (int32 for
        ``cuda.threadIdx.x``, which the simulator holds as a Python int).
    """

    error: str | None = None
    ops: dict = field(default_factory=dict)
    float_lines: dict = field(default_factory=dict)
    float64_details: dict = field(default_factory=dict)
    array_dtypes: tuple = ()
    untypable: str | None = None
    shared_bytes: int = 0
    unified: dict = field(default_factory=dict)
    intrinsic_args: dict = field(default_factory=dict)

    def __reduce__(self):
        # Pickled by its fields: the default protocol would add __slotnames__ to the class, which the
        # grader's tamper check (course_lib.grading.running.tamper) rightly counts as a change of the machinery.
        return KernelTyping, (self.error, self.ops, self.float_lines, self.float64_details, self.array_dtypes,
                              self.untypable, self.shared_bytes, self.unified, self.intrinsic_args)


_stats = {"typed": 0, "memory_hits": 0, "disk_hits": 0, "seconds": 0.0, "unavailable": 0}


def stats() -> dict:
    """Counters of this process: kernels typed by the child, cache hits, seconds spent typing."""
    return dict(_stats)


# ---------------------------------------------------------------------------------------------
# Static typing in a child process, cached
# ---------------------------------------------------------------------------------------------
_memory: dict = {}
_lock = threading.Lock()
_child = None
_broken = False  # the typing process failed once: not tried again in this process


def kernel_typing(fn, argtypes, debug=False):
    """The :class:`KernelTyping` of the Python function ``fn`` for the numba types ``argtypes``.

    Returns None when the typing cannot be had (no numba-cuda toolkit, a kernel numba cannot
    pickle or read): the kernel then runs with the runtime typing only.
    """
    key = (fn.__code__, tuple(argtypes), bool(debug), id(fn.__globals__), _nrt())
    found = _memory.get(key)
    if found is not None:
        _stats["memory_hits"] += 1
        return found

    if unreproducible_global(fn) is not None:
        _stats["unavailable"] += 1
        _memory[key] = False
        return None
    start = time.perf_counter()
    disk_key = _key(fn, argtypes, debug)
    path = os.path.join(_cache_dir(), disk_key + ".pickle") if disk_key else None
    found = _cached_path(disk_key) if disk_key else None
    result = None
    if found:
        try:
            with open(found, "rb") as fh:
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
        if path and not result.untypable:  # an untypable kernel may type in another environment: not kept
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
        self.proc = subprocess.Popen([sys.executable, "-m", "course_lib.sim._typing_child"], stdin=subprocess.PIPE,
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
        payload = _dumps({"target": target, "argtypes": tuple(argtypes), "debug": bool(debug), "nrt": _nrt()}, [fn])
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
        except Exception as err:  # it died, hangs or answered nonsense: no static typing in this process any more
            if _child is not None:
                _child.close() if _child.owner == os.getpid() else _child.discard()
            _child = None
            _broken = True
            _say_unavailable(f"{type(err).__name__}: {err}")
            return None
    if "unavailable" in reply:
        _say_unavailable(reply["unavailable"])
        return None
    return reply["typing"]


_said: list = []


def _say_unavailable(reason):
    """Tell once per process that kernels run without numba's static typing, and why.

    A kernel then still computes in numba's types operation by operation, but what a GPU
    would not compile is no longer refused, and a variable keeps each value's own type.
    Printed to stderr, not warned: a warning would fail a test suite that turns warnings
    into errors because of a busy machine, not because of the kernel.
    """
    if _said:
        return
    _said.append(reason)
    print(f"course_lib.sim: numba's typing process is unavailable ({reason}); kernels run with the runtime "
          f"typing only (what would not compile for a GPU is not refused). Set {ENV_SWITCH}=0 to silence this, "
          "or restart the kernel to try again.", file=sys.stderr)


#: At exit, how long to wait for typing processes still loading (they end once loaded, in seconds).
EXIT_WAIT_SECONDS = 15.0


def _shutdown():
    if _child is not None and _child.owner == os.getpid():
        _child.close()
    # A process still loading ends by itself once loaded: reaping it here, not leaving it to the
    # interpreter's teardown, which would warn that a subprocess is still running.
    deadline = time.monotonic() + EXIT_WAIT_SECONDS
    for proc in _retired:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass


atexit.register(_shutdown)


_required: list = []


def require() -> None:
    """From now on in this process, every launch must be typed as a GPU types it (grading).

    A kernel the typing cannot judge is refused instead of running with the runtime typing
    only: typing switched off (``COURSE_SIM_TYPING=0``), a global that exists only in the
    simulator, an attribute only a Python object has (``__globals__``, ``py_func``). The
    grading worker calls this once it has started, and watches that it stays so.
    """
    if not _required:
        _required.append(True)


def required() -> bool:
    """True once :func:`require` was called in this process."""
    return bool(_required)


#: Kernel function -> why a graded launch refuses it (None: it does not), read once per kernel.
_graded_refusals = weakref.WeakKeyDictionary()


def _refuse_untyped(fn, reason):
    raise GPUTypingError(f"{fn.__name__} cannot be typed as a GPU types it, and graded kernels must be: {reason}")


#: The parameters of the functions that type a launch, for their docstrings (:func:`course_lib._docs.fill_doc`).
_launch_doc = fill_doc(parameters="""
Parameters
----------
fn : function
    The kernel's Python function.
args : sequence
    The launch's arguments (ndarrays, device arrays, scalars).
debug : bool
    The kernel's ``debug`` option.
""")


@_launch_doc
def before_launch(fn, args, debug=False):
    """Type ``fn`` for ``args`` as a GPU launch would; raise :class:`GPUTypingError` if it does not compile.

    {parameters}

    Returns
    -------
    KernelTyping or None
        None when the typing is switched off (``COURSE_SIM_TYPING=0``) or cannot be had.
    """
    if _required:
        original = _original(fn)
        if not enabled():
            _refuse_untyped(original, f"numba's static typing is switched off ({ENV_SWITCH}=0); remove that setting")
        reason = _graded_refusals.get(original, _graded_refusals)
        if reason is _graded_refusals:  # read once per kernel, not per launch
            reason = graded_refusal(original)
            _graded_refusals[original] = reason
        if reason is not None:
            _refuse_untyped(original, reason)
    typing = float_ops(fn, args, debug)
    if typing is None:
        return None
    if typing.ops:
        launch_ops.update(typing.ops)
    original = _original(fn)
    if typing.intrinsic_args:
        filename = original.__code__.co_filename
        launch_arg_types.update(((filename, line, name), t) for (line, name), t in typing.intrinsic_args.items())
    if unified_assignments.get(original.__code__, {}) != typing.unified:
        unified_assignments[original.__code__] = typing.unified
        from ._marks import _FAIR

        getattr(original, "__dict__", {}).pop(_FAIR, None)  # its copy converts at the new assignments
    if typing.error:
        raise GPUTypingError(
            f"{_original(fn).__name__}({', '.join(str(argument_type(a)) for a in args)}) would not compile for a "
            f"GPU; numba-cuda says:\n{typing.error}"
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
    return kernel_typing(fn, argtypes, debug) or None


@_launch_doc
def float64_lines(fn, args, debug=False):
    """Lines of ``fn`` that compute in float64 on a GPU although its arrays are float32.

    {parameters}

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


def _warm_up(x):  # pragma: no cover - compiled by the typing process before its first request
    x[0] = x[0] * 2 + 1
