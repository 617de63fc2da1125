"""The gradebook: grades CSVs of several problem sets turned into one row per student.

``python -m course_lib.grading gradebook GRADES.csv [GRADES.csv ...] --out gradebook.csv`` reads the
grades CSVs that ``grade`` wrote (one row per student and question) and writes one row per student, in
this column layout (a plain CSV, UTF-8, comma-separated, one header row)::

    student, ps1.q1, ps1.q2, ps1.q3, ps1, ps2.q1, ..., ps2, total

- ``student``: the student's name as in the grades CSVs (the notebook's file name). Name the
  notebooks after the identifier your learning platform matches on (Canvas: SIS Login ID or the
  ``ID`` column; Moodle: username or email; Gradescope: email or SID), then map this column to it
  when importing.
- one column per question (``psN.qM``) with the points earned, then one per problem set (``psN``)
  with its total, problem sets in their natural order (``ps2`` before ``ps10``);
- ``total``: the sum of the problem sets.

A student with no row in a problem set's CSV gets empty cells for its questions, its total and the
overall total (Canvas, Moodle and Gradescope read an empty cell as "no grade", not as 0):
``missing_as_zero=True`` (``--missing-as-zero``) writes 0 instead. ``points_possible=True``
(``--points-possible``) adds, under the header, a row ``Points Possible`` with each column's maximum,
as Canvas's own gradebook export does.

Every input row is validated first; a bad file raises :class:`ValueError` naming the file, the row
(the line number in the file, the header being line 1) and the column.
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..results.report import FIELDS, csv_cell, write_csv

__all__ = ["POINTS_POSSIBLE", "Gradebook", "build", "read_class", "write"]

#: The first cell of the optional row of maxima (Canvas's name for it).
POINTS_POSSIBLE = "Points Possible"
STATUSES = ("passed", "partial", "failed", "error")
_QUESTION_ID = re.compile(r"^(ps\d+)\.(q\d+)$")


def _natural(text: str) -> tuple:
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


@dataclass
class Gradebook:
    """Points per student and question, read from grades CSVs.

    Attributes
    ----------
    points : dict
        ``(student, question_id) -> float``.
    max_points : dict
        ``question_id -> float``.
    sources : dict
        ``(student, question_id) -> "file:line"`` where each value was read (for error messages).
    """

    points: dict = field(default_factory=dict)
    max_points: dict = field(default_factory=dict)
    sources: dict = field(default_factory=dict)

    @property
    def students(self) -> list:
        return sorted({s for s, _ in self.points}, key=_natural)

    @property
    def problem_sets(self) -> list:
        return sorted({q.split(".")[0] for q in self.max_points}, key=_natural)

    def questions(self, problem_set: str) -> list:
        return sorted((q for q in self.max_points if q.split(".")[0] == problem_set), key=_natural)

    def has(self, student: str, problem_set: str) -> bool:
        return any((student, q) in self.points for q in self.questions(problem_set))


def _number(text: str, where: str, column: str) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: column {column!r}: {text!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{where}: column {column!r}: {text!r} is not a finite number")
    return value


def read_class(paths, book: Gradebook | None = None) -> Gradebook:
    """Read grades CSVs (as ``grade`` writes them) into a :class:`Gradebook`.

    Parameters
    ----------
    paths : list of path
        Grades CSVs; several may hold the same problem set (batches of students), but a student's
        question may appear only once in all of them.

    Raises
    ------
    ValueError
        A file that is missing, not UTF-8, without the grades columns, or with a bad row: the message
        names the file, the line and the column.
    """
    book = book or Gradebook()
    paths = [Path(p) for p in paths]
    if not paths:
        raise ValueError("no grades CSV given")
    for path in paths:
        if not path.is_file():
            raise ValueError(f"{path}: no such file")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path}: not UTF-8 text (byte {exc.start})") from None
        reader = csv.DictReader(io.StringIO(text, newline=""))
        if reader.fieldnames != FIELDS:
            raise ValueError(f"{path}: line 1: columns {reader.fieldnames}, expected the grades columns {FIELDS} "
                             "(a file written by `course grading grade`)")
        rows = 0
        for rows, row in enumerate(reader, 1):
            where = f"{path}:{reader.line_num}"
            if None in row:
                raise ValueError(f"{where}: more cells than the {len(FIELDS)} columns {FIELDS}")
            if None in row.values():
                raise ValueError(f"{where}: fewer cells than the {len(FIELDS)} columns {FIELDS}")
            student, question = row["student"], row["question"]
            if not student.strip():
                raise ValueError(f"{where}: column 'student' is empty")
            if not _QUESTION_ID.match(question):
                raise ValueError(f"{where}: column 'question': {question!r} is not a question id like ps1.q2")
            points = _number(row["points"], where, "points")
            maximum = _number(row["max_points"], where, "max_points")
            if maximum < 0:
                raise ValueError(f"{where}: column 'max_points': {maximum:g} is negative")
            if not 0 <= points <= maximum + 1e-9:
                raise ValueError(f"{where}: column 'points': {points:g} is not between 0 and max_points {maximum:g}")
            if row["status"] not in STATUSES:
                raise ValueError(f"{where}: column 'status': {row['status']!r} is not one of {list(STATUSES)}")
            known = book.max_points.setdefault(question, maximum)
            if abs(known - maximum) > 1e-9:
                raise ValueError(f"{where}: column 'max_points': {question} is worth {maximum:g} here but {known:g} "
                                 "in an earlier row (grades of two versions of the problem set?)")
            key = (student, question)
            if key in book.points:
                raise ValueError(f"{where}: {student!r} has {question} already, in {book.sources[key]} (give each "
                                 "student's grades once)")
            book.points[key], book.sources[key] = points, where
        if not rows:
            raise ValueError(f"{path}: no grades (a header and no rows)")
    return book


def _fmt(value: float) -> str:
    return f"{round(value, 4):g}"


def build(book: Gradebook, *, missing_as_zero: bool = False, points_possible: bool = False) -> tuple:
    """The gradebook's header and rows (lists of strings), in the module docstring's layout."""
    header, maxima = ["student"], [POINTS_POSSIBLE]
    for ps in book.problem_sets:
        questions = book.questions(ps)
        header += [*questions, ps]
        maxima += [_fmt(book.max_points[q]) for q in questions] + [_fmt(sum(book.max_points[q] for q in questions))]
    header.append("total")
    maxima.append(_fmt(sum(book.max_points.values())))
    rows = [maxima] if points_possible else []
    missing = "0" if missing_as_zero else ""
    for student in book.students:
        row, total, complete = [csv_cell(student)], 0.0, True
        for ps in book.problem_sets:
            questions = book.questions(ps)
            if not book.has(student, ps):
                row += [missing] * (len(questions) + 1)
                complete = complete and missing_as_zero
                continue
            got = [book.points.get((student, q)) for q in questions]
            row += ["" if g is None else _fmt(g) for g in got]
            subtotal = sum(g for g in got if g is not None)
            row.append(_fmt(subtotal))
            total += subtotal
        row.append(_fmt(total) if complete else "")
        rows.append(row)
    return header, rows


def write(paths, out, *, missing_as_zero: bool = False, points_possible: bool = False) -> Gradebook:
    """Read grades CSVs and write the gradebook CSV ``out`` atomically; returns what was read."""
    book = read_class(paths)
    header, rows = build(book, missing_as_zero=missing_as_zero, points_possible=points_possible)
    write_csv(out, header, rows)
    return book
