"""What the platforms' graders (Gradescope, PrairieLearn) share: the course files they ship, the command line
their entrypoints call, the start of a grading job and its steps (how answers are passed, the solutions and hints
taken out of the submissions' reach, the submission's notebook found and graded).

Each platform lays out its folders and its ``results.json`` its own way; these helpers hold only what the two do
alike, so that a change to the grader's options or checks reaches both.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from ..catalog import SHIPPED, solutions_folder

__all__ = ["DELETED_BEFORE_GRADING", "EXTRA", "LOCK", "SANDBOX_MODES", "SAVED_SPECS", "SKIP", "answer_specs_of",
           "course_files", "delete_solutions", "finish_job", "grade_one", "hide_hints", "hint_files", "job_parser",
           "notebook", "read_submission", "repository", "run_job", "save_specs", "saved_specs_path", "start_job",
           "write_results"]

#: The grader's sandbox modes, as ``grade`` takes them.
SANDBOX_MODES = ("auto", "require", "off")


def course_files(root: Path, skip_parts, skip_suffixes):
    """The files of the package under ``root/course_lib`` that a grader's copy of the course ships.

    Parameters
    ----------
    root : Path
        The repository's root.
    skip_parts : iterable of str
        Folder names whose files stay out (caches, the shipped copies).
    skip_suffixes : iterable of str
        File endings that stay out (compiled code, caches).

    Yields
    ------
    (Path, Path)
        Each file, and its path relative to ``root``, in sorted order (the same course gives the same copy).
    """
    skip_parts, skip_suffixes = set(skip_parts), tuple(skip_suffixes)
    for path in sorted((root / "course_lib").rglob("*")):
        relative = path.relative_to(root)
        # A link could point outside the course: only plain files are copied.
        if path.is_file() and not path.is_symlink() and not set(relative.parts) & skip_parts \
                and path.suffix not in skip_suffixes:
            yield path, relative


def job_parser(module: str, description: str, root_option: str, root_env: str, root_mount: str, submission_dir: str):
    """The command line of a platform's entrypoint: ``run PS`` with the grader's limits and sandbox.

    Parameters
    ----------
    module : str
        The platform's module, run as ``python -m module``.
    description : str
        As :class:`argparse.ArgumentParser` takes it.
    root_option : str
        The option naming the job's folder (``--root``, ``--grade-root``); it is read as ``root``.
    root_env, root_mount : str
        The environment variable that overrides the folder's default, and the default without it (the
        platform's mount point).
    submission_dir : str
        The folder of the job's folder that holds the uploaded notebook (for the ``run`` command's help).

    Returns
    -------
    (argparse.ArgumentParser, subparsers action, argparse.ArgumentParser)
        The parser, its commands (for a platform's own ones) and the ``run`` command (for its own options).
    """
    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=description)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "run", help=f"grade {root_env}/{submission_dir}/*.ipynb into {root_env}/results/results.json")
    run.add_argument("problem_set")
    run.add_argument(root_option, dest="root", default=os.environ.get(root_env, root_mount))
    run.add_argument("--timeout", type=float, default=60.0)
    run.add_argument("--memory", type=int, default=4096)
    run.add_argument("--sandbox", choices=SANDBOX_MODES, default="auto")
    run.add_argument("--seed", type=int)
    return parser, commands, run


def run_job(grade, ns: argparse.Namespace, **extra) -> int:
    """Run ``grade`` on the ``run`` command's arguments; the entrypoint's exit status.

    Parameters
    ----------
    grade : callable
        The platform's grading function (``grade(problem_set, root, *, options, sandbox, seed, ...)``).
    ns : argparse.Namespace
        What :func:`job_parser`'s parser read.
    **extra
        The platform's own keyword arguments of ``grade``.

    Returns
    -------
    int
        0, or 1 after printing the error when the machine cannot grade (no results are written then, so the
        platform reports a failed job to the instructor).
    """
    from ..running.client import GradeOptions

    try:
        grade(ns.problem_set, ns.root, options=GradeOptions(timeout=ns.timeout, memory_mb=ns.memory),
              sandbox=ns.sandbox, seed=ns.seed, **extra)
    except (RuntimeError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def start_job(root: Path, manifest: Path, absent_ok, manifest_writer: str, sandbox: str, log):
    """The start of a grading job: its results folder made, the course files verified, the sandbox chosen.

    Parameters
    ----------
    root : Path
        The job's folder; ``results.json`` goes to ``root/results``.
    manifest : Path
        The course files' hashes; without it the files are not verified (and the log says so).
    absent_ok : tuple of str
        Path prefixes allowed to be missing (the solutions an earlier run deleted).
    manifest_writer : str
        What writes the manifest, for the log line when there is none.
    sandbox : {"auto", "require", "off"}
    log : callable
        Lines for the platform's log (shown to the instructor).

    Returns
    -------
    (Path, Sandbox)
        The results folder and the resolved sandbox.

    Raises
    ------
    RuntimeError
        The course files differ from the manifest, or the sandbox asked for is not available.
    """
    from ..running.manifest import verify
    from ..running.sandbox import resolve

    results_dir = root / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    if manifest.is_file():
        verify(manifest, absent_ok=absent_ok)
    else:
        log(f"no manifest at {manifest} ({manifest_writer} writes it): the course files are not verified")
    box = resolve(sandbox)
    log(box.note)
    return results_dir, box


def finish_job(results_dir: Path, content: dict, start: float, log) -> dict:
    """Add the job's time (seconds since ``start``, a :func:`time.perf_counter` reading) to ``content``, write it
    (:func:`write_results`) and log its score; returns ``content``."""
    content["execution_time"] = round(time.perf_counter() - start, 1)
    score = content.get("score")
    log(f"score {'not gradable' if score is None else format(score, 'g')}; "
        f"wrote {write_results(results_dir, content)}")
    return content


def write_results(results_dir: Path, content: dict) -> Path:
    """Write a job's ``results.json`` (``content``, JSON) into ``results_dir``, whole or not at all (the
    platform never reads half a file); return its path."""
    from ..results.report import write_atomic

    path = results_dir / "results.json"
    write_atomic(path, json.dumps(content, indent=1))
    return path


# --------------------------------------------------------------------------- a job's steps, on either platform
#: The repository's lock file, relative to its root (exact pins of every dependency).
LOCK = Path("requirements") / "lock.txt"
#: The extra that installs the CUDA pieces numba-cuda needs to import, also in the simulator.
EXTRA = "cu13"

#: Labels (course_lib.grading.running.manifest) of what a platform's run deletes before grading, so that a later run
#: in the same container may find them gone: the solutions, and the hints and answer keys once read.
DELETED_BEFORE_GRADING = ("solutions/", "course_lib/_shipped/solutions/", "grading_resources/",
                          "course_lib/_shipped/grading_resources/")

#: Folders of the package a grader's copy of the course leaves out.
SKIP = ("__pycache__", "_shipped", ".ipynb_checkpoints")


def repository() -> Path:
    root = Path(__file__).resolve().parents[3]
    if not (root / "pyproject.toml").is_file() or not (root / "solutions").is_dir():
        raise ValueError(f"no course repository at {root}: build the archive from a checkout of the course "
                         "(the archive installs the course from its sources and lock)")
    return root


def hint_files(root: Path, problem_set: str) -> list:
    """The checkout's hint file and answer-key module of the problem set (``grading_resources/hints/psN_<unit>.json``,
    ``grading_resources/keys/psN_<unit>.py``), those there are."""
    folder = root / "grading_resources"
    return sorted(folder.glob(f"hints/{problem_set}_*.json")) + sorted(folder.glob(f"keys/{problem_set}_*.py"))


def notebook(submission_dir: Path, problem_set: str):
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


def read_submission(path: Path, options):
    """The notebook :func:`notebook` found, read as the grader reads a class's submissions (same size limit).

    Parameters
    ----------
    path : Path
    options : GradeOptions
        Its ``max_file_mb`` bounds the notebook's size.

    Returns
    -------
    Submission
        Its ``problem`` says why it cannot be graded (too large, not a notebook), else it is empty.
    """
    from ..running.notebooks import read_submissions

    return read_submissions([path], {path: "submission"}, int(options.max_file_mb * 2**20))[0]


#: Where ``prepare`` saves how a problem set's answers are passed (inside the package: the manifest covers it).
SAVED_SPECS = Path(__file__).resolve().parents[2] / "_shipped" / "answer_specs"


def saved_specs_path(problem_set: str, root: Path | None = None) -> Path:
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


def answer_specs_of(problem_set: str, root: Path, hide_solutions: bool) -> tuple:
    """The answer specs: saved ones first (the solution is deleted by the first run of a container), else
    from the solution notebook, saved for the later runs when this run deletes it."""
    from ..running.notebooks import answer_specs

    saved = saved_specs_path(problem_set, root)
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


def delete_solutions(root: Path) -> int:
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


def hide_hints(problem_set: str, root: Path, box) -> str:
    """Read the problem set's hints and answer keys into the grader (:func:`course_lib.grading.resources.preload`)
    and, without bubblewrap (where the worker could read them), delete them under ``root``; returns the line to
    log."""
    from .. import resources

    found = resources.preload(problem_set)
    if not found:
        return "hints: none found (the feedback shows no hints; an earlier run in this container deleted them?)"
    if box.kind == "bwrap":  # the worker sees only the course_lib package, hints aside
        return f"hints: read for {found} question(s), out of the submissions' sight (bubblewrap)"
    return f"hints: read for {found} question(s), then {resources.hide(root)} file(s) deleted before grading"


def grade_one(submission, problem_set: str, seed, options, specs, box) -> list:
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
