"""One kernel launch on host arrays (:class:`Launch`) and the three ways the harness runs it.

:func:`run_launch` runs it on the current backend with every array inside guards,
:func:`check_launch` under the course's race, barrier and bounds checker and
:func:`profile_launch` under its profiler. Part of :mod:`course_lib.grading.authoring.harness`, which
re-exports every name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .buffers import guarded, inner, sentinel
from .coverage import _judge_missing, _uncovered, note_profile

__all__ = ["Launch", "check_launch", "coverage_test", "profile_launch", "run_launch"]


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
    blocks : tuple, optional
        Under the profiler, run only these blocks of the grid (a sample the grader drew, see
        :func:`course_lib.grading.authoring.signature.sample_blocks`); ``None`` runs them all. Only the
        profiler reads it: a result test runs the whole grid.
    """

    kernel: object
    grid: object
    block: object
    args: dict
    outputs: tuple = ()
    axes: dict = field(default_factory=dict)
    blocks: tuple | None = None

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
    note_profile(report)
    metrics = {k: float(v) for k, v in report.total.as_dict().items() if isinstance(v, (int, float))}
    return {"metrics": metrics, "outputs": {name: args[name] for name in launch.outputs}}


def coverage_test(name: str, tests, *, hidden: bool = True):
    """The statements of the student's kernels all ran under the question's launches (0 points; a failure caps
    the question).

    Parameters
    ----------
    tests : sequence of Test
        The question's tests whose ``produce`` has a ``launch`` attribute (result and checker tests): what the
        technique tests' profiles left out is looked for in their launches, run under the profiler on inputs
        drawn from the same generators.
    """
    from ..core import Test

    runs = [(t.inputs, t.produce.launch) for t in tests if getattr(t.produce, "launch", None) is not None]

    def inputs(rng, info):
        return {"runs": [make(rng, info) for make, _ in runs]}

    def produce(answer, data):
        missing = _uncovered(answer)
        if missing:  # what the profiled launches left out, looked for in the result and checker launches
            for (_, launch), config in zip(runs, data["runs"]):
                try:
                    profile_launch(launch(answer, config))
                except Exception:  # a failing launch fails its own test; here it only adds no statement
                    pass
            missing = _uncovered(answer)
        return {"missing": [[str(f), int(line)] for f, line in missing]}

    return Test(name, hidden=hidden, hint="", inputs=inputs, produce=produce,
                judge=_judge_missing("kernel code", arms=True), points=0, technique=True, hints=())
