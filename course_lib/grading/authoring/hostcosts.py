"""What a student's host program costs: launches and copies (``record()``) and device allocations, measured around
one call, and the judge that caps a host loop whose costs grow with its iterations.

The questions that ask for host orchestration (``ps5.q3``, ``ps6.q3``, ``ps7.q3``, ``ps8.q3``) run the student's
function under :func:`counted_call` and compare the counts with the bounds of the technique
(:func:`judge_bounded`): a loop that copies back, allocates or launches per iteration (or per element) exceeds them.
"""

from __future__ import annotations

from numba import cuda

from .buffers import fail

#: The ``numba.cuda`` functions that allocate device memory (``to_device(..., to=array)`` copies into an existing
#: array and does not allocate).
ALLOCATING = ("device_array", "device_array_like", "to_device")


class CountedAllocations:
    """Counts the device allocations made through ``numba.cuda`` (:data:`ALLOCATING`) while open; the module's
    functions are restored on exit.

    Attributes
    ----------
    count : int
        Allocations made so far.
    """

    def __enter__(self):
        self.count, self._saved = 0, {name: getattr(cuda, name) for name in ALLOCATING}
        for name, original in self._saved.items():
            setattr(cuda, name, self._counting(name, original))
        return self

    def _counting(self, name, original):
        def counted(*args, **kwargs):
            if not (name == "to_device" and kwargs.get("to") is not None):
                self.count += 1
            return original(*args, **kwargs)
        return counted

    def __exit__(self, *exc):
        for name, original in self._saved.items():
            setattr(cuda, name, original)
        return False


def counted_call(function, *args):
    """Call ``function(*args)`` under ``record()`` and :class:`CountedAllocations`.

    Returns
    -------
    out : object
        What the function returned.
    counts : dict
        ``launches``, ``copies`` (host to device, device to host and device to device), ``HtoD_count``,
        ``DtoH_count``, ``HtoD_bytes``, ``DtoH_bytes`` and ``allocations``, all int, and ``kernels``, the name of
        each kernel launched, in order (tuple of str).
    """
    from ...sim import record
    from .coverage import traced_host

    with record() as log, CountedAllocations() as allocations, traced_host(function):
        out = function(*args)
    summary = log.summary()
    counts = {"launches": summary["launches"],
              "copies": summary["HtoD_count"] + summary["DtoH_count"] + summary.get("DtoD_count", 0),
              **{key: summary[key] for key in ("HtoD_count", "DtoH_count", "HtoD_bytes", "DtoH_bytes")},
              "allocations": allocations.count, "kernels": tuple(launch.kernel for launch in log.launches)}
    return out, counts


def judge_bounded(measured, label):
    """Raise the technique failure of the first count above its bound.

    Parameters
    ----------
    measured : iterable of (str, number, number, str)
        ``(what, value, most, why)``: what was counted (it names the failure), the count, the technique's bound
        and why the bound holds.
    label : str
        The run, for the message (``"for 12 elements"``).

    Raises
    ------
    course_lib.grading.model.TestFailure
        Cause ``"technique"``, public, with ``measurement`` set (measured value and the bound).
    """
    for what, value, most, why in measured:
        if int(value) > most:
            failure = fail(f"{int(value)} {what} {label}; the technique needs at most {int(most)} ({why})",
                           "technique", public=True)
            failure.measurement = {"measured": float(value), "low": 0.0, "high": float(most), "unit": what}
            raise failure


def copies_and_allocations_bounds(got, max_copies, max_allocations):
    """The rows of :func:`judge_bounded` every host-loop question shares: copies and device allocations, each
    under a bound that holds only when the loop adds none.

    Parameters
    ----------
    got : dict
        :func:`counted_call`'s counts (``copies`` and ``allocations`` are read).
    max_copies, max_allocations : int
        The bounds of one run.

    Returns
    -------
    tuple of (str, int, int, str)
    """
    return (("copies between host and device", got["copies"], max_copies, "none inside the loop"),
            ("device allocations", got["allocations"], max_allocations, "none inside the loop"))


#: What a host loop may add per step: two launches (the question's kernel pair); no copy, no allocation.
PER_STEP = (("launches", "launches", 2, "two per step"),
            ("copies", "copies between host and device", 0, "none inside the loop"),
            ("DtoH_count", "copies back to the host", 0, "none inside the loop"),
            ("allocations", "device allocations", 0, "none inside the loop"))


def growth_test(name: str, points: float, *, inputs, run, judge, steps, per_step=PER_STEP, hint: str = "",
                hints=None):
    """The counts of a host program at two step counts: each run judged by ``judge`` (results and bounds), and the
    counts' growth between them at most ``per_step`` per added step.

    A cost paid per step from some step on (a copy back once the loop is past its first steps) stays under a bound
    fixed for one run; measured at two step counts it grows with the steps. (A cost that starts past every step the
    grader runs never runs at all: :func:`~course_lib.grading.authoring.coverage.host_coverage_test` catches it.)

    Parameters
    ----------
    inputs : sequence of two callables
        ``inputs(rng, info) -> data`` of the two runs (another step count each).
    run : callable
        ``run(answer, data) -> dict`` with the outputs and :func:`counted_call`'s counts.
    judge : callable
        ``judge(data, got)`` of one run (its results and its bounds).
    steps : callable
        ``steps(data) -> int``: the loop's steps in that run.
    per_step : sequence of (key, what, most, why)
        The counts compared and what one more step may add to each.

    A failure caps the question (``technique=True``).
    """
    from .testkinds import _test

    def make_inputs(rng, info):
        return {"runs": [make(rng, info) for make in inputs]}

    def produce(answer, data):
        return [run(answer, d) for d in data["runs"]]

    def judge_runs(data, got, info):
        if type(got) is not list or len(got) != len(data["runs"]) or not all(isinstance(g, dict) for g in got):
            raise fail("the runs did not come back", "answer")
        for d, g in zip(data["runs"], got):
            judge(d, g)
        (few, few_got), (many, many_got) = sorted(zip(data["runs"], got), key=lambda pair: steps(pair[0]))
        added = steps(many) - steps(few)
        if added <= 0:
            return
        judge_bounded(((f"{what} more", int(many_got[key]) - int(few_got[key]), most * added, f"{why}: at most "
                        f"{most} per step") for key, what, most, why in per_step if key in many_got and key in few_got),
                      f"in a run of {steps(many)} steps than in one of {steps(few)}")

    return _test(name, points, inputs=make_inputs, produce=produce, judge=judge_runs, hidden=False, hint=hint,
                 hints=hints, technique=True)
