"""Text that reaches the grades CSV and the feedback files is cleaned; formulas are neutralised; files are
written whole, never through a link."""

import csv
import os

from course_lib.grading.core import QuestionResult, TestOutcome
from course_lib.grading.results.report import (FeedbackFolder, clean_text, csv_cell, feedback_name, read_grades,
                                               rows_of, write_atomic, write_grades)


def test_clean_text_escapes_surrogates_and_control_characters():
    assert clean_text("caf\udce9") == "caf\\udce9"
    assert clean_text("a\x1b[2Jb\x00c\u202ed") == "a\\x1b[2Jb\\x00c\\u202ed"
    assert clean_text("line 1\nline 2\tx") == "line 1\nline 2\tx"
    assert clean_text("line 1\r\nline 2", newlines=False) == "line 1 line 2"
    assert clean_text("plain, accents: é ü") == "plain, accents: é ü"


def test_csv_cells_that_a_spreadsheet_would_run_become_text():
    for formula in ("=1+1", "+1", "-1", "@SUM(A1)", "\t=1", "=HYPERLINK(\"http://x\")"):
        assert csv_cell(formula).startswith("'"), formula
    assert csv_cell("all tests passed") == "all tests passed"
    assert csv_cell("x\ny") == "x y"


def test_rows_and_feedback_of_a_hostile_result(tmp_path):
    result = QuestionResult("ps1.q1", "kernel", 0.0, 6.0, error="=cmd|' /C calc'!A0 \udcff\x07")
    result.outcomes.append(TestOutcome("t", False, "\udcff ~~~~ fence \x1b"))
    rows = rows_of('=HYPERLINK("x")', [result])
    assert rows[0]["student"] == "'=HYPERLINK(\"x\")" and rows[0]["reason"] == "'=cmd|' /C calc'!A0 \\udcff\\x07"
    out = tmp_path / "grades.csv"
    write_grades(out, rows)
    assert read_grades(out) == rows
    with open(out, newline="", encoding="utf-8") as f:
        assert [r["student"] for r in csv.DictReader(f)] == ["'=HYPERLINK(\"x\")"]

    folder = FeedbackFolder(tmp_path / "feedback", "ps1")
    folder.add('=HYPERLINK("x")', [result])
    path = folder.path('=HYPERLINK("x")')
    text = path.read_text(encoding="utf-8")
    assert "\\udcff" in text and "\x1b" not in text and "~ ~ ~ ~ fence" in text
    path.write_text("forged")
    folder.add("bob", [result])  # every file is written again from memory after each student
    assert path.read_text(encoding="utf-8") == text and (tmp_path / "feedback" / "bob.md").exists()


def test_feedback_file_names_are_plain_and_distinct():
    assert feedback_name("alice") == "alice.md"
    assert feedback_name("alice/ps1/ps1_nbody") == "alice__ps1__ps1_nbody.md"
    odd = feedback_name("caf\\udce9")
    assert odd.startswith("caf_udce9-") and odd.endswith(".md")
    assert feedback_name("../../etc/passwd") != feedback_name("______etc_passwd")
    assert "/" not in feedback_name("../../etc/passwd") and not feedback_name("../x").startswith(".")


def test_atomic_writes_replace_a_link_or_a_pipe_and_never_write_through_them(tmp_path):
    target = tmp_path / "course_file.py"
    target.write_text("kept\n")
    grades = tmp_path / "grades.csv"
    grades.symlink_to(target)  # left by a submission: the grader's write must not reach the course file
    write_grades(grades, [])
    assert target.read_text() == "kept\n" and not grades.is_symlink()
    assert read_grades(grades) == []
    pipe = tmp_path / "feedback.md"
    os.mkfifo(pipe)
    write_atomic(pipe, "text")
    assert pipe.is_file() and pipe.read_text() == "text"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["course_file.py", "feedback.md", "grades.csv"]  # no leftovers
