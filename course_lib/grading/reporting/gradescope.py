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

import json
import os
import shlex
import sys
import time
import zipfile
from pathlib import Path

from ..catalog import SHIPPED, problem_set_id, solution_path, solutions_folder
from ._job import SANDBOX_MODES, course_files, job_parser, run_job, start_job, write_results

__all__ = ["LOCK", "VISIBILITY_HIDDEN", "build_archive", "grade_directory", "results_of"]

#: The repository's lock file, relative to its root (exact pins of every dependency).
LOCK = Path("requirements") / "lock.txt"
#: Visibility of hidden tests' entries (Gradescope's values: hidden, after_due_date, after_published, visible).
VISIBILITY_HIDDEN = "after_published"
#: The extra that installs the CUDA pieces numba-cuda needs to import, also in the simulator.
EXTRA = "cu13"

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

_SKIP = ("__pycache__", "_shipped", ".ipynb_checkpoints")


def _repository() -> Path:
    root = Path(__file__).resolve().parents[3]
    if not (root / "pyproject.toml").is_file() or not (root / "solutions").is_dir():
        raise ValueError(f"no course repository at {root}: build the archive from a checkout of the course "
                         "(the archive installs the course from its sources and lock)")
    return root


def _hint_files(root: Path, problem_set: str) -> list:
    """The checkout's hint file of the problem set (``grading_resources/hints/psN_<unit>.json``), if any."""
    return sorted((root / "grading_resources" / "hints").glob(f"{problem_set}_*.json"))


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
    root = _repository()
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
        for hints in _hint_files(root, problem_set):
            _add(archive, f"course/{hints.relative_to(root).as_posix()}", hints.read_bytes())
        for path, relative in course_files(root, _SKIP, (".pyc", ".pyo")):
            _add(archive, f"course/{relative.as_posix()}", path.read_bytes())
    os.replace(tmp, out)
    return out


# --------------------------------------------------------------------------- inside Gradescope
def _notebook(submission_dir: Path, problem_set: str):
    """The submission's notebook, or the reason there is none to grade."""
    found = sorted(p for p in submission_dir.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    if not found:
        return None, f"no .ipynb file in the submission: upload your {problem_set} notebook"
    if len(found) > 1:
        named = [p for p in found if p.name.startswith(f"{problem_set}_")]
        if len(named) == 1:
            return named[0], ""
        names = ", ".join(p.relative_to(submission_dir).as_posix() for p in found)
        return None, f"several notebooks in the submission ({names}): upload only your {problem_set} notebook"
    return found[0], ""


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


#: Where ``prepare`` saves how a problem set's answers are passed (inside the package: the manifest covers it).
SAVED_SPECS = Path(__file__).resolve().parents[2] / "_shipped" / "answer_specs"


def _saved_specs_path(problem_set: str, root: Path | None = None) -> Path:
    """The package's copy (written by ``prepare`` at setup, covered by the manifest), or, without one, the
    copy a first run left in ``<root>/source``."""
    packaged = SAVED_SPECS / f"{problem_set}.json"
    return packaged if packaged.is_file() or root is None else root / "source" / f"answer_specs.{problem_set}.json"


def save_specs(problem_set: str, path: Path) -> Path:
    """Write how the problem set's answers are passed (read from its solution) to ``path``, as JSON."""
    from ..running.notebooks import answer_specs

    specs, grade_ids = answer_specs(problem_set)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps({"problem_set": problem_set, "specs": specs, "grade_ids": sorted(grade_ids)},
                              indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)
    return path


def _answer_specs(problem_set: str, root: Path, hide_solutions: bool) -> tuple:
    """The answer specs: saved ones first (the solution is deleted by the first run of a container), else
    from the solution notebook, saved for the later runs when this run deletes it."""
    from ..running.notebooks import answer_specs

    saved = _saved_specs_path(problem_set, root)
    if saved.is_file():
        data = json.loads(saved.read_text(encoding="utf-8"))
        if data.get("problem_set") != problem_set:
            raise RuntimeError(f"{saved} holds the answers of {data.get('problem_set')!r}, not {problem_set}")
        return data["specs"], set(data["grade_ids"])
    try:
        specs = answer_specs(problem_set)
    except ValueError as exc:
        raise RuntimeError(f"cannot tell how answers are passed: {exc} (an earlier run deleted the solution and "
                           "nothing was saved; run `python -m course_lib.grading.reporting.gradescope prepare PS` "
                           "at setup)") from None
    if hide_solutions:
        save_specs(problem_set, saved)
    return specs


def _hide_solutions(root: Path) -> int:
    """Delete the solution notebooks (after the grader has read them): no submission can read them then.
    Only a course installed under ``root`` (Gradescope's copy), never a checkout elsewhere."""
    removed = 0
    for folder in {solutions_folder(), SHIPPED}:
        if not folder.resolve().is_relative_to(root.resolve()):
            raise RuntimeError(f"the course's solutions at {folder} are not under {root}: not deleting them")
        for path in folder.glob("*.ipynb") if folder.is_dir() else ():
            path.unlink()
            removed += 1
    return removed


def _hide_hints(problem_set: str, root: Path, box) -> str:
    """Read the problem set's hints into the grader (:func:`course_lib.grading.resources.preload`) and, without
    bubblewrap (where the worker could read them), delete them under ``root``; returns the line to log."""
    from .. import resources

    found = resources.preload(problem_set)
    if not found:
        return "hints: none found (the feedback shows no hints; an earlier run in this container deleted them?)"
    if box.kind == "bwrap":  # the worker sees only the course_lib package, hints aside
        return f"hints: read for {found} question(s), out of the submissions' sight (bubblewrap)"
    return f"hints: read for {found} question(s), then {resources.hide(root)} file(s) deleted before grading"


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
    from ..running.notebooks import read_submissions

    start = time.perf_counter()
    problem_set = problem_set_id(problem_set)
    root = Path(root)
    options = options or GradeOptions()
    # The solutions may be gone: deleted by an earlier run in this container.
    absent_ok = ("solutions/", "course_lib/_shipped/solutions/") if hide_solutions else ()
    results_dir, box = start_job(root, root / "source" / "manifest.json", absent_ok, "setup.sh", sandbox, log)
    specs = _answer_specs(problem_set, root, hide_solutions)
    if hide_solutions:
        log(f"deleted {_hide_solutions(root)} solution notebook(s) before grading")
        log(_hide_hints(problem_set, root, box))
    path, problem = _notebook(root / "submission", problem_set)
    if path is None:
        content = {"score": 0.0, "output": problem, "visibility": "visible", "stdout_visibility": "hidden",
                   "tests": []}
    else:
        submission = read_submissions([path], {path: "submission"}, int(options.max_file_mb * 2**20))[0]
        content = results_of(_grade_one(submission, problem_set, seed, options, specs, box),
                             note=f"Graded {path.name}.")
    content["execution_time"] = round(time.perf_counter() - start, 1)
    content["extra_data"] = {"problem_set": problem_set, "sandbox": box.kind}
    log(f"score {content['score']:g}; wrote {write_results(results_dir, content)}")
    return content


def _grade_one(submission, problem_set: str, seed, options, specs, box) -> list:
    """Grade one submission of a platform's job (Gradescope, PrairieLearn); a submission that changed the
    course's files (possible only without a sandbox) is refused and the files restored.

    Parameters
    ----------
    submission : course_lib.grading.running.notebooks.Submission
    problem_set : str
    seed : int or None
        None draws one (a job grades once).
    options, specs, box
        As :func:`course_lib.grading.running.grader.grade_submission` takes them.

    Returns
    -------
    list of QuestionResult
    """
    from ..core import questions_of
    from ..running.grader import _refused, grade_submission
    from ..running.manifest import CourseState

    course = CourseState() if box.kind == "none" else None
    seed = int.from_bytes(os.urandom(4), "little") if seed is None else int(seed)
    results = grade_submission(submission, problem_set, seed, options, specs, box)
    changed = course.restore() if course is not None else []
    return _refused(questions_of(problem_set), changed[:3]) if changed else results


def main(argv=None) -> int:
    """``python -m course_lib.grading.reporting.gradescope run PS [--root DIR] ...`` (what ``run_autograder`` calls)."""
    parser, commands, run = job_parser("python -m course_lib.grading.reporting.gradescope",
                                       "Grade a Gradescope submission (run by run_autograder).",
                                       "grade ROOT/submission/*.ipynb into ROOT/results/results.json",
                                       "--root", os.environ.get("AUTOGRADER_ROOT", "/autograder"))
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
