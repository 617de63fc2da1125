"""The gradebook: one row per student from grades CSVs, in the documented column layout."""

import csv
import subprocess
import sys

import pytest

from course_lib.cli import main as course_main
from course_lib.grading.reporting.gradebook import POINTS_POSSIBLE, build, read_class, write
from course_lib.grading.results.report import FIELDS, write_grades


def _rows(student, answers, maxima):
    return [{"student": student, "question": q, "points": f"{p:g}", "max_points": f"{maxima[q]:g}",
             "status": "passed" if p == maxima[q] else ("partial" if p else "failed"), "reason": "r"}
            for q, p in answers.items()]


PS1_MAX = {"ps1.q1": 6, "ps1.q2": 3, "ps1.q3": 1}
PS2_MAX = {"ps2.q1": 7, "ps2.q2": 3}
PS10_MAX = {"ps10.q1": 2}


@pytest.fixture
def class_csvs(tmp_path):
    """ps1: alice, bob, carol (bob in a second batch file); ps2: alice, carol; ps10: carol only."""
    ps1a, ps1b, ps2, ps10 = (tmp_path / n for n in ("ps1.csv", "ps1-late.csv", "ps2.csv", "ps10.csv"))
    write_grades(ps1a, _rows("alice", {"ps1.q1": 6, "ps1.q2": 1.5, "ps1.q3": 1}, PS1_MAX)
                 + _rows("carol", {"ps1.q1": 3, "ps1.q2": 0, "ps1.q3": 0}, PS1_MAX))
    write_grades(ps1b, _rows("bob", {"ps1.q1": 0, "ps1.q2": 0, "ps1.q3": 0}, PS1_MAX))
    write_grades(ps2, _rows("alice", {"ps2.q1": 7, "ps2.q2": 2.25}, PS2_MAX)
                 + _rows("carol", {"ps2.q1": 3.5, "ps2.q2": 3}, PS2_MAX))
    write_grades(ps10, _rows("carol", {"ps10.q1": 2}, PS10_MAX))
    return [ps10, ps2, ps1a, ps1b]


def _read(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def test_one_row_per_student_with_missing_problem_sets_left_empty(class_csvs, tmp_path):
    out = tmp_path / "gradebook.csv"
    write(class_csvs, out)
    header, *rows = _read(out)
    # Problem sets in their natural order (ps2 before ps10), each question then the problem set's total.
    assert header == ["student", "ps1.q1", "ps1.q2", "ps1.q3", "ps1", "ps2.q1", "ps2.q2", "ps2", "ps10.q1", "ps10",
                      "total"]
    table = {r[0]: dict(zip(header, r)) for r in rows}
    assert list(table) == ["alice", "bob", "carol"]
    assert table["alice"]["ps1"] == "8.5" and table["alice"]["ps2"] == "9.25"
    # Missing, not 0: alice has no ps10, bob has neither ps2 nor ps10; their totals are missing too.
    assert table["alice"]["ps10.q1"] == table["alice"]["ps10"] == table["alice"]["total"] == ""
    assert table["bob"]["ps1"] == "0" and table["bob"]["ps2"] == "" and table["bob"]["total"] == ""
    assert table["carol"]["total"] == f"{3 + 6.5 + 2:g}"


def test_missing_as_zero_and_the_points_possible_row(class_csvs, tmp_path):
    out = tmp_path / "gradebook.csv"
    write(class_csvs, out, missing_as_zero=True, points_possible=True)
    header, maxima, *rows = _read(out)
    assert maxima == [POINTS_POSSIBLE, "6", "3", "1", "10", "7", "3", "10", "2", "2", "22"]
    table = {r[0]: dict(zip(header, r)) for r in rows}
    assert table["alice"]["ps10"] == "0" and table["alice"]["total"] == f"{8.5 + 9.25:g}"
    assert table["bob"]["ps2.q1"] == "0" and table["bob"]["total"] == "0"


def test_command_line_both_spellings(class_csvs, tmp_path, capsys):
    out = tmp_path / "via-course.csv"
    assert course_main(["grading", "gradebook", *map(str, class_csvs), "--out", str(out)]) == 0
    assert "3 students" in capsys.readouterr().out
    out2 = tmp_path / "via-module.csv"
    done = subprocess.run([sys.executable, "-m", "course_lib.grading", "gradebook", *map(str, class_csvs),
                           "--out", str(out2)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert out.read_text() == out2.read_text()


def test_student_names_that_a_spreadsheet_would_run_stay_text(tmp_path):
    path = tmp_path / "g.csv"
    write_grades(path, _rows("'=HYPERLINK(\"x\")", {"ps1.q1": 1}, PS1_MAX))
    header, rows = build(read_class([path]))
    assert rows[0][0] == "'=HYPERLINK(\"x\")"


def _bad(tmp_path, text):
    path = tmp_path / "bad.csv"
    path.write_text(text, encoding="utf-8")
    return path


GOOD = "alice,ps1.q1,3,6,partial,r\n"
HEAD = ",".join(FIELDS) + "\n"


@pytest.mark.parametrize("body, says", [
    ("alice,ps1.q1,three,6,partial,r\n", "bad.csv:2: column 'points': 'three' is not a number"),
    ("alice,ps1.q1,nan,6,partial,r\n", "column 'points': 'nan' is not a finite number"),
    ("alice,ps1.q1,7,6,partial,r\n", "bad.csv:2: column 'points': 7 is not between 0 and max_points 6"),
    ("alice,ps1.q1,-1,6,partial,r\n", "column 'points': -1 is not between 0"),
    (GOOD + "bob,ps1.q1,3,5,partial,r\n", "bad.csv:3: column 'max_points': ps1.q1 is worth 5 here but 6"),
    (GOOD + "alice,ps1.q1,3,6,partial,r\n", "bad.csv:3: 'alice' has ps1.q1 already, in "),
    ("alice,question 1,3,6,partial,r\n", "column 'question': 'question 1' is not a question id"),
    ("alice,ps1.q1,3,6,great,r\n", "column 'status': 'great' is not one of"),
    (",ps1.q1,3,6,partial,r\n", "bad.csv:2: column 'student' is empty"),
    ("alice,ps1.q1,3,6,partial\n", "bad.csv:2: fewer cells than the 6 columns"),
    ("alice,ps1.q1,3,6,partial,r,extra\n", "bad.csv:2: more cells than the 6 columns"),
])
def test_a_bad_row_names_file_line_and_column(tmp_path, body, says):
    with pytest.raises(ValueError) as caught:
        read_class([_bad(tmp_path, HEAD + body)])
    assert says in str(caught.value)


def test_bad_files_are_named(tmp_path, capsys):
    with pytest.raises(ValueError, match=r"wrong\.csv: line 1: columns \['name', 'score'\]"):
        read_class([_bad(tmp_path, "name,score\nalice,3\n").rename(tmp_path / "wrong.csv")])
    with pytest.raises(ValueError, match=r"empty.csv: no grades \(a header and no rows\)"):
        read_class([_bad(tmp_path, HEAD).rename(tmp_path / "empty.csv")])
    with pytest.raises(ValueError, match="absent.csv: no such file"):
        read_class([tmp_path / "absent.csv"])
    latin = tmp_path / "latin.csv"
    latin.write_bytes((HEAD + "caf\xe9,ps1.q1,3,6,partial,r\n").encode("latin-1"))
    with pytest.raises(ValueError, match="latin.csv: not UTF-8"):
        read_class([latin])
    # On the command line: an error line naming the file, exit status 2, no gradebook written.
    out = tmp_path / "gradebook.csv"
    assert course_main(["grading", "gradebook", str(latin), "--out", str(out)]) == 2
    assert "latin.csv: not UTF-8" in capsys.readouterr().err and not out.exists()


def test_a_real_grades_file_from_the_grader(tmp_path):
    """The columns the grader writes are the ones the gradebook reads (the report module's FIELDS)."""
    from course_lib.grading.core import QuestionResult
    from course_lib.grading.results.report import rows_of

    results = [QuestionResult("ps1.q1", "kernel", 3.0, 6.0), QuestionResult("ps1.q2", "tile", 0.0, 3.0, error="x")]
    path = tmp_path / "grades.csv"
    write_grades(path, rows_of("dave", results))
    header, rows = build(read_class([path]))
    assert header == ["student", "ps1.q1", "ps1.q2", "ps1", "total"] and rows == [["dave", "3", "0", "3", "3"]]
