"""Writing what grading found: the grades CSV and each student's feedback, from the grader's memory.

Every text that reaches a file is cleaned first (:func:`clean_text`: lone surrogates and
control characters become visible escapes), and CSV cells that a spreadsheet would run as
a formula (starting with ``= + - @``, a tab or a carriage return) get a leading apostrophe
(:func:`csv_cell`), so no student's text can break a file or run in the instructor's
spreadsheet. Files are written atomically (:func:`write_atomic`, also used to put back
files a submission changed); :class:`FeedbackFolder` writes every student's feedback again after each student,
so a file changed on disk by anyone else is put back.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import re
import secrets
import zlib
from pathlib import Path

__all__ = ["FIELDS", "FeedbackFolder", "clean_text", "csv_cell", "feedback_markdown", "feedback_name",
           "read_grades", "read_rows", "rows_of", "write_atomic", "write_csv", "write_grades", "write_rows"]

#: Columns of the grades CSV.
FIELDS = ["student", "question", "points", "max_points", "status", "reason"]

_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def clean_text(text, *, newlines: bool = True, controls: bool = True) -> str:
    """``text`` as printable UTF-8: lone surrogates and (unless ``controls=False``) control and
    bidirectional-override characters become ``\\x..``/``\\u....`` escapes; ``newlines=False``
    also turns line breaks and tabs into spaces."""
    text = str(text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if not newlines:
        text = text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ").replace("\t", " ")
    if controls:
        text = _CONTROLS.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
    return text


def csv_cell(text) -> str:
    """A CSV cell a spreadsheet shows as text: cleaned, one line, formulas neutralised."""
    text = clean_text(text, newlines=False)
    return "'" + text if text.lstrip(" ").startswith(_FORMULA_START) else text


def read_rows(path, fields, kind) -> list:
    """Rows of an existing CSV written with the columns ``fields`` (``[]`` when there is none).

    Parameters
    ----------
    path : str or path-like
    fields : list of str
        The columns the file must have, in order.
    kind : str
        What the file holds, for the error (``"grades"``, ``"tests"``).

    Raises
    ------
    ValueError
        The file exists but does not have the columns ``fields``.
    """
    path = Path(path)
    if not path.exists():
        return []
    with open(path, newline="", encoding="utf-8", errors="backslashreplace") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != fields:
            raise ValueError(f"{path} is not a {kind} file (columns {reader.fieldnames}, expected {fields})")
        return list(reader)


def read_grades(path) -> list:
    """Rows of an existing grades CSV (``[]`` when there is none)."""
    return read_rows(path, FIELDS, "grades")


def write_csv(out, header: list, rows: list) -> Path:
    """Write a CSV (UTF-8, comma-separated, one header row) atomically (:func:`write_atomic`), its folder made
    if needed; returns its path."""
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(header)
    writer.writerows(rows)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, text.getvalue())
    return out


def write_atomic(path, data) -> None:
    """Write a file whole or not at all: a new file in the same folder, flushed to disk, renamed over ``path``.

    The temporary file has a random name and is created by this call (``O_EXCL``): a link a submission
    left at a name it could guess would otherwise take the grader's write wherever it points.
    ``data``: bytes, or text written as UTF-8. Raises OSError.
    """
    path = Path(path)
    data = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_rows(path, fields, rows) -> None:
    """Write ``rows`` (dicts) as a CSV of the columns ``fields``, atomically (:func:`write_atomic`)."""
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=fields)
    writer.writeheader()
    writer.writerows(rows)
    write_atomic(path, text.getvalue())


def write_grades(path, rows) -> None:
    """Write the CSV atomically (:func:`write_atomic`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_rows(path, FIELDS, rows)


def rows_of(student: str, results) -> list:
    """The CSV rows of one student's results (cells cleaned and neutralised)."""
    return [{"student": csv_cell(student), "question": csv_cell(r.question_id), "points": f"{r.points:g}",
             "max_points": f"{r.max_points:g}", "status": csv_cell(r.status), "reason": csv_cell(r.reason)[:300]}
            for r in results]


def feedback_markdown(student: str, problem_set: str, results) -> str:
    """A student's feedback: points and visible messages; hidden tests only by name and pass/fail."""
    total, maximum = sum(r.points for r in results), sum(r.max_points for r in results)
    lines = [f"# {problem_set}: feedback for {clean_text(student, newlines=False)}", "",
             f"**Total: {total:g} / {maximum:g} points**", "",
             "Hidden tests draw their inputs when grading; their inputs and expected results are not shown.", ""]
    for r in results:
        lines += [f"## {r.question_id} {clean_text(r.title, newlines=False)}: {r.points:g} / {r.max_points:g} points",
                  ""]
        if r.tolerance:
            lines += [f"Results compared with {clean_text(r.tolerance, newlines=False)}.", ""]
        if r.error:
            lines += ["Not graded:", "", "~~~~", clean_text(r.error).replace("~~~~", "~ ~ ~ ~"), "~~~~", ""]
        for o in r.outcomes:
            worth = f" [{o.points:g}/{o.max_points:g} points]" if getattr(o, "max_points", 0) else ""
            technique = " (technique)" if getattr(o, "technique", False) else ""
            lines.append(f"- {'PASS' if o.passed else 'FAIL'}: {clean_text(o.name, newlines=False)}{technique}{worth}")
            if not o.passed and o.message:
                message = clean_text(o.message).replace("~~~~", "~ ~ ~ ~")
                lines += ["", "  ~~~~", *("  " + line for line in message.splitlines()), "  ~~~~", ""]
        # How the tests' points became the question's (scaling, the technique cap), so that they add up.
        for note in r.arithmetic() if hasattr(r, "arithmetic") else ():
            lines += ["", clean_text(note, newlines=False) + ".", ""]
        lines.append("")
    return "\n".join(lines)


def feedback_name(student: str) -> str:
    """The feedback file's name: the student's name where it is a plain file name (``/`` becomes
    ``__``), else its plain characters and a checksum of the whole name."""
    name = student.replace("/", "__")
    plain = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".") or "_"
    if plain != name:
        plain += f"-{zlib.crc32(student.encode('utf-8', 'backslashreplace')):08x}"
    return plain + ".md"


class FeedbackFolder:
    """The feedback files of a run, kept in memory and (re)written from there.

    Parameters
    ----------
    folder : path
    problem_set : str
    """

    def __init__(self, folder, problem_set: str):
        self.folder, self.problem_set = Path(folder), problem_set
        self.texts: dict = {}

    def add(self, student: str, results) -> None:
        """Record a student's feedback, then write every recorded file that differs on disk."""
        self.texts[feedback_name(student)] = feedback_markdown(student, self.problem_set, results)
        self.flush()

    def flush(self) -> None:
        """Write each recorded file whose content on disk is not what the grader holds."""
        self.folder.mkdir(parents=True, exist_ok=True)
        for name, text in self.texts.items():
            path = self.folder / name
            try:
                if not path.is_symlink() and path.is_file() and path.read_text(encoding="utf-8") == text:
                    continue
            except (OSError, UnicodeDecodeError):
                pass
            write_atomic(path, text)

    def path(self, student: str) -> Path:
        return self.folder / feedback_name(student)
