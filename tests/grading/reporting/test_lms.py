"""Grades for Canvas and Moodle: the gradebook in the CSV layouts their grade imports read, checked
against the documented formats (see course_lib.grading.reporting.lms for the sources)."""

import csv

import pytest

from course_lib.cli import main as course_main
from course_lib.grading.reporting.lms import CANVAS_IDENTITY, export, read_roster

from .test_deadlines import write_grades


def read(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def validate_canvas(rows):
    """Canvas's gradebook import layout: the identity columns first, a Points Possible row, a grade per
    assignment column that is empty or a number no more than the column's maximum, each student identified."""
    header, maxima, students = rows[0], rows[1], rows[2:]
    assert header[:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert maxima[0] == "Points Possible" and all(m == "" for m in maxima[1:5])
    assert len(set(header)) == len(header) and all(len(r) == len(header) for r in rows)
    for row in students:
        assert any(row[1:4]), row  # Canvas matches on ID, SIS User ID or SIS Login ID
        for cell, most in zip(row[5:], maxima[5:]):
            assert cell == "" or 0 <= float(cell) <= float(most)


@pytest.fixture
def grades(tmp_path):
    return [write_grades(tmp_path / "ps1.csv", "ps1", {"ana": [6, 4], "ben": [6, 2], "=cmd|x": [0, 0]}),
            write_grades(tmp_path / "ps2.csv", "ps2", {"ana": [10], "ben": [8]})]


def test_canvas_without_a_roster(tmp_path, grades):
    out = tmp_path / "canvas.csv"
    assert course_main(["grading", "gradebook", *map(str, grades), "--out", str(out), "--format", "canvas"]) == 0
    rows = read(out)
    validate_canvas(rows)
    assert rows[0] == CANVAS_IDENTITY + ["ps1.q1", "ps1.q2", "ps1", "ps2.q1", "ps2", "total"]
    assert rows[1] == ["Points Possible", "", "", "", "", "6", "4", "10", "10", "10", "20"]
    by = {r[0]: r for r in rows[2:]}
    assert by["ana"] == ["ana", "", "", "ana", "", "6", "4", "10", "10", "10", "20"]
    assert by["ben"][5:] == ["6", "2", "8", "8", "8", "16"]
    # a student missing from ps2: empty cells, no grade (not 0); the name cannot run as a formula
    assert by["'=cmd|x"][5:] == ["0", "0", "0", "", "", ""]


def test_canvas_with_its_own_export_as_roster(tmp_path, grades):
    # Canvas's export: identity columns, assignments with their ids, read-only scores, the maxima row
    # (indented in Canvas's file) and the test student
    roster = tmp_path / "export.csv"
    roster.write_text('\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,Lab 1 (4411),Current Score\n'
                      '    Points Possible,,,,,5,(read only)\n'
                      '"Lovelace, Ada",1201,u-0007,ana,GPU 101 - A,5,100\n'
                      '"Babbage, Ben",1202,u-0008,ben,GPU 101 - B,4,80\n'
                      '"=cmd, x",1203,u-0009,=cmd|x,GPU 101 - B,,\n'
                      '"Student, Test",1299,,,GPU 101 - A,,\n', encoding="utf-8")
    assert read_roster(roster)["ana"] == {"Student": "Lovelace, Ada", "ID": "1201", "SIS User ID": "u-0007",
                                          "SIS Login ID": "ana", "Section": "GPU 101 - A"}
    out = tmp_path / "canvas.csv"
    export(grades, out, format="canvas", roster=roster, columns="totals")
    rows = read(out)
    validate_canvas(rows)
    assert rows[0] == CANVAS_IDENTITY + ["ps1", "ps2", "total"]
    by_login = {r[3]: r for r in rows[2:]}
    assert by_login["ana"] == ["Lovelace, Ada", "1201", "u-0007", "ana", "GPU 101 - A", "10", "10", "20"]
    assert by_login["'=cmd|x"] == ["'=cmd, x", "1203", "u-0009", "'=cmd|x", "GPU 101 - B", "0", "", ""]
    # a student the roster does not know is refused, by name
    (tmp_path / "small.csv").write_text("Student,ID,SIS User ID,SIS Login ID,Section\nAda,1,,ana,A\n")
    with pytest.raises(ValueError, match=r"2 student\(s\) not in the roster: '=cmd\|x, ben"):
        export(grades, out, format="canvas", roster=tmp_path / "small.csv")
    with pytest.raises(ValueError, match="expected Canvas's export"):
        export(grades, out, format="canvas", roster=tmp_path / "small.csv", match="Email")


def test_moodle(tmp_path, grades):
    out = tmp_path / "moodle.csv"
    assert course_main(["grading", "gradebook", *map(str, grades), "--out", str(out), "--format", "moodle",
                        "--moodle-id", "Email address", "--columns", "questions"]) == 0
    rows = read(out)
    # Moodle's CSV import: one header row, the user column, then grade columns (numbers or empty), no maxima row
    assert rows[0] == ["Email address", "ps1.q1", "ps1.q2", "ps2.q1"]
    assert rows[1:] == [["'=cmd|x", "0", "0", ""], ["ana", "6", "4", "10"], ["ben", "6", "2", "8"]]
    for row in rows[1:]:
        assert all(c == "" or float(c) >= 0 for c in row[1:])
