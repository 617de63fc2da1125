"""Grading throughput of a synthetic class: ``python -m course_lib.bench grading [--quick]``.

For each problem set, a synthetic class of ``submissions`` notebooks (100 by default) in four
kinds, in turn:

- ``solution``: the solution notebook (full marks);
- ``stub``: the released problem set, untouched (0 points);
- ``wrong``: a right result computed with the wrong technique (capped at half), taken from the graded
  fixtures of ``tests/grading/make_fixtures.py`` that the grader must answer "expected technique"
  (for a problem set without one, its other wrong-answer fixtures);
- ``crash``: the solution with a first cell that kills its process (a segmentation fault), so the
  grader meets a dead worker (0 points).

The class is graded twice into a temporary grades CSV, with ``--jobs 1`` and ``--jobs 2`` (the
sandbox as ``grade`` would choose it), and every grade is checked against its kind before a time is
reported. Reported per problem set: seconds per submission for each run and the speed-up; goals (the
issue's): at most 5 s per submission on 2 cores under the sandbox, and a speed-up near 2. The load
average at the start and end is recorded: other work on the machine inflates every figure.

It needs a checkout of the course (the fixtures live in ``tests/``). With ``course_lib.bench`` the
results are written as JSON under ``benchmarks/results/`` with the machine (CPU model and cores) and
the date; ``python -m course_lib.grading.reporting.throughput --problem-sets ps1 --submissions 3`` runs a small
class without writing anything.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["KINDS", "plot", "run", "summary", "synthetic_class"]

KINDS = ("solution", "stub", "wrong", "crash")
#: The first cell of a crashing submission: a segmentation fault in the student's process.
CRASH_CELL = "import ctypes\nctypes.string_at(0)  # reads address 0: the process dies with SIGSEGV\n"
_FIXTURES = Path(__file__).resolve().parents[3] / "tests" / "grading" / "make_fixtures.py"


def _fixtures_module():
    if not _FIXTURES.is_file():
        raise ValueError(f"the synthetic class needs the course's graded fixtures ({_FIXTURES}): run it from a "
                         "checkout of the course repository")
    name = "course_grading_fixtures"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, _FIXTURES)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # its dataclasses look their module up there
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    return sys.modules[name]


def _wrong_fixtures(fixtures_module, problem_set: str) -> dict:
    fixtures = fixtures_module.fixtures(problem_set)
    # Right results with the wrong technique: the fixtures capped by their technique test. Their grade is the same
    # for every seed, unlike a race's (a racy kernel's hidden test fails or passes with the simulator's order).
    technique = {n: f for n, f in fixtures.items()
                 if any("Capped at" in s for s in getattr(f, "feedback", ()) or ()) and sum(f.points) > 0}
    if technique:
        return technique
    return {n: f for n, f in fixtures.items() if n not in ("right", "right_but_different", fixtures_module.UNTOUCHED)
            and "tamper" not in f.covers and sum(f.points) > 0}


def synthetic_class(problem_set: str, folder, submissions: int) -> list:
    """Write ``submissions`` notebooks into ``folder``; returns ``[(path, kind, expected_points or None)]``.

    ``expected_points`` is the total the grader must give (None for a ``wrong`` submission, which only
    must score less than full marks but more than 0).
    """
    import nbformat

    from ..core import questions_of

    if submissions < 1:
        raise ValueError(f"submissions must be at least 1, got {submissions}")
    fx = _fixtures_module()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    fixtures = fx.fixtures(problem_set)
    solution = fx.notebook(problem_set, fixtures["right"])
    stub = fx.notebook(problem_set, fixtures[fx.UNTOUCHED])
    wrong = [(name, fx.notebook(problem_set, f), float(sum(f.points)))
             for name, f in sorted(_wrong_fixtures(fx, problem_set).items())]
    crash = nbformat.reads(nbformat.writes(solution), as_version=4)
    crash.cells.insert(0, nbformat.v4.new_code_cell(CRASH_CELL))
    full = float(sum(q.points for q in questions_of(problem_set)))
    written = []
    for i in range(submissions):
        kind = KINDS[i % len(KINDS)]
        if kind == "wrong" and not wrong:
            kind = "solution"
        if kind == "solution":
            nb, expected = solution, full
        elif kind == "stub":
            nb, expected = stub, 0.0
        elif kind == "crash":
            nb, expected = crash, 0.0
        else:
            _, nb, expected = wrong[(i // len(KINDS)) % len(wrong)]
        path = folder / f"student{i:03d}_{kind}.ipynb"
        nbformat.write(nb, path)
        written.append((path, kind, expected))
    return written


def _grade_class(problem_set: str, written: list, jobs: int, workdir: Path, timeout: float) -> float:
    from ..running.client import GradeOptions
    from ..running.grader import grade

    out = workdir / f"grades-{problem_set}-jobs{jobs}.csv"
    start = time.perf_counter()
    rows = grade(problem_set, [p for p, _, _ in written], out, jobs=jobs, force=True,
                 options=GradeOptions(timeout=timeout), seed=1, progress=False, sandbox="auto", manifest=False)
    seconds = time.perf_counter() - start
    totals = {}
    for row in rows:
        totals[row["student"]] = totals.get(row["student"], 0.0) + float(row["points"])
    problems = []
    for path, kind, expected in written:
        got = totals.get(path.stem)
        if got is None:
            problems.append(f"{path.name}: not graded")
        elif expected is not None and abs(got - expected) > 1e-6:
            problems.append(f"{path.name}: {got:g} points, expected {expected:g}")
    if problems:  # a time is reported only for a class graded as it must be
        raise RuntimeError(f"{problem_set} with --jobs {jobs} graded wrongly: " + "; ".join(problems[:5]))
    return seconds


def run(quick: bool = False, *, problem_sets=None, submissions: int | None = None, jobs=(1, 2),
        timeout: float = 120.0) -> dict:
    """Grade a synthetic class per problem set with each number of jobs; returns ``{"rows", ...}``.

    Parameters
    ----------
    quick : bool
        PS1 only, 4 submissions (one of each kind): a smoke test, not a measurement.
    problem_sets : list of str, optional
        Default: every problem set with graded fixtures (PS1 only when ``quick``).
    submissions : int, optional
        Per problem set; default 100 (4 when ``quick``).
    jobs : tuple of int
        The runs to compare; the speed-up is relative to the first.
    """
    from ..catalog import problem_set_id
    from ..running.sandbox import resolve

    fx = _fixtures_module()
    problem_sets = [problem_set_id(p) for p in (problem_sets or (["ps1"] if quick else sorted(fx.FIXTURES)))]
    count = submissions or (4 if quick else 100)
    box = resolve("auto")
    rows = []
    workdir = Path(tempfile.mkdtemp(prefix="course-grading-throughput-"))
    try:
        for ps in problem_sets:
            written = synthetic_class(ps, workdir / ps, count)
            kinds = {k: sum(1 for _, kind, _ in written if kind == k) for k in KINDS}
            times = {j: _grade_class(ps, written, j, workdir, timeout) for j in jobs}
            base = times[jobs[0]]
            for j in jobs:
                rows.append({"problem_set": ps, "submissions": count, "kinds": kinds, "jobs": j, "seconds": times[j],
                             "seconds_per_submission": times[j] / count, "speedup": base / times[j]})
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    notes = []
    full = sorted(fx.FIXTURES)
    if quick or count < 100 or sorted(problem_sets) != full:
        notes.append(f"a reduced class: {count} submissions per problem set ({', '.join(problem_sets)}), not the full "
                     f"benchmark's 100 for each of {', '.join(full)}")
    # The machine's load is stamped and judged by the shared bench layer (course_lib.bench.stamp, load_note).
    return {"rows": rows, "notes": notes, "sandbox": box.kind, "sandbox_note": box.note, "quick": quick,
            "goals": {"seconds_per_submission": 5.0, "speedup_with_2_jobs": 2.0}}


def summary(results: dict) -> str:
    lines = [f"sandbox: {results['sandbox']} ({results['sandbox_note']})"]
    for row in results["rows"]:
        kinds = ", ".join(f"{n} {k}" for k, n in row["kinds"].items())
        lines.append(f"{row['problem_set']}: {row['submissions']} submissions ({kinds}), --jobs {row['jobs']}: "
                     f"{row['seconds']:.1f} s, {row['seconds_per_submission']:.2f} s per submission, "
                     f"speed-up {row['speedup']:.2f}")
    if results.get("quick"):
        lines.append("--quick: a smoke test of the benchmark, not a measurement")
    lines += results.get("notes", [])
    return "\n".join(lines)


def plot(results: dict, path) -> None:
    """Seconds per submission per problem set, one bar per number of jobs, the 5 s goal as a line."""
    from ...bench import figure

    rows = results["rows"]
    problem_sets = sorted({r["problem_set"] for r in rows}, key=lambda p: int(p[2:]))
    jobs = sorted({r["jobs"] for r in rows})
    width = 0.8 / len(jobs)
    with figure(path) as ax:
        for k, j in enumerate(jobs):
            values = [next(r["seconds_per_submission"] for r in rows if r["problem_set"] == p and r["jobs"] == j)
                      for p in problem_sets]
            ax.bar([i + k * width for i in range(len(problem_sets))], values, width, label=f"--jobs {j}")
        ax.axhline(results["goals"]["seconds_per_submission"], color="grey", linestyle="--", label="goal")
        ax.set_xticks([i + width * (len(jobs) - 1) / 2 for i in range(len(problem_sets))], problem_sets)
        ax.set_ylabel("seconds per submission")
        ax.set_title(f"grading throughput (sandbox: {results['sandbox']})")
        ax.legend()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_lib.grading.reporting.throughput",
                                     description="Grade a synthetic class and print seconds per submission "
                                                 "(writes nothing; `python -m course_lib.bench grading` writes JSON).")
    parser.add_argument("--problem-sets", nargs="+", help="default: every problem set with graded fixtures")
    parser.add_argument("--submissions", type=int, default=100, help="per problem set (default 100)")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], help="runs to compare (default: 1 2)")
    ns = parser.parse_args(argv)
    print(summary(run(problem_sets=ns.problem_sets, submissions=ns.submissions, jobs=tuple(ns.jobs))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
