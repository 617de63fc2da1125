"""The tests CSV: one row per student and test, written by ``grade`` beside the grades CSV.

The grades CSV (:mod:`~course_lib.grading.results.report`) keeps one row per student and question, its
columns unchanged; for the class report (:mod:`~course_lib.grading.reporting.classreport`) the grader also
writes ``<grades>.tests.csv`` (``grades.csv`` -> ``grades.tests.csv``) with one row per student and
test, in these columns (:data:`OUTCOME_FIELDS`):

``student, question, test, hidden, technique, passed, cause, points, max_points, seconds, measured, low,
high, unit, message``

``hidden``, ``technique`` and ``passed`` are ``0`` or ``1``; ``points`` and ``max_points`` are the test's
own (before the question's scaling and cap); ``cause`` is the likely cause a failure names
(``technique``, ``race``, ``bounds``...; empty when it names none); ``measured``, ``low``, ``high`` and
``unit`` are what a technique test measured with the course's profiler and the range the expected technique gives (empty
for other tests, and where the answer did not get that far); ``message`` is the failure's message as the
student's feedback shows it (a hidden test's never reveals its inputs). A question that could not be
run has no test rows: its reason is in the grades CSV. Cells are cleaned and neutralised like the
grades CSV's (:func:`~course_lib.grading.results.report.csv_cell`), and the file is rewritten atomically after
each student. Grades CSVs written before this file existed still work everywhere: the report then
shows what the grades CSV holds.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from .report import csv_cell, read_rows, write_rows

__all__ = ["OUTCOME_FIELDS", "measurement_of", "outcome_rows", "outcomes_path", "read_outcomes", "write_outcomes"]

#: Columns of the tests CSV.
OUTCOME_FIELDS = ["student", "question", "test", "hidden", "technique", "passed", "cause", "points", "max_points",
                  "seconds", "measured", "low", "high", "unit", "message"]


def outcomes_path(grades_path) -> Path:
    """``grades.csv`` -> ``grades.tests.csv`` (same folder)."""
    path = Path(grades_path)
    return path.with_name(f"{path.stem}.tests.csv")


def measurement_of(value) -> dict | None:
    """A technique test's measurement as plain numbers, or None: ``{"measured", "low", "high", "unit"}``.

    The judge returns it (or attaches it to its failure as ``.measurement``); anything that is not
    three finite numbers and a string is ignored.
    """
    if not isinstance(value, dict):
        return None
    try:
        numbers = {k: float(value[k]) for k in ("measured", "low", "high")}
    except (KeyError, TypeError, ValueError):
        return None
    if not all(math.isfinite(v) for v in numbers.values()):
        return None
    return {**numbers, "unit": str(value.get("unit", ""))}


_CAUSE = re.compile(r"^Likely cause: ([\w-]+)", re.MULTILINE)


def _cause(message: str) -> str:
    """The likely cause a failure message names on a line of its own (before the hint added after it)."""
    found = _CAUSE.search(message or "")
    return found.group(1) if found else ""


def _number(x) -> str:
    return "" if x is None else f"{x:.6g}"


def outcome_rows(student: str, results) -> list:
    """The tests CSV rows of one student's :class:`~course_lib.grading.core.QuestionResult` list."""
    rows = []
    for r in results:
        for o in r.outcomes:
            m = measurement_of(getattr(o, "measurement", None)) or {}
            rows.append({
                "student": csv_cell(student), "question": csv_cell(r.question_id), "test": csv_cell(o.name),
                "hidden": str(int(bool(o.hidden))), "technique": str(int(bool(getattr(o, "technique", False)))),
                "passed": str(int(bool(o.passed))), "cause": csv_cell(_cause(o.message) if not o.passed else ""),
                "points": f"{o.points:g}", "max_points": f"{o.max_points:g}", "seconds": f"{o.seconds:.3f}",
                "measured": _number(m.get("measured")), "low": _number(m.get("low")), "high": _number(m.get("high")),
                "unit": csv_cell(m.get("unit", "")), "message": csv_cell(o.message)[:500]})
    return rows


def read_outcomes(path) -> list:
    """Rows of an existing tests CSV (``[]`` when there is none).

    Raises
    ------
    ValueError
        The file exists but does not have the tests CSV's columns.
    """
    return read_rows(path, OUTCOME_FIELDS, "tests")


def write_outcomes(path, rows) -> None:
    """Write the tests CSV atomically."""
    write_rows(path, OUTCOME_FIELDS, rows)
