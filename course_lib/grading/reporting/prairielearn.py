"""A PrairieLearn external-grader question for a problem set.

``python -m course_lib.grading prairielearn ps1 --out DIR [--image NAME] [--timeout S]`` writes, in the
layout PrairieLearn's external grading expects (https://prairielearn.readthedocs.io/en/latest/externalGrading/,
also ``docs/Dev-Guide/How-To-Guide/externalGrading.md`` of the PrairieLearn repository)::

    DIR/questions/ps1_nbody/info.json          the question: "gradingMethod": "External" and its
                                               externalGradingOptions (image, entrypoint, serverFilesCourse,
                                               timeout <= 600 s, "enableNetworking": false)
    DIR/questions/ps1_nbody/question.html      a <pl-file-upload> of the notebook and the
                                               <pl-external-grader-results> panel
    DIR/serverFilesCourse/course_grader/run    the entrypoint: grades /grade/student/*.ipynb and writes
                                               /grade/results/results.json
    DIR/grader_image/Dockerfile                the grader's image, built from this folder: the course as
    DIR/grader_image/course/...                for Gradescope (sources, lock, this problem set's solution),
    DIR/grader_image/README.md                 its answers' specs saved and its files' hashes recorded at build

The instructor builds and pushes the image (``docker build -t NAME DIR/grader_image``, as its README
says), names it with ``--image`` (or edits ``info.json``), and copies ``questions/`` and
``serverFilesCourse/`` into the PrairieLearn course. For each submission PrairieLearn starts a container
from the image without network, mounts ``/grade`` (``student/`` the uploaded files, ``serverFilesCourse/``,
``data/data.json``) and runs the entrypoint, which must leave ``/grade/results/results.json``:
``gradable`` (false, with ``format_errors``, when there is no notebook to grade: the student keeps the
attempt), ``score`` (the fraction of the points, 0 to 1), ``message``, ``output`` (the points per
question) and ``tests``, one per test: ``name`` (``(hidden)`` for hidden tests, whose messages never
reveal inputs), ``description``, ``points``, ``max_points``, ``message`` and ``output``.

The grading is the instructor grader's (:func:`~course_lib.grading.running.grader.grade_submission`:
the student's code in a separate process under the sandbox, outputs judged against the grader's
references), the course files verified against the image's manifest first, the solution deleted
before any student code runs. ``$GRADE_ROOT`` (default ``/grade``), ``$COURSE_DIR`` (default
``/opt/course``) and ``$COURSE_PYTHON`` (default ``/opt/venv/bin/python``) let a test run the entrypoint
the way PrairieLearn does, in a temporary folder.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
import time
import uuid
from pathlib import Path

from ..catalog import manifest as units, problem_set_id, solution_path
from ._job import DELETED_BEFORE_GRADING, SANDBOX_MODES, course_files, finish_job, job_parser, run_job, start_job

__all__ = ["ENTRYPOINT", "grade_root", "results_of", "write_question"]

#: Where PrairieLearn mounts the course's serverFilesCourse folders, and the entrypoint in them.
ENTRYPOINT = "/grade/serverFilesCourse/course_grader/run"
#: PrairieLearn's ceiling on an external grading job's timeout, in seconds.
MAX_TIMEOUT = 600
_NAMESPACE = uuid.UUID("6f1c7a52-5d0e-4b7a-9c4e-1e2a3b4c5d6e")  # question uuids are derived, so stable

_RUN = """#!/usr/bin/env bash
# PrairieLearn's entrypoint: grade $GRADE_ROOT/student/*.ipynb into $GRADE_ROOT/results/results.json.
set -uo pipefail
GRADE="${{GRADE_ROOT:-/grade}}"
COURSE="${{COURSE_DIR:-/opt/course}}"
PYTHON="${{COURSE_PYTHON:-/opt/venv/bin/python}}"
PROBLEM_SET="${{1:?usage: run PROBLEM_SET}}"
mkdir -p "$GRADE/results"
# Numba's caches go to this run's own folder, never into the installed course.
RUN_DIR="$(mktemp -d "${{TMPDIR:-/tmp}}/course-run.XXXXXX")" || exit 1
export NUMBA_CACHE_DIR="$RUN_DIR/numba"
cd "$COURSE" || exit 1
"$PYTHON" -m course_lib.grading.reporting.prairielearn run "$PROBLEM_SET" --grade-root "$GRADE" \\
    --timeout {timeout} --memory {memory} --sandbox {sandbox}
STATUS=$?
rm -rf "$RUN_DIR"
exit "$STATUS"
"""

_DOCKERFILE = """# The PrairieLearn external grader of {problem_set}: build with `docker build -t IMAGE .` here.
FROM python:3.11-slim
# bubblewrap: the grader's sandbox, where the container allows namespaces; libseccomp2: the filter used without.
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap libseccomp2 \\
    && rm -rf /var/lib/apt/lists/*
COPY course /opt/course
WORKDIR /opt/course
# The exact versions the course is tested with (the repository's lock).
RUN python -m venv /opt/venv && /opt/venv/bin/python -m pip install --no-cache-dir -c {lock} -e ".[{extra}]"
# How answers are passed (read from the solution, which each run deletes), then the course files' hashes.
RUN /opt/venv/bin/python -m course_lib.grading.reporting.gradescope prepare {problem_set} \\
    && /opt/venv/bin/python -m course_lib.grading manifest --out /opt/course/manifest.json
ENV COURSE_GRADING_MANIFEST=/opt/course/manifest.json
"""

_README = """# The grader image of {problem_set}

Build it where Docker runs, push it to a registry PrairieLearn can pull from (Docker Hub for
PrairieLearn's hosted servers), and put its name in `questions/{question}/info.json`
(`externalGradingOptions.image`):

    docker build -t {image} .
    docker push {image}

The image holds the course (its sources, the exact pins of `requirements/lock.txt`, the solution of
{problem_set} only, deleted by each run before any student code runs) and needs no network when it grades.
"""

_QUESTION_HTML = """<pl-question-panel>
  <p>Upload your notebook <code>{notebook}</code> ({problem_set}: {unit}). It is graded with hidden tests as well
  as the visible ones; the technique tests measure your kernels with the course's profiler.</p>
  <pl-file-upload file-names="{notebook}"></pl-file-upload>
</pl-question-panel>

<pl-submission-panel>
  <pl-external-grader-results></pl-external-grader-results>
  <pl-file-preview></pl-file-preview>
</pl-submission-panel>
"""


def write_question(problem_set: str, out, *, image: str | None = None, timeout: int = MAX_TIMEOUT,
                   test_timeout: float = 60.0, memory_mb: int = 4096, sandbox: str = "auto", lock=None) -> Path:
    """Write the PrairieLearn question, its entrypoint and its grader image's build folder (module docstring).

    Parameters
    ----------
    problem_set : str
        Id or unit name.
    out : path
        Folder to write into (created; the three parts are replaced if there).
    image : str, optional
        The image's name in ``info.json`` (default ``course-grader-<ps>``, to be pushed under that name).
    timeout : int
        PrairieLearn's limit on the whole grading job, seconds (at most 600).
    test_timeout, memory_mb, sandbox
        The grader's limits and sandbox, as for ``grade``.
    lock : path, optional
        The lock file to install with (default: the repository's).

    Returns
    -------
    Path
        The question's folder.

    Raises
    ------
    ValueError
        An unknown problem set, a timeout outside (0, 600], no repository checkout or lock.
    """
    from ._job import EXTRA, LOCK, SKIP, repository

    problem_set = problem_set_id(problem_set)
    if not 0 < timeout <= MAX_TIMEOUT or test_timeout <= 0 or memory_mb < 0 or sandbox not in SANDBOX_MODES:
        raise ValueError(f"bad limits: job timeout {timeout!r} (PrairieLearn allows 1 to {MAX_TIMEOUT} s), test "
                         f"timeout {test_timeout!r}, memory {memory_mb!r}, sandbox {sandbox!r}")
    root = repository()
    lock = Path(lock) if lock is not None else root / LOCK
    if not lock.is_file():
        raise ValueError(f"no lock file at {lock}: the image installs the course with the repository's exact pins")
    unit = units()[problem_set]
    solution = solution_path(problem_set)
    name = solution.stem  # ps1_nbody
    image = image or f"course-grader-{problem_set}"
    out = Path(out)
    question = out / "questions" / name
    grader = out / "serverFilesCourse" / "course_grader"
    build = out / "grader_image"
    for folder in (question, grader, build):
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
    info = {"uuid": str(uuid.uuid5(_NAMESPACE, f"course-gpu/{problem_set}")), "type": "v3",
            "title": f"{problem_set}: the {unit} problem set (notebook, autograded)", "topic": unit,
            "tags": ["notebook", "gpu", problem_set], "singleVariant": True, "gradingMethod": "External",
            "externalGradingOptions": {"enabled": True, "image": image, "entrypoint": [ENTRYPOINT, problem_set],
                                       "serverFilesCourse": ["course_grader/"], "timeout": int(timeout),
                                       "enableNetworking": False}}
    (question / "info.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    (question / "question.html").write_text(_QUESTION_HTML.format(notebook=solution.name, problem_set=problem_set,
                                                                  unit=unit), encoding="utf-8")
    run = grader / "run"
    run.write_text(_RUN.format(timeout=f"{test_timeout:g}", memory=int(memory_mb), sandbox=sandbox), encoding="utf-8")
    run.chmod(0o755)
    (build / "Dockerfile").write_text(_DOCKERFILE.format(problem_set=problem_set, lock=shlex.quote(LOCK.as_posix()),
                                                         extra=EXTRA), encoding="utf-8")
    (build / "README.md").write_text(_README.format(problem_set=problem_set, question=name, image=image),
                                     encoding="utf-8")
    course = build / "course"
    for file in ("pyproject.toml", "setup.py", "README.md"):
        _copy(root / file, course / file)
    _copy(lock, course / LOCK)
    _copy(solution, course / "solutions" / solution.name)
    from ._job import hint_files

    for hints in hint_files(root, problem_set):
        _copy(hints, course / hints.relative_to(root))
    for path, relative in course_files(root, SKIP, (".pyc", ".pyo", ".nbi", ".nbc")):
        _copy(path, course / relative)
    return question


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


# --------------------------------------------------------------------------- inside the grader's container
def results_of(results, *, note: str = "") -> dict:
    """PrairieLearn's ``results.json`` from a submission's :class:`QuestionResult` list: the per-test
    points are those of the Gradescope results (a technique cap spread over the tests), so they add up."""
    from .gradescope import results_of as gradescope_results

    graded = gradescope_results(results, note=note)
    maximum = sum(r.max_points for r in results)
    tests = [{"name": t["name"], "description": f"test {t['number']}",
              "points": t["score"], "max_points": t["max_score"],
              "message": t["status"], "output": t["output"]} for t in graded["tests"]]
    return {"gradable": True, "score": round(graded["score"] / maximum, 6) if maximum else 0.0,
            "message": graded["output"].splitlines()[0], "output": graded["output"], "tests": tests}


def grade_root(problem_set: str, root, *, options=None, sandbox: str = "auto", seed: int | None = None,
               log=print) -> dict:
    """Grade ``<root>/student`` into ``<root>/results/results.json`` (PrairieLearn's ``/grade``); returns it.

    Raises
    ------
    RuntimeError
        The course files differ from the manifest, or the machine cannot grade: no results are written,
        and PrairieLearn reports the job as failed (to the instructor, the student keeps the attempt).
    """
    from ..running.client import GradeOptions
    from ..running.manifest import default_path
    from ..running.notebooks import parse_notebook
    from ._job import answer_specs_of, delete_solutions, grade_one, hide_hints, notebook, read_submission

    start = time.perf_counter()
    problem_set = problem_set_id(problem_set)
    root = Path(root)
    options = options or GradeOptions()
    results_dir, box = start_job(root, default_path(), DELETED_BEFORE_GRADING,
                                 "the image's build", sandbox, log)
    course_root = Path(__file__).resolve().parents[3]
    specs = answer_specs_of(problem_set, course_root, hide_solutions=True)
    log(f"deleted {delete_solutions(course_root)} solution notebook(s) before grading")
    log(hide_hints(problem_set, course_root, box))
    path, problem = notebook(root / "student", problem_set)
    if path is None:
        content = {"gradable": False, "format_errors": [problem], "message": problem}
    else:
        submission = read_submission(path, options)
        problem = submission.problem
        if submission.content is not None:
            try:
                parse_notebook(submission.content)
            except ValueError as exc:
                problem = str(exc)
        if problem:  # not gradable: PrairieLearn does not count the attempt
            content = {"gradable": False, "format_errors": [problem], "message": problem}
        else:
            content = results_of(grade_one(submission, problem_set, seed, options, specs, box),
                                 note=f"Graded {path.name}; sandbox: {box.kind}.")
    return finish_job(results_dir, content, start, log)


def main(argv=None) -> int:
    """``python -m course_lib.grading.reporting.prairielearn run PS [--grade-root DIR]`` (the entrypoint's)."""
    parser, _, _ = job_parser("course_lib.grading.reporting.prairielearn",
                              "Grade a PrairieLearn submission (run by the entrypoint).",
                              "--grade-root", "GRADE_ROOT", "/grade", "student")
    return run_job(grade_root, parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
