"""Grading speed: ``python -m course_lib.grading.bench [--quick] [--jobs N] [--submissions M]``.

Measures, with the PS1 solution as every submission (each graded in its own worker process,
hidden tests included):

- the wall time to grade one submission (goal: <= 20 s in the simulator on 2 cores);
- the wall time to grade M submissions serially and with ``--jobs N`` (goal: the parallel
  run takes <= 60 % of the serial one with N = 2 on 2 cores).

Timings depend on the machine and its load; nothing here is a test.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from .. import device
from .grader import GradeOptions, grade
from .release import solution_path


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time_grading(paths, jobs: int, workdir: Path) -> float:
    out = workdir / f"grades-{jobs}-{len(paths)}.csv"
    start = time.perf_counter()
    rows = grade("ps1", paths, out, jobs=jobs, force=True, options=GradeOptions(timeout=120), seed=1,
                 progress=False)
    seconds = time.perf_counter() - start
    full = sum(float(r["points"]) for r in rows)
    if full != 10 * len(paths):  # every copy of the solution must score full marks
        raise RuntimeError(f"expected {10 * len(paths)} points in all, got {full}")
    return seconds


def run(quick: bool = False, jobs: int = 2, submissions: int | None = None) -> dict:
    """Run the measurements; returns seconds: ``one``, ``serial``, ``parallel`` and their ``ratio``."""
    count = submissions or (4 if quick else 20)
    workdir = Path(tempfile.mkdtemp(prefix="course-grading-bench-"))
    try:
        paths = []
        for i in range(count):
            path = workdir / f"student{i:02d}.ipynb"
            shutil.copy(solution_path("ps1"), path)
            paths.append(path)
        load = os.getloadavg()[0]
        one = _time_grading(paths[:1], 1, workdir)
        cpu = _cpu_of_children()
        serial = _time_grading(paths, 1, workdir)
        cpu = _cpu_of_children() - cpu
        parallel = _time_grading(paths, jobs, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return {"backend": device.backend(), "cpus": os.cpu_count(), "submissions": count, "jobs": jobs,
            "one": one, "serial": serial, "parallel": parallel, "ratio": parallel / serial,
            "worker_cpu_serial": cpu, "load_before": load}


def summary(result: dict) -> str:
    return "\n".join([
        f"backend {result['backend']}, {result['cpus']} CPUs, load average {result['load_before']:.1f} at the start "
        "(other work on the machine slows the parallel run most)",
        f"one PS1 submission: {result['one']:.1f} s (goal <= 20 s in the simulator on 2 cores)",
        f"{result['submissions']} submissions: serial {result['serial']:.1f} s, --jobs {result['jobs']} "
        f"{result['parallel']:.1f} s = {100 * result['ratio']:.0f} % of serial (goal <= 60 % with --jobs 2)",
        f"worker CPU time in the serial run: {result['worker_cpu_serial']:.1f} s",
    ])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_lib.grading.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 submissions instead of 20")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--submissions", type=int, help="number of submissions (default 20, 4 with --quick)")
    ns = parser.parse_args(argv)
    print(summary(run(ns.quick, ns.jobs, ns.submissions)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
