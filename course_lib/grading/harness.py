"""The shared question harness: a problem set's questions as declarative lists of tests with points.

A question module (``course_lib/<unit>/questions.py``) defines ``PROBLEM_SET = "psN"`` and
``QUESTIONS``, a tuple of :func:`question` objects. Each question names the form of its
answer (:func:`kernel`, :func:`kernel_factory`, :func:`function`, :func:`number`, or a dict of
them), its options, the hints for each likely cause of failure, and a list of tests, each with
its points. Every test is *split* (see :mod:`course_lib.grading.core`): it draws its inputs and
judges the outputs in the grader, and only runs the student's code in the student's process.

Declaring a kernel question
---------------------------
Write ``inputs(rng, info) -> data`` (plain data: arrays, numbers, lists, dicts; ``info`` holds
the answer's options), ``launch(answer, data) -> Launch`` (the kernel call on host arrays,
naming the arrays it writes), and ``expect(data) -> {name: expected array}`` (the trusted
reference; it runs in the grader only)::

    def launch(answer, data):
        n = len(data["x"])
        out = np.full(n, np.nan, np.float32)          # unwritten elements show up as NaN
        return Launch(answer.kernel(), -(-n // 64), 64, {"x": data["x"], "out": out}, outputs=("out",))

    Q1 = question("ps9.q1", "double every element", 4, answer=kernel("double kernel"),
                  hints={"bounds": "guard i < n"}, tolerance="exact",
                  tests=[
                      result_test("n = 1 (no free points)", 0, inputs=sized(1), launch=launch, expect=doubled),
                      result_test("n = block + 1", 1, inputs=sized(65), launch=launch, expect=doubled),
                      result_test("hidden: random n", 1, inputs=random_size, launch=launch, expect=doubled,
                                  hidden=True),
                      race_test("race and bounds check", 1, inputs=sized(70), launch=launch, expect=doubled),
                      technique_test("one load per element", 1, inputs=sized(70), launch=launch, expect=doubled,
                                     measure=lambda m, data: m["global_load_bytes"] / 4 / len(data["x"]),
                                     limit=lambda data: (0.9, 1.1), technique="each element read once",
                                     unit="loads per element"),
                  ])

:func:`result_test` launches the kernel on a GPU or in the simulator with every array inside a
guard of ``GUARD`` extra elements (:func:`guarded`): a write past the end, which a GPU does not
fault on, changes the guard and fails with the cause ``bounds``; a read past the end reads NaN.
:func:`race_test` runs the same launch under the course's race, barrier and bounds checker
(:func:`course_lib.sim.check`) and :func:`technique_test` under its profiler
(:func:`course_lib.sim.profile`); on a GPU grader both run in the simulator in a child process
(:mod:`course_lib.sim.remote`), so a submission gets the same score on every grader. Their
inputs must therefore not depend on the backend. Both also require the right result, so a
kernel that does nothing never passes them. For kernels run by a host loop (one launch per
level or iteration), give ``run(answer, data) -> {name: padded array}`` instead of ``launch``
and build the buffers with :func:`guarded` / :func:`inner`.

Points and the technique
------------------------
Every test declares its points (0 for a sanity test that any kernel could pass); they add up
to the question's points. Tests with ``technique=True`` (every :func:`technique_test`) grade the
technique the question teaches: when one fails, the question scores at most
``technique_cap`` (one half) of its points, with a message naming the expected technique and
what was measured.

Failures and hints
------------------
A judge raises :func:`fail` ``(message, cause)``; the feedback then shows the hint the question
gives for that cause (``hints={"sign": ..., "barrier": ...}``, on top of :data:`DEFAULT_HINTS`).
:func:`result_test` finds the cause itself: ``bounds`` for a guard that changed or an
IndexError, ``unwritten`` for outputs never written, and the question's ``diagnose`` rules
(e.g. :func:`sign_flipped`) for a wrong value. The checker's problems map to ``barrier``,
``race`` or ``bounds``. Hidden tests show only their name and result.

Declaring a measure-and-explain question
----------------------------------------
The student predicts a number with a formula and writes ``measure(kernel, ...)``, which
measures any kernel it is given with ``course_lib.sim.profile`` (or ``check``/``record``). The
grader checks the prediction (:func:`calls_test`) and calls the student's ``measure`` on their
kernel, on decoy kernels of known traffic and at sizes drawn at grading time
(:func:`course_lib.grading.measuring.kernel_measurement_test`), so that a pasted number or the
model's own value cannot pass::

    Q3 = question("ps9.q3", "predict, then measure", 2,
                  answer={"kernel": kernel_factory("make_kernel"), "predicted": function(),
                          "measure": measurement("measure")},
                  tests=[
                      calls_test("the prediction", 1, key="predicted", args=lambda rng, info: [(64, 8)],
                                 expect=lambda n, p: model(n, p), rtol=0.02),
                      kernel_measurement_test("the measurement", 1, key="measure", kernel_key="kernel",
                                              decoys=..., configs=..., launch=..., measure=...),
                  ])

Analysis questions use :func:`function` answers (rejected when they call the course's own code,
see :mod:`course_lib.grading.ownwork`) and :func:`calls_test` / :func:`value_test`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .core import CAUSE_PREFIX, CAUSE_WORDS, PART_WORDS, Question, Test, TestFailure, as_student_kernel, compare_arrays
from .ownwork import as_student_function, library_uses

__all__ = [
    "DEFAULT_HINTS",
    "GUARD",
    "Answer",
    "Launch",
    "calls_test",
    "choice",
    "close",
    "fail",
    "function",
    "guarded",
    "inner",
    "integer",
    "kernel",
    "kernel_factory",
    "measurement",
    "number",
    "number_map",
    "part_failure",
    "question",
    "race_test",
    "result_test",
    "sign_flipped",
    "technique_test",
    "unguard",
    "value_test",
]

#: Hints for the usual causes of a failure; a question's ``hints`` override and extend them.
DEFAULT_HINTS = {
    "bounds": "guard every index: threads past the end of the data must neither read nor write outside the "
              "arrays (on a GPU such a write corrupts other data silently)",
    "unwritten": "some outputs were never written: every element needs a thread that stores it, the last "
                 "ones too",
    "barrier": "every thread of a block must reach every cuda.syncthreads() (no early return before a barrier), "
               "and a barrier must separate writing shared memory from other threads reading it, and reading "
               "it from overwriting it",
    "race": "two threads access one element with nothing ordering them: give every element a single writer, "
            "or make the update atomic (cuda.atomic.*)",
    "warp": "every lane named in a warp primitive's mask must reach the same call",
    "sign": "the result has the right size but the wrong sign: check the direction of every difference",
    "technique": "the result is right, but not computed with the technique the question asks for",
    "value": "the values are wrong: compare your kernel with the reference on the smallest failing size",
    "answer": "check the form of your answer against the question",
}

#: Extra elements around every array a kernel gets in :func:`result_test` (see :func:`guarded`).
GUARD = 32


# ----------------------------------------------------------------------------- failures
def fail(message: str, cause: str | None = None, *, public: bool = False) -> TestFailure:
    """A :class:`TestFailure` whose last line names its most likely cause (``raise fail(...)``).

    Parameters
    ----------
    message : str
        What went wrong, with numbers (for a hidden test it is replaced by the test's result).
    cause : str, optional
        ``"sign"``, ``"barrier"``, ``"bounds"``, ``"race"``, ``"unwritten"``, ``"technique"``... :
        the feedback adds the question's hint for it.
    public : bool
        See :class:`TestFailure`.
    """
    return TestFailure(message + (f"\n{CAUSE_PREFIX}{CAUSE_WORDS.get(cause, cause)}" if cause else ""), public=public,
                       cause=cause)


def part_failure(key: str, message: str) -> TestFailure:
    """The failure of every test that uses the field ``key`` of a dict answer that is missing or not in
    the form the question asks for; its cause line names the part (see :func:`course_lib.grading.core.cause_of`)."""
    return TestFailure(f"{message}\n{CAUSE_PREFIX}{PART_WORDS.format(key=key)}", cause="answer")


# ----------------------------------------------------------------------------- guarded buffers
def sentinel(dtype) -> np.generic:
    """The value of the guard elements of an array of this dtype.

    Floats: -3e38 (finite, so that a kernel copying NaN read past an input does not look like
    an untouched guard); integers: a value no vertex id, count or label could take.
    """
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return dtype.type(-3.0e38)
    if dtype.kind == "i":
        return dtype.type(-0x7A5A5A5A if dtype.itemsize >= 4 else np.iinfo(dtype).min)
    if dtype.kind == "u":
        return dtype.type(np.iinfo(dtype).max)
    if dtype.kind == "b":
        return np.True_
    raise ValueError(f"no guard value for dtype {dtype}")


def _frame(ndim, axes, guard):
    return [(guard, guard) if axis in axes else (0, 0) for axis in range(ndim)]


def guarded(array, *, axes=(0,), guard: int = GUARD, fill=None) -> np.ndarray:
    """A copy of ``array`` inside a frame of ``guard`` elements on each side of the given axes.

    Parameters
    ----------
    array : ndarray
    axes : tuple of int
        Axes that get the frame (negative axes count from the end).
    fill : scalar, optional
        Value of the frame; :func:`sentinel` of the dtype by default.

    Returns
    -------
    ndarray
        Of shape ``array.shape`` plus ``2 * guard`` along each axis in ``axes``; :func:`inner`
        gives the view of the original part.
    """
    array = np.asarray(array)
    axes = tuple(a % array.ndim for a in axes) if array.ndim else ()
    return np.pad(array, _frame(array.ndim, axes, guard),
                  constant_values=sentinel(array.dtype) if fill is None else fill)


def inner(padded, *, axes=(0,), guard: int = GUARD):
    """The view of the original part of a :func:`guarded` array (NumPy or device array)."""
    axes = tuple(a % padded.ndim for a in axes)
    # Explicit slices: device arrays on a GPU take neither an Ellipsis nor a list.
    return padded[tuple(slice(guard, padded.shape[axis] - guard) if axis in axes else slice(None)
                        for axis in range(padded.ndim))]


def unguard(padded, shape, *, name: str, axes=(0,), guard: int = GUARD, dtype=None) -> np.ndarray:
    """Check a returned :func:`guarded` array and return its original part.

    Raises
    ------
    TestFailure
        The array has the wrong shape or dtype, or a guard element changed (cause ``bounds``).
    """
    shape = tuple(int(s) for s in shape)
    axes = tuple(a % len(shape) for a in axes) if shape else ()
    want = tuple(s + 2 * guard if axis in axes else s for axis, s in enumerate(shape))
    if not isinstance(padded, np.ndarray) or padded.shape != want or (dtype is not None and padded.dtype != dtype):
        got = f"{type(padded).__name__} {getattr(padded, 'shape', '')} {getattr(padded, 'dtype', '')}"
        raise fail(f"{name} came back as {got.strip()}, expected shape {want}")
    frame = np.ones(want, bool)
    inner(frame, axes=axes, guard=guard)[...] = False
    value = sentinel(padded.dtype)
    changed = frame & ~((padded == value) | (np.isnan(padded) & np.isnan(value) if padded.dtype.kind == "f" else False))
    if changed.any():
        where = tuple(int(i) - (guard if axis in axes else 0) for axis, i in enumerate(np.argwhere(changed)[0]))
        raise fail(f"the kernel wrote outside {name}: {int(changed.sum())} elements beyond its shape {shape} "
                   f"changed (e.g. at index {where})", "bounds")
    return np.array(inner(padded, axes=axes, guard=guard))


# ----------------------------------------------------------------------------- launches
@dataclass
class Launch:
    """One kernel launch on host arrays, built in the student's process by a test's ``launch``.

    Attributes
    ----------
    kernel : @cuda.jit kernel
    grid, block : int or tuple of int
    args : dict
        Kernel arguments in order, by name: NumPy arrays (copied to the device inside guards)
        and scalars.
    outputs : tuple of str
        Names of the arrays the kernel writes: they come back (with their guards) as the
        test's outputs. Their initial content is the caller's (NaN shows unwritten elements).
    axes : dict
        ``name -> axes`` that get a guard (default ``(0,)``, the rows).
    """

    kernel: object
    grid: object
    block: object
    args: dict
    outputs: tuple = ()
    axes: dict = field(default_factory=dict)

    def __post_init__(self):
        unknown = [name for name in self.outputs if name not in self.args]
        if unknown:
            raise ValueError(f"outputs {unknown} are not arguments of the launch")

    def axes_of(self, name) -> tuple:
        return tuple(self.axes.get(name, (0,)))


def run_launch(launch: Launch) -> dict:
    """Run a launch on the current backend with every array inside guards; the outputs, guards included."""
    from numba import cuda

    buffers, call = {}, []
    for name, value in launch.args.items():
        if isinstance(value, np.ndarray) and value.ndim:
            axes = launch.axes_of(name)
            fill = None if name in launch.outputs else _read_guard(value.dtype)
            buffers[name] = cuda.to_device(guarded(value, axes=axes, fill=fill))
            call.append(inner(buffers[name], axes=axes))
        else:
            call.append(value)
    launch.kernel[launch.grid, launch.block](*call)
    cuda.synchronize()
    return {name: buffers[name].copy_to_host() for name in launch.outputs}


def _read_guard(dtype):
    """Guard value of an input: NaN for floats (a read past the end poisons the result)."""
    return np.dtype(dtype).type(np.nan) if np.dtype(dtype).kind == "f" else sentinel(dtype)


def check_launch(launch: Launch) -> dict:
    """Run a launch under the course's race, barrier and bounds checker (in the simulator, on any backend)."""
    from .trusted import trusted_check

    args = {name: np.array(v) if isinstance(v, np.ndarray) else v for name, v in launch.args.items()}
    report = trusted_check(launch.kernel, launch.grid, launch.block, *args.values())
    problems = [{"kind": str(p.kind), "space": str(p.space or ""), "array": str(p.array or ""),
                 "text": str(p)} for p in report.problems]
    return {"ok": bool(report.ok), "problems": problems, "outputs": {name: args[name] for name in launch.outputs}}


def profile_launch(launch: Launch) -> dict:
    """Run a launch under the course's profiler (in the simulator, on any backend): totals and outputs."""
    from .trusted import trusted_profile

    args = {name: np.array(v) if isinstance(v, np.ndarray) else v for name, v in launch.args.items()}
    report = trusted_profile(launch.kernel, launch.grid, launch.block, *args.values())
    metrics = {k: float(v) for k, v in report.total.as_dict().items() if isinstance(v, (int, float))}
    return {"metrics": metrics, "outputs": {name: args[name] for name in launch.outputs}}


# ----------------------------------------------------------------------------- answers
class Answer:
    """A prepared answer, as ``launch``/``produce`` functions receive it.

    Attributes
    ----------
    value : object
        What the student passed (a kernel, a kernel factory, a function, or a dict of them).
    options : dict
        The keyword options passed to ``check`` (validated).
    """

    def __init__(self, value, options, make=None, problems=None):
        self.value, self.options, self._make, self._kernels = value, options, make, {}
        #: ``field -> message`` for the fields of a dict answer that are missing or in the wrong form:
        #: the tests that use such a field fail with its message, the others are graded as usual.
        self.problems = dict(problems or {})

    def kernel(self, *args, **params):
        """The kernel: the answer itself, or what the answer's factory returns for these parameters (cached)."""
        if self._make is None:
            return self.value
        key = (args, tuple(sorted(params.items())))
        if key not in self._kernels:
            self._kernels[key] = self._make(self.value, *args, **params)
        return self._kernels[key]

    def __getitem__(self, key):
        """One field of a dict answer (a kernel field comes back as an :class:`Answer` of its own).

        Raises
        ------
        TestFailure
            The field is missing or not in the form the question asks for (the cause names the field).
        """
        if key in self.problems:
            raise part_failure(key, self.problems[key])
        return self.value[key]


@dataclass(frozen=True)
class _Spec:
    """The expected form of an answer (or of one field of a dict answer)."""

    what: str
    validate: Callable  # validate(value, what) -> value to keep, or raise TestFailure
    example: str = ""


def _own_kernel(kernel_obj, what, allowed):
    as_student_kernel(kernel_obj, what)
    found = library_uses(kernel_obj.py_func, allowed=allowed)
    if found:
        raise fail(f"the {what} uses the course's own {', '.join(sorted(found))}; write your own", "answer")
    return kernel_obj


def kernel(what: str = "kernel", *, allowed=()) -> _Spec:
    """The answer is a ``@cuda.jit`` kernel written by the student.

    Parameters
    ----------
    what : str
        Its name in messages.
    allowed : sequence
        Course objects the kernel may call (device functions the question offers).
    """
    return _Spec(what, lambda value, name: Answer(_own_kernel(value, name, allowed), {}))


def kernel_factory(what: str = "kernel factory", *, probe: dict | None = None, allowed=()) -> _Spec:
    """The answer is a function returning a ``@cuda.jit`` kernel for the given parameters (``make(tile)``).

    The grader chooses the parameters of every test (the same on every backend), so that the
    checker and the profiler run small launches. ``probe`` are parameters the answer is tried
    with when it is checked (default: none, the factory is only checked to be the student's).
    """
    def validate(value, name):
        if not callable(value) or hasattr(value, "py_func"):
            raise fail(f"{name} must be a function returning a @cuda.jit kernel, got {type(value).__name__}",
                       "answer")
        as_student_function(value, name, allowed=allowed)

        def make(factory, *args, **params):
            return _own_kernel(factory(*args, **params), f"kernel returned by {name}", allowed)

        answer = Answer(value, {}, make)
        if probe is not None:
            answer.kernel(**probe)
        return answer

    return _Spec(what, validate)


def function(what: str = "function", *, forbidden_names=(), allowed=()) -> _Spec:
    """The answer is the student's own function (not one that calls the course's code)."""
    return _Spec(what, lambda value, name: as_student_function(value, name, forbidden_names, allowed=allowed))


def _number_validator(integral, minimum, maximum):
    def validate(value, name):
        kinds = (int, np.integer) if integral else (int, float, np.integer, np.floating)
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, kinds) or not math.isfinite(value):
            raise fail(f"{name} must be {'an integer' if integral else 'a finite number'}, got {value!r}"[:300],
                       "answer")
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            raise fail(f"{name} must be in [{minimum}, {maximum}], got {value!r}", "answer")
        return int(value) if integral else float(value)

    return validate


def number(what: str = "number", *, minimum=None, maximum=None) -> _Spec:
    """The answer (or a field) is a finite real number."""
    return _Spec(what, _number_validator(False, minimum, maximum))


def integer(what: str = "integer", *, minimum=None, maximum=None) -> _Spec:
    """The answer (or a field, or an option) is an integer (``bool`` and ``3.0`` are refused)."""
    return _Spec(what, _number_validator(True, minimum, maximum))


def choice(what: str, choices) -> _Spec:
    """The answer (or a field) is one of a few strings."""
    choices = tuple(choices)

    def validate(value, name):
        if type(value) is not str or value not in choices:
            raise fail(f"{name} must be one of {choices}, got {value!r}"[:300], "answer")
        return value

    return _Spec(what, validate)


def number_map(what: str = "measurements", *, keys=None) -> _Spec:
    """The answer (or a field) is a dict from integers to finite numbers (``{tile: value}``)."""
    def validate(value, name):
        if not isinstance(value, dict):
            raise fail(f"{name} must be a dict {{key: number}}, got {type(value).__name__}", "answer")
        out = {}
        for k, v in value.items():
            k = _number_validator(True, None, None)(k, f"a key of {name}")
            out[k] = _number_validator(False, None, None)(v, f"{name}[{k}]")
        if keys is not None and set(out) != set(keys):
            raise fail(f"{name} must have the keys {sorted(keys)}, got {sorted(out)}", "answer")
        return out

    return _Spec(what, validate)


def measurement(what: str = "measure") -> _Spec:
    """The answer (or a field) is the student's measuring function, ``measure(kernel, *config) -> number``.

    It may (and should) call the course's tools (``course_lib.sim.profile``...): the grader calls
    it and compares its numbers with its own measurement
    (:func:`course_lib.grading.measuring.kernel_measurement_test`).
    """
    def validate(value, name):
        if not callable(value) or isinstance(value, type):
            raise fail(f"{name} must be a function of the parameter measured, e.g. def {name}(tile): ...", "answer")
        return value

    return _Spec(what, validate)


def _prepare(answer_spec, options):
    """The question's ``prepare``: validate the answer (a spec, or a dict of field specs) and the options."""
    def prepare(value=None, **given):
        unknown = sorted(set(given) - set(options))
        if unknown:
            raise fail(f"check() got unexpected option(s) {unknown}; this question takes "
                       f"{sorted(options) or 'none'}", "answer")
        checked = {}
        for key, spec in options.items():
            if key not in given:
                raise fail(f"pass {key}=... to check() ({spec.example or spec.what})", "answer")
            checked[key] = spec.validate(given[key], f"option {key}")
        if isinstance(answer_spec, dict):
            if not isinstance(value, dict):
                raise fail("answer with a dict: {" + ", ".join(f"{k!r}: ..." for k in answer_spec) + "}", "answer")
            # Each part on its own: a missing or malformed part fails the tests that use it, not the others.
            fields, problems = {}, {}
            for key, spec in answer_spec.items():
                if key not in value:
                    problems[key] = f"{key} is missing: the answer dict has no key {key!r} (pass {{..., {key!r}: {key}}})"
                    continue
                try:
                    fields[key] = spec.validate(value[key], key)
                except TestFailure as exc:
                    problems[key] = str(exc).rsplit(f"\n{CAUSE_PREFIX}", 1)[0]
            return Answer(fields, checked, problems=problems)
        prepared = answer_spec.validate(value, answer_spec.what)
        if isinstance(prepared, Answer):
            prepared.options = checked
            return prepared
        return Answer(prepared, checked)

    return prepare


# ----------------------------------------------------------------------------- comparisons
def close(rtol: float, atol: float = 0.0):
    """A comparison: ``|got - expected| <= atol + rtol * max|expected|`` element-wise (see compare_arrays)."""
    def compare(got, expected, name):
        compare_arrays(got, expected, rtol=rtol, atol=atol, name=name)

    compare.description = f"|error| <= {atol:g} + {rtol:g} x max|expected|" if atol else \
        f"|error| <= {rtol:g} x max|expected|"
    return compare


def exact(got, expected, name):
    """A comparison: every element equal."""
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape:
        raise fail(f"{name} has shape {got.shape}, expected {expected.shape}")
    wrong = np.flatnonzero(got.ravel() != expected.ravel())
    if wrong.size:
        i = np.unravel_index(int(wrong[0]), expected.shape)
        raise fail(f"{name}: {wrong.size} of {expected.size} values differ; first at index "
                   f"{tuple(int(k) for k in i)}: got {got[i]}, expected {expected[i]}")


def sign_flipped(got, expected, data) -> bool:
    """Diagnosis: the result is the expected one with the sign flipped (to float32 rounding)."""
    got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
    scale = float(np.max(np.abs(expected))) if expected.size else 0.0
    return scale > 0 and bool(np.all(np.abs(got + expected) <= 1e-3 * scale))


def _unwritten(got, expected):
    got = np.asarray(got)
    return got.dtype.kind == "f" and bool(np.any(np.isnan(got) & ~np.isnan(np.asarray(expected, np.float64))))


def _diagnose(exc, got, expected, data, rules):
    """Re-raise a comparison failure with its most likely cause."""
    for cause, rule in rules:
        try:
            matched = rule(got, expected, data)
        except Exception:  # a rule choking on garbage outputs is no diagnosis
            matched = False
        if matched:
            return fail(str(exc), cause)
    return fail(str(exc), "unwritten" if _unwritten(got, expected) else getattr(exc, "cause", None) or "value")


# ----------------------------------------------------------------------------- tests
def _outputs(got, names, what="the kernel's outputs"):
    if not isinstance(got, dict) or not all(name in got for name in names):
        raise fail(f"{what} did not come back (got {type(got).__name__})")
    return got


def _judge_outputs(got, expected, data, compare, rules, label, axes):
    """Unguard every output and compare it with the expected array; failures name their cause."""
    got = _outputs(got, expected)
    for name, want in expected.items():
        want = np.asarray(want)
        exact_got = unguard(got[name], want.shape, name=name, axes=axes.get(name, (0,))) if axes is not None \
            else _plain(got[name], want.shape, name)
        try:
            compare(exact_got, want, f"{name} {label}".strip())
        except TestFailure as exc:
            raise _diagnose(exc, exact_got, want, data, rules) from None


def _plain(value, shape, name):
    if not isinstance(value, np.ndarray) or value.shape != tuple(shape):
        raise fail(f"{name} came back with shape {getattr(value, 'shape', None)}, expected {tuple(shape)}")
    return value


def _test(name, points, *, inputs, produce, judge, hidden, hint, hints, technique):
    return Test(name, hidden=hidden, hint=hint, inputs=inputs, produce=produce, judge=judge, points=points,
                technique=technique, hints=tuple((hints or {}).items()))


def result_test(name: str, points: float, *, inputs, expect=None, launch=None, run=None, compare=None, label=None,
                axes=None, hidden=False, technique=False, hint="", hints=None, judge=None) -> Test:
    """Run the answer on the inputs and compare its outputs with the reference.

    Parameters
    ----------
    name : str
        Shown in feedback (for a hidden test, it is all that is shown, with the result).
    points : float
    inputs : callable
        ``inputs(rng, info) -> data`` (grader side; ``info`` holds the answer's options).
    expect : callable
        ``expect(data) -> {output name: expected array}`` (grader side, trusted).
    launch : callable, optional
        ``launch(answer, data) -> Launch``: one launch, run inside guards (:func:`run_launch`).
    run : callable, optional
        ``run(answer, data) -> {output name: array}`` instead of ``launch`` (a host loop); arrays
        built with :func:`guarded` are checked when ``axes`` gives their guarded axes.
    compare : callable, optional
        ``compare(got, expected, name)`` raising on a mismatch; default exact equality.
    label : callable, optional
        ``label(data) -> str`` added to the output's name in messages (e.g. ``"for N = 17"``).
    axes : dict, optional
        ``name -> guarded axes`` of the outputs (default ``(0,)`` for a ``launch``; with ``run``,
        outputs are unguarded unless given).
    hidden, technique, hint, hints
        See :class:`~course_lib.grading.core.Test`.
    judge : callable, optional
        ``judge(data, outputs)`` raising :func:`fail`, instead of ``expect`` and ``compare``, for
        outputs that are not just arrays (the levels of a search, say).
    """
    if (launch is None) == (run is None):
        raise ValueError(f"test {name!r}: give launch or run")
    if (expect is None) == (judge is None):
        raise ValueError(f"test {name!r}: give expect or judge")
    custom = judge
    compare = compare or exact
    produce = (lambda answer, data: run_launch(launch(answer, data))) if launch is not None else run
    guard_axes = axes if axes is not None else ({} if launch is not None else None)

    def judge(data, got, info):
        if custom is not None:
            return custom(data, got)
        rules = judge.rules
        _judge_outputs(got, expect(data), data, compare, rules, "" if hidden or label is None else label(data),
                       guard_axes)

    judge.rules = ()
    return _test(name, points, inputs=inputs, produce=produce, judge=judge, hidden=hidden, hint=hint, hints=hints,
                 technique=technique)


#: The cause of each kind of problem the checker reports (a shared-memory race is a missing barrier).
CHECKER_CAUSES = {"barrier": "barrier", "out-of-bounds": "bounds", "warp": "warp"}


def _checker_cause(problem) -> str:
    if problem["kind"] == "race":
        return "barrier" if problem["space"] == "shared" else "race"
    return CHECKER_CAUSES.get(problem["kind"], "race")


def race_test(name: str, points: float, *, inputs, launch, expect, compare=None, hidden=False, technique=False,
              hint="", hints=None) -> Test:
    """Run one launch under the race, barrier and bounds checker: clean report and right result.

    The checker's report (source lines and threads) is shown for a visible test; its first
    problem gives the cause (``barrier`` for a shared-memory race or a barrier problem,
    ``race`` for a global one, ``bounds``). Inputs must not depend on the backend: on a GPU
    the launch runs in the simulator in a child process.
    """
    compare = compare or exact

    def produce(answer, data):
        return check_launch(launch(answer, data))

    def judge(data, got, info):
        if not isinstance(got, dict) or type(got.get("ok")) is not bool or not isinstance(got.get("problems"), list):
            raise fail("the race checker's report did not come back")
        if not got["ok"]:
            problems = [p for p in got["problems"] if isinstance(p, dict)]
            first = problems[0] if problems else {"kind": "race", "space": ""}
            text = "\n".join(str(p.get("text", ""))[:1500] for p in problems[:3])
            kinds = ", ".join(sorted({str(p.get("kind")) for p in problems}))
            raise fail(f"the checker found {len(got['problems'])} problem(s) ({kinds}):\n{text}", _checker_cause(first))
        _judge_outputs(got.get("outputs"), expect(data), data, compare, judge.rules, "under the checker", None)

    judge.rules = ()
    return _test(name, points, inputs=inputs, produce=produce, judge=judge, hidden=hidden, hint=hint, hints=hints,
                 technique=technique)


def technique_test(name: str, points: float, *, inputs, launch, expect, measure, limit, technique: str, unit: str,
                   compare=None, hidden=False, hint="", hints=None) -> Test:
    """Measure the answer with the course's profiler: the technique the question teaches, graded.

    Parameters
    ----------
    measure : callable
        ``measure(metrics, data) -> float`` (grader side) from the profile's totals
        (``global_load_bytes``, ``global_load_requests``, ``atomics``, ``shared_requests``...,
        see :class:`course_lib.sim.LineProfile`).
    limit : callable
        ``limit(data) -> (low, high)``: the range the expected technique gives.
    technique : str
        The expected technique, named in the failure message.
    unit : str
        What is measured (``"global loads per interaction"``).

    The result under the profiler must be right as well (a kernel that does nothing passes no
    technique test); a failure caps the question's points (``technique=True``).
    """
    compare = compare or exact

    def produce(answer, data):
        return profile_launch(launch(answer, data))

    def judge(data, got, info):
        if not isinstance(got, dict) or not isinstance(got.get("metrics"), dict):
            raise fail("the profiler's counts did not come back")
        _judge_outputs(got.get("outputs"), expect(data), data, compare, judge.rules, "under the profiler", None)
        metrics = {k: v for k, v in got["metrics"].items() if type(v) in (int, float)}
        value = measure(metrics, data)
        low, high = limit(data)
        # Returned (or attached to the failure) so that the grader records it for the class report.
        measurement = {"measured": value, "low": low, "high": high, "unit": unit}
        if not (isinstance(value, (int, float)) and low <= value <= high):
            failure = fail(f"expected technique: {technique}, which gives {unit} in [{low:.3g}, {high:.3g}] here; "
                           f"measured {value:.3g} with the course's profiler (course_lib.sim.profile)", "technique",
                           public=True)
            failure.measurement = measurement
            raise failure
        return measurement

    judge.rules = ()
    return _test(name, points, inputs=inputs, produce=produce, judge=judge, hidden=hidden, hint=hint, hints=hints,
                 technique=True)


def _field(answer, key):
    return answer[key] if key is not None else answer.value


def calls_test(name: str, points: float, *, args, expect, key=None, what=None, rtol: float = 0.0, explain=None,
               transform=None, hidden=False, hint="", hints=None) -> Test:
    """Call the answer's function (or its field ``key``) on arguments and check every result.

    Parameters
    ----------
    args : callable
        ``args(rng, info) -> list of argument tuples`` (grader side).
    expect : callable
        ``expect(*arguments) -> expected value`` (grader side, trusted).
    rtol : float
        Relative tolerance (0: exact). Booleans must match exactly.
    what : str, optional
        The function's name in messages (default ``key``).
    explain : callable, optional
        ``explain(arguments, expected) -> str`` added to the failure message.
    transform : callable, optional
        ``transform(*arguments, value) -> number`` compared with ``expect(*arguments)`` instead of the value
        itself (grader side): e.g. the modelled cost of the K an answer chose, against the least cost.
    """
    what = what or key or "the function"

    def inputs(rng, info):
        return {"args": [list(a) for a in args(rng, info)]}

    def produce(answer, data):
        function = _field(answer, key)
        return [function(*a) for a in data["args"]]

    def judge(data, got, info):
        if type(got) is not list or len(got) != len(data["args"]):
            raise fail(f"expected one result per call, got {got!r}"[:300], "answer")
        for arguments, value in zip(data["args"], got):
            want = expect(*arguments)
            call = f"{what}({', '.join(_short(a) for a in arguments)})"
            if transform is not None and type(value) in (int, float):
                try:
                    judged = transform(*arguments, value)
                except Exception:  # an answer the model cannot take (a negative K, say)
                    raise fail(f"{call} = {value!r} is not a valid answer") from None
                if not _matches(judged, want, rtol):
                    more = f": {explain(arguments, want)}" if explain else ""
                    raise fail(f"{call} = {value!r}, which gives {_short(judged)}; the best is {_short(want)}{more}")
                continue
            if isinstance(want, np.ndarray):
                _same_array(value, want, rtol, call, explain(arguments, want) if explain else "")
                continue
            if not _matches(value, want, rtol):
                more = f": {explain(arguments, want)}" if explain else ""
                raise fail(f"{call} = {value!r}, expected {_short(want)}{more}"[:1500])

    return _test(name, points, inputs=inputs, produce=produce, judge=judge, hidden=hidden, hint=hint, hints=hints,
                 technique=False)


def _same_array(value, want, rtol, call, more):
    """An array result: same shape, and equal (or within ``rtol`` of ``max|want|``) everywhere."""
    more = f": {more}" if more else ""
    if not isinstance(value, np.ndarray) or value.shape != want.shape:
        raise fail(f"{call} returned {_short(value)} of shape {getattr(value, 'shape', None)}, expected shape "
                   f"{want.shape}{more}"[:1500])
    if value.dtype.kind not in "biuf":
        raise fail(f"{call} returned an array of {value.dtype}{more}")
    tol = rtol * float(np.max(np.abs(want))) if rtol and want.size else 0.0
    wrong = np.argwhere(np.abs(value.astype(np.float64) - want.astype(np.float64)) > tol)
    if len(wrong):
        i = tuple(int(k) for k in wrong[0])
        raise fail(f"{call}: {len(wrong)} of {want.size} values are wrong; e.g. at {i} got {value[i]}, expected "
                   f"{want[i]}{more}"[:1500])


def _short(value):
    if isinstance(value, np.ndarray):
        return f"<array of {value.size}>"
    if isinstance(value, float):
        return f"{value:.6g}"
    return repr(value)[:60]


def _matches(value, want, rtol):
    if isinstance(want, (bool, np.bool_)):
        return type(value) in (bool, int) and bool(value) == bool(want) and value in (0, 1)
    if type(value) not in (int, float) or not math.isfinite(value):
        return False
    return abs(value - want) <= rtol * abs(want) if rtol else value == want


def value_test(name: str, points: float, *, key, expect, rtol: float = 0.0, explain=None, hidden=False, hint="",
               hints=None) -> Test:
    """Check one value of a dict answer (a number, a choice) against ``expect(info) -> value``."""
    def inputs(rng, info):
        return {}

    def produce(answer, data):
        return _field(answer, key)

    def judge(data, got, info):
        want = expect(info)
        if not (_matches(got, want, rtol) if not isinstance(want, str) else got == want):
            more = f": {explain(got, want)}" if explain else ""
            raise fail(f"{key} = {got!r}{more}"[:1500])

    return _test(name, points, inputs=inputs, produce=produce, judge=judge, hidden=hidden, hint=hint, hints=hints,
                 technique=False)


# ----------------------------------------------------------------------------- the question
def question(id: str, title: str, points: float, *, answer, tests, options=None, hints=None, diagnose=(),
             tolerance: str = "", technique_cap: float = 0.5) -> Question:
    """A graded question: the answer's form, its options and its tests with points.

    Parameters
    ----------
    id : str
        ``"psN.qM"``, stable.
    title : str
    points : float
        The tests' points must add up to it.
    answer : spec or dict of specs
        :func:`kernel`, :func:`kernel_factory`, :func:`function`, :func:`number`,
        :func:`integer`, :func:`choice`, :func:`number_map`; a dict means a dict answer
        with those fields.
    tests : sequence of Test
    options : dict, optional
        ``name -> spec`` of the keyword options of ``check`` (e.g. ``{"block": integer(...)}``);
        the tests' ``inputs`` find them, validated again in the grader, in ``info``.
    hints : dict, optional
        ``cause -> hint`` for this question, on top of :data:`DEFAULT_HINTS`.
    diagnose : sequence of (cause, rule)
        ``rule(got, expected, data) -> bool`` tried, in order, when a result is wrong; the first
        that holds names the cause (e.g. ``("sign", sign_flipped)``).
    tolerance : str
        How results are compared, shown in feedback.
    technique_cap : float
        At most this fraction of the points when a technique test fails.
    """
    options = dict(options or {})
    merged = {**DEFAULT_HINTS, **(hints or {})}
    built = []
    for test in tests:
        if not isinstance(test, Test):
            raise ValueError(f"{id}: every test must be built with the harness, got {test!r}")
        if test.points is None:
            raise ValueError(f"{id}: test {test.name!r} declares no points")
        judge = test.judge
        if hasattr(judge, "rules"):
            judge.rules = tuple(diagnose)
        built.append(dataclasses.replace(test, inputs=_checked_inputs(test.inputs, options),
                                         hints=tuple({**merged, **dict(test.hints)}.items())))
    if not any(t.points > 0 for t in built if not t.hidden):
        raise ValueError(f"{id}: the visible tests carry no points")

    def describe(prepared):
        return dict(prepared.options)

    return Question(id, title, points, tuple(built), prepare=_prepare(answer, options), describe=describe,
                    tolerance=tolerance, technique_cap=technique_cap)


def _checked_inputs(inputs, options):
    """``inputs`` after validating ``info`` again in the grader (it comes from the student's process)."""
    if not options:
        return inputs

    def checked(rng, info):
        info = dict(info or {})
        for key, spec in options.items():
            info[key] = spec.validate(info.get(key), f"option {key}")
        return inputs(rng, info)

    return checked
