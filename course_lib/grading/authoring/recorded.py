"""Measurements of runs: a question's ``measure(run, ...)`` takes the run to measure, as ``kernel_measurement_test``'s
takes the kernel.

A count of copies or of transferred bytes measured once in a scratch run can be pasted into the answer and match
the grader's own measurement of the same run. Here the student's measuring function receives the run (a callable of
the grader's: the lesson's loop, or a loop of its own whose copies differ) on a problem drawn at grading time;
:func:`run_measurement_test` measures the same run itself with ``course_lib.sim.record`` and compares. Only a
function that really runs and records what it is given passes; a failure caps the question (a measured number that
is not measured is not the student's work), like a technique test's.
"""

from __future__ import annotations

import math

from .buffers import results_per_case
from .harness import _matches, _test, fail

__all__ = ["run_measurement_test"]


def run_measurement_test(name: str, points: float, *, key: str, runs: dict, configs, call, truth, rtol: float = 0.0,
                         shown=None, hidden: bool = False, hint: str = "", hints=None):
    """The student's measuring function ``answer[key]``, called on the grader's runs, against ``record()``.

    Parameters
    ----------
    key : str
        The answer field holding the measuring function.
    runs : dict
        ``label -> make(config) -> run``: the callables handed to the student's function (built in the student's
        process from plain data); the label names the run in the feedback (``"the device-resident loop"``).
    configs : callable
        ``configs(rng, info) -> list of tuples`` of plain data, drawn at grading time; every run is measured on
        every configuration.
    call : callable
        ``call(measure, run, config) -> value``: how the student's function is called.
    truth : callable
        ``truth(run, config) -> float or None``: the grader's own measurement of the same run (``record()`` around
        it), called after the student's function with the run it was given (a run that records itself when called
        can give what it recorded; None when it was never run).
    rtol : float
        Relative difference allowed (0: exact, for counts and bytes).
    shown : callable, optional
        ``shown(label, config) -> str``: the call in the feedback (default ``key(<label>, *config)``).

    A failure caps the question's points (``technique=True``): the measurement part scores 0 and the question at
    most its technique cap.
    """
    if not runs:
        raise ValueError(f"test {name!r}: give at least one run to measure")
    labels = list(runs)

    def inputs(rng, info):
        return {"cases": [[label, list(config)] for config in configs(rng, info) for label in labels]}

    def produce(answer, data):
        results = []
        for label, config in data["cases"]:
            config = tuple(config)
            run = runs[label](config)
            reported = call(answer[key], run, config)
            results.append({"reported": reported, "want": truth(run, config)})
        return results

    def judge(data, got, info):
        for (label, config), result in results_per_case(got, data["cases"], "the measurements"):
            value, want = result.get("reported"), result.get("want")
            config = tuple(config)
            call_text = shown(label, config) if shown else f"{key}(<{label}>{''.join(', ' + repr(c) for c in config)})"
            if want is None:
                raise fail(f"{call_text} never ran the run it was given: {key} must measure that run with record()",
                           "measure", public=True)
            if type(want) not in (int, float):
                raise fail("the grader's measurement did not come back", "answer")
            if isinstance(value, bool) or type(value) not in (int, float) or not math.isfinite(value):
                raise fail(f"{call_text} is {value!r}, not a number", "answer")
            if not (_matches(value, want, rtol) if rtol else value == want):
                failure = fail(f"{call_text} = {value:.6g}, but record() measures {want:.6g} for that run: {key} must "
                               f"run and record the run it is given, on the problem it is given (the grader hands "
                               f"it runs of its own too, whose copies differ, on problems it draws)", "measure",
                               public=True)
                failure.measurement = {"measured": float(value), "low": float(want), "high": float(want),
                                       "unit": key}
                raise failure

    return _test(name, points, inputs=inputs, produce=produce, judge=judge, hidden=hidden, hint=hint, hints=hints,
                 technique=True)
