"""The tests CSV: one row per student and test, written by ``grade`` beside the grades CSV.

The grades CSV (:mod:`~course_lib.grading.results.report`) keeps one row per student and question, its
columns unchanged; for the class report (:mod:`~course_lib.grading.reporting.classreport`) the grader also
writes ``<grades>.tests.csv`` (``grades.csv`` -> ``grades.tests.csv``) with one row per student and
test, in these columns (:data:`OUTCOME_FIELDS`):

``student, question, test, hidden, technique, passed, cause, points, max_points, seconds, measured, low,
high, unit, config, message``

``hidden``, ``technique`` and ``passed`` are ``0`` or ``1``; ``points`` and ``max_points`` are the test's
own (before the question's scaling and cap); ``cause`` is the likely cause a failure names
(``technique``, ``race``, ``bounds``...; empty when it names none); ``measured``, ``low``, ``high`` and
``unit`` are what a technique test measured with the course's profiler and the range the expected technique gives (empty
for other tests, and where the answer did not get that far); ``config`` is the configuration the test
drew for this student (:func:`configuration_of` of its inputs, e.g. ``bodies[54x4], tile=16``; empty
where the inputs could not be drawn or the test did not run); ``message`` is the failure's message as the
student's feedback shows it (a hidden test's never reveals its inputs). A question that could not be
run has no test rows: its reason is in the grades CSV. Cells are cleaned and neutralised like the
grades CSV's (:func:`~course_lib.grading.results.report.csv_cell`), and the file is rewritten atomically after
each student. Grades CSVs written before this file existed still work everywhere: the report then
shows what the grades CSV holds; a tests CSV written before the ``config`` column existed is read with
that column empty (:data:`OLDER_OUTCOME_FIELDS`).
"""

from __future__ import annotations

import math
import numbers
import re
from pathlib import Path

import numpy as np

from .report import csv_cell, read_rows, write_rows

__all__ = ["OLDER_OUTCOME_FIELDS", "OUTCOME_FIELDS", "configuration_of", "measurement_of", "outcome_rows",
           "outcomes_path", "read_outcomes", "write_outcomes"]

#: Columns of the tests CSV.
OUTCOME_FIELDS = ["student", "question", "test", "hidden", "technique", "passed", "cause", "points", "max_points",
                  "seconds", "measured", "low", "high", "unit", "config", "message"]
#: Columns of a tests CSV written before the configuration was recorded (read with ``config`` empty).
OLDER_OUTCOME_FIELDS = [f for f in OUTCOME_FIELDS if f != "config"]
#: The longest configuration recorded (characters): a test with many inputs is cut, with "...".
CONFIG_CHARS = 160


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


def _scalar(value) -> str | None:
    """A number, a flag or a short word as the configuration shows it; None for anything else."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return f"{float(value):.4g}"
    if isinstance(value, str) and len(value) <= 24:
        return value
    return None


def _item(value, depth: int) -> str:
    """A value inside a list: an array's shape, a scalar, a short list's items, else its length."""
    if isinstance(value, np.ndarray):
        return "[" + "x".join(str(n) for n in value.shape) + "]"
    scalar = _scalar(value)
    if scalar is not None:
        return scalar
    if isinstance(value, (list, tuple)):
        if len(value) <= 4 and depth < 2:
            return "(" + ", ".join(_item(v, depth + 1) for v in value) + ")"
        return f"[{len(value)}]"
    if isinstance(value, dict) and depth < 2:
        return "{" + configuration_of(value) + "}"
    return type(value).__name__


def _describe(value) -> str:
    """One input's part of a configuration, after its name: ``[shape]`` of an array (or length of a long
    list), else ``=value``."""
    shown = _item(value, 0)
    return shown if shown.startswith("[") else "=" + shown


def configuration_of(data) -> str:
    """The configuration a test drew, as a short stable text: its sizes, shapes and parameters.

    Parameters
    ----------
    data : dict, list or other
        What the test's ``inputs(rng, info)`` returned (drawn in the grader, never the student's outputs).

    Returns
    -------
    str
        For a dict, ``name[shape]`` per array and ``name=value`` per scalar, in the inputs' order,
        separated by ``", "`` (``bodies[54x4], tile=16``); an array of the same shape as an earlier
        one is left out (a sparse matrix's ``data`` beside its ``indices``). A list of dicts (a test
        drawing several configurations) gives each in parentheses, separated by ``"; "``. Values of
        the arrays are never shown, so equal sizes give equal configurations. At most
        :data:`CONFIG_CHARS` characters; ``""`` for data it cannot describe.
    """
    try:
        if isinstance(data, dict) and set(data) == {"configs"} and isinstance(data["configs"], (list, tuple)):
            data = data["configs"]  # a signature test: one configuration per profiled launch
        if isinstance(data, (list, tuple)) and data and all(isinstance(d, dict) for d in data):
            text = "; ".join(f"({configuration_of(d)})" for d in data)
        elif isinstance(data, dict):
            parts, shapes = [], set()
            for name, value in data.items():
                if isinstance(value, np.ndarray):
                    if value.shape in shapes:
                        continue
                    shapes.add(value.shape)
                parts.append(f"{name}{_describe(value)}")
            text = ", ".join(parts)
        else:
            text = _describe(data).lstrip("=")
    except Exception:  # noqa: BLE001  (a description never fails a test)
        return ""
    return text if len(text) <= CONFIG_CHARS else text[:CONFIG_CHARS - 3] + "..."


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
                "unit": csv_cell(m.get("unit", "")), "config": csv_cell(getattr(o, "config", "") or ""),
                "message": csv_cell(o.message)[:500]})
    return rows


def read_outcomes(path) -> list:
    """Rows of an existing tests CSV (``[]`` when there is none), each with every column of
    :data:`OUTCOME_FIELDS` (``config`` empty in a file written before it was recorded).

    Raises
    ------
    ValueError
        The file exists but has neither the tests CSV's columns nor the older ones.
    """
    try:
        return read_rows(path, OUTCOME_FIELDS, "tests")
    except ValueError as current:
        try:
            rows = read_rows(path, OLDER_OUTCOME_FIELDS, "tests")
        except ValueError:
            raise current from None
    return [{field: row.get(field, "") for field in OUTCOME_FIELDS} for row in rows]


def write_outcomes(path, rows) -> None:
    """Write the tests CSV atomically."""
    write_rows(path, OUTCOME_FIELDS, rows)
