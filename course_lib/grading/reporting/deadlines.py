"""Deadlines: late penalties and grace days from the time each submission came in.

``python -m course_lib.grading gradebook GRADES.csv... --out gradebook.csv --deadlines deadlines.csv
--times ps1=submitted/ps1 --times ps2=ps2_times.csv [--late-penalty 10] [--grace-days 3] [--max-late-days 7]``

- **Deadlines** (``--deadlines``): a CSV with the columns ``problem_set`` and ``deadline`` (ISO 8601,
  ``2026-02-13T23:59`` or with an offset ``2026-02-13T23:59-05:00``; a time without an offset is in
  ``--timezone``, UTC by default).
- **Submission times** (``--times PS=WHERE``, once per problem set), from one of:

  * a folder of the notebooks as graded: the time in nbgrader's ``timestamp.txt`` when the notebook's
    folder (or one above it, up to the folder given) holds one (``nbgrader collect`` writes
    ``submitted/<student>/<assignment>/timestamp.txt``, ``2026-02-13 23:59:12.5 UTC``), else the
    notebook file's modification time; students are named as ``grade`` names them;
  * a CSV the instructor gives (an LMS's submissions export): ``--time-column`` (default
    ``submitted_at``) and ``--student-column`` (default ``student``).

- **Policy**: a submission ``h`` hours late is ``ceil(h / 24)`` days late. Each student has
  ``--grace-days`` for the whole term, spent in the order of the deadlines, as many as a late problem
  set needs while they last; each late day not covered costs ``--late-penalty`` percent of the problem
  set's points; past ``--max-late-days`` the problem set earns nothing (and spends no grace days).
  A student with no time recorded is not late.

The gradebook shows, after each problem set's total (then after the penalty), ``psN days late`` and
``psN penalty %``, and at the end ``grace days used``; the question columns keep the points the grader
gave.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import math
import re
import zoneinfo
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Late", "LatePolicy", "apply", "lateness", "parse_time", "parse_times_arguments", "read_deadlines",
           "submission_times"]

#: Zone abbreviations nbgrader timestamps are seen with (its ``timestamp_format`` ends in ``%Z``).
_ABBREVIATIONS = {"UTC": 0, "GMT": 0, "Z": 0, "PST": -8, "PDT": -7, "MST": -7, "MDT": -6, "CST": -6, "CDT": -5,
                  "EST": -5, "EDT": -4, "CET": 1, "CEST": 2, "BST": 1, "IST": 5.5, "JST": 9}
_ZONE_SUFFIX = re.compile(r"^(?P<time>.+?)\s+(?P<zone>[A-Za-z][A-Za-z0-9_+/-]*)$")
_TIMES_ARGUMENT = re.compile(r"^(ps\d+)=(.+)$")


def _zone(name: str):
    if name in _ABBREVIATIONS:
        return _dt.timezone(_dt.timedelta(hours=_ABBREVIATIONS[name]), name)
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name!r}") from None


def parse_time(text: str, default_zone: str = "UTC") -> _dt.datetime:
    """A time as an aware datetime: ISO 8601 (``T`` or a space between date and time), optionally followed
    by a zone name (``UTC``, ``PST``, ``Europe/Paris``); without an offset or a zone, ``default_zone``.

    Raises
    ------
    ValueError
        Not a time.
    """
    text = str(text).strip()
    zone = None
    match = _ZONE_SUFFIX.match(text)
    if match and not re.search(r"\d$", match.group("zone")):
        text, zone = match.group("time"), _zone(match.group("zone"))
    if text.endswith("Z"):
        text, zone = text[:-1], _dt.timezone.utc
    try:
        moment = _dt.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a time (ISO 8601, e.g. 2026-02-13T23:59 or 2026-02-13 23:59:12 UTC)") \
            from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone or _zone(default_zone))
    return moment


def read_deadlines(path, default_zone: str = "UTC") -> dict:
    """``problem set -> deadline`` from a CSV with the columns ``problem_set`` and ``deadline``.

    Raises
    ------
    ValueError
        A missing file or column, or a bad row (named with its line).
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    reader = csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"), newline=""))
    if not {"problem_set", "deadline"} <= set(reader.fieldnames or ()):
        raise ValueError(f"{path}: columns {reader.fieldnames}, expected problem_set and deadline")
    deadlines = {}
    for row in reader:
        where = f"{path}:{reader.line_num}"
        if not re.fullmatch(r"ps\d+", row["problem_set"] or ""):
            raise ValueError(f"{where}: problem_set {row['problem_set']!r} is not a problem set id like ps1")
        try:
            deadlines[row["problem_set"]] = parse_time(row["deadline"], default_zone)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
    return deadlines


def _nbgrader_timestamp(notebook: Path, top: Path):
    folder = notebook.parent
    while True:
        stamp = folder / "timestamp.txt"
        if stamp.is_file():
            return stamp
        if folder == top or top not in folder.parents:
            return None
        folder = folder.parent


def submission_times(where, *, default_zone: str = "UTC", student_column: str = "student",
                     time_column: str = "submitted_at") -> dict:
    """``student -> submission time`` of one problem set (see the module docstring for ``where``).

    Raises
    ------
    ValueError
        A missing path or column, or a time that cannot be read (named with its file and line).
    """
    from ..running.notebooks import expand, student_ids

    where = Path(where)
    if where.is_dir():
        paths = expand([where])
        times = {}
        for path, student in student_ids(paths).items() if paths else ():
            stamp = _nbgrader_timestamp(path, where)
            if stamp is not None:
                try:
                    times[student] = parse_time(stamp.read_text(encoding="utf-8").strip(), default_zone)
                except ValueError as exc:
                    raise ValueError(f"{stamp}: {exc}") from None
            else:
                times[student] = _dt.datetime.fromtimestamp(path.stat().st_mtime, _dt.timezone.utc)
        return times
    if not where.is_file():
        raise ValueError(f"{where}: no such file or folder")
    reader = csv.DictReader(io.StringIO(where.read_text(encoding="utf-8-sig"), newline=""))
    if not {student_column, time_column} <= set(reader.fieldnames or ()):
        raise ValueError(f"{where}: columns {reader.fieldnames}, expected {student_column!r} and {time_column!r}")
    times = {}
    for row in reader:
        if not (row[time_column] or "").strip():
            continue  # not submitted
        try:
            times[row[student_column]] = parse_time(row[time_column], default_zone)
        except ValueError as exc:
            raise ValueError(f"{where}:{reader.line_num}: {exc}") from None
    return times


def parse_times_arguments(arguments) -> dict:
    """``["ps1=DIR", "ps2=FILE.csv"]`` -> ``{"ps1": "DIR", ...}`` (``--times``)."""
    found = {}
    for argument in arguments or ():
        match = _TIMES_ARGUMENT.match(argument)
        if not match:
            raise ValueError(f"--times {argument!r}: expected PS=FOLDER or PS=FILE.csv, e.g. ps1=submitted/ps1")
        found[match.group(1)] = match.group(2)
    return found


@dataclass(frozen=True)
class LatePolicy:
    """How late work is marked down.

    Attributes
    ----------
    penalty_per_day : float
        Percent of the problem set's points per late day not covered by grace days.
    grace_days : int
        Late days each student may use, without penalty, over the whole term.
    max_late_days : int or None
        Beyond this many days late, the problem set earns nothing.
    """

    penalty_per_day: float = 10.0
    grace_days: int = 0
    max_late_days: int | None = None

    def __post_init__(self):
        if not 0 <= self.penalty_per_day <= 100 or self.grace_days < 0 or (
                self.max_late_days is not None and self.max_late_days < 0):
            raise ValueError(f"bad late policy: penalty {self.penalty_per_day}% per day (0 to 100), grace days "
                             f"{self.grace_days} (>= 0), max late days {self.max_late_days} (>= 0)")


@dataclass(frozen=True)
class Late:
    """One student's lateness in one problem set.

    Attributes
    ----------
    days_late : int
        Days after the deadline, a day begun counting as one (0 when on time or not submitted).
    grace_used : int
        Grace days this submission spent (none past the maximum late days).
    penalty : float
        Fraction of the points taken off, in [0, 1].
    """

    days_late: int
    grace_used: int
    penalty: float


def lateness(times: dict, deadlines: dict, students, policy: LatePolicy) -> dict:
    """``(student, problem set) -> Late`` for every student and problem set with a deadline.

    Parameters
    ----------
    times : dict
        ``problem set -> {student: datetime}``.
    deadlines : dict
        ``problem set -> datetime``.
    students : iterable of str
    policy : LatePolicy
    """
    result = {}
    order = sorted(deadlines, key=lambda ps: (deadlines[ps], ps))  # grace days are spent in deadline order
    for student in students:
        left = policy.grace_days
        for ps in order:
            submitted = times.get(ps, {}).get(student)
            late_seconds = (submitted - deadlines[ps]).total_seconds() if submitted is not None else 0.0
            days = max(0, math.ceil(late_seconds / 86400))
            if policy.max_late_days is not None and days > policy.max_late_days:
                result[student, ps] = Late(days, 0, 1.0)
                continue
            used = min(days, left)
            left -= used
            result[student, ps] = Late(days, used, min(1.0, (days - used) * policy.penalty_per_day / 100))
    return result


def _fmt(value: float) -> str:
    return f"{round(value, 4):g}"


def apply(header: list, rows: list, book, late: dict) -> tuple:
    """The gradebook's table (:func:`course_lib.grading.gradebook.build`) with late penalties: each
    problem set's total after its penalty, then its ``days late`` and ``penalty %`` columns; the overall
    total recomputed from the problem sets'; ``grace days used`` at the end. A ``Points Possible`` row
    keeps the maxima (and empty cells under the new columns)."""
    problem_sets = [ps for ps in book.problem_sets if any((s, ps) in late for s in book.students)]
    new_header = []
    for name in header:
        new_header.append(name)
        if name in problem_sets:
            new_header += [f"{name} days late", f"{name} penalty %"]
    new_header.append("grace days used")
    column = {name: i for i, name in enumerate(header)}
    new_rows = []
    for row in rows:
        student = row[0]
        maxima = student not in book.students
        cells, total, complete = [], 0.0, True
        for name, cell in zip(header, row):
            if name in problem_sets and not maxima:
                entry = late.get((student, name))
                if cell != "" and entry is not None:
                    cell = _fmt(float(cell) * (1 - entry.penalty))
                cells.append(cell)
                cells += ["" if entry is None or cell == "" else str(entry.days_late),
                          "" if entry is None or cell == "" else _fmt(100 * entry.penalty)]
            elif name in problem_sets:
                cells += [cell, "", ""]
            else:
                cells.append(cell)
        if not maxima:
            for ps in book.problem_sets:
                value = cells[new_header.index(ps)]
                if value == "":
                    complete = False
                else:
                    total += float(value)
            if row[column["total"]] != "":
                cells[new_header.index("total")] = _fmt(total) if complete else ""
            cells.append(str(sum(late[student, ps].grace_used for ps in problem_sets if (student, ps) in late)))
        else:
            cells.append("")
        new_rows.append(cells)
    return new_header, new_rows
