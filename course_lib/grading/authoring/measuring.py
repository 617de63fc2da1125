"""Measurements that are measured: a measure-and-explain answer's ``measure`` takes the kernel.

A measuring function of one parameter (``measure(tile)``) can return numbers pasted from a
scratch run, or the model's own prediction, and still match the grader's measurement of the
student's kernel. Here the student's ``measure(kernel, *config)`` receives the kernel (or kernel
factory) to measure: :func:`kernel_measurement_test` calls it on the student's kernel **and on
decoys of the grader's own** (kernels with a known, different traffic), on configurations drawn
at grading time, and compares every number with the course's profiler measuring the same launch.
Only a function that really runs what it is given passes. The explanation stays a manual cell.
"""

from __future__ import annotations

import math

from .buffers import results_per_case
from .dispatch import handed, release_handed
from .harness import _matches, _test, fail, profile_launch

__all__ = ["best_parameter_test", "kernel_measurement_test"]

YOURS = "your kernel"


def kernel_measurement_test(name: str, points: float, *, key: str, kernel_key: str, decoys: dict, configs, launch,
                            measure, arguments=None, rtol: float = 0.01, caps: bool = False, hint: str = "",
                            hints=None):
    """The student's ``measure(kernel, *config)``, called on their kernel and on the grader's decoys.

    Parameters
    ----------
    key : str
        The answer field holding ``measure(kernel, *config) -> number``.
    kernel_key : str
        The answer field holding the student's kernel (or kernel factory).
    decoys : dict
        ``label -> kernel or kernel factory`` of the grader's own, each with a traffic known to
        differ from the technique's (a label such as ``"a kernel without shared memory"``).
    configs : callable
        ``configs(rng, info) -> list of tuples`` of plain data, drawn at grading time (each is used for
        the student's kernel and for every decoy).
    arguments : callable, optional
        ``arguments(config) -> tuple``: what ``measure`` is called with after the kernel (built in the
        student's process: a matrix from its seed, say); default the configuration itself.
    launch : callable
        ``launch(make, config) -> Launch``: the launch the measurement is about, where ``make`` is the
        kernel (or kernel factory) ``measure`` received.
    measure : callable
        ``measure(metrics, config) -> float`` from the profile's totals (grader side).
    rtol : float
        Relative difference allowed between the student's number and the grader's.
    caps : bool
        A failure caps the question at its technique cap (``technique=True``): a number that was pasted,
        modelled or measured on another kernel or problem than the one given is not a measurement, so the
        question counts at most half, not only this test's points.
    """
    if not decoys:
        raise ValueError(f"test {name!r}: give at least one decoy kernel")
    labels = [YOURS, *decoys]

    def inputs(rng, info):
        # The kernels of each configuration in an order drawn here: the position of a call does not say
        # which kernel it is.
        return {"cases": [[labels[k], list(config)] for config in configs(rng, info)
                          for k in rng.permutation(len(labels))]}

    def produce(answer, data):
        student_measure = answer[key]
        own = answer[kernel_key]
        results = []
        try:
            for label, config in data["cases"]:
                if label == YOURS:
                    # The student's kernel (or factory); a factory's kernels are made through the answer's checks.
                    target, make = own.value, (own.kernel if own._make is not None else own.value)
                else:
                    target = make = decoys[label]
                # A fresh object each call, made alike for every kernel: identity cannot tell them apart.
                reported = student_measure(handed(target), *(arguments(tuple(config)) if arguments else config))
                metrics = profile_launch(launch(make, tuple(config)))["metrics"]
                results.append({"reported": reported, "metrics": metrics})
        finally:
            release_handed()
        return results

    def judge(data, got, info):
        for (label, config), result in results_per_case(got, data["cases"], "the measurements"):
            if not isinstance(result.get("metrics"), dict):
                raise fail("the measurements did not come back", "answer")
            value = result.get("reported")
            call = f"{key}(<{label}>, {', '.join(map(repr, config))})" if arguments is None else \
                f"{key}(<{label}>, ...) for {tuple(config)}"
            if type(value) not in (int, float) or not math.isfinite(value):
                raise fail(f"{call} is {value!r}, not a number", "answer")
            metrics = {k: v for k, v in result["metrics"].items() if type(v) in (int, float)}
            want = measure(metrics, tuple(config))
            if not _matches(value, want, rtol) and not (want == 0 and value == 0):
                more = ("" if label == YOURS else
                        f": the grader gave {key} one of its own kernels, whose traffic differs from yours. "
                        f"{key} must run the kernel it is given, on the configuration it is given")
                raise fail(f"{call} = {value:.4g}, but the course's profiler measures {want:.4g} for that launch "
                           f"(allowed difference {rtol:.0%}){more}", "measure")

    def typing_launches():
        """The decoys' launches of this test, as a worker makes them (one configuration each, the decoy and
        the copy a measuring function receives): the grader's priming run types them once for all workers
        (:func:`course_lib.grading.running.bytecode.prime_typing`)."""
        import numpy as np

        try:
            config = tuple(configs(np.random.default_rng(0), {})[0])
        except Exception:  # configurations drawn from the student's answer: typed in each worker, as before
            return []
        return [(lambda made=made: profile_launch(launch(made, config))) for decoy in decoys.values()
                for made in (handed(decoy), decoy)]

    produce.typing_launches = typing_launches
    return _test(name, points, inputs=inputs, produce=produce, judge=judge, hidden=False, hint=hint, hints=hints,
                 technique=caps)


def best_parameter_test(name: str, points: float, *, key: str, params, launch, measure, best=min, hint: str = "",
                        hints=None):
    """The parameter the student chose from their measurements (the tile, the L with the least traffic) must be
    the one the course's profiler picks for their own kernel.

    Parameters
    ----------
    key : str
        The answer field holding the chosen parameter.
    params : sequence
        The parameters measured (plain data).
    launch : callable
        ``launch(answer, param) -> Launch`` of the student's kernel.
    measure : callable
        ``measure(metrics, param) -> float`` (grader side).
    best : {min, max}
    """
    params = list(params)

    def inputs(rng, info):
        return {"params": params}

    def produce(answer, data):
        return {"chosen": answer[key], "profiles": [profile_launch(launch(answer, p))["metrics"] for p in params]}

    def judge(data, got, info):
        if not isinstance(got, dict) or not isinstance(got.get("profiles"), list) or len(got["profiles"]) != len(params):
            raise fail("the measurements did not come back", "answer")
        values = {p: measure({k: v for k, v in m.items() if type(v) in (int, float)}, p)
                  for p, m in zip(params, got["profiles"])}
        target = best(values.values())
        if got.get("chosen") not in [p for p, v in values.items() if v == target]:
            raise fail(f"{key} = {got.get('chosen')!r}, but the measurements of your kernel pick "
                       f"{best(values, key=values.get)} ({', '.join(f'{p}: {v:.4g}' for p, v in values.items())})")

    return _test(name, points, inputs=inputs, produce=produce, judge=judge, hidden=False, hint=hint, hints=hints,
                 technique=False)
