"""Grade students' problem-set notebooks, each in its own sandboxed process, safely and in parallel.

The grading loop. Its parts, one job each:

- :mod:`~course_lib.grading.running.notebooks` reads every submission into memory before any
  student code runs (regular files only, size-capped, symbolic links refused);
- :mod:`~course_lib.grading.running.sandbox` chooses where workers run (bubblewrap namespaces, or
  none) and controls processes (the grader is a child subreaper: nothing a worker starts
  outlives it);
- :mod:`~course_lib.grading.running.client` starts a worker (:mod:`~course_lib.grading.running.worker`) per
  submission and talks to it, with time and memory limits;
- :mod:`~course_lib.grading.running.manifest` verifies the course files before grading and puts them
  back after each submission;
- :mod:`~course_lib.grading.running.bytecode` compiles what the workers import once per run, and hands
  each worker that bytecode read-only (or a verified copy);
- :mod:`~course_lib.grading.results.report` writes the grades CSV and feedback from the grader's memory.

For each submission the grader sends the worker the notebook's code cells and, for each
question, the answer expressions of the solution's ``check(...)`` cell; then for each test
it draws the inputs itself (hidden tests from the grading seed), has the worker run the
student's answer on them (``produce``), and judges the returned outputs here, against
references computed here. The worker never sees an expected output, and the verdict never
comes from the worker: only its outputs, as plain data. A notebook that changes the grading
machinery in its process (:mod:`~course_lib.grading.running.tamper`) or the course's files is
refused (0 points, with the reason in its feedback). A worker that hangs, crashes or exceeds
its memory is killed, the affected tests score 0 with the reason, and a fresh worker carries
on with the remaining questions. Any error while grading one student is that student's
``error`` row: it never stops the others.

Results go to a CSV file (one row per student and question), rewritten atomically after
each submission, so an interrupted run loses nothing graded and a re-run skips what is done.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import fcntl
import os
import sys  # noqa: F401  (tests replace sys.executable through this module)
import threading
import time
import zlib
from pathlib import Path

import numpy as np

from .bytecode import SHARED_ENV, Bytecode, LazyBytecode
from .client import GradeOptions, MachineTrouble, Worker, WorkerFault, kill_all, stopping
from ..core import (HUNG, HUNG_REASON, NOT_ANSWERED, Question, QuestionResult, TestFailure, TestOutcome,
                    failed_outcome, questions_of, quiet_floats, score, test_rng)
from ..results.details import (configuration_of, measurement_of, read_outcomes, outcome_rows, outcomes_path,
                               write_outcomes)
from .manifest import CourseState, default_path, verify
from .notebooks import Submission, SubmissionFiles, answer_specs, code_cells, expand, parse_notebook, read_submissions, student_ids
from ..protocol import ProtocolError, decode, encode
from .. import resources
from ..results.report import FIELDS, FeedbackFolder, clean_text, csv_cell, read_grades, rows_of, write_grades
from .sandbox import Sandbox, resolve

__all__ = ["FIELDS", "GradeOptions", "WorkerFault", "answer_specs", "grade", "grade_submission", "read_grades",
           "student_ids", "write_grades"]

#: Why a notebook that changed the grading machinery gets nothing (followed by what it changed).
TAMPERED = ("refused for tampering: the notebook changed the grading machinery or the course's files, "
            "which a notebook must not do")


class _Hung(Exception):
    """A test whose kernel hung (the simulator's HangError): its outcome, and the question stops there."""

    def __init__(self, outcome):
        super().__init__(outcome.message)
        self.outcome = outcome


class _Tampered(Exception):
    def __init__(self, changed):
        super().__init__(", ".join(changed))
        self.changed = [clean_text(c, newlines=False)[:200] for c in changed][:5]


def _error_result(question: Question, reason: str) -> QuestionResult:
    return QuestionResult(question.id, question.title, 0.0, question.points, error=reason,
                          tolerance=question.tolerance)


def _refused(questions, changed) -> list:
    reason = f"{TAMPERED} ({', '.join(changed)})"
    return [_error_result(q, reason) for q in questions]


# --------------------------------------------------------------------------- one submission
def _grade_question(worker: Worker, question: Question, answer: dict | None, cell_errors: list, seed: int,
                    options: GradeOptions) -> tuple[QuestionResult, bool]:
    """Run one question's tests through the worker; returns the result and whether the worker died."""
    result = QuestionResult(question.id, question.title, 0.0, question.points, tolerance=question.tolerance)
    if answer is None or "error" in answer:
        reason = clean_text(answer["error"]) if answer else "no answer"
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
    fault = stopped = None
    for test in tests:
        index = next(i for i, t in enumerate(question.tests) if t is test)
        start = time.perf_counter()
        if fault or stopped:
            outcome = failed_outcome(test, f"not run: {fault or stopped}", reveals_nothing=True)
        else:
            try:
                outcome = _run_test(worker, question, index, test, info, seed, options)
            except _Hung as exc:  # the worker is fine; the question's remaining tests are not run (core.HUNG_REASON)
                outcome, stopped = exc.outcome, HUNG_REASON
            except WorkerFault as exc:
                fault = exc.reason
                outcome = failed_outcome(test, exc.reason, reveals_nothing=True, hint=False)
                outcome.config = getattr(exc, "config", "")
        outcome.seconds = time.perf_counter() - start
        result.outcomes.append(outcome)
    return score(question, result, len(tests)), fault is not None


def _run_test(worker: Worker, question: Question, index: int, test, info: dict, seed: int,
              options: GradeOptions) -> TestOutcome:
    """One test's outcome, with the configuration its inputs drew (for the class report's census)."""
    drawn = {}
    try:
        outcome = _run_steps(worker, question, index, test, info, seed, options, drawn)
    except WorkerFault as exc:
        exc.config = drawn.get("config", "")  # a timeout or a crash at this configuration
        raise
    outcome.config = drawn.get("config", "")
    return outcome


def _run_steps(worker: Worker, question: Question, index: int, test, info: dict, seed: int,
               options: GradeOptions, drawn: dict) -> TestOutcome:
    rng = test_rng(test, seed)
    try:
        data = test.inputs(rng, info)
        drawn["config"] = configuration_of(data)  # from the grader's own inputs, before the student's code runs
        reply = worker.request({"cmd": "produce", "question": question.id, "test": index, "inputs": encode(data)},
                               options.timeout)
        event = reply.get("event")
        if event == "tampered":
            raise _Tampered([str(c) for c in reply.get("changed", [])] if isinstance(reply.get("changed"), list)
                            else ["unknown"])
        if event == "produced":
            outputs = decode(reply.get("outputs"))
            with quiet_floats():
                measured = test.judge(data, outputs, info)
            return TestOutcome(test.name, True, hidden=test.hidden, measurement=measurement_of(measured))
        message = clean_text(str(reply.get("message", ""))[:2000])
        if event == "failed":
            return failed_outcome(test, message)
        if event == "raised":
            exception = clean_text(str(reply.get("exception", "Exception")))[:100]
            outcome = failed_outcome(test, message, exception=exception)
            if exception == HUNG:
                outcome.config = drawn.get("config", "")
                raise _Hung(outcome)
            return outcome
        raise ProtocolError(f"unexpected reply {clean_text(str(event))[:50]!r}")
    except TestFailure as exc:
        outcome = failed_outcome(test, clean_text(str(exc)), reveals_nothing=getattr(exc, "public", False),
                                 cause=getattr(exc, "cause", None))
        outcome.measurement = measurement_of(getattr(exc, "measurement", None))
        return outcome
    except ProtocolError as exc:
        return failed_outcome(test, f"the submission's process broke the grading protocol ({exc})",
                              reveals_nothing=True, hint=False)
    except (WorkerFault, _Tampered, _Hung):
        raise
    except Exception as exc:  # a judge choking on outputs of an unexpected type or shape
        return failed_outcome(test, f"outputs of an unexpected type or shape ({type(exc).__name__})")


def _grade_cells(problem_set: str, cells: list, seed: int, options: GradeOptions, specs: tuple,
                 sandbox: Sandbox, bytecode=None) -> list:
    questions = questions_of(problem_set)
    answers, _ = specs
    results, pending = {}, list(questions)
    if isinstance(bytecode, LazyBytecode):
        bytecode = bytecode.get()
    # The simulator starts blocks and warps in an order drawn from this seed: a result that depends
    # on an order a GPU does not promise (an atomic counter's slots, the last writer) differs
    # between grading runs, and fails the tests that a GPU would fail.
    sim_seed = int(np.random.SeedSequence([seed, 0x5EED]).generate_state(1)[0])
    while pending:
        worker = Worker(problem_set, options, sandbox, sim_seed=sim_seed, bytecode=bytecode)
        try:
            try:
                worker.wait_ready()
            except WorkerFault as exc:
                raise MachineTrouble(f"a grading worker could not start ({exc.reason}); set COURSE_GRADING_DEBUG=1 "
                                      "to see its errors") from None
            try:
                loaded = worker.request({"cmd": "load", "cells": cells,
                                         "answers": {q.id: answers[q.id] for q in pending}}, options.timeout)
                if loaded.get("event") == "tampered":
                    changed = loaded.get("changed")
                    raise _Tampered([str(c) for c in changed] if isinstance(changed, list) else ["unknown"])
                if loaded.get("event") != "loaded" or not isinstance(loaded.get("answers"), dict):
                    raise WorkerFault("the submission's process broke the grading protocol")
            except WorkerFault as exc:
                where = f" in cell {worker.cell}" if isinstance(worker.cell, int) else ""
                for question in pending:
                    results[question.id] = _error_result(question, f"running the notebook{where}: {exc.reason}")
                break
            cell_errors = [clean_text(str(e))[:500] for e in loaded.get("cell_errors", [])][:20]
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


def grade_submission(submission, problem_set: str, seed: int, options: GradeOptions = GradeOptions(),
                     specs: tuple | None = None, sandbox: Sandbox | None = None, bytecode=None) -> list:
    """Grade one submission; returns one :class:`QuestionResult` per question, in order.

    Parameters
    ----------
    submission : Submission, str or Path
        The student's notebook, read already (:func:`~course_lib.grading.running.notebooks.read_submissions`)
        or a path to read now.
    problem_set : str
        e.g. ``"ps1"``.
    seed : int
        Seed of the hidden tests' inputs for this submission.
    options : GradeOptions
    specs : tuple, optional
        :func:`answer_specs` of the problem set (computed when not given).
    sandbox : Sandbox, optional
        Where workers run (default: :func:`~course_lib.grading.running.sandbox.resolve` ``("auto")``).
    bytecode : Bytecode or LazyBytecode, optional
        The run's trusted bytecode (:mod:`course_lib.grading.running.bytecode`); without it, the folder
        named by ``COURSE_GRADING_BYTECODE`` if that is set and intact, else the worker compiles every
        module it imports from source.

    Raises
    ------
    RuntimeError
        A worker could not start (the grading machine's trouble, not the student's).
    """
    questions = questions_of(problem_set)
    specs = specs or answer_specs(problem_set)
    sandbox = sandbox or resolve("auto")
    if bytecode is None and os.environ.get(SHARED_ENV):
        bytecode = Bytecode.shared(os.environ[SHARED_ENV])  # None when changed: compiled from source
    if not isinstance(submission, Submission):
        path = Path(submission)
        submission = read_submissions([path], {path: path.stem}, int(options.max_file_mb * 2**20))[0]
    try:
        if submission.content is None:
            return [_error_result(q, submission.problem) for q in questions]
        try:
            nb = parse_notebook(submission.content)
        except ValueError as exc:
            return [_error_result(q, str(exc)) for q in questions]
        return _grade_cells(problem_set, code_cells(nb, specs[1]), seed, options, specs, sandbox, bytecode)
    except _Tampered as exc:
        return _refused(questions, exc.changed)
    except MachineTrouble:
        raise
    except Exception as exc:  # noqa: BLE001  (one student's trouble never stops the others)
        reason = f"internal error while grading this submission ({type(exc).__name__}: {clean_text(exc)[:200]})"
        return [_error_result(q, reason) for q in questions]


def student_seed(seed: int, student: str) -> int:
    """Each student's hidden inputs differ (derived from the run's seed and the student's name)."""
    return int(np.random.SeedSequence([seed, zlib.crc32(student.encode("utf-8", "backslashreplace"))])
               .generate_state(1)[0])


# --------------------------------------------------------------------------- a run
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


def grade(problem_set: str, submissions, out, *, jobs: int = 1, force: bool = False,
          options: GradeOptions = GradeOptions(), feedback_dir=None, seed: int | None = None,
          progress: bool = True, log=None, sandbox: str = "auto", manifest=None) -> list:
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
        Called with one-line notes: the sandbox mode, what will be graded and skipped.
    sandbox : {"auto", "require", "off"}
        Bubblewrap when available (``auto``), always (``require``: refuse without it), or never.
    manifest : path, False or None
        Course manifest to verify before grading (:mod:`~course_lib.grading.running.manifest`); None: the
        default one if it exists; False: none.

    Raises
    ------
    ValueError
        Unknown problem set or sandbox mode, no submissions, jobs < 1, or an ``out`` file that is
        not a grades CSV.
    RuntimeError
        ``sandbox="require"`` without bubblewrap, course files that differ from the manifest, or a
        worker that could not start (a broken installation); what was graded is kept.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    if options.timeout <= 0:
        raise ValueError(f"timeout must be positive, got {options.timeout}")
    paths = expand(submissions)
    if not paths:
        raise ValueError("no submissions given")
    questions = questions_of(problem_set)
    specs = answer_specs(problem_set)
    ids = student_ids(paths)
    box = resolve(sandbox)
    log = log or (lambda line: None)
    log(box.note)
    if manifest is not False:
        path = Path(manifest) if manifest else default_path()
        if manifest or path.exists():
            verify(path)
        else:
            log(f"no manifest of the course files at {path}: run `python -m course_lib.grading manifest` once after "
                "installing the course, so that grading refuses a changed course")
    with _exclusive(out):
        return _grade_into(problem_set, questions, specs, paths, ids, out, jobs=jobs, force=force, options=options,
                           feedback_dir=feedback_dir, seed=seed, progress=progress, log=log, sandbox=box)


def _grade_into(problem_set, questions, specs, paths, ids, out, *, jobs, force, options, feedback_dir, seed,
                progress, log, sandbox) -> list:
    rows = read_grades(out)
    by_student: dict = {}
    for row in rows:
        by_student.setdefault(row["student"], []).append(row)
    tests_out = outcomes_path(out)  # one row per test, for the class report (grading.results.details)
    tests_by_student: dict = {}
    for row in read_outcomes(tests_out):
        tests_by_student.setdefault(row["student"], []).append(row)
    graded = {s for s, r in by_student.items() if {x["question"] for x in r} >= {q.id for q in questions}}
    todo = [p for p in paths if force or csv_cell(ids[p]) not in graded]
    seed = int.from_bytes(os.urandom(4), "little") if seed is None else int(seed)
    log(f"{problem_set}: grading {len(todo)} of {len(paths)} submissions"
        + (f" ({len(paths) - len(todo)} already in {os.fspath(out)}; --force grades them again)"
           if len(todo) < len(paths) else ""))
    # Everything is read before the first worker starts: no submission can change another's file.
    submissions = read_submissions(todo, ids, int(options.max_file_mb * 2**20))
    # The answer keys and hints too: without a sandbox a worker could rewrite the files before they are judged with.
    resources.preload(problem_set)
    # Under bubblewrap a worker can change neither the course nor a submission: a change during the run is
    # someone else's (the instructor's), to be left alone. Without namespaces, it is put back.
    course, on_disk = (CourseState(), SubmissionFiles(submissions)) if sandbox.kind == "none" else (None, None)
    feedback = FeedbackFolder(feedback_dir, problem_set) if feedback_dir is not None else None
    stopping().clear()
    lock = threading.Lock()
    # Compiled once for the whole run (seconds of CPU that every worker spent compiling the same modules);
    # for one submission it would only move that time, not save it, unless the caller built it for several runs.
    bytecode = LazyBytecode(problem_set, log) if len(submissions) > 1 or os.environ.get(SHARED_ENV) else None

    def finish(submission: Submission, results) -> None:
        with lock:
            changed = []
            if course is not None:
                changed = course.restore()  # course files a submission changed: put back, and refuse it
                on_disk.restore()  # students' files: graded from memory already, put back for the record
            if changed:
                results = _refused(questions, changed[:3])
            student = csv_cell(submission.student)
            try:
                by_student[student] = rows_of(submission.student, results)
            except Exception as exc:  # noqa: BLE001
                by_student[student] = rows_of(submission.student, [_error_result(
                    q, f"internal error while writing the row ({type(exc).__name__})") for q in questions])
            write_grades(out, [row for s in sorted(by_student) for row in by_student[s]])
            try:
                tests_by_student[student] = outcome_rows(submission.student, results)
                write_outcomes(tests_out, [row for s in sorted(tests_by_student) for row in tests_by_student[s]])
            except OSError as exc:
                log(f"tests of {student} not recorded in {tests_out}: {exc}")
            if feedback is not None:
                try:
                    feedback.add(submission.student, results)
                except OSError as exc:
                    log(f"feedback for {student} not written: {exc}")

    from tqdm.auto import tqdm

    bar = tqdm(total=len(todo), desc=f"grading {problem_set}", unit="submission", disable=not progress)
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(grade_submission, s, problem_set, student_seed(seed, s.student), options, specs,
                                   sandbox, bytecode=bytecode): s for s in submissions}
            try:
                pending = set(futures)
                while pending:
                    # A short wait: an interrupt reaches this thread within half a second.
                    done, pending = concurrent.futures.wait(pending, timeout=0.5,
                                                            return_when=concurrent.futures.FIRST_COMPLETED)
                    # Every finished submission is recorded before an error (an interrupt in a worker thread)
                    # is raised: two futures can finish within one wait, and the set's order is arbitrary.
                    failure = None
                    for future in done:
                        if future.exception() is not None:
                            failure = failure or future.exception()
                            continue
                        finish(futures[future], future.result())
                        bar.update()
                    if failure is not None:
                        raise failure
            except BaseException:
                for future in futures:
                    future.cancel()
                kill_all()
                raise
    finally:
        bar.close()
        if bytecode is not None:
            bytecode.close()
        with lock:
            if course is not None:
                course.restore()
                on_disk.restore()
            if feedback is not None:
                with contextlib.suppress(OSError):
                    feedback.flush()
        stopping().clear()  # every thread of this run is done: later runs may start workers
    return [row for s in sorted(by_student) for row in by_student[s]]
