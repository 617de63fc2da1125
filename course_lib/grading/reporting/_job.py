"""What the platforms' graders (Gradescope, PrairieLearn) share: the course files they ship, the command line
their entrypoints call, and the start of a grading job.

Each platform lays out its folders and its ``results.json`` its own way; these helpers hold only what the two do
alike, so that a change to the grader's options or checks reaches both.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

__all__ = ["SANDBOX_MODES", "course_files", "job_parser", "run_job", "start_job", "write_results"]

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


def job_parser(prog: str, description: str, run_help: str, root_option: str, root_default: str):
    """The command line of a platform's entrypoint: ``run PS`` with the grader's limits and sandbox.

    Parameters
    ----------
    prog, description : str
        As :class:`argparse.ArgumentParser` takes them.
    run_help : str
        The ``run`` command's help.
    root_option : str
        The option naming the job's folder (``--root``, ``--grade-root``); it is read as ``root``.
    root_default : str
        Its default (the platform's mount point, or the environment's override).

    Returns
    -------
    (argparse.ArgumentParser, subparsers action, argparse.ArgumentParser)
        The parser, its commands (for a platform's own ones) and the ``run`` command (for its own options).
    """
    parser = argparse.ArgumentParser(prog=prog, description=description)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help=run_help)
    run.add_argument("problem_set")
    run.add_argument(root_option, dest="root", default=root_default)
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


def write_results(results_dir: Path, content: dict) -> Path:
    """Write a job's ``results.json`` (``content``, JSON) into ``results_dir``, whole or not at all (the
    platform never reads half a file); return its path."""
    from ..results.report import write_atomic

    path = results_dir / "results.json"
    write_atomic(path, json.dumps(content, indent=1))
    return path
