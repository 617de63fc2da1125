"""Grading speed: ``python -m course_lib.grading.reporting.bench [--quick] [--jobs N] [--submissions M]``.

Measures, with the PS1 solution as every submission (each graded in its own worker process,
hidden tests included):

- the wall time to grade one submission (goal: <= 20 s in the simulator on 2 cores);
- the sandbox's cost: one submission graded M times under bubblewrap and M times without a sandbox,
  alternately; the difference of the mean times (goal: at most +1 s per submission);
- the wall time to grade M submissions serially and with ``--jobs N``, under bubblewrap when
  it works here (goal: the parallel run takes <= 60 % of the serial one with N = 2 on 2 cores).

Timings depend on the machine and its load (the load average is printed); nothing here is a test.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from ... import device
from ..running.grader import GradeOptions, grade, grade_submission
from ..running.notebooks import answer_specs
from .release import solution_path
from ..running.sandbox import resolve


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time_grading(paths, jobs: int, workdir: Path, sandbox: str) -> float:
    out = workdir / f"grades-{jobs}-{len(paths)}-{sandbox}.csv"
    start = time.perf_counter()
    rows = grade("ps1", paths, out, jobs=jobs, force=True, options=GradeOptions(timeout=120), seed=1,
                 progress=False, sandbox=sandbox, manifest=False)
    seconds = time.perf_counter() - start
    full = sum(float(r["points"]) for r in rows)
    if full != 10 * len(paths):  # every copy of the solution must score full marks
        raise RuntimeError(f"expected {10 * len(paths)} points in all, got {full}")
    return seconds


def _sandbox_cost(path: Path, pairs: int) -> tuple:
    """Seconds to grade one submission without a sandbox and under bubblewrap, alternately (so that a
    change in the machine's load falls on both alike); returns the two lists."""
    specs = answer_specs("ps1")
    boxes = {"none": resolve("off"), "bwrap": resolve("require")}
    times = {"none": [], "bwrap": []}
    for _ in range(pairs):
        for kind, box in boxes.items():
            start = time.perf_counter()
            results = grade_submission(path, "ps1", 1, GradeOptions(timeout=120), specs, box)
            times[kind].append(time.perf_counter() - start)
            if sum(r.points for r in results) != 10:
                raise RuntimeError(f"the solution did not score 10 points ({kind})")
    return times["none"], times["bwrap"]


def run(quick: bool = False, jobs: int = 2, submissions: int | None = None) -> dict:
    """Run the measurements; returns seconds and ratios (see :func:`summary`)."""
    count = submissions or (4 if quick else 10)
    box = resolve("auto")
    mode = "require" if box.kind == "bwrap" else "off"
    workdir = Path(tempfile.mkdtemp(prefix="course-grading-bench-"))
    try:
        paths = []
        for i in range(count):
            path = workdir / f"student{i:02d}.ipynb"
            shutil.copy(solution_path("ps1"), path)
            paths.append(path)
        load = os.getloadavg()[0]
        one = _time_grading(paths[:1], 1, workdir, mode)
        unsandboxed, sandboxed = _sandbox_cost(paths[0], count) if box.kind == "bwrap" else ([], [])
        cpu = _cpu_of_children()
        serial = _time_grading(paths, 1, workdir, mode)
        cpu = _cpu_of_children() - cpu
        parallel = _time_grading(paths, jobs, workdir, mode)
        load_after = os.getloadavg()[0]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    cost = statistics.mean(sandboxed) - statistics.mean(unsandboxed) if sandboxed else None
    return {"backend": device.backend(), "cpus": os.cpu_count(), "submissions": count, "jobs": jobs,
            "sandbox": box.kind, "note": box.note, "one": one, "unsandboxed": unsandboxed, "sandboxed": sandboxed,
            "sandbox_cost": cost, "serial": serial, "parallel": parallel, "ratio": parallel / serial,
            "worker_cpu_serial": cpu, "load_before": load, "load_after": load_after}


def _spread(seconds) -> str:
    return f"{statistics.mean(seconds):.2f} s (min {min(seconds):.2f}, max {max(seconds):.2f}, n = {len(seconds)})"


def summary(result: dict) -> str:
    cost = result["sandbox_cost"]
    lines = [
        f"backend {result['backend']}, {result['cpus']} CPUs, load average {result['load_before']:.1f} at the start "
        f"and {result['load_after']:.1f} at the end (other work on the machine inflates every figure, the parallel "
        "run's most)",
        result["note"],
        f"one PS1 submission: {result['one']:.1f} s (goal <= 20 s in the simulator on 2 cores)",
        (f"sandbox cost: one submission {_spread(result['sandboxed'])} under bubblewrap, "
         f"{_spread(result['unsandboxed'])} without, graded alternately: {cost:+.2f} s per submission "
         "(goal <= +1 s)") if cost is not None else "sandbox cost: not measured (no working bubblewrap here)",
        f"{result['submissions']} submissions: serial {result['serial']:.1f} s, --jobs {result['jobs']} "
        f"{result['parallel']:.1f} s = {100 * result['ratio']:.0f} % of serial (goal <= 60 % with --jobs 2 on an idle "
        "machine)",
        f"worker CPU time in the serial run: {result['worker_cpu_serial']:.1f} s",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_lib.grading.reporting.bench",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 submissions instead of 10")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--submissions", type=int, help="number of submissions (default 10, 4 with --quick)")
    ns = parser.parse_args(argv)
    print(summary(run(ns.quick, ns.jobs, ns.submissions)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
