"""Does the simulator compute in the types numba gives a kernel on a GPU?

Each expectation names its source: numba-cuda's typing of the kernel (what
``numba.cuda.compiler.compile_cuda`` infers, and the PTX ``compile_ptx`` makes from it),
numba-cuda's lowering code, or the CUDA C++ Programming Guide. Values are compared
bit for bit: these operations are deterministic on a GPU.
"""

import math
import re
from math import sqrt

import numpy as np
import pytest
from numba import cuda, float32, uint32, uint64

from course_lib.sim import _typing, check, profile
from tests.conftest import sim_only


# float64 where a float32 kernel does not expect it ------------------------------------------------------
@cuda.jit
def sum_rows_from_python_zero(x, out):
    i = cuda.grid(1)
    if i < out.size:
        acc = 0.0
        for j in range(x.shape[1]):
            acc += x[i, j]
        out[i] = acc


@cuda.jit
def sum_rows_from_float32_zero(x, out):
    i = cuda.grid(1)
    if i < out.size:
        acc = float32(0.0)
        for j in range(x.shape[1]):
            acc += x[i, j]
        out[i] = acc


def _rows(n, m):
    # Values whose float32 and float64 sums differ in the last bits.
    return (np.random.default_rng(7).random((n, m)) * 1000).astype(np.float32) + np.float32(0.1)


def test_a_python_float_accumulator_sums_in_float64_as_numba_types_it():
    """numba types the literal 0.0 as float64 and float64 + float32 as float64 (compile_ptx: add.f64)."""
    x = _rows(5, 333)
    out = np.zeros(5, np.float64)
    sum_rows_from_python_zero[1, 32](x, out)
    expected = np.zeros(5)
    for i in range(5):
        acc = 0.0  # Python floats are IEEE float64, as the GPU's add.f64
        for v in x[i]:
            acc += float(v)
        expected[i] = acc
    np.testing.assert_array_equal(out, expected)
    float32_sum = np.zeros(5, np.float64)
    sum_rows_from_float32_zero[1, 32](x, float32_sum)
    assert not np.array_equal(float32_sum, expected)  # the two accumulations really differ here


def test_the_float64_accumulator_is_what_compile_ptx_makes():
    """The PTX numba-cuda makes for the kernel adds in f64 (no GPU needed to compile)."""
    from course_lib.compile_check import compile_kernel

    ptx = compile_kernel(sum_rows_from_python_zero, "void(float32[:, ::1], float32[::1])").ptx
    assert re.search(r"\badd(\.rn)?\.f64\b", ptx)
    ptx32 = compile_kernel(sum_rows_from_float32_zero, "void(float32[:, ::1], float32[::1])").ptx
    assert not re.search(r"\badd(\.rn)?\.f64\b", ptx32) and re.search(r"\badd(\.rn)?\.f32\b", ptx32)


@cuda.jit
def scale_by_python_float(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * 0.1


def test_a_float32_times_a_python_float_is_a_float64_product():
    """numba's typing: float32 * float64 -> float64 (the literal 0.1 is float64)."""
    x = _rows(1, 37)[0]
    out = np.zeros(37, np.float64)
    scale_by_python_float[2, 32](x, out)
    np.testing.assert_array_equal(out, [float(v) * 0.1 for v in x])


@sim_only
def test_check_reports_float64_arithmetic_in_a_float32_kernel_with_line_and_fix():
    x = _rows(40, 8)
    out = np.zeros(40, np.float32)
    report = check(sum_rows_from_python_zero, 2, 32, x, out)
    assert report.ok  # correct, only slow: a performance note, not a defect
    (note,) = report.performance
    assert note.kind == "float64" and any("acc += x[i, j]" in line for line in note.lines)
    assert "float64 + float32 -> float64" in note.message and "float32(0.0)" in note.message
    assert "performance: [float64]" in str(report)
    assert check(sum_rows_from_float32_zero, 2, 32, x, out).performance == []


@sim_only
def test_check_does_not_report_float64_in_a_float64_kernel():
    x = _rows(40, 8).astype(np.float64)
    assert check(sum_rows_from_python_zero, 2, 32, x, np.zeros(40)).performance == []


@sim_only
def test_profile_counts_float64_operations_apart_from_float32_ones():
    """One warp-level add per execution of the accumulating line: 2 warps x 16 columns."""
    x = _rows(40, 16)
    out = np.zeros(40, np.float32)
    wide = profile(sum_rows_from_python_zero, 2, 32, x, out)
    narrow = profile(sum_rows_from_float32_zero, 2, 32, x, out)
    assert (wide.total.float64_ops, wide.total.float32_ops) == (32, 0)
    assert (narrow.total.float64_ops, narrow.total.float32_ops) == (0, 32)
    assert wide.line("acc += x[i, j]").float64_ops == 32


# Integers ------------------------------------------------------------------------------------------------
@cuda.jit
def integer_products(a, out):
    out[0] = a[0] * a[1]  # int32 * int32
    h = uint32(a[2])
    out[1] = (h * uint32(2654435761)) >> 16  # Knuth's multiplicative hash, as students write it
    y = uint32(a[2])
    y ^= y << 13  # the first step of a textbook xorshift32
    y ^= y >> 17
    y ^= y << 5
    out[2] = y


def test_integer_arithmetic_widens_as_numba_types_it():
    """numba: int32 * int32 -> int64; uint32 * uint32 -> uint64; uint32 << int -> uint64 (its typing of
    the kernel), so the products and shifts do not wrap at 32 bits as NumPy's would."""
    a = np.array([100_000, 100_000, np.uint32(3_000_000_000).view(np.int32)], np.int32)
    out = np.zeros(3, np.int64)
    integer_products[1, 1](a, out)
    mask64 = (1 << 64) - 1
    y = 3_000_000_000
    y ^= (y << 13) & mask64
    y ^= y >> 17
    y ^= (y << 5) & mask64
    assert out.tolist() == [10**10, (3_000_000_000 * 2654435761) >> 16, np.uint64(y).view(np.int64)]
    typing = _typing.float_ops(integer_products.py_func, (a, out))
    from numba.core import types

    assert typing.ops[("mul", (types.int32, types.int32))][1] == types.int64
    assert typing.ops[("lshift", (types.uint32, types.int64))][1] == types.uint64


@cuda.jit
def lcg_steps(seed, steps, out):
    s = seed[0]
    for _ in range(steps):
        s = s * uint64(6364136223846793005) + uint64(1442695040888963407)
    out[0] = s
    t = seed[1]
    out[1] = t * t  # int64 overflow wraps on a GPU (two's complement, no trap)


def test_wrap_arounds_the_gpu_does_silently_raise_no_warning():
    """Integer arithmetic wraps modulo 2**64 on a GPU (PTX mul.lo/add are modular); the suite turns
    NumPy's overflow warnings into errors, so any warning would fail here."""
    seed = np.array([12345, 2**40], np.uint64)
    out = np.zeros(2, np.uint64)
    lcg_steps[1, 1](seed, 50, out)
    s = 12345
    for _ in range(50):
        s = (s * 6364136223846793005 + 1442695040888963407) % 2**64
    assert int(out[0]) == s
    assert int(out[1]) == (2**40 * 2**40) % 2**64


@cuda.jit
def divide(x, k, out):
    out[0] = x[0] / x[1]
    out[1] = k[0] // k[1]


def test_division_by_zero_gives_inf_and_zero_without_an_exception():
    """Float: IEEE 754 division by zero gives inf (CUDA guide, floating-point standard). Integer: numba-cuda's
    default "numpy" error model returns 0 (numba/cuda/cpython/numbers.py, _int_divmod_impl)."""
    out = np.zeros(2, np.float64)
    divide[1, 1](np.array([1.0, 0.0], np.float32), np.array([7, 0], np.int32), out)
    assert out[0] == math.inf and out[1] == 0


def test_a_debug_launch_raises_on_integer_division_by_zero():
    """With debug=True numba-cuda uses the "python" error model: ZeroDivisionError."""
    debug_divide = cuda.jit(debug=True, opt=False)(divide.py_func)
    with pytest.raises(ZeroDivisionError):
        debug_divide[1, 1](np.array([1.0, 2.0], np.float32), np.array([7, 0], np.int32), np.zeros(2))


# math ----------------------------------------------------------------------------------------------------
@cuda.jit
def roots(x, out32, out64):
    i = cuda.grid(1)
    if i < x.size:
        out32[i] = math.sqrt(x[i])  # float32 -> float32 (sqrt.rn.f32)
        out64[i] = math.sqrt(x[i] * 1.0)  # float64 -> float64


def test_math_sqrt_of_a_float32_is_a_float32():
    """numba-cuda's math typing: sqrt(float32) -> float32, correctly rounded (CUDA guide, table of
    single-precision functions: sqrtf has 0 ulp error)."""
    x = _rows(1, 33)[0]
    out32 = np.zeros(33, np.float64)
    out64 = np.zeros(33, np.float64)
    roots[2, 32](x, out32, out64)
    np.testing.assert_array_equal(out32, np.sqrt(x).astype(np.float64))
    np.testing.assert_array_equal(out64, np.sqrt(x.astype(np.float64)))
    assert not np.array_equal(out32, out64)


@cuda.jit
def roots_imported_by_name(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = sqrt(x[i])  # from math import sqrt: the same float32 square root


def test_a_math_function_imported_by_name_is_typed_too():
    x = _rows(1, 5)[0]
    out = np.zeros(5, np.float64)
    roots_imported_by_name[1, 32](x, out)
    np.testing.assert_array_equal(out, np.sqrt(x).astype(np.float64))


@cuda.jit
def scale_by_powers_of_two(x, e, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = math.ldexp(x[i], e[i])  # ldexp(float32, int32) -> float32


def test_a_math_function_with_an_integer_argument_takes_array_elements():
    """numba-cuda types ldexp(float32, int32) as float32 (libdevice __nv_ldexpf); Python's math.ldexp
    accepts only Python ints as the exponent, so an int32 element must reach it as one."""
    x = np.array([0.785375, -1.5, 3.0, 0.0, np.inf], np.float32)
    e = np.array([2, -3, 0, 7, 1], np.int32)
    out = np.zeros(5, np.float32)
    scale_by_powers_of_two[1, 32](x, e, out)
    np.testing.assert_array_equal(out, np.ldexp(x, e))


# Explicit signatures: numba converts the arguments to the signature's types -------------------------------
@cuda.jit("void(float64[:], float32)")
def store_a_float32_argument(out, x):
    out[0] = x


@cuda.jit("void(int32[:], int32)")
def leading_zeros_of_an_int32(out, x):
    out[0] = cuda.clz(x)


@cuda.jit("void(float32[:], float32, int32)")
def ldexp_with_a_signature(out, x, e):
    out[0] = math.ldexp(x, e)


def test_an_explicit_signature_converts_scalar_arguments_as_numba_does():
    """A kernel compiled for ``void(float64[:], float32)`` receives a float32 even when launched with a
    Python float, and one compiled for ``int32`` an int32 (numba-cuda's dispatcher converts the
    arguments to the compiled signature): clz of a 32-bit zero is 32, not 64."""
    out = np.zeros(1)
    store_a_float32_argument[1, 1](out, 0.1)
    assert out[0] == float(np.float32(0.1)) != 0.1
    zeros = np.zeros(1, np.int32)
    leading_zeros_of_an_int32[1, 1](zeros, 0)
    assert zeros[0] == 32
    leading_zeros_of_an_int32[1, 1](zeros, 1)
    assert zeros[0] == 31
    scaled = np.zeros(1, np.float32)
    ldexp_with_a_signature[1, 1](scaled, 0.785375, 2)
    assert scaled[0] == np.float32(3.1415)


@cuda.jit
def round_to_digits(x, out, ndigits):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = round(x[i], ndigits)


def test_round_to_digits_of_a_float32_scales_in_float64_as_numba_cuda_lowers_it():
    """numba-cuda lowers round(float32, int) with CPython's fallback algorithm in float64
    (cudaimpl.round_to_impl): float32(0.3425) is 0.34250000119..., so it rounds up to 0.343; scaling
    in float32 (NumPy's round) gives exactly 342.5 and rounds it to even, 0.342."""
    x = np.array([0.3425, 2.675, -1.0625, 0.0, 12345.678], np.float32)
    out = np.zeros(5, np.float32)
    round_to_digits[1, 32](x, out, 3)
    expected = np.array([round(float(v), 3) for v in x], np.float32)
    np.testing.assert_array_equal(out, expected)
    assert out[0] == np.float32(0.343) and np.round(x[0], 3) == np.float32(0.342)


@sim_only
def test_signature_argtypes_reads_the_forms_cuda_jit_takes():
    from numba import int32, void

    assert _typing.signature_argtypes("void(int32[:], float32)")[1] == float32
    assert _typing.signature_argtypes(void(int32[:], int32)) == (int32[:], int32)
    assert _typing.signature_argtypes(["void(int32)"]) == (int32,)
    assert _typing.signature_argtypes(["void(int32)", "void(float32)"]) is None  # numba picks per call
    assert _typing.signature_argtypes(add_one_py) is None
    converted = _typing.convert_arguments((int32, float32, int32), (2**32 + 5, 0.1, 2.5))
    assert converted[0] == 5 and type(converted[0]) is np.int32  # wraps as a C cast
    assert type(converted[1]) is np.float32 and converted[2] == 2.5  # no implicit float -> int


def add_one_py(x):
    return x + 1


# Functions the typing process cannot see as the simulator does ------------------------------------------------
def test_a_function_given_a_cuda_implementation_with_overload_runs():
    """``numba.cuda.extending.overload`` gives a Python function a CUDA implementation in this process;
    a GPU compiles a kernel that calls it, so the simulator must not refuse it."""
    from numba.cuda.extending import overload

    def answer(a):
        return 42

    @overload(answer)
    def _answer(a):
        return lambda a: a * 0 + 42

    @cuda.jit
    def ask(out):
        out[0] = answer(out[0])

    out = np.zeros(1, np.int64)
    ask[1, 1](out)
    assert out[0] == 42


@sim_only
def test_a_plain_python_function_called_from_a_kernel_is_still_refused():
    """Without a CUDA implementation numba cannot type a call of a Python function: refused as on a GPU."""

    @cuda.jit
    def call_python(out):
        out[0] = add_one_py(out[0])

    with pytest.raises(_typing.GPUTypingError, match="add_one_py"):
        call_python[1, 1](np.zeros(1, np.int64))


# What a GPU would not compile -------------------------------------------------------------------------
@cuda.jit
def count_positive_with_a_bool(x, out):
    out[0] = cuda.syncthreads_count(x[cuda.threadIdx.x] > 0)


@sim_only
def test_a_kernel_a_gpu_would_not_compile_is_refused_with_numbas_message():
    """numba-cuda's syncthreads_count takes an integer predicate (numba/cuda/intrinsics.py); a bool is a
    typing error when compiling for a GPU."""
    with pytest.raises(_typing.GPUTypingError, match=r"syncthreads_count\(bool\)"):
        count_positive_with_a_bool[1, 32](np.ones(32, np.float32), np.zeros(1, np.int32))
    with pytest.raises(_typing.GPUTypingError):
        check(count_positive_with_a_bool, 1, 32, np.ones(32, np.float32), np.zeros(1, np.int32))


# The cache -----------------------------------------------------------------------------------------------
@cuda.jit
def add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


@sim_only
def test_a_kernel_is_typed_once_per_source_and_argument_types(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(_typing, "_memory", {})
    before = _typing.stats()
    for n in (3, 5, 8):
        x = np.zeros(n, np.int32)
        add_one[1, 32](x)
        np.testing.assert_array_equal(x, 1)
    after = _typing.stats()
    assert after["typed"] - before["typed"] == 1 and after["memory_hits"] - before["memory_hits"] == 2
    add_one[1, 32](np.zeros(3, np.float32))  # other argument types: typed again
    assert _typing.stats()["typed"] - before["typed"] == 2
    monkeypatch.setattr(_typing, "_memory", {})  # a new process: the disk cache answers
    add_one[1, 32](np.zeros(3, np.int32))
    assert _typing.stats()["typed"] - before["typed"] == 2 and _typing.stats()["disk_hits"] > before["disk_hits"]


def test_a_closure_kernels_cache_key_leaves_out_the_simulators_own_helpers():
    """A recompiled copy's closure holds the simulator's helpers (``__course_binop__``...), whose repr names an
    address: in the key, every process would type a closure kernel (a kernel factory's) again."""
    from course_lib.sim._kernel_refs import _globals_fingerprint

    def copy_of_a_factory_kernel(tile):
        __course_binop__ = object()

        def kernel():
            return __course_binop__, tile

        return kernel

    assert _globals_fingerprint(copy_of_a_factory_kernel(8)) == [("tile", "8")]


@sim_only
def test_a_read_only_seed_folder_answers_and_is_never_written(tmp_path, monkeypatch):
    """A grading worker's seed (SEED_ENV): read when the private cache lacks an answer; what the process types
    itself goes to its private cache only."""
    seed, private = tmp_path / "seed", tmp_path / "private"
    monkeypatch.setenv("XDG_CACHE_HOME", str(seed.parent / "filling"))
    monkeypatch.setattr(_typing, "_memory", {})
    add_one[1, 32](np.zeros(3, np.int32))  # typed into a cache that becomes the seed
    (tmp_path / "filling" / "course_lib" / "sim-typing").rename(seed)
    seeded = sorted(p.name for p in seed.iterdir())
    seed.chmod(0o555)  # as under bubblewrap's read-only mount
    try:
        monkeypatch.setenv("XDG_CACHE_HOME", str(private))
        monkeypatch.setenv(_typing.SEED_ENV, str(seed))
        monkeypatch.setattr(_typing, "_memory", {})
        before = _typing.stats()
        x = np.zeros(3, np.int32)
        add_one[1, 32](x)
        np.testing.assert_array_equal(x, 1)
        after = _typing.stats()
        assert after["typed"] == before["typed"] and after["disk_hits"] == before["disk_hits"] + 1
        add_one[1, 32](np.zeros(3, np.float32))  # not in the seed: typed, kept in the private cache
        assert _typing.stats()["typed"] == before["typed"] + 1
        assert sorted(p.name for p in seed.iterdir()) == seeded
        assert len(list((private / "course_lib" / "sim-typing").glob("*.pickle"))) == 1
    finally:
        seed.chmod(0o755)


@sim_only
def test_a_typing_process_that_does_not_answer_is_reported_once_and_kernels_still_run(monkeypatch, capsys, tmp_path):
    class Silent:
        owner = None

        def __init__(self):
            import os

            self.owner = os.getpid()

        def usable(self):
            return True

        def ask(self, payload):
            raise TimeoutError("no typing within 30.0 s")

        def close(self):
            pass

        discard = close

    monkeypatch.setattr(_typing, "_Child", Silent)
    monkeypatch.setattr(_typing, "_child", None)
    monkeypatch.setattr(_typing, "_broken", False)
    monkeypatch.setattr(_typing, "_memory", {})
    monkeypatch.setattr(_typing, "_said", [])
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # an empty cache: the typing process is asked
    x = np.zeros(5, np.int32)
    add_one[1, 32](x)
    add_one[1, 32](x)
    np.testing.assert_array_equal(x, 2)
    err = capsys.readouterr().err
    assert err.count("typing process is unavailable (TimeoutError: no typing within 30.0 s)") == 1


@sim_only
def test_graded_launches_refuse_what_the_typing_cannot_judge(monkeypatch):
    """Once the grader requires it, a kernel is typed as a GPU types it or refused: no kernel reads
    Python internals (numba types no ``__globals__`` or ``py_func`` attribute), uses a simulator-only
    object, or runs with the typing switched off."""
    monkeypatch.setattr(_typing, "_required", [])
    add_one[1, 32](np.zeros(4, np.int32))
    _typing.require()
    assert _typing.required()
    add_one[1, 32](np.zeros(4, np.int32))  # an ordinary kernel runs as before

    from course_lib.nbody.kernels import interaction

    def make_kernel():
        @cuda.jit(fastmath=True)
        def calls_a_course_device_function(out):
            i = cuda.threadIdx.x
            ax, ay, az = interaction(out[i], out[i], out[i], float32(0), float32(0), float32(0), float32(1),
                                     float32(0.01))
            out[i] = ax
        return calls_a_course_device_function

    # ... and so does one calling a device function of the course: plainly, and under the profiler and the
    # checker, whose rewritten copies of that function read the simulator's own state, not the kernel.
    values = np.arange(4, dtype=np.float32)
    make_kernel()[1, 4](values.copy())
    assert profile(make_kernel(), 1, 4, values.copy()).total.global_load_bytes == 12 * 4
    assert check(make_kernel(), 1, 4, values.copy()).ok

    @cuda.jit
    def reads_internals(out):
        out[0] = len(add_one.py_func.__globals__)

    with pytest.raises(_typing.GPUTypingError, match="attribute 'py_func'"):
        reads_internals[1, 1](np.zeros(1, np.int64))
    from numba.cuda.simulator import kernelapi

    simulator_only = kernelapi.FakeCUDAModule

    @cuda.jit
    def uses_the_simulator(out):
        out[0] = simulator_only is None

    with pytest.raises(_typing.GPUTypingError, match="exists only in this simulator"):
        uses_the_simulator[1, 1](np.zeros(1, np.int64))
    monkeypatch.setenv(_typing.ENV_SWITCH, "0")
    with pytest.raises(_typing.GPUTypingError, match="switched off"):
        add_one[1, 32](np.zeros(4, np.int32))


def test_the_runtime_typing_follows_numba_for_operand_types_it_has_not_seen():
    """Operators outside any typed kernel use numba's typing rules for scalars."""
    assert type(_typing.binop("mul", np.int32(3), np.int32(4))) is np.int64
    assert type(_typing.binop("add", np.float32(1), 0.5)) is np.float64
    assert type(_typing.binop("mul", np.uint32(3), np.uint32(4))) is np.uint64
    assert type(_typing.call(math.sqrt, np.float32(2))) is np.float32
    assert _typing.binop("add", [1], [2]) == [1, 2]  # not numbers: Python's own operator


@sim_only
def test_typing_leaves_the_grading_machinery_unchanged():
    """The grader refuses a notebook after which a course class changed; pickling a typing (for the disk
    cache, or a report) must not add __slotnames__ to KernelTyping."""
    import pickle

    from course_lib.grading.running.tamper import Snapshot

    snapshot = Snapshot()
    add_one[1, 32](np.zeros(4, np.int32))
    typing = _typing.float_ops(add_one.py_func, (np.zeros(4, np.int32),))
    assert pickle.loads(pickle.dumps(typing)) == typing
    assert snapshot.changes() == []


_HELPERS = '''
from numba import cuda, float32


@cuda.jit(device=True)
def inner(v):
    return v {op} float32(1)


@cuda.jit(device=True)
def outer(v):
    return inner(v)
'''

_KERNEL = '''
from numba import cuda

import {helpers}


@cuda.jit
def kernel(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = {helpers}.outer(x[i])
'''


def test_the_typing_cache_key_follows_device_functions_through_modules_and_calls(tmp_path, monkeypatch):
    """A kernel whose source is unchanged, calling (through a module) a device function that calls another:
    an edit of the innermost one gives another key, so no stale typing is read from the disk cache."""
    import importlib
    import sys

    monkeypatch.syspath_prepend(str(tmp_path))
    keys = []
    for n, op in enumerate(("+", "*")):
        (tmp_path / f"typing_helpers_{n}.py").write_text(_HELPERS.format(op=op))
        # The same kernel text in both modules but for the helper module's name, which is read as the same below.
        (tmp_path / f"typing_kernel_{n}.py").write_text(_KERNEL.format(helpers=f"typing_helpers_{n}"))
        module = importlib.import_module(f"typing_kernel_{n}")
        fn = module.kernel.py_func
        fingerprint = [(name.replace(f"_{n}", ""), text) for name, text in
                       _typing._globals_fingerprint(fn)]
        keys.append(fingerprint)
        sys.modules.pop(f"typing_kernel_{n}"), sys.modules.pop(f"typing_helpers_{n}")
    names = [name for name, _ in keys[0]]
    assert "typing_helpers.outer" in names and "inner" in names  # the module's function, and the one it calls
    assert keys[0] != keys[1]
    assert [name for name, _ in keys[1]] == names
