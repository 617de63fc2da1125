"""The class report: what a class got in one problem set, as one self-contained HTML file.

``python -m course_lib.grading report GRADES.csv --out ps1_report.html`` reads the grades CSV that
``grade`` wrote and, when it is there, the tests CSV beside it (:mod:`~course_lib.grading.results.details`), and
writes one HTML file, its figures embedded as PNG (base64 ``data:`` URIs), that any browser opens
without a server or a network:

1. totals: students, mean and median, and the distribution of the problem set's total;
2. points per question: a histogram of each question's points across the class;
3. the tests failed most often, with their failures grouped by reason (the likely cause a failure
   names, or its first line with the numbers taken out), each group's count and one example;
4. technique tests: each student's measured feature (global loads per interaction, atomics per
   element, ...) against the range the expected technique gives, across the class (a strip plot over
   a box plot; a grey bar behind each point is that student's allowed range, since hidden inputs
   differ per student);
   then the technique census (:mod:`.census`): per question, the share of students meeting each
   technique feature, the wrong techniques recognised from the missed features, with their counts,
   each hidden test's failures, and the results per configuration drawn (the tests CSV's ``config``:
   sizes, shapes, parameters), most failed first;
5. students whose grading hit an error: a crash, a timeout, too much memory, a refusal (a notebook
   that changed the grading machinery), a notebook that did not run; unanswered questions are only
   counted.

Sections 3 and 4 need the tests CSV (grades CSVs written before it existed give a report of sections
1, 2 and 5, and section 3 from the grades CSV's reasons). All text from students is escaped.
"""

from __future__ import annotations

import base64
import csv
import datetime as _dt
import html
import io
import re
import statistics
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from ..core import NOT_ANSWERED
from ..results.details import read_outcomes, outcomes_path
from .census import census_html
from .gradebook import read_class
from ..results.report import write_atomic

__all__ = ["ERROR_KINDS", "build_report", "error_kind", "reason_group", "write_report"]

#: Kinds of grading errors, in the order the report lists them, and a pattern of their reasons.
ERROR_KINDS = (
    ("refused", re.compile(r"refused for tampering")),
    ("timeout", re.compile(r"timed out after")),
    ("memory", re.compile(r"used more than \d+ MB of memory|output too large")),
    ("crash", re.compile(r"process crashed|process exited|broke the grading protocol")),
    ("internal", re.compile(r"internal error")),
    ("not a notebook", re.compile(r"not a notebook|symbolic link|not a regular file|larger than|not valid JSON"
                                  r"|cannot be read|not UTF-8")),
)
#: The first line of a reason, numbers taken out, is the group of a failure that names no cause.
_NUMBER = re.compile(r"[-+]?\d+(\.\d+)?([eE][-+]?\d+)?")


def error_kind(reason: str) -> str | None:
    """The kind of grading error a reason reports (``"timeout"``...), ``"notebook error"`` for another
    (the notebook raised, a function is missing), None when the question was only not answered."""
    if not reason or reason.startswith(NOT_ANSWERED) or reason == "no answer":
        return None
    for kind, pattern in ERROR_KINDS:
        if pattern.search(reason):
            return kind
    return "notebook error"


def reason_group(message: str, cause: str = "") -> str:
    """What failures are grouped by: ``likely cause: <cause>`` when the failure names one, else its
    message up to the hint, numbers replaced by ``#`` (so that "3 of 100 values" and "5 of 70 values" meet)."""
    if cause:
        return f"likely cause: {cause}"
    text = re.split(r"\s(?:Likely cause: |Hint: )", message or "failed", maxsplit=1)[0].strip() or "failed"
    return _NUMBER.sub("#", text)[:160]


# --------------------------------------------------------------------------- figures
def _png(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _figure(width: float, height: float):
    from matplotlib.figure import Figure  # no pyplot: no global state, no display needed

    return Figure(figsize=(width, height))


def _histogram(ax, values, maximum: float, title: str) -> None:
    # Bins centred on the multiples of a step that fits the points actually given (halves, quarters...).
    step = 1.0 if maximum > 20 else 0.5 if all(abs(v * 2 - round(v * 2)) < 1e-9 for v in values) else 0.25
    if maximum > 40:
        step = maximum / 20
    edges = np.arange(-step / 2, maximum + step, step)
    ax.hist(values, bins=edges, color="#4c72b0", edgecolor="white")
    ax.set_xlim(-step, maximum + step)
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("points")
    ax.set_ylabel("students")


def _totals_figure(totals, maximum, problem_set):
    fig = _figure(6, 3)
    _histogram(fig.add_subplot(), totals, maximum, f"{problem_set}: total points (of {maximum:g})")
    return _png(fig)


def _questions_figure(book, questions):
    cols = min(len(questions), 3)
    rows = -(-len(questions) // cols)
    fig = _figure(4 * cols, 3 * rows)
    for i, q in enumerate(questions):
        values = [book.points[s, q] for s in book.students if (s, q) in book.points]
        _histogram(fig.add_subplot(rows, cols, i + 1), values, book.max_points[q], f"{q} (of {book.max_points[q]:g})")
    fig.tight_layout()
    return _png(fig)


def _technique_figure(series):
    """One panel per technique test: each student's measurement (green inside its range, red outside)
    over a box plot, the student's range a grey bar behind the point."""
    fig = _figure(4.2 * len(series), 3.6)
    rng = np.random.default_rng(0)  # the jitter only spreads the points sideways
    for i, ((question, test), points) in enumerate(series.items()):
        ax = fig.add_subplot(1, len(series), i + 1)
        measured = np.array([p["measured"] for p in points])
        low, high = np.array([p["low"] for p in points]), np.array([p["high"] for p in points])
        x = 1 + rng.uniform(-0.18, 0.18, size=len(points))
        ax.boxplot(measured, widths=0.5, showfliers=False)
        ax.vlines(x, low, high, color="#bbbbbb", linewidth=3, zorder=1)
        inside = (measured >= low) & (measured <= high)
        ax.scatter(x[inside], measured[inside], color="#1a7f37", s=18, zorder=3, label="within the range")
        ax.scatter(x[~inside], measured[~inside], color="#cf222e", s=18, marker="x", zorder=3, label="outside")
        ax.set_xticks([1], [question])
        ax.set_title("\n".join(_wrap(test, 40)), fontsize=9)
        ax.set_ylabel(points[0]["unit"] or "measured")
        ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return _png(fig)


def _wrap(text: str, width: int) -> list:
    import textwrap

    return textwrap.wrap(text, width) or [text]


# --------------------------------------------------------------------------- reading
def _grade_rows(path: Path) -> list:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _float(text: str):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def _most_failed(test_rows, grade_rows, limit: int) -> list:
    """``[(question, test, hidden, technique, failed, ran, [(group, count, example)])]``, most failed first."""
    failed, ran, flags, groups = Counter(), Counter(), {}, defaultdict(Counter)
    examples = {}
    if test_rows:
        for row in test_rows:
            key = (row["question"], row["test"])
            ran[key] += 1
            flags[key] = (row["hidden"] == "1", row["technique"] == "1")
            if row["passed"] != "1":
                failed[key] += 1
                group = reason_group(row["message"], row["cause"])
                groups[key][group] += 1
                examples.setdefault((key, group), row["message"].split(" Hint: ", 1)[0])
    else:  # an older grades CSV: its reasons name the first failed test of each question
        for row in grade_rows:
            if row["status"] in ("failed", "partial") and ": " in row["reason"]:
                test, message = row["reason"].split(": ", 1)
                key = (row["question"], test)
                failed[key] += 1
                ran[key] = ran[key] + 1
                flags[key] = (False, False)
                group = reason_group(message)
                groups[key][group] += 1
                examples.setdefault((key, group), message)
    order = sorted(failed, key=lambda k: (-failed[k], k))[:limit]
    return [(q, t, *flags[q, t], failed[q, t], ran[q, t],
             [(g, n, examples[(q, t), g]) for g, n in groups[q, t].most_common(5)]) for q, t in order]


def _technique_series(test_rows) -> dict:
    series = defaultdict(list)
    for row in test_rows:
        if row["technique"] != "1":
            continue
        values = [_float(row[k]) for k in ("measured", "low", "high")]
        if None in values:
            continue
        series[row["question"], row["test"]].append({"student": row["student"], "measured": values[0],
                                                     "low": values[1], "high": values[2], "unit": row["unit"]})
    return dict(sorted(series.items()))


def _errors(grade_rows, test_rows) -> tuple:
    """``[(student, question, kind, reason)]`` of grading errors, and the number of unanswered questions."""
    errors, unanswered, seen = [], 0, set()
    for row in grade_rows:
        if row["status"] != "error":
            continue
        kind = error_kind(row["reason"])
        if kind is None:
            unanswered += 1
            continue
        errors.append((row["student"], row["question"], kind, row["reason"]))
        seen.add((row["student"], row["question"]))
    for row in test_rows:  # a worker fault in the middle of a question: the question is graded, the test is not
        if row["passed"] == "1" or (row["student"], row["question"]) in seen:
            continue
        kind = error_kind(row["message"])
        if kind not in (None, "notebook error") and not row["message"].startswith("not run"):
            errors.append((row["student"], row["question"], kind, f"{row['test']}: {row['message']}"))
            seen.add((row["student"], row["question"]))
    order = {kind: i for i, (kind, _) in enumerate(ERROR_KINDS)}
    return sorted(errors, key=lambda e: (order.get(e[2], len(order)), e[0], e[1])), unanswered


# --------------------------------------------------------------------------- the page
_STYLE = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#1f2328}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #d0d7de;padding:4px 8px;text-align:left;
vertical-align:top}th{background:#f6f8fa}img{max-width:100%;display:block;margin:1em 0}
.num{text-align:right}.muted{color:#57606a}code{font-size:90%}"""


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def build_report(grades, tests=None, *, top: int = 10) -> str:
    """The report's HTML (see the module docstring).

    Parameters
    ----------
    grades : path
        A grades CSV of one problem set.
    tests : path, optional
        Its tests CSV (default: the one beside it, when there is one).
    top : int
        How many of the most failed tests to show.

    Raises
    ------
    ValueError
        A bad grades or tests CSV (see :func:`~course_lib.grading.reporting.gradebook.read_class`), or one
        that holds several problem sets.
    """
    grades = Path(grades)
    book = read_class([grades])
    if len(book.problem_sets) != 1:
        raise ValueError(f"{grades}: a report covers one problem set; this file holds {book.problem_sets}")
    (problem_set,) = book.problem_sets
    questions = book.questions(problem_set)
    grade_rows = _grade_rows(grades)
    if tests is not None and not Path(tests).is_file():
        raise ValueError(f"{tests}: no such file")
    tests = Path(tests) if tests is not None else outcomes_path(grades)
    test_rows = read_outcomes(tests)  # [] when the default one is absent (a grades CSV from before it existed)
    students = book.students
    totals = [sum(book.points.get((s, q), 0.0) for q in questions) for s in students]
    maximum = sum(book.max_points[q] for q in questions)

    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{_e(problem_set)}: class report"
             f"</title><style>{_STYLE}</style></head><body>",
             f"<h1>{_e(problem_set)}: class report</h1>",
             f"<p class='muted'>From <code>{_e(grades.name)}</code>"
             + (f" and <code>{_e(tests.name)}</code>" if test_rows else " (no tests CSV: sections on tests are "
                "drawn from the grades CSV's reasons, and technique measurements are not shown)")
             + f", written {_dt.datetime.now().strftime('%Y-%m-%d %H:%M')}.</p>"]

    # 1. totals
    parts.append("<h2 id='totals'>Totals</h2>")
    full = sum(1 for t in totals if abs(t - maximum) < 1e-9)
    parts.append(f"<p>{len(students)} students; mean {statistics.fmean(totals):.2f}, median "
                 f"{statistics.median(totals):g} of {maximum:g} points; {full} with full marks, "
                 f"{sum(1 for t in totals if t == 0)} with 0.</p>")
    parts.append(f"<img alt='distribution of the total points' src='data:image/png;base64,"
                 f"{_totals_figure(totals, maximum, problem_set)}'>")

    # 2. points per question
    parts.append("<h2 id='questions'>Points per question</h2><table><tr><th>question</th><th>points</th>"
                 "<th>mean</th><th>full marks</th><th>partial</th><th>0</th></tr>")
    for q in questions:
        values = [book.points[s, q] for s in students if (s, q) in book.points]
        full_q = sum(1 for v in values if abs(v - book.max_points[q]) < 1e-9)
        zero = sum(1 for v in values if v == 0)
        parts.append(f"<tr><td>{_e(q)}</td><td class='num'>{book.max_points[q]:g}</td><td class='num'>"
                     f"{statistics.fmean(values):.2f}</td><td class='num'>{full_q}</td><td class='num'>"
                     f"{len(values) - full_q - zero}</td><td class='num'>{zero}</td></tr>")
    parts.append("</table>")
    parts.append(f"<img alt='distribution of the points per question' src='data:image/png;base64,"
                 f"{_questions_figure(book, questions)}'>")

    # 3. most failed tests
    parts.append("<h2 id='failed'>Tests failed most often</h2>")
    failed = _most_failed(test_rows, grade_rows, top)
    if not failed:
        parts.append("<p>No test failed.</p>")
    else:
        parts.append("<table><tr><th>question</th><th>test</th><th>failed</th><th>reasons (count: example)</th></tr>")
        for q, t, hidden, technique, n_failed, n_ran, groups in failed:
            tags = "".join(f" <span class='muted'>({tag})</span>" for tag, on in (("hidden", hidden),
                                                                                 ("technique", technique)) if on)
            reasons = "<br>".join(f"<b>{n}</b> &times; {_e(g)}" + (f"<br><span class='muted'>e.g. {_e(x[:200])}</span>"
                                                                   if x and x != g else "") for g, n, x in groups)
            parts.append(f"<tr><td>{_e(q)}</td><td>{_e(t)}{tags}</td><td class='num'>{n_failed} of {n_ran}</td>"
                         f"<td>{reasons}</td></tr>")
        parts.append("</table>")

    # 4. technique measurements
    parts.append("<h2 id='technique'>Technique tests: measured against the bound</h2>")
    series = _technique_series(test_rows)
    if series:
        parts.append("<table><tr><th>question</th><th>test</th><th>measured</th><th>within the range</th>"
                     "<th>range (first student)</th></tr>")
        for (q, t), points in series.items():
            inside = sum(1 for p in points if p["low"] <= p["measured"] <= p["high"])
            values = [p["measured"] for p in points]
            parts.append(f"<tr><td>{_e(q)}</td><td>{_e(t)}</td><td>{len(points)} students, median "
                         f"{statistics.median(values):.3g} {_e(points[0]['unit'])}</td><td class='num'>{inside} of "
                         f"{len(points)}</td><td>[{points[0]['low']:.3g}, {points[0]['high']:.3g}]</td></tr>")
        parts.append("</table>")
        parts.append(f"<img alt='technique measurements across the class' src='data:image/png;base64,"
                     f"{_technique_figure(series)}'>")
    else:
        parts.append("<p>No technique measurement recorded" + ("" if test_rows else " (no tests CSV)")
                     + ": a measurement exists only where a student's answer ran correctly far enough to be "
                       "profiled.</p>")

    # 4b. technique census: who used the technique, what the others did, which configurations failed
    parts.append(census_html(test_rows))

    # 5. grading errors
    parts.append("<h2 id='errors'>Students whose grading hit an error</h2>")
    errors, unanswered = _errors(grade_rows, test_rows)
    counts = Counter(kind for _, _, kind, _ in errors)
    parts.append(f"<p>{len(errors)} question(s) of {len({e[0] for e in errors})} student(s)"
                 + (": " + ", ".join(f"{n} {k}" for k, n in counts.items()) if counts else "")
                 + f". {unanswered} question(s) not answered (left as released) are not counted as errors.</p>")
    if errors:
        parts.append("<table><tr><th>student</th><th>question</th><th>kind</th><th>reason</th></tr>")
        for student, question, kind, reason in errors:
            parts.append(f"<tr><td>{_e(student)}</td><td>{_e(question)}</td><td>{_e(kind)}</td>"
                         f"<td>{_e(reason[:300])}</td></tr>")
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(grades, out, tests=None, *, top: int = 10) -> Path:
    """Write :func:`build_report`'s HTML to ``out`` atomically; returns ``out``."""
    text = build_report(grades, tests, top=top)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, text)
    return out
