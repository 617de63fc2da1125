"""The kinds of test a question lists, and the comparisons and diagnoses their judges use.

:func:`result_test`, :func:`race_test`, :func:`technique_test`, :func:`calls_test` and
:func:`value_test` each build a split :class:`~course_lib.grading.core.Test` (inputs and judge
in the grader, ``produce`` in the student's process); :func:`close` and :func:`exact` compare
arrays and :func:`sign_flipped` is a diagnosis rule. Part of :mod:`course_lib.grading.authoring.harness`,
which re-exports every name.
"""

from __future__ import annotations

import math

import numpy as np

from .buffers import fail, unguard
from ..core import Test, TestFailure, compare_arrays
from .launches import check_launch, profile_launch, run_launch

__all__ = ["calls_test", "close", "race_test", "result_test", "sign_flipped", "technique_test", "value_test"]


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


def _test(name, points, *, inputs, produce, judge, hidden, technique, hint="", hints=None):
    return Test(name, hidden=hidden, hint=hint, inputs=inputs, produce=produce, judge=judge, points=points,
                technique=technique, hints=tuple((hints or {}).items()))


def _outputs_test(name, points, *, inputs, produce, judge, hidden, hint, hints, technique):
    """A test whose ``judge`` compares outputs: it starts with no diagnosis rules.

    :func:`~course_lib.grading.authoring.harness.question` sets ``judge.rules`` to the question's
    ``diagnose`` rules, which :func:`_judge_outputs` reads to name the cause of a mismatch.
    """
    judge.rules = ()
    return _test(name, points, inputs=inputs, produce=produce, judge=judge, hidden=hidden, hint=hint, hints=hints,
                 technique=technique)


def _technique_failure(message: str, measurement: dict) -> TestFailure:
    """A technique test's failure, shown to the student, carrying what was measured for the class report.

    Parameters
    ----------
    message : str
        What the profiler measured and what the technique gives.
    measurement : dict
        ``{"measured", "low", "high", "unit"}``, which the grader records.

    Returns
    -------
    TestFailure
        To raise.
    """
    failure = fail(message, "technique", public=True)
    failure.measurement = measurement
    return failure


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
    if launch is not None:
        def produce(answer, data):
            return run_launch(launch(answer, data))

        produce.launch = launch  # the coverage test runs it again under the profiler when it needs to
    else:
        produce = run
    guard_axes = axes if axes is not None else ({} if launch is not None else None)

    def judge(data, got, info):
        if custom is not None:
            return custom(data, got)
        rules = judge.rules
        _judge_outputs(got, expect(data), data, compare, rules, "" if hidden or label is None else label(data),
                       guard_axes)

    return _outputs_test(name, points, inputs=inputs, produce=produce, judge=judge, hidden=hidden, hint=hint,
                         hints=hints, technique=technique)


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

    produce.launch = launch  # the coverage test runs it again under the profiler when it needs to

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

    return _outputs_test(name, points, inputs=inputs, produce=produce, judge=judge, hidden=hidden, hint=hint,
                         hints=hints, technique=technique)


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
            raise _technique_failure(f"expected technique: {technique}, which gives {unit} in [{low:.3g}, {high:.3g}] "
                                    f"here; measured {value:.3g} with the course's profiler (course_lib.sim.profile)",
                                    measurement)
        return measurement

    return _outputs_test(name, points, inputs=inputs, produce=produce, judge=judge, hidden=hidden, hint=hint,
                         hints=hints, technique=True)


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
    explain : callable or STORED, optional
        ``explain(arguments, expected) -> str`` added to the failure message; :data:`STORED`: the sentence
        the grader's resources hold for this test (:mod:`course_lib.grading.resources`).
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
            value = _scalar(value)
            want = expect(*arguments)
            call = f"{what}({', '.join(_short(a) for a in arguments)})"
            if transform is not None and type(value) in (int, float):
                try:
                    judged = transform(*arguments, value)
                except Exception:  # an answer the model cannot take (a negative K, say)
                    raise fail(f"{call} = {value!r} is not a valid answer") from None
                if not _matches(judged, want, rtol):
                    more = _explained(explain, judge, arguments, want)
                    raise fail(f"{call} = {value!r}, which gives {_short(judged)}; the best is {_short(want)}{more}")
                continue
            if isinstance(want, np.ndarray):
                _same_array(value, want, rtol, call, _explained(explain, judge, arguments, want)[2:])
                continue
            if not _matches(value, want, rtol):
                more = _explained(explain, judge, arguments, want)
                raise fail(f"{call} = {value!r}, expected {_short(want)}{more}"[:1500])

    judge.stored_for = None  # (question id, test name), set by the harness's question()
    return _test(name, points, inputs=inputs, produce=produce, judge=judge, hidden=hidden, hint=hint, hints=hints,
                 technique=False)


#: ``explain=STORED``: the sentence the grader's resources hold for the test
#: (:func:`course_lib.grading.resources.explanation`), read when a wrong value is reported; a sentence that tells
#: how to answer stays out of the library this way.
STORED = "stored"


def _explained(explain, judge, *arguments) -> str:
    """``": <the explanation>"`` for a failure message, or ``""`` when there is none."""
    if explain == STORED:
        from ..resources import explanation

        text = explanation(*judge.stored_for)(*arguments) if judge.stored_for else ""
    else:
        text = explain(*arguments) if explain else ""
    return f": {text}" if text else ""


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


def _scalar(value):
    """A 0-d NumPy array (``np.array(6)``, what some NumPy expressions return) as the number it holds."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "biuf":
        return value.item()
    return value


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
        got = _scalar(got)
        want = expect(info)
        if not (_matches(got, want, rtol) if not isinstance(want, str) else got == want):
            more = _explained(explain, judge, got, want)
            raise fail(f"{key} = {got!r}{more}"[:1500])

    judge.stored_for = None  # (question id, test name), set by the harness's question()

    return _test(name, points, inputs=inputs, produce=produce, judge=judge, hidden=hidden, hint=hint, hints=hints,
                 technique=False)
