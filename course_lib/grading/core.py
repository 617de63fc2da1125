"""Question model and in-notebook self-check.

A :class:`Question` has an id (``"ps1.q1"``), points, visible tests (run by the
student with :func:`check`) and hidden tests (run at grading time with inputs drawn
from a seed chosen then). A test passes when the answer is right and raises
:class:`TestFailure` with a specific message otherwise. A test carries the points it
declares (``Test(points=...)``); a question whose tests declare none splits its points
equally among them. A failed *technique* test (``Test(technique=True)``: the method the
question teaches, measured with the course's profiler or checker) caps the question at
``Question.technique_cap`` of its points, whatever the other tests give. Question modules
are written with the declarative builders of :mod:`course_lib.grading.authoring.harness`.

A test is written in three steps, so that the grader (:mod:`course_lib.grading.running.grader`)
never runs the judgement where the student's code runs:

- ``inputs(rng, info) -> data`` (grader side) draws the test's inputs; ``info`` is what
  ``Question.describe`` reported about the answer (e.g. its tile size);
- ``produce(answer, data) -> outputs`` (student side) runs the answer on the inputs and
  returns raw outputs: numbers, strings, NumPy arrays, lists and dicts of them;
- ``judge(data, outputs, info)`` (grader side) computes the expected result itself and
  raises :class:`TestFailure` when the outputs are wrong.

In the notebook, :func:`check` runs the three steps in one process; the grader runs
``produce`` in a child process and the rest in the parent, so patching NumPy, this module
or the references inside a submission cannot change a grade, and expected outputs never
reach the student's process.

This module runs the tests, scores them and gives the notebook its :func:`check` and
:func:`summary`; the data model (:class:`Question`, :class:`Test`, :class:`TestFailure`,
:class:`TestOutcome`, :class:`QuestionResult`) lives in :mod:`course_lib.grading.model` and is
re-exported here, the import point of every name.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import os
import re
import signal
import threading
import time
import traceback
import warnings

import numpy as np

# The data model, re-exported: the grader, the harness and the course's tests import it from here.
from .model import WIDTH, Question, QuestionResult, Test, TestFailure, TestOutcome, _fmt, wrap

__all__ = [
    "Question",
    "QuestionResult",
    "Test",
    "TestFailure",
    "TestOutcome",
    "as_student_kernel",
    "check",
    "compare_arrays",
    "get_question",
    "questions_of",
    "run_tests",
    "summary",
]

# --------------------------------------------------------------------------- lookup
#: How a questions module names its problem set, read from its source without importing it.
_PROBLEM_SET_LINE = re.compile(r"""^PROBLEM_SET\s*=\s*["'](ps\d+)["']""", re.MULTILINE)


def declared_problem_sets() -> dict:
    """``unit -> problem set id`` from each unit's ``questions.py`` source (None where no literal
    ``PROBLEM_SET = "psN"`` line is found): no unit is imported, so looking up one problem set neither
    imports nor compiles the others' code (the HAC and ICA CPU code is compiled with Numba's file cache)."""
    from .. import UNITS

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found = {}
    for unit in UNITS:
        try:
            with open(os.path.join(package, unit, "questions.py"), encoding="utf-8") as f:
                match = _PROBLEM_SET_LINE.search(f.read())
        except OSError:
            continue
        found[unit] = match.group(1) if match else None
    return found


def _problem_set_modules(problem_set: str | None = None):
    """The units' questions modules; with ``problem_set``, only the one declaring it (and any whose
    source does not say)."""
    from .. import UNITS

    declared = declared_problem_sets() if problem_set is not None else {}
    for unit in UNITS:
        if problem_set is not None and declared.get(unit, problem_set) not in (None, problem_set):
            continue
        try:
            module = importlib.import_module(f"course_lib.{unit}.questions")
        except ModuleNotFoundError as exc:
            if exc.name != f"course_lib.{unit}.questions":
                raise
            continue
        yield module


def questions_of(problem_set: str) -> list:
    """The questions of a problem set (``"ps1"``), in order."""
    for module in _problem_set_modules(problem_set):
        if module.PROBLEM_SET == problem_set:
            return list(module.QUESTIONS)
    known = sorted(m.PROBLEM_SET for m in _problem_set_modules())
    raise ValueError(f"unknown problem set {problem_set!r}; known: {known}")


def get_question(question_id: str) -> Question:
    """The question with this id (``"ps1.q1"``)."""
    problem_set = question_id.split(".", 1)[0]
    for question in questions_of(problem_set):
        if question.id == question_id:
            return question
    ids = [q.id for q in questions_of(problem_set)]
    raise ValueError(f"unknown question {question_id!r}; {problem_set} has {ids}")


# --------------------------------------------------------------------------- running
VISIBLE_SEED = 12345
HIDDEN_FAILURE = "wrong result on a hidden test (its inputs are not shown): try larger and odder sizes"
HIDDEN_PART_FAILURE = ("not graded: a part of your answer this test uses is missing or not in the form the question "
                       "asks (the visible tests name it)")


def run_tests(question: Question, answer, *, hidden: bool = False, seed: int | None = None,
              options: dict | None = None, time_limit: float | None = None) -> QuestionResult:
    """Run a question's tests on an answer and score it.

    Parameters
    ----------
    question : Question
    answer : object
        What the student passed to :func:`check`.
    hidden : bool
        Also run the hidden tests (grading time).
    seed : int, optional
        Seed of the hidden tests' inputs; visible tests always use ``VISIBLE_SEED``.
    options : dict, optional
        Keyword arguments for ``question.prepare``.
    time_limit : float, optional
        Seconds allowed to each test (needs POSIX signals and the main thread; ignored
        elsewhere). A test that runs out fails, and the question's remaining tests are not run.

    Returns
    -------
    QuestionResult
    """
    result = QuestionResult(question.id, question.title, 0.0, question.points, tolerance=question.tolerance)
    tests = question.visible() + (question.hidden() if hidden else [])
    try:
        prepared = question.prepare(answer, **(options or {})) if question.prepare else answer
        info = question.describe(prepared) if question.describe else {}
    except TestFailure as exc:
        result.error = str(exc)
        return result
    except Exception as exc:  # the student's code raised while preparing the answer
        result.error = _student_error(exc)
        return result
    hidden_seed = seed if seed is not None else int.from_bytes(os.urandom(4), "little")
    timed_out = ""  # why the remaining tests are not run: a timeout, or a kernel that hung
    for test in tests:
        rng = test_rng(test, hidden_seed)
        start = time.perf_counter()
        if timed_out:
            result.outcomes.append(failed_outcome(test, f"not run: {timed_out}", reveals_nothing=True))
            continue
        try:
            # Results are judged by their values: floating-point warnings of a wrong kernel
            # (overflow on garbage, say) must not turn into errors under strict warning filters.
            with quiet_floats(), _time_limit(time_limit):
                test.run(prepared, rng, info)
            outcome = TestOutcome(test.name, True, hidden=test.hidden)
        except TestFailure as exc:
            outcome = failed_outcome(test, str(exc), reveals_nothing=getattr(exc, "public", False),
                                     cause=getattr(exc, "cause", None))
        except NotImplementedError:
            outcome = failed_outcome(test, NOT_ANSWERED)
        except _TimeLimit:
            timed_out = (f"timed out after {time_limit:g} s (an infinite loop or a deadlock?); if the notebook "
                         "stays busy, restart its kernel")
            outcome = failed_outcome(test, timed_out, reveals_nothing=True, hint=False)
        except Exception as exc:
            outcome = failed_outcome(test, _student_error(exc), exception=type(exc).__name__)
            if type(exc).__name__ == HUNG:
                timed_out = HUNG_REASON
        outcome.seconds = time.perf_counter() - start
        result.outcomes.append(outcome)
    score(question, result, len(tests))
    return result


#: The simulator's error for a launch in which no block makes progress (:class:`course_lib.sim.HangError`).
HUNG = "HangError"
#: Why a question's tests after one whose kernel hung are not run: on a GPU that kernel never returns, the
#: grader's time limit stops its process and the question's remaining tests do not run, so the simulator's
#: graders do the same (the same score wherever the kernel runs, and no second wait for the same hang).
HUNG_REASON = ("the kernel hung in an earlier test of this question (HangError: no thread of any block exited or "
               "passed a barrier); on a GPU it would never return, and the grader's time limit would stop it")


NOT_ANSWERED = "not answered yet (NotImplementedError)"
#: Seconds each visible test may take in :func:`check` before it is stopped.
CHECK_TIME_LIMIT = 120.0


class _TimeLimit(BaseException):
    """Raised in the main thread when a test runs out of time (a BaseException: student code
    catching ``Exception`` must not swallow it)."""


@contextlib.contextmanager
def _time_limit(seconds: float | None):
    """Raise :class:`_TimeLimit` in this thread after ``seconds``, where POSIX timers allow it.

    A timer already running (pytest-timeout's, say) is put back afterwards with its remaining time.
    """
    if not (seconds and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()):
        yield
        return
    other_remaining, other_interval = signal.getitimer(signal.ITIMER_REAL)
    if other_remaining and other_remaining <= seconds:
        yield  # the other timer fires first
        return

    def expire(signum, frame):
        raise _TimeLimit()

    previous = signal.signal(signal.SIGALRM, expire)
    start = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if other_remaining:
            signal.setitimer(signal.ITIMER_REAL, max(other_remaining - (time.monotonic() - start), 1e-3),
                             other_interval)


def test_rng(test: Test, hidden_seed: int) -> np.random.Generator:
    """The generator a test draws its inputs from: fixed for visible tests, the grading seed for hidden ones."""
    return np.random.default_rng(hidden_seed if test.hidden else VISIBLE_SEED)


@contextlib.contextmanager
def quiet_floats():
    """Floating-point warnings (overflow on a wrong kernel's garbage) are not errors while testing."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


#: The last line of a failure message naming its most likely cause (see :func:`cause_of`).
CAUSE_PREFIX = "Likely cause: "
#: Causes shown in words rather than by their id (``Likely cause: the form of your answer``).
CAUSE_WORDS = {"answer": "the form of your answer",
               "library": "the course's own code in your answer (not your work: the question counts at most half)"}
#: The cause line of a failure due to one part of a dict answer (missing, or not in the asked form).
PART_WORDS = "the part `{key}` of your answer"
_PART = re.compile(r"the part `[^`]+` of your answer")
#: The cause line of a failure due to one part of a dict answer that uses the course's own code.
LIBRARY_PART_WORDS = "the part `{key}` of your answer, which uses the course's own code (the question counts at most half)"
_LIBRARY_PART = re.compile(r"the part `[^`]+` of your answer, which uses the course's own code \(the question "
                           r"counts at most half\)")


def cause_of(message: str, exception: str | None = None) -> str | None:
    """The cause a failure names on its last line (``Likely cause: sign``), or ``"bounds"`` for an IndexError.

    The cause travels inside the message so that it survives the trip from the grader's
    judgement (or the student's process) to the feedback.
    """
    last = message.rstrip().rsplit("\n", 1)[-1]
    if last.startswith(CAUSE_PREFIX):
        named = last[len(CAUSE_PREFIX):]
        words = {w: c for c, w in CAUSE_WORDS.items()}
        if named in words:
            return words[named]
        if _PART.fullmatch(named):
            return "answer"
        if _LIBRARY_PART.fullmatch(named):
            return "library"
        return named.split(" ", 1)[0].rstrip(".:")
    if exception == "IndexError":
        return "bounds"
    return None


def failed_outcome(test: Test, message: str, *, exception: str | None = None,
                   reveals_nothing: bool = False, hint: bool = True, cause: str | None = None) -> TestOutcome:
    """The outcome of a failed test; a hidden test's message never reveals its inputs or expected outputs.

    Parameters
    ----------
    message : str
        What went wrong (shown as is for a visible test).
    exception : str, optional
        Name of the exception the student's code raised, if that is the failure.
    reveals_nothing : bool
        The message says nothing about the test's inputs (a timeout, a crash): kept for hidden tests too.
    hint : bool
        Add the test's hint for the failure's likely cause (not after a timeout or a crash, where it
        would mislead; never for a hidden test, which shows only its name and result).
    cause : str, optional
        The likely cause, when the message does not name it on its last line.
    """
    cause = cause or cause_of(message, exception)
    last = message.rstrip().rsplit("\n", 1)[-1]
    if test.hidden and not reveals_nothing and last.startswith(CAUSE_PREFIX) and (
            _PART.fullmatch(last[len(CAUSE_PREFIX):]) or _LIBRARY_PART.fullmatch(last[len(CAUSE_PREFIX):])):
        # A part of the answer missing or malformed: a fixed text (the message could come from the
        # student's process and carry anything), pointing to the visible tests that name the part.
        message = HIDDEN_PART_FAILURE
    elif test.hidden and not reveals_nothing and message != NOT_ANSWERED:
        # Only a built-in exception's name: a class made by the student's code could carry
        # the hidden inputs in its name.
        builtin = isinstance(getattr(builtins, exception or "", None), type)
        message = (f"{exception} raised" if builtin else "an exception was raised") if exception else HIDDEN_FAILURE
    advice = test.hint_for(cause)
    if (hint and advice and not test.hidden and message != NOT_ANSWERED and not message.startswith("not run")
            and "\nHint: " not in message):
        message += f"\nHint: {advice}"
    return TestOutcome(test.name, False, wrap(message), hidden=test.hidden, library=cause == "library")


def score(question: Question, result: QuestionResult, n_tests: int) -> QuestionResult:
    """Points of a result: the declared points of the tests passed, scaled to the question's points.

    Only the tests that ran count (``check`` runs the visible ones): passing all of them gives the
    question's points. Tests without declared points share the question's points equally. A failed
    technique test caps the result at ``question.technique_cap`` of the points, and so does an answer
    that uses the course's own code (a failure whose cause is ``"library"``): not the student's work.
    """
    tests = {t.name: t for t in question.tests}
    declared = bool(question.tests) and all(t.points is not None for t in question.tests)
    for o in result.outcomes:
        test = tests.get(o.name)
        o.max_points = float(test.points) if declared and test is not None else question.points / max(n_tests, 1)
        o.points = o.max_points if o.passed else 0.0
        o.technique = bool(test is not None and test.technique)
    available = sum(o.max_points for o in result.outcomes)
    result.available, result.earned = available, sum(o.points for o in result.outcomes)
    if not n_tests or result.error or available <= 0:
        result.points = 0.0
        return result
    points = question.points * sum(o.points for o in result.outcomes) / available
    cap = question.technique_cap * question.points
    result.capped = points > cap and any((o.technique or o.library) and not o.passed for o in result.outcomes)
    if result.capped:
        points = cap
    result.points = round(points, 2)
    return result


def _student_error(exc: BaseException) -> str:
    """The exception and the innermost frame that is not library code."""
    frames = traceback.extract_tb(exc.__traceback__)
    own = os.path.dirname(os.path.dirname(__file__))
    user = [f for f in frames if not f.filename.startswith(own) and "site-packages" not in f.filename]
    where = f" (line {user[-1].lineno}: {user[-1].line})" if user and user[-1].line else ""
    return f"{type(exc).__name__}: {exc}{where}"


_session_results: dict = {}


def check(question_id: str, answer, **options) -> QuestionResult:
    """Run the visible tests of a question on your answer and show the feedback.

    Parameters
    ----------
    question_id : str
        e.g. ``"ps1.q1"``.
    answer : object
        Your kernel, function or value, as the question asks.
    **options
        Extra information the question needs (e.g. ``tile=TILE``).

    Returns
    -------
    QuestionResult
        Displayed in the notebook; ``.points``, ``.passed`` and ``.outcomes`` hold the details.
        Under nbgrader's autograder (``NBGRADER_EXECUTION`` set), a result that is not fully
        correct also raises AssertionError so that nbgrader scores the cell 0.
    """
    question = get_question(question_id)
    result = run_tests(question, answer, options=options, time_limit=CHECK_TIME_LIMIT)
    _session_results[question_id] = result
    if os.environ.get("NBGRADER_EXECUTION") and not result.passed:
        raise AssertionError(str(result))
    return result


def summary(problem_set: str) -> str:
    """Total of the visible checks run so far in this session for a problem set."""
    questions = questions_of(problem_set)
    lines, total, maximum = [], 0.0, 0.0
    for q in questions:
        r = _session_results.get(q.id)
        got = r.points if r else 0.0
        total += got
        maximum += q.points
        lines.append(f"{q.id}: {_fmt(got)}/{_fmt(q.points)}" + ("" if r else " (not checked)"))
    lines.append(f"{problem_set} total: {_fmt(total)}/{_fmt(maximum)}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- comparisons
def compare_arrays(got, expected, *, rtol: float, atol: float = 0.0, name: str = "result"):
    """Raise :class:`TestFailure` unless ``got`` matches ``expected`` to tolerance.

    The tolerance is ``atol + rtol * max|expected|`` element-wise (stated in the
    message), and the message names the worst element.
    """
    got = np.asarray(got)
    expected = np.asarray(expected)
    if got.shape != expected.shape:
        raise TestFailure(f"{name} has shape {got.shape}, expected {expected.shape}")
    if expected.size == 0:
        return
    if not np.all(np.isfinite(got)):
        where = tuple(int(i) for i in np.argwhere(~np.isfinite(got))[0])
        raise TestFailure(f"{name} contains NaN or infinity (first at index {where})")
    tol = atol + rtol * float(np.max(np.abs(expected)))
    err = np.abs(got.astype(np.float64) - expected.astype(np.float64))
    worst = np.unravel_index(int(np.argmax(err)), err.shape)
    if err[worst] > tol:
        bad = int(np.sum(err > tol))
        raise TestFailure(
            f"{name}: {bad} of {err.size} values are wrong; max error {err[worst]:.3g} at index "
            f"{tuple(int(i) for i in worst)} (got {got[worst]:.6g}, expected {expected[worst]:.6g}); "
            f"tolerance {tol:.3g} = {atol:g} + {rtol:g} x max|expected|"
        )


def as_student_kernel(kernel, what: str = "kernel"):
    """Check that an answer is a ``@cuda.jit`` kernel written by the student.

    Raises
    ------
    TestFailure
        If it is not a CUDA kernel, or it is one of the course's reference kernels
        (submitting the library's own kernel earns nothing).
    """
    from ..registry import all_kernels

    pyfunc = getattr(kernel, "py_func", None)
    if pyfunc is None or not hasattr(kernel, "__getitem__"):
        raise TestFailure(f"the {what} must be a @cuda.jit kernel, got {type(kernel).__name__}")
    reference_code = {spec.get_pyfunc().__code__ for spec in all_kernels()}
    if pyfunc.__code__ in reference_code:
        raise TestFailure(f"this {what} is the course's own reference kernel; write your own")
    return kernel
