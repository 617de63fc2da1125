"""A Gradescope autograder for a problem set: the archive, and the grading it runs there.

``course grading gradescope ps1 --out ps1_autograder.zip`` writes the archive Gradescope's autograder
specification asks for (https://gradescope-autograders.readthedocs.io/en/latest/specs/)::

    setup.sh          run once, as root, when Gradescope builds the autograder's image (Ubuntu):
                      installs Python, bubblewrap and libseccomp with apt, makes a virtual environment
                      in /autograder/venv, installs the course from the copy below with the exact pins
                      of the repository's lock (``pip install -c requirements/lock.txt -e .``), saves
                      how the answers are passed (``prepare``: read from the solution, which every run
                      deletes) and records the course files' hashes (the grader's manifest)
    run_autograder    run for each submission: grades /autograder/submission/*.ipynb with the course's
                      grader, hidden tests included, and writes /autograder/results/results.json
    course/           pyproject.toml, setup.py, README.md, course_lib/, requirements/lock.txt, the
                      solution of this problem set only (the grader reads how answers are written from it)
                      and its hints (``grading_resources/hints/``, :mod:`course_lib.grading.resources`)

``run_autograder`` calls :func:`main` (``python -m course_lib.grading.reporting.gradescope run PS``). It grades
with the same code as ``course grading grade`` (:func:`~course_lib.grading.running.grader.grade_submission`:
each test's inputs drawn by the grader, the student's code run in a separate process under the
sandbox, outputs judged by the grader against its own references), verifies the course files against
the manifest first, deletes the solution notebooks before any student code runs (and the hints, read
first, where no bubblewrap hides them from the submission), and refuses a
submission that changed the course's files. A container may run ``run_autograder`` again (Gradescope
reuses them, and so do regrades): the solutions deleted by an earlier run are allowed to be missing, the
answers' specs come from what ``prepare`` saved, and Numba's caches go to each run's own temporary folder
(``NUMBA_CACHE_DIR``), so the course stays as installed.

``results.json`` holds, in Gradescope's fields: ``score`` (the problem set's points), ``execution_time``,
``output`` (a summary: points per question, the sandbox mode), and ``tests``: one entry per test with
``name``, ``number``, ``score``, ``max_score``, ``status``, ``output`` (the failure's message and hint)
and ``visibility``: ``"visible"`` for visible tests, ``"after_published"`` for hidden ones (their
messages never reveal inputs or expected results anyway); a question that could not be run is one
entry with the reason. Test scores are the points the grader gave (a technique cap or a question's
scaling spread over its tests), so they add up to ``score``.

Every path is read from the ``AUTOGRADER_ROOT`` environment variable (default ``/autograder``) and the
Python from ``COURSE_PYTHON`` (default ``$AUTOGRADER_ROOT/venv/bin/python``), so a test runs
``run_autograder`` end to end in a temporary folder.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
import zipfile
from pathlib import Path

from ..catalog import problem_set_id, solution_path
from ._job import (DELETED_BEFORE_GRADING, EXTRA, LOCK, SANDBOX_MODES, SAVED_SPECS, SKIP, answer_specs_of,
                   course_files, delete_solutions, finish_job, grade_one, hide_hints, hint_files, job_parser, notebook,
                   read_submission, repository, run_job, save_specs, start_job)

__all__ = ["LOCK", "VISIBILITY_HIDDEN", "build_archive", "grade_directory", "results_of"]

#: Visibility of hidden tests' entries (Gradescope's values: hidden, after_due_date, after_published, visible).
VISIBILITY_HIDDEN = "after_published"
_SETUP = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image.
set -euo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
export DEBIAN_FRONTEND=noninteractive
apt-get update
# bubblewrap: the sandbox, where the container allows its namespaces; libseccomp2: the filter used without it.
apt-get install -y --no-install-recommends python3 python3-venv python3-pip bubblewrap libseccomp2
python3 -m venv "$ROOT/venv"
cd "$ROOT/source/course"
# The exact versions the course is tested with: the repository's lock.
"$ROOT/venv/bin/python" -m pip install --no-cache-dir -c {lock} -e ".[{extra}]"
# How answers are passed, read from the solution now: each run deletes the solution before grading.
"$ROOT/venv/bin/python" -m course_lib.grading.reporting.gradescope prepare {problem_set}
"$ROOT/venv/bin/python" -m course_lib.grading manifest --out "$ROOT/source/manifest.json"
"""

_RUN = """#!/usr/bin/env bash
# Gradescope runs this for each submission; it writes $ROOT/results/results.json.
set -uo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
PYTHON="${{COURSE_PYTHON:-$ROOT/venv/bin/python}}"
cd "$ROOT/source/course" || exit 1
# Numba's caches go to this run's own folder, never into the installed course (a container may run this again).
RUN_DIR="$(mktemp -d "${{TMPDIR:-/tmp}}/course-run.XXXXXX")" || exit 1
export NUMBA_CACHE_DIR="$RUN_DIR/numba"
"$PYTHON" -m course_lib.grading.reporting.gradescope run {problem_set} --root "$ROOT" --timeout {timeout} \\
    --memory {memory} --sandbox {sandbox} --hide-solutions
STATUS=$?
rm -rf "$RUN_DIR"
exit "$STATUS"
"""

def _add(archive: zipfile.ZipFile, name: str, data: bytes, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))  # fixed: the same course gives the same archive
    info.external_attr = (0o100755 if executable else 0o100644) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data)


def build_archive(problem_set: str, out, *, lock=None, timeout: float = 60.0, memory_mb: int = 4096,
                  sandbox: str = "auto") -> Path:
    """Write the Gradescope autograder archive of a problem set (see the module docstring).

    Parameters
    ----------
    problem_set : str
        Id or unit name (``"ps1"``, ``"nbody"``).
    out : path
        The ``.zip`` to write.
    lock : path, optional
        The lock file to install with (default: the repository's ``requirements/lock.txt``).
    timeout, memory_mb, sandbox
        The grader's limits and sandbox mode inside Gradescope's container (as for ``grade``).

    Raises
    ------
    ValueError
        Unknown problem set, no repository checkout, or no lock file.
    """
    problem_set = problem_set_id(problem_set)
    root = repository()
    lock = Path(lock) if lock is not None else root / LOCK
    if not lock.is_file():
        raise ValueError(f"no lock file at {lock}: the archive installs the course with the repository's exact pins "
                         f"({LOCK.as_posix()}); pass --lock FILE to use another")
    if timeout <= 0 or memory_mb < 0 or sandbox not in SANDBOX_MODES:
        raise ValueError(f"bad limits: timeout {timeout!r} (> 0), memory {memory_mb!r} (>= 0), sandbox {sandbox!r}")
    solution = solution_path(problem_set)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    with zipfile.ZipFile(tmp, "w") as archive:
        _add(archive, "setup.sh", _SETUP.format(lock=shlex.quote(LOCK.as_posix()), extra=EXTRA,
                                                problem_set=problem_set).encode(),
             executable=True)
        _add(archive, "run_autograder", _RUN.format(problem_set=problem_set, timeout=f"{timeout:g}", memory=memory_mb,
                                                    sandbox=sandbox).encode(), executable=True)
        for name in ("pyproject.toml", "setup.py", "README.md"):
            _add(archive, f"course/{name}", (root / name).read_bytes())
        _add(archive, f"course/{LOCK.as_posix()}", lock.read_bytes())
        _add(archive, f"course/solutions/{solution.name}", solution.read_bytes())
        for hints in hint_files(root, problem_set):
            _add(archive, f"course/{hints.relative_to(root).as_posix()}", hints.read_bytes())
        for path, relative in course_files(root, SKIP, (".pyc", ".pyo")):
            _add(archive, f"course/{relative.as_posix()}", path.read_bytes())
    os.replace(tmp, out)
    return out


# --------------------------------------------------------------------------- inside Gradescope
def results_of(results, *, note: str = "") -> dict:
    """Gradescope's ``results.json`` content from a submission's :class:`QuestionResult` list."""
    tests, lines = [], []
    for qi, r in enumerate(results, 1):
        lines.append(f"{r.question_id} {r.title}: {r.points:g} / {r.max_points:g} points"
                     + (" (capped: a technique test failed)" if r.capped else ""))
        if not r.outcomes:
            tests.append({"name": f"{r.question_id} {r.title}", "number": f"{qi}", "score": 0.0,
                          "max_score": r.max_points, "status": "failed", "visibility": "visible",
                          "output": r.error or "not graded"})
            continue
        available = sum(o.max_points for o in r.outcomes)
        scale = r.max_points / available if available > 0 else 0.0  # the tests' points in the question's points
        earned = sum(o.points for o in r.outcomes) * scale
        given = r.points / earned if earned > 0 else 0.0  # a cap or an error spread over the passed tests
        for ti, o in enumerate(r.outcomes, 1):
            output = ("passed" if o.passed else "failed") + (" (technique test)" if o.technique else "")
            if not o.passed and o.message:
                output += "\n\n" + o.message
            if r.capped and o.technique and not o.passed:
                output += (f"\n\nThe question is capped at {r.points:g} points: a correct result computed without "
                           "the technique the question teaches earns at most that.")
            tests.append({"name": f"{r.question_id} {r.title}: {o.name}" + (" (hidden)" if o.hidden else ""),
                          "number": f"{qi}.{ti}", "score": round(o.points * scale * given, 4),
                          "max_score": round(o.max_points * scale, 4), "status": "passed" if o.passed else "failed",
                          "visibility": VISIBILITY_HIDDEN if o.hidden else "visible", "output": output})
    total = round(sum(r.points for r in results), 4)
    maximum = sum(r.max_points for r in results)
    summary = "\n".join([f"Total: {total:g} / {maximum:g} points", *lines, "",
                         "Hidden tests draw their inputs when grading; their results are shown once grades are "
                         "published, never their inputs or expected results."] + ([note] if note else []))
    return {"score": total, "output": summary, "visibility": "visible", "stdout_visibility": "hidden",
            "tests": tests}


def grade_directory(problem_set: str, root, *, options=None, sandbox: str = "auto", seed: int | None = None,
                    hide_solutions: bool = False, log=print) -> dict:
    """Grade ``<root>/submission`` and write ``<root>/results/results.json``; returns its content.

    Parameters
    ----------
    problem_set : str
    root : path
        Gradescope's ``/autograder`` (or a folder laid out the same way).
    options : GradeOptions, optional
    sandbox : {"auto", "require", "off"}
    seed : int, optional
        Seed of the hidden tests (random by default).
    hide_solutions : bool
        Delete the solution notebooks once read (inside Gradescope's single-use container only).
    log : callable
        Lines for Gradescope's stdout (shown to the instructor).

    Raises
    ------
    RuntimeError
        The course files differ from the manifest, or the grading machine cannot grade (no results
        are written: Gradescope then reports that the autograder failed, to the instructor).
    """
    from ..running.client import GradeOptions

    start = time.perf_counter()
    problem_set = problem_set_id(problem_set)
    root = Path(root)
    options = options or GradeOptions()
    # The solutions, hints and keys may be gone: deleted by an earlier run in this container.
    absent_ok = DELETED_BEFORE_GRADING if hide_solutions else ()
    results_dir, box = start_job(root, root / "source" / "manifest.json", absent_ok, "setup.sh", sandbox, log)
    specs = answer_specs_of(problem_set, root, hide_solutions)
    if hide_solutions:
        log(f"deleted {delete_solutions(root)} solution notebook(s) before grading")
        log(hide_hints(problem_set, root, box))
    path, problem = notebook(root / "submission", problem_set)
    if path is None:
        content = {"score": 0.0, "output": problem, "visibility": "visible", "stdout_visibility": "hidden",
                   "tests": []}
    else:
        content = results_of(grade_one(read_submission(path, options), problem_set, seed, options, specs, box),
                             note=f"Graded {path.name}.")
    content["extra_data"] = {"problem_set": problem_set, "sandbox": box.kind}
    return finish_job(results_dir, content, start, log)


def main(argv=None) -> int:
    """``python -m course_lib.grading.reporting.gradescope run PS [--root DIR] ...`` (what ``run_autograder`` calls)."""
    parser, commands, run = job_parser("course_lib.grading.reporting.gradescope",
                                       "Grade a Gradescope submission (run by run_autograder).",
                                       "--root", "AUTOGRADER_ROOT", "/autograder", "submission")
    run.add_argument("--hide-solutions", action="store_true",
                     help="delete the solution notebooks once read (run_autograder does, in Gradescope's container)")
    prep = commands.add_parser("prepare", help="save how the problem set's answers are passed (setup.sh runs it)")
    prep.add_argument("problem_set")
    ns = parser.parse_args(argv)
    if ns.command == "prepare":
        problem_set = problem_set_id(ns.problem_set)
        print(f"saved {save_specs(problem_set, SAVED_SPECS / f'{problem_set}.json')}")
        return 0
    return run_job(grade_directory, ns, hide_solutions=ns.hide_solutions)


if __name__ == "__main__":
    sys.exit(main())
