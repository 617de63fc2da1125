"""Grades for a learning platform: the gradebook as Canvas's and Moodle's grade import CSVs.

``python -m course_lib.grading gradebook GRADES.csv... --out canvas.csv --format canvas [--roster export.csv]``
(or ``--format moodle``) writes the gradebook (late penalties applied, :mod:`.deadlines`) in the layout
the platform imports, one column per question (``ps1.q1``), per problem set (``ps1``) and the ``total``:

- **Canvas** (Grades > Import, which reads the layout of Canvas's own gradebook export; documented in
  https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/calculating-final-grades/import-csv-file-carmen-grades
  (the columns an import needs: the student's name or ``ID`` or ``SIS User ID``, ``SIS Login ID``,
  ``Section``, then one column per assignment) and https://ts.vcu.edu/askit/teaching-and-learning/canvas/faculty/grading-faculty/gradebook-action-menu-faculty/
  (the export):
  the columns ``Student, ID, SIS User ID, SIS Login ID, Section`` first, which Canvas matches students
  on (its ``ID``, else the SIS ids), then one column per assignment; a second row whose first cell is
  ``Points Possible`` gives each assignment's maximum, as in Canvas's export. An empty cell is "no grade". The students' names here are their notebooks' names:
  ``--roster`` takes Canvas's exported gradebook CSV and fills those five columns from the row whose
  ``--match`` column (default ``SIS Login ID``) equals the student's name; without a roster, the name
  goes in ``SIS Login ID`` and the other four stay empty. Canvas creates an assignment for each new
  column: keep in the import only the columns meant as assignments (``--columns``).
- **Moodle** (Grades > Import > CSV file, https://docs.moodle.org/311/en/Grade_import): a header row, a
  column identifying the user (``--moodle-id`` names it, default ``Username``; in the import preview,
  "Map from" that column "Map to" username, ID number or email), then the grade columns, each mapped to
  a grade item in the same preview. No maxima row (Moodle would read it as a user): the grade items' maximum
  grades are set in Moodle.

Cells are neutralised against spreadsheet formulas like every CSV the grader writes.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from ..results.report import csv_cell, write_csv

__all__ = ["CANVAS_IDENTITY", "COLUMNS", "FORMATS", "canvas_table", "export", "grade_columns", "moodle_table",
           "read_roster", "write_table"]

#: Layouts of :func:`export`: the course's own gradebook, Canvas's import, Moodle's CSV import.
FORMATS = ("plain", "canvas", "moodle")

#: The columns Canvas's gradebook export starts with and its import matches students on.
CANVAS_IDENTITY = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
#: Which grade columns go to the platform: every question, problem set and the total ("all"), only the
#: problem sets and the total ("totals"), or only the questions ("questions").
COLUMNS = ("all", "totals", "questions")
_QUESTION = re.compile(r"^ps\d+\.q\d+$")
_PROBLEM_SET = re.compile(r"^ps\d+$")


def grade_columns(header: list, columns: str = "all") -> list:
    """Indices of the gradebook's grade columns kept for ``columns`` (see :data:`COLUMNS`)."""
    if columns not in COLUMNS:
        raise ValueError(f"columns must be one of {COLUMNS}, not {columns!r}")
    keep = []
    for i, name in enumerate(header):
        if _QUESTION.match(name):
            wanted = columns in ("all", "questions")
        elif _PROBLEM_SET.match(name) or name == "total":
            wanted = columns in ("all", "totals")
        else:  # the student, days late, penalty, grace days: not grades
            wanted = False
        if wanted:
            keep.append(i)
    return keep


def read_roster(path, match: str = "SIS Login ID") -> dict:
    """``value of the match column -> {Canvas identity column: value}`` from Canvas's gradebook export.

    Raises
    ------
    ValueError
        A missing file or column, or two rows with the same match value.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    reader = csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"), newline=""))
    names = [n.strip() for n in reader.fieldnames or ()]
    if match not in names or "Student" not in names:
        raise ValueError(f"{path}: columns {names[:6]}..., expected Canvas's export with {match!r} and 'Student'")
    roster = {}
    for row in reader:
        row = {k.strip(): (v or "").strip() for k, v in row.items() if k is not None}
        key = row.get(match, "")
        if not key or row.get("Student", "").strip() in ("Points Possible", "Student, Test"):
            continue  # the maxima row and Canvas's test student
        if key in roster:
            raise ValueError(f"{path}:{reader.line_num}: {match} {key!r} appears twice")
        roster[key] = {name: row.get(name, "") for name in CANVAS_IDENTITY}
    return roster


def canvas_table(header: list, rows: list, maxima: list, *, roster=None, columns: str = "all") -> tuple:
    """Canvas's import table from the gradebook's header, student rows and maxima row.

    Parameters
    ----------
    header : list of str
        The gradebook's header (``student`` first).
    rows : list of list of str
        One per student, as the gradebook writes them.
    maxima : list of str
        The ``Points Possible`` row of the gradebook (same columns).
    roster : dict, optional
        :func:`read_roster`'s mapping; students missing from it raise.
    columns : str

    Raises
    ------
    ValueError
        A student not in the roster.
    """
    keep = grade_columns(header, columns)
    if roster is not None:  # the gradebook's names are cells already (a formula-like name neutralised)
        roster = {csv_cell(key): value for key, value in roster.items()}
    out_header = CANVAS_IDENTITY + [header[i] for i in keep]
    out_rows = [["Points Possible", "", "", "", ""] + [maxima[i] for i in keep]]
    missing = []
    for row in rows:
        student = row[0]
        if roster is not None:
            if student not in roster:
                missing.append(student)
                continue
            identity = [roster[student][name] for name in CANVAS_IDENTITY]
        else:
            identity = [student, "", "", student, ""]
        out_rows.append([csv_cell(v) for v in identity] + [row[i] for i in keep])
    if missing:
        raise ValueError(f"{len(missing)} student(s) not in the roster: {', '.join(missing[:5])} (match their "
                         "notebooks' names to a column of Canvas's export with --match)")
    return out_header, out_rows


def moodle_table(header: list, rows: list, *, id_column: str = "Username", columns: str = "all") -> tuple:
    """Moodle's CSV grade import table: the user's identifier, then the grade columns."""
    keep = grade_columns(header, columns)
    return [id_column] + [header[i] for i in keep], [[row[0]] + [row[i] for i in keep] for row in rows]


def write_table(out, header: list, rows: list) -> Path:
    """Write a CSV (UTF-8, comma-separated, one header row) atomically; returns its path."""
    return write_csv(out, header, rows)


def export(paths, out, *, format: str = "plain", missing_as_zero: bool = False, points_possible: bool = False,
           deadlines=None, times=None, policy=None, timezone: str = "UTC", student_column: str = "student",
           time_column: str = "submitted_at", roster=None, match: str = "SIS Login ID", moodle_id: str = "Username",
           columns: str = "all"):
    """Read grades CSVs, apply late penalties, and write the gradebook in a platform's layout.

    Parameters
    ----------
    paths : list of path
        Grades CSVs written by ``grade``.
    out : path
    format : {"plain", "canvas", "moodle"}
        ``plain``: :mod:`course_lib.grading.gradebook`'s layout (with the late columns when deadlines are
        given); ``canvas`` / ``moodle``: see the module docstring.
    missing_as_zero, points_possible : bool
        As for the gradebook (``points_possible`` only for ``plain``: Canvas's layout always has the row).
    deadlines : path, optional
        Deadlines CSV (:func:`.deadlines.read_deadlines`); with it, ``times`` gives each problem set's
        submission times (``{"ps1": folder or CSV}``) and ``policy`` the :class:`.deadlines.LatePolicy`.
    timezone, student_column, time_column
        How times are read (:func:`.deadlines.submission_times`).
    roster, match, moodle_id, columns
        As in :func:`canvas_table`, :func:`read_roster`, :func:`moodle_table`.

    Returns
    -------
    (Gradebook, dict)
        What was read, and the lateness found (``(student, problem set) -> Late``; empty without deadlines).

    Raises
    ------
    ValueError
        A bad input (named), a problem set without submission times, an unknown format.
    """
    from .gradebook import build, read_class
    from . import deadlines as _deadlines

    if format not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, not {format!r}")
    book = read_class(paths)
    header, rows = build(book, missing_as_zero=missing_as_zero, points_possible=True)
    late = {}
    if deadlines is not None:
        due = _deadlines.read_deadlines(deadlines, timezone)
        due = {ps: t for ps, t in due.items() if ps in book.problem_sets}
        times = times or {}
        missing = sorted(set(due) - set(times))
        if missing:
            raise ValueError(f"no submission times for {missing}: give --times PS=FOLDER or PS=FILE.csv for each "
                             "problem set with a deadline")
        found = {ps: _deadlines.submission_times(times[ps], default_zone=timezone, student_column=student_column,
                                                 time_column=time_column) for ps in due}
        late = _deadlines.lateness(found, due, book.students, policy or _deadlines.LatePolicy())
        header, rows = _deadlines.apply(header, rows, book, late)
    maxima, students = rows[0], rows[1:]
    if format == "plain":
        table = (header, rows if points_possible else students)
    elif format == "canvas":
        table = canvas_table(header, students, maxima, columns=columns,
                             roster=read_roster(roster, match) if roster is not None else None)
    else:
        table = moodle_table(header, students, id_column=moodle_id, columns=columns)
    write_table(out, *table)
    return book, late
