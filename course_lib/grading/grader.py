"""Grade students' problem-set notebooks, each in its own process, safely and in parallel.

For each submission the grader starts a worker process (:mod:`course_lib.grading.worker`)
with a memory limit, sends it the notebook's code cells and, for each question, the answer
expressions of the solution's ``check(...)`` cell, then for each test draws the inputs
itself (hidden tests from the grading seed), has the worker run the student's answer on
them (``produce``), and judges the returned outputs here, against references computed here.
The worker never sees an expected output, and nothing the notebook patches (NumPy, this
package, the references) reaches the judgement. Every request has a wall-clock limit; a
worker that hangs, crashes or exceeds its memory is killed, the affected tests score 0 with
the reason, and a fresh worker carries on with the remaining questions.

What isolation does not cover: the student's code and the ``produce`` step share a process,
so a determined submission can substitute the outputs it returns (it cannot see the expected
ones, and to be right it must compute them, which is the exercise); tests that are not split
are judged in that process and trust its verdict; and a worker has the grader's user rights
(use an unprivileged account or a container: as root, a worker can read anything).

Results go to a CSV file (one row per student and question), rewritten atomically after
each submission, so an interrupted run loses nothing graded and a re-run skips what is done.
Feedback files never show a hidden test's inputs or expected outputs.
"""

from __future__ import annotations

import ast
import concurrent.futures
import contextlib
import csv
import ctypes
import fcntl
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import nbformat
import numpy as np

from .core import (NOT_ANSWERED, Question, QuestionResult, TestFailure, TestOutcome, failed_outcome,
                   questions_of, quiet_floats, score, test_rng)
from .protocol import ProtocolError, decode, dumps, encode, loads
from .release import solution_path

__all__ = ["FIELDS", "GradeOptions", "WorkerFault", "answer_specs", "grade", "grade_submission",
           "read_grades", "student_ids", "write_feedback", "write_grades"]

#: Columns of the grades CSV.
FIELDS = ["student", "question", "points", "max_points", "status", "reason"]
ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class GradeOptions:
    """Limits of one submission's grading.

    Attributes
    ----------
    timeout : float
        Wall-clock seconds for each step: running the notebook's cells, and each test.
    memory_mb : int
        Address-space limit of the worker (``RLIMIT_AS``) in the simulator, and resident-memory
        limit watched by the grader everywhere (a GPU driver maps far more address space than it
        uses, so on a GPU only the resident memory is limited). 0: no limit.
    max_file_mb : float
        Larger submission files are refused unread.
    max_reply_mb : float
        Largest reply accepted from the worker (a huge output is refused, not buffered).
    startup : float
        Seconds a worker may take to start (import the libraries) before the notebook runs;
        not counted in ``timeout``, so a loaded machine does not fail quick notebooks.
    """

    timeout: float = 60.0
    memory_mb: int = 4096
    max_file_mb: float = 20.0
    max_reply_mb: float = 64.0
    startup: float = 180.0


class WorkerFault(Exception):
    """The worker timed out, crashed, used too much memory or broke the protocol."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# --------------------------------------------------------------------------- the notebook
def answer_specs(problem_set: str) -> tuple[dict, set]:
    """How each question's answer is written, read from the solution's ``check(...)`` cells.

    Returns
    -------
    specs : dict
        ``question id -> {"args": [source, ...], "kwargs": {name: source}}``: the expressions
        passed to ``check`` after the question id, evaluated in the student's namespace.
    grade_ids : set of str
        nbgrader ``grade_id`` of the grade cells (the ``check`` cells), not run when grading.
    """
    nb = nbformat.read(solution_path(problem_set), as_version=4)
    specs, grade_ids = {}, set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        nbgrader = cell.metadata.get("nbgrader", {})
        if nbgrader.get("grade") and not nbgrader.get("solution"):
            grade_ids.add(nbgrader.get("grade_id"))
        for node in ast.walk(ast.parse(cell.source)):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "check"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                specs[node.args[0].value] = {"args": [ast.unparse(a) for a in node.args[1:]],
                                             "kwargs": {k.arg: ast.unparse(k.value) for k in node.keywords}}
    missing = [q.id for q in questions_of(problem_set) if q.id not in specs]
    if missing:
        raise ValueError(f"{solution_path(problem_set).name} has no check(...) call for {missing}")
    return specs, grade_ids - {None}


def _read_submission(path: Path, options: GradeOptions):
    """The notebook, or a ValueError saying why it cannot be graded."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ValueError(f"cannot read the file: {exc.strerror}") from None
    if size > options.max_file_mb * 1024 * 1024:
        raise ValueError(f"the file is {size / 2**20:.0f} MB, more than the {options.max_file_mb:g} MB allowed "
                         "(clear the outputs and submit again)")
    try:
        nb = nbformat.reads(path.read_bytes().decode("utf-8"), as_version=4)
    except OSError as exc:
        raise ValueError(f"cannot read the file: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ValueError("not a notebook (not UTF-8 text)") from None
    except Exception as exc:  # nbformat raises several kinds for bad JSON or a bad schema
        raise ValueError(f"not a readable .ipynb notebook ({type(exc).__name__}: {str(exc)[:120]})") from None
    if not isinstance(nb.get("cells"), list):
        raise ValueError("not a readable .ipynb notebook (no cells)")
    return nb


def _code_cells(nb, grade_ids: set) -> list:
    """``[index, source]`` of the code cells to run: all but the solution's grade (check) cells."""
    cells = []
    for index, cell in enumerate(nb.cells):
        if cell.get("cell_type") != "code" or not isinstance(cell.get("source"), str):
            continue
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id in grade_ids:
            continue
        cells.append([index, cell.source])
    return cells


# --------------------------------------------------------------------------- the worker
_LIVE: set = set()  # running workers, killed on an interrupt
_LIVE_LOCK = threading.Lock()
_STOPPING = threading.Event()  # set on an interrupt: no new worker starts


#: Environment variables a worker keeps (by name or prefix): what Python, Numba and CUDA need,
#: and nothing else of the grader's environment (tokens, credentials).
_ENV_KEPT = ("PATH", "LANG", "LC_", "TZ", "TMPDIR", "LD_LIBRARY_PATH", "PYTHON", "NUMBA_", "CUDA_", "NVIDIA_",
             "COURSE_", "CONDA_PREFIX", "VIRTUAL_ENV", "OMP_NUM_THREADS")


def _worker_environment() -> dict:
    return {k: v for k, v in os.environ.items() if k.startswith(_ENV_KEPT)}


class Worker:
    """One child process running one submission's code (see the module docstring)."""

    def __init__(self, problem_set: str, options: GradeOptions):
        from .. import device

        if _STOPPING.is_set():
            raise WorkerFault("grading was interrupted")
        self.options = options
        self.cell = None
        self.workdir = tempfile.mkdtemp(prefix="course-grading-")
        env = _worker_environment()
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                                           if p])
        env["COURSE_BACKEND"] = device.backend()  # the same backend as the grader's references
        env["HOME"] = self.workdir
        address_limit = options.memory_mb if device.is_simulator() else 0
        debug = bool(os.environ.get("COURSE_GRADING_DEBUG"))
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "course_lib.grading.worker", problem_set, str(address_limit)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None if debug else subprocess.DEVNULL,
                cwd=self.workdir, env=env, start_new_session=True)  # own process group: killed as a whole
        except OSError as exc:
            shutil.rmtree(self.workdir, ignore_errors=True)
            raise RuntimeError(f"a grading worker could not start ({exc})") from None
        self.buffer = b""
        with _LIVE_LOCK:
            _LIVE.add(self)

    def wait_ready(self) -> None:
        """Wait until the worker has imported what it needs; raises :class:`WorkerFault`."""
        reply = self.request(None, self.options.startup)
        if reply.get("event") != "ready":
            self.kill()
            raise WorkerFault("the submission's process broke the grading protocol")

    def request(self, message: dict | None, timeout: float) -> dict:
        """Send one request (None: only read) and return the reply; raises :class:`WorkerFault`."""
        if message is not None:
            try:
                self.proc.stdin.write(dumps(message))
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError):
                raise self._died() from None
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        limit = self.options.max_reply_mb * 1024 * 1024
        while True:
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                try:
                    reply = loads(line)
                except ProtocolError as exc:
                    self.kill()
                    raise WorkerFault(f"the submission's process broke the grading protocol ({exc})") from None
                if reply.get("event") == "cell":
                    self.cell = reply.get("index")
                    continue
                return reply
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                raise WorkerFault(f"timed out after {timeout:g} s (an infinite loop or a deadlock?)")
            ready, _, _ = select.select([fd], [], [], min(remaining, 0.25))
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise self._died()
                self.buffer += chunk
                if len(self.buffer) > limit:
                    self.kill()
                    raise WorkerFault(f"output too large (more than {self.options.max_reply_mb:g} MB)")
            self._watch_memory()

    def _watch_memory(self) -> None:
        if self.options.memory_mb <= 0:
            return
        try:
            with open(f"/proc/{self.proc.pid}/status") as status:
                rss_kb = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
        except (OSError, StopIteration, ValueError):
            return
        if rss_kb > self.options.memory_mb * 1024:
            self.kill()
            raise WorkerFault(f"used more than {self.options.memory_mb} MB of memory")

    def _died(self) -> WorkerFault:
        code = self.proc.wait()
        self.kill()
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            hint = " (memory limit?)" if name == "SIGKILL" else ""
            return WorkerFault(f"the submission's process crashed ({name}){hint}")
        return WorkerFault(f"the submission's process exited (exit code {code}): os._exit, sys.exit or a crash")

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(dumps({"cmd": "exit"}))
                self.proc.stdin.flush()
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        shutil.rmtree(self.workdir, ignore_errors=True)
        with _LIVE_LOCK:
            _LIVE.discard(self)


def _kill_all() -> None:
    _STOPPING.set()
    with _LIVE_LOCK:
        workers = list(_LIVE)
    for worker in workers:
        worker.kill()


# --------------------------------------------------------------------------- grading
def _error_result(question: Question, reason: str) -> QuestionResult:
    return QuestionResult(question.id, question.title, 0.0, question.points, error=reason,
                          tolerance=question.tolerance)


def _grade_question(worker: Worker, question: Question, answer: dict | None, cell_errors: list, seed: int,
                    options: GradeOptions) -> tuple[QuestionResult, bool]:
    """Run one question's tests through the worker; returns the result and whether the worker died."""
    result = QuestionResult(question.id, question.title, 0.0, question.points, tolerance=question.tolerance)
    if answer is None or "error" in answer:
        reason = answer["error"] if answer else "no answer"
        if cell_errors and reason != NOT_ANSWERED:
            reason += f"; the notebook raised in {cell_errors[0]}"
        result.error = reason
        return result, False
    try:
        info = decode(answer.get("info"))
        if not isinstance(info, dict):
            raise ProtocolError("info is not a dict")
    except ProtocolError as exc:
        result.error = f"the submission's process broke the grading protocol ({exc})"
        return result, False
    tests = question.visible() + question.hidden()
    fault = None
    for test in tests:
        index = next(i for i, t in enumerate(question.tests) if t is test)
        start = time.perf_counter()
        if fault:
            outcome = failed_outcome(test, f"not run: {fault}", reveals_nothing=True)
        else:
            try:
                outcome = _run_test(worker, question, index, test, info, seed, options)
            except WorkerFault as exc:
                fault = exc.reason
                outcome = failed_outcome(test, exc.reason, reveals_nothing=True, hint=False)
        outcome.seconds = time.perf_counter() - start
        result.outcomes.append(outcome)
    return score(question, result, len(tests)), fault is not None


def _run_test(worker: Worker, question: Question, index: int, test, info: dict, seed: int,
              options: GradeOptions) -> TestOutcome:
    rng = test_rng(test, seed)
    try:
        if not test.split:  # judged in the student's process: only its word
            reply = worker.request({"cmd": "run", "question": question.id, "test": index, "seed": seed},
                                   options.timeout)
            if reply.get("event") == "ran" and reply.get("passed") is True:
                return TestOutcome(test.name, True, hidden=test.hidden)
        else:
            data = test.inputs(rng, info)
            reply = worker.request({"cmd": "produce", "question": question.id, "test": index,
                                    "inputs": encode(data)}, options.timeout)
            if reply.get("event") == "produced":
                outputs = decode(reply.get("outputs"))
                with quiet_floats():
                    test.judge(data, outputs, info)
                return TestOutcome(test.name, True, hidden=test.hidden)
        event, message = reply.get("event"), str(reply.get("message", ""))[:2000]
        if event == "failed":
            return failed_outcome(test, message)
        if event == "raised":
            return failed_outcome(test, message, exception=str(reply.get("exception", "Exception"))[:100])
        raise ProtocolError(f"unexpected reply {event!r}")
    except TestFailure as exc:
        return failed_outcome(test, str(exc), reveals_nothing=getattr(exc, "public", False))
    except ProtocolError as exc:
        return failed_outcome(test, f"the submission's process broke the grading protocol ({exc})",
                              reveals_nothing=True, hint=False)
    except WorkerFault:
        raise
    except Exception as exc:  # a judge choking on outputs of an unexpected type or shape
        return failed_outcome(test, f"outputs of an unexpected type or shape ({type(exc).__name__})")


def grade_submission(path, problem_set: str, seed: int, options: GradeOptions = GradeOptions(),
                     specs: tuple | None = None) -> list:
    """Grade one submission; returns one :class:`QuestionResult` per question, in order.

    Parameters
    ----------
    path : str or Path
        The student's notebook.
    problem_set : str
        e.g. ``"ps1"``.
    seed : int
        Seed of the hidden tests' inputs for this submission.
    options : GradeOptions
    specs : tuple, optional
        :func:`answer_specs` of the problem set (computed when not given).
    """
    questions = questions_of(problem_set)
    answers, grade_ids = specs or answer_specs(problem_set)
    try:
        nb = _read_submission(Path(path), options)
    except ValueError as exc:
        return [_error_result(q, str(exc)) for q in questions]
    cells = _code_cells(nb, grade_ids)
    results, pending = {}, list(questions)
    while pending:
        worker = Worker(problem_set, options)
        try:
            try:
                worker.wait_ready()
            except WorkerFault as exc:  # the grading machine's trouble, not the student's: no row is written
                raise RuntimeError(f"a grading worker could not start ({exc.reason}); set COURSE_GRADING_DEBUG=1 "
                                   "to see its errors") from None
            try:
                loaded = worker.request({"cmd": "load", "cells": cells,
                                         "answers": {q.id: answers[q.id] for q in pending}}, options.timeout)
                if loaded.get("event") != "loaded" or not isinstance(loaded.get("answers"), dict):
                    raise WorkerFault("the submission's process broke the grading protocol")
            except WorkerFault as exc:
                where = f" in cell {worker.cell}" if isinstance(worker.cell, int) else ""
                for question in pending:
                    results[question.id] = _error_result(question, f"running the notebook{where}: {exc.reason}")
                break
            cell_errors = [str(e)[:500] for e in loaded.get("cell_errors", [])][:20]
            while pending:
                question = pending.pop(0)
                answer = loaded["answers"].get(question.id)
                results[question.id], died = _grade_question(
                    worker, question, answer if isinstance(answer, dict) else None, cell_errors, seed, options)
                if died:
                    break  # a fresh worker for the remaining questions
        finally:
            worker.close()
    return [results[q.id] for q in questions]


def student_ids(paths) -> dict:
    """A name for each submission: its file name without suffix, or, where two files share
    a name (``submitted/<student>/ps1/ps1_nbody.ipynb``), its path from their common folder."""
    paths = [Path(p) for p in paths]
    stems = [p.stem for p in paths]
    if len(set(stems)) == len(stems):
        return dict(zip(paths, stems))
    common = Path(os.path.commonpath([str(p.resolve().parent) for p in paths]))
    ids = {p: p.resolve().relative_to(common).with_suffix("").as_posix() for p in paths}
    if len(set(ids.values())) != len(ids):
        raise ValueError("two submissions are the same file")
    return ids


def student_seed(seed: int, student: str) -> int:
    """Each student's hidden inputs differ (derived from the run's seed and the student's name)."""
    return int(np.random.SeedSequence([seed, zlib.crc32(student.encode())]).generate_state(1)[0])


# --------------------------------------------------------------------------- output files
def read_grades(path) -> list:
    """Rows of an existing grades CSV (``[]`` when there is none)."""
    path = Path(path)
    if not path.exists():
        return []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != FIELDS:
            raise ValueError(f"{path} is not a grades file (columns {reader.fieldnames}, expected {FIELDS})")
        return list(reader)


def write_grades(path, rows) -> None:
    """Write the CSV atomically: a temporary file in the same folder, then a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _rows(student: str, results) -> list:
    return [{"student": student, "question": r.question_id, "points": f"{r.points:g}",
             "max_points": f"{r.max_points:g}", "status": r.status, "reason": r.reason.replace("\n", " ")[:300]}
            for r in results]


def feedback_markdown(student: str, problem_set: str, results) -> str:
    """A student's feedback: points and visible messages; hidden tests only by name and pass/fail."""
    total, maximum = sum(r.points for r in results), sum(r.max_points for r in results)
    lines = [f"# {problem_set}: feedback for {student}", "",
             f"**Total: {total:g} / {maximum:g} points**", "",
             "Hidden tests draw their inputs when grading; their inputs and expected results are not shown.", ""]
    for r in results:
        lines += [f"## {r.question_id} {r.title}: {r.points:g} / {r.max_points:g} points", ""]
        if r.tolerance:
            lines += [f"Results compared with {r.tolerance}.", ""]
        if r.error:
            lines += ["Not graded:", "", "~~~~", r.error, "~~~~", ""]
        for o in r.outcomes:
            worth = f" [{o.points:g}/{o.max_points:g} points]" if o.max_points else ""
            lines.append(f"- {'PASS' if o.passed else 'FAIL'}: {o.name}{' (technique)' if o.technique else ''}{worth}")
            if not o.passed and o.message:
                lines += ["", "  ~~~~", *("  " + line for line in o.message.splitlines()), "  ~~~~", ""]
        if r.capped:
            lines += ["", f"Capped at {r.points:g} points: a technique test failed, and a correct result computed "
                          "without the technique the question teaches earns at most that.", ""]
        lines.append("")
    return "\n".join(lines)


def write_feedback(folder, student: str, problem_set: str, results) -> Path:
    """Write ``<folder>/<student>.md`` atomically and return its path."""
    path = Path(folder) / f"{student.replace('/', '__')}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(feedback_markdown(student, problem_set, results))
    os.replace(tmp, path)
    return path


def not_dumpable() -> None:
    """Forbid same-user processes (the workers) from reading this process's memory, where Linux allows."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    except (OSError, AttributeError):
        pass


def _expand(submissions) -> list:
    """Files as given; a folder stands for the notebooks below it (checkpoints left out)."""
    paths = []
    for given in map(Path, submissions):
        if given.is_dir():
            paths += sorted(p for p in given.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
        else:
            paths.append(given)
    return paths


def grade(problem_set: str, submissions, out, *, jobs: int = 1, force: bool = False,
          options: GradeOptions = GradeOptions(), feedback_dir=None, seed: int | None = None,
          progress: bool = True, log=None) -> list:
    """Grade submissions into a CSV file (see the module docstring) and return all its rows.

    Parameters
    ----------
    problem_set : str
        e.g. ``"ps1"``.
    submissions : list of path
        Students' notebooks (anything else gets a row saying why it cannot be graded); a folder
        stands for all the ``.ipynb`` files below it.
    out : path
        The grades CSV; rows of students already graded there are kept and, unless ``force``,
        those students are skipped.
    jobs : int
        Submissions graded at once, each in its own process.
    options : GradeOptions
    feedback_dir : path, optional
        Where to write one Markdown feedback file per student.
    seed : int, optional
        Seed of the hidden tests (each student's inputs are derived from it); random by default.
    progress : bool
        Show a progress bar.
    log : callable, optional
        Called with a one-line summary of what will be graded and skipped.

    Raises
    ------
    ValueError
        Unknown problem set, no submissions, jobs < 1, or an ``out`` file that is not a grades CSV.
    RuntimeError
        A worker process could not start (a broken installation); what was graded is kept.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    if options.timeout <= 0:
        raise ValueError(f"timeout must be positive, got {options.timeout}")
    paths = _expand(submissions)
    if not paths:
        raise ValueError("no submissions given")
    questions = questions_of(problem_set)
    specs = answer_specs(problem_set)
    ids = student_ids(paths)
    with _exclusive(out):
        return _grade_into(problem_set, questions, specs, paths, ids, out, jobs=jobs, force=force, options=options,
                           feedback_dir=feedback_dir, seed=seed, progress=progress, log=log)


@contextlib.contextmanager
def _exclusive(out):
    """Hold a lock next to the grades file: two runs writing the same file would lose rows."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.with_name(f".{out.name}.lock"), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise ValueError(f"another grading run is writing {out}") from None
        yield


def _grade_into(problem_set, questions, specs, paths, ids, out, *, jobs, force, options, feedback_dir, seed,
                progress, log) -> list:
    rows = read_grades(out)
    by_student: dict = {}
    for row in rows:
        by_student.setdefault(row["student"], []).append(row)
    graded = {s for s, r in by_student.items() if {x["question"] for x in r} >= {q.id for q in questions}}
    todo = [p for p in paths if force or ids[p] not in graded]
    seed = int.from_bytes(os.urandom(4), "little") if seed is None else int(seed)
    unsplit = [f"{q.id} {t.name!r}" for q in questions for t in q.tests if not t.split]
    if log and unsplit:
        log(f"{problem_set}: {len(unsplit)} tests are not split into produce/judge and are judged in the student's "
            f"process, where a submission could rig them: {', '.join(unsplit[:3])}{' ...' if len(unsplit) > 3 else ''}")
    if log:
        log(f"{problem_set}: grading {len(todo)} of {len(paths)} submissions"
            + (f" ({len(paths) - len(todo)} already in {os.fspath(out)}; --force grades them again)"
               if len(todo) < len(paths) else ""))

    _STOPPING.clear()

    def finish(path, results):
        student = ids[path]
        by_student[student] = _rows(student, results)
        write_grades(out, [row for s in sorted(by_student) for row in by_student[s]])
        if feedback_dir is not None:
            write_feedback(feedback_dir, student, problem_set, results)

    from tqdm.auto import tqdm

    bar = tqdm(total=len(todo), desc=f"grading {problem_set}", unit="submission", disable=not progress)
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(grade_submission, p, problem_set, student_seed(seed, ids[p]), options, specs): p
                       for p in todo}
            try:
                for future in concurrent.futures.as_completed(futures):
                    finish(futures[future], future.result())
                    bar.update()
            except BaseException:
                for future in futures:
                    future.cancel()
                _kill_all()
                raise
    finally:
        bar.close()
        _STOPPING.clear()  # every thread of this run is done: later runs may start workers
    return [row for s in sorted(by_student) for row in by_student[s]]
