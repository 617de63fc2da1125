"""The data model of grading: a :class:`Question` and its :class:`Test` steps, a :class:`TestFailure`,
and the :class:`TestOutcome` and :class:`QuestionResult` that record (and show) what a check found.

The three steps of a test and how they are run are described in :mod:`course_lib.grading.core`,
which re-exports every name here.
"""

from __future__ import annotations

import html
from dataclasses import KW_ONLY, dataclass, field
from typing import Callable

__all__ = ["Question", "QuestionResult", "Test", "TestFailure", "TestOutcome", "WIDTH", "wrap"]


class TestFailure(AssertionError):
    """An answer is wrong; the message says how (shown to the student).

    Parameters
    ----------
    *args
        The message.
    public : bool
        The message reveals nothing of a hidden test's inputs or expected outputs (a race
        report naming source lines, say), so it is shown for hidden tests too.
    cause : str, optional
        The most likely cause (``"sign"``, ``"barrier"``, ``"bounds"``, ``"race"``,
        ``"technique"``...): :func:`failed_outcome` then adds the test's hint for that cause
        (see ``Test.hints``) instead of its general hint.
    """

    __test__ = False  # not a pytest test class

    def __init__(self, *args, public: bool = False, cause: str | None = None):
        super().__init__(*args)
        self.public = public
        self.cause = cause


@dataclass(frozen=True)
class Test:
    """One test of a question, in the three steps of the module docstring.

    Attributes
    ----------
    name : str
        Short description shown in feedback (never reveals hidden inputs).
    inputs, produce, judge : callable
        The three steps (see the module docstring); keyword arguments.
    hidden : bool
        Hidden tests run only at grading time, with a seed chosen then.
    hint : str
        Shown after a failure.
    points : float, optional
        Points of this test. Give them for all tests of a question or for none (then the
        question's points are split equally).
    technique : bool
        The test grades the technique the question teaches: when it fails, the question
        scores at most ``Question.technique_cap`` of its points.
    hints : tuple of (str, str)
        ``(cause, hint)`` pairs: the hint shown when a failure names that cause
        (``TestFailure(cause=...)``, or ``"bounds"`` for an IndexError of the student's code).
    hint_key : str
        The id of the question the test belongs to (set by the harness's ``question``): the grader's
        hints for it (:mod:`course_lib.grading.resources`, read when a failure is reported) go over
        ``hint`` and ``hints``.
    """

    __test__ = False

    name: str
    _: KW_ONLY
    inputs: Callable
    produce: Callable
    judge: Callable
    hidden: bool = False
    hint: str = ""
    points: float | None = None
    technique: bool = False
    hints: tuple = ()
    hint_key: str = ""

    def hint_for(self, cause: str | None) -> str:
        """The hint for a failure with this likely cause (the general hint when none is given for it)."""
        hints, hint = dict(self.hints), self.hint
        if self.hint_key:
            from .resources import stored_hints

            stored, general = stored_hints(self.hint_key, self.name)
            hints, hint = {**hints, **stored}, general or hint
        return hints.get(cause, hint) if cause else hint

    def __post_init__(self):
        if self.points is not None and not (isinstance(self.points, (int, float)) and self.points >= 0):
            raise ValueError(f"test {self.name!r}: points must be a non-negative number, got {self.points!r}")
        if not all(callable(step) for step in (self.inputs, self.produce, self.judge)):
            raise ValueError(f"test {self.name!r}: a test needs inputs, produce and judge")

    def run(self, answer, rng, info=None):
        """All three steps in this process (the notebook's :func:`check`); raises :class:`TestFailure`."""
        from .protocol import decode, encode

        data = self.inputs(rng, info or {})
        # The outputs go through the same encoding as between grader processes, so the
        # judge sees plain data here too (no objects with a rigged __eq__, for one).
        self.judge(data, decode(encode(self.produce(answer, data))), info or {})


@dataclass(frozen=True)
class Question:
    """A graded question of a problem set.

    Attributes
    ----------
    id : str
        Stable id, ``"ps<N>.q<M>"``.
    title : str
    points : float
    tests : tuple of Test
    prepare : callable, optional
        ``prepare(answer, **options)`` turns what the student passes to :func:`check`
        into the object the tests receive (for example a kernel and its tile size);
        it raises :class:`TestFailure` for an unusable answer.
    describe : callable, optional
        ``describe(prepared) -> dict`` of plain values the split tests' ``inputs`` and
        ``judge`` need about the answer (e.g. ``{"tile": 16}``); default ``{}``.
        At grading time it comes from the student's process: ``inputs`` must validate it.
    tolerance : str
        How results are compared (e.g. ``"|error| <= 1e-4 x max|a|"``), shown in feedback.
    technique_cap : float
        Fraction of the points a question scores at most when one of its technique tests
        fails (a correct result computed with the wrong technique): one half by default.
    """

    id: str
    title: str
    points: float
    tests: tuple
    prepare: Callable | None = None
    describe: Callable | None = None
    tolerance: str = ""
    technique_cap: float = 0.5

    def __post_init__(self):
        declared = [t.points is not None for t in self.tests]
        if any(declared) and not all(declared):
            missing = [t.name for t in self.tests if t.points is None]
            raise ValueError(f"{self.id}: give points to every test or to none (missing: {missing})")
        if all(declared) and self.tests and abs(sum(t.points for t in self.tests) - self.points) > 1e-9:
            raise ValueError(f"{self.id}: the tests' points add up to {sum(t.points for t in self.tests):g}, "
                             f"not the question's {self.points:g}")
        names = [t.name for t in self.tests]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.id}: two tests share a name ({sorted(n for n in names if names.count(n) > 1)})")

    def visible(self):
        return [t for t in self.tests if not t.hidden]

    def hidden(self):
        return [t for t in self.tests if t.hidden]


@dataclass
class TestOutcome:
    """Result of one test."""

    __test__ = False

    name: str
    passed: bool
    message: str = ""
    hidden: bool = False
    seconds: float = 0.0
    points: float = 0.0
    max_points: float = 0.0
    technique: bool = False
    #: The test failed because the answer uses the course's own code (a model, a library function): like a
    #: failed technique test, it caps the question (see :func:`course_lib.grading.core.score`).
    library: bool = False
    #: What a technique test measured and the range it allows (``{"measured", "low", "high", "unit"}``), if known.
    measurement: dict | None = None
    #: The configuration the test drew (sizes, shapes, parameters of its inputs; see
    #: :func:`course_lib.grading.results.details.configuration_of`), recorded by the grader; never shown
    #: to the student (a hidden test's inputs stay hidden).
    config: str = ""


@dataclass
class QuestionResult:
    """Result of checking (or grading) one question."""

    question_id: str
    title: str
    points: float
    max_points: float
    outcomes: list = field(default_factory=list)
    error: str = ""
    tolerance: str = ""

    capped: bool = False
    #: Points the tests that ran carry (their sum; the question's points when all tests ran) and the
    #: points of the tests passed before scaling and capping: the feedback shows how one became the other.
    available: float = 0.0
    earned: float = 0.0

    @property
    def passed(self) -> bool:
        return not self.error and bool(self.outcomes) and all(o.passed for o in self.outcomes)

    @property
    def status(self) -> str:
        if self.passed:
            return "passed"
        if self.error:
            return "error"
        return "partial" if self.points > 0 else "failed"

    @property
    def reason(self) -> str:
        """One line: the first problem found, or 'all tests passed'."""
        if self.error:
            return self.error.splitlines()[0]
        failed = [o for o in self.outcomes if not o.passed]
        if not failed:
            return "all tests passed"
        # A failed technique test (a race, the wrong method) says more than an earlier wrong value.
        first = next((o for o in failed if o.technique), failed[0])
        return f"{first.name}: {first.message.splitlines()[0] if first.message else 'failed'}"

    def _lines(self) -> list:
        """(kind, text) lines of the feedback block: kind is head, note, pass, fail, message or error."""
        lines = [("head", f"{self.question_id} {self.title}: {_fmt(self.points)}/{_fmt(self.max_points)} points")]
        if self.error:
            lines += [("error", "ERROR " + line) for line in wrap(self.error).splitlines()]
        if self.tolerance:
            lines.extend(("note", line) for line in wrap(f"(results compared with {self.tolerance})").splitlines())
        declared = any(o.max_points for o in self.outcomes)
        for o in self.outcomes:
            mark = "PASS" if o.passed else "FAIL"
            worth = f"  [{_fmt(o.points)}/{_fmt(o.max_points)}]" if declared else ""
            tags = " (technique)" if o.technique else ""
            lines.append(("pass" if o.passed else "fail", f"[{mark}] {o.name}{tags}{worth}"))
            if not o.passed and o.message:
                lines.extend(("message", "       " + line) for line in o.message.splitlines())
        lines.extend(("note", line) for note in self.arithmetic() for line in wrap(note).splitlines())
        return lines

    def arithmetic(self) -> list:
        """Notes that make the points add up: how the tests' points were scaled or capped (none when
        the points shown are simply the sum of the tests' points)."""
        notes = []
        if self.error or not self.outcomes or self.available <= 0:
            return notes
        scaled = self.max_points * self.earned / self.available
        if abs(self.available - self.max_points) > 1e-9:
            notes.append(f"Scaled: the tests above carry {_fmt(self.available)} points; you passed "
                         f"{_fmt(self.earned)} of them, x {_fmt(self.max_points)}/{_fmt(self.available)} = "
                         f"{_fmt(scaled)} of the question's {_fmt(self.max_points)} points"
                         + (f" (the hidden tests, run when the problem set is graded, carry the other "
                            f"{_fmt(self.max_points - self.available)}: graded, the tests' points add up without "
                            "scaling)" if self.available < self.max_points else ""))
        if self.capped:
            notes.append(f"Capped at {_fmt(self.points)} points instead of {_fmt(scaled)}: a technique test failed, "
                         "and a correct result computed without the technique the question teaches earns at most "
                         f"{_fmt(self.points)} of {_fmt(self.max_points)}")
        return notes

    def __str__(self) -> str:
        return "\n".join(text if kind == "head" else "  " + text for kind, text in self._lines())

    def _repr_html_(self) -> str:
        # One block as wide as the output area, left-aligned (JupyterLab right-aligns table cells), lines
        # wrapped at spaces only (never inside a word); long unbreakable lines scroll instead.
        colour = {"passed": "#1a7f37", "partial": "#9a6700"}.get(self.status, "#cf222e")
        styles = {"head": f"font-weight:bold;color:{colour}", "pass": "color:#1a7f37", "fail": "color:#cf222e",
                  "error": "color:#cf222e", "note": "color:#57606a", "message": ""}
        body = "".join(f"<div style='{styles[kind]}'>{html.escape(text if kind == 'head' else '  ' + text)}</div>"
                       for kind, text in self._lines())
        return ("<div class='course-check' style='display:block;width:100%;box-sizing:border-box;text-align:left;"
                "white-space:pre-wrap;word-break:normal;overflow-wrap:normal;overflow-x:auto;"
                "font-family:var(--jp-code-font-family,monospace);font-size:var(--jp-code-font-size,13px);"
                f"line-height:1.4;border-left:4px solid {colour};padding:4px 8px'>{body}</div>")


#: Feedback lines are wrapped at this width (at spaces; a long word is never split).
WIDTH = 100


def wrap(message: str, width: int = WIDTH) -> str:
    """Wrap the prose lines of a message at spaces; indented lines (source code, reports) are kept as they are."""
    import textwrap

    out = []
    for line in message.splitlines() or [""]:
        if len(line) <= width or line.startswith("  "):
            out.append(line)
        else:
            out.extend(textwrap.wrap(line, width, break_long_words=False, break_on_hyphens=False,
                                     subsequent_indent="  "))
    return "\n".join(out)


def _fmt(x: float) -> str:
    return f"{x:g}"
