"""The class report: one self-contained HTML file per problem set, from the grades and tests CSVs."""

import base64
import html
import re
import shutil
import sys
from pathlib import Path

import pytest

from course_lib.cli import main as course_main
from course_lib.grading.reporting.classreport import build_report, error_kind, reason_group, write_report
from course_lib.grading.core import NOT_ANSWERED, QuestionResult, TestOutcome
from course_lib.grading.results.details import (OUTCOME_FIELDS, read_outcomes, outcome_rows, outcomes_path,
                                                write_outcomes)
from course_lib.grading.results.report import rows_of, write_grades

TECHNIQUE = "one load per source"


def _result(question, points, maximum, outcomes=(), error=""):
    result = QuestionResult(question, "t", points, maximum, error=error)
    for name, passed, message, extra in outcomes:
        o = TestOutcome(name, passed, message, points=1.0 if passed else 0.0, max_points=1.0, **extra)
        result.outcomes.append(o)
    return result


def _technique(measured, passed=None):
    inside = 0.9 <= measured <= 1.1
    message = "" if inside else (f"expected technique: staged, which gives loads in [0.9, 1.1] here; measured "
                                 f"{measured:g}\nLikely cause: technique\nHint: stage the sources")
    return (TECHNIQUE, inside, message, {"technique": True, "measurement": {"measured": measured, "low": 0.9,
                                                                             "high": 1.1, "unit": "loads per source"}})


def _class():
    """Five students of a two-question problem set: right, wrong technique, off by one, crashed, untouched."""
    sign = "result: 3 of 100 values are wrong; max error 2 at index (7,)\nLikely cause: sign\nHint: check the sign"
    sign2 = "result: 5 of 70 values are wrong; max error 1 at index (2,)\nLikely cause: sign\nHint: check the sign"
    return {
        "alice": [_result("ps1.q1", 6, 6, [("n = 1", True, "", {}), _technique(1.0)]),
                  _result("ps1.q2", 4, 4, [("answer", True, "", {})])],
        "bob": [_result("ps1.q1", 3, 6, [("n = 1", True, "", {}), _technique(1.75)]),
                _result("ps1.q2", 0, 4, [("answer", False, "2 of 3 values are wrong", {})])],
        "carol": [_result("ps1.q1", 0, 6, [("n = 1", False, sign, {}), _technique(1.05)]),
                  _result("ps1.q2", 0, 4, [("answer", False, sign2, {})])],
        "<script>dave": [_result("ps1.q1", 0, 6, [("n = 1", False, "timed out after 60 s (an infinite loop or a "
                                                   "deadlock?)", {})]),
                         _result("ps1.q2", 0, 4, error="refused for tampering: the notebook changed the grading "
                                                       "machinery (numpy)")],
        "erin": [_result("ps1.q1", 0, 6, error=NOT_ANSWERED), _result("ps1.q2", 0, 4, error=NOT_ANSWERED)],
    }


def _write(tmp_path, students):
    grades = tmp_path / "grades.csv"
    write_grades(grades, [r for s, results in students.items() for r in rows_of(s, results)])
    write_outcomes(outcomes_path(grades), [r for s, results in students.items() for r in outcome_rows(s, results)])
    return grades


def _images(text):
    return re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", text)


def test_the_tests_csv_records_every_test_and_technique_measurements(tmp_path):
    grades = _write(tmp_path, _class())
    rows = read_outcomes(outcomes_path(grades))
    assert outcomes_path(grades).name == "grades.tests.csv" and list(rows[0]) == OUTCOME_FIELDS
    bob = [r for r in rows if r["student"] == "bob" and r["test"] == TECHNIQUE][0]
    assert (bob["technique"], bob["passed"], bob["cause"]) == ("1", "0", "technique")
    assert (float(bob["measured"]), float(bob["low"]), float(bob["high"])) == (1.75, 0.9, 1.1)
    plain = [r for r in rows if r["student"] == "alice" and r["test"] == "n = 1"][0]
    assert plain["measured"] == plain["cause"] == ""
    assert not [r for r in rows if r["student"] == "erin"]  # unanswered questions have no tests, only a reason


def test_report_sections_counts_and_figures(tmp_path):
    grades = _write(tmp_path, _class())
    text = build_report(grades)
    for section in ("totals", "questions", "failed", "technique", "errors"):
        assert f"id='{section}'" in text
    assert "5 students; mean 2.60, median 0 of 10 points; 1 with full marks, 3 with 0." in text
    # Failures grouped by likely cause across students, with numbers taken out otherwise.
    assert "<b>2</b> &times; likely cause: sign" not in text  # carol's two sign failures are in different tests
    assert "<b>1</b> &times; likely cause: sign" in text and "# of # values are wrong" in text
    # Technique: three students measured, one outside the range.
    assert "3 students, median 1.05 loads per source</td><td class='num'>2 of 3</td>" in text
    # Errors: a refusal and a timeout are listed, the unanswered questions only counted; names escaped.
    assert "2 question(s) of 1 student(s): 1 refused, 1 timeout. 2 question(s) not answered" in text
    assert "&lt;script&gt;dave" in text and "<script>" not in text
    images = _images(text)
    assert len(images) == 3 and all(base64.b64decode(i).startswith(b"\x89PNG\r\n\x1a\n") for i in images)
    assert "http://" not in text.replace("http://www.w3.org", "") and "https://" not in text  # nothing fetched


def test_report_of_an_older_grades_csv_without_tests(tmp_path):
    grades = _write(tmp_path, _class())
    outcomes_path(grades).unlink()
    text = build_report(grades)
    assert "no tests CSV" in text and len(_images(text)) == 2  # no technique figure
    assert "answer" in text  # most failed tests from the grades CSV's reasons


def test_report_errors(tmp_path, capsys):
    grades = _write(tmp_path, _class())
    with pytest.raises(ValueError, match="absent.csv: no such file"):
        build_report(grades, tmp_path / "absent.csv")
    two = tmp_path / "two.csv"
    write_grades(two, rows_of("a", [_result("ps1.q1", 1, 6)]) + rows_of("a", [_result("ps2.q1", 1, 6)]))
    with pytest.raises(ValueError, match=r"one problem set; this file holds \['ps1', 'ps2'\]"):
        build_report(two)
    assert course_main(["grading", "report", str(two), "--out", str(tmp_path / "r.html")]) == 2
    assert "this file holds" in capsys.readouterr().err and not (tmp_path / "r.html").exists()


def test_error_kinds_and_reason_groups():
    assert error_kind(NOT_ANSWERED) is None
    assert error_kind("running the notebook in cell 3: timed out after 60 s (an infinite loop?)") == "timeout"
    assert error_kind("the submission's process crashed (SIGSEGV)") == "crash"
    assert error_kind("used more than 4096 MB of memory") == "memory"
    assert error_kind("refused for tampering: ...") == "refused"
    assert error_kind("NameError: name 'x' is not defined") == "notebook error"
    assert reason_group("anything", "race") == "likely cause: race"
    assert reason_group("acc: 3 of 100 values are wrong; max error 2.5e-3 Hint: x") == \
        "acc: # of # values are wrong; max error #"


def _chromium():
    import os

    for name in (os.environ.get("COURSE_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def test_report_renders_in_a_headless_browser(tmp_path):
    """Does the report open from a file in Chromium, every figure decoded, no console error?"""
    chromium = _chromium()
    if chromium is None:
        pytest.skip("no Chromium executable (apt-get install chromium; .ci/run does it as root)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package drives the browser")
    out = write_report(_write(tmp_path, _class()), tmp_path / "report.html")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            messages = []
            page.on("console", lambda m: messages.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: messages.append(str(e)))
            requests = []
            page.on("request", lambda r: requests.append(r.url) if not r.url.startswith(("file:", "data:")) else None)
            page.goto(Path(out).as_uri(), wait_until="load")
            widths = page.eval_on_selector_all("img", "els => els.map(e => e.complete ? e.naturalWidth : 0)")
            assert len(widths) == 3 and all(w > 100 for w in widths), widths
            assert page.title() == "ps1: class report"
            headings = page.eval_on_selector_all("h2", "els => els.map(e => e.id)")
            assert headings == ["totals", "questions", "failed", "technique", "census", "errors"], headings
            assert not messages and not requests, (messages, requests)
        finally:
            browser.close()


# --------------------------------------------------------------------------- end to end
sys.path.insert(0, str(Path(__file__).resolve().parent))


def test_from_submissions_to_gradebook_and_report(tmp_path):
    """A folder of PS1 submissions graded by the instructor grader, then the gradebook and the report."""
    import make_fixtures

    from course_lib.grading.reporting.gradebook import read_class
    from course_lib.grading.running.grader import GradeOptions, grade

    folder = tmp_path / "submissions"
    folder.mkdir()
    fixtures = make_fixtures.fixtures("ps1")
    import nbformat

    for name in ("right", "naive", "untouched"):
        nbformat.write(make_fixtures.notebook("ps1", fixtures[name]), folder / f"{name}.ipynb")
    out = tmp_path / "grades.csv"
    grade("ps1", [folder], out, jobs=2, options=GradeOptions(timeout=120), seed=3, progress=False, manifest=False)
    tests = read_outcomes(outcomes_path(out))
    signature = "the split technique, measured (profiler; tile 64 with q = 4, tile 24 with q = 8)"
    technique = [r for r in tests if r["technique"] == "1" and r["measured"] and r["test"] == signature]
    by_student = {r["student"]: r for r in technique}
    # The right answer's measurement is within its range, the naive one's outside, as its feedback says.
    right, naive = by_student["right"], by_student["naive"]
    assert float(right["low"]) <= float(right["measured"]) <= float(right["high"]) and right["passed"] == "1"
    assert not float(naive["low"]) <= float(naive["measured"]) <= float(naive["high"]) and naive["cause"] == "technique"
    assert "untouched" not in by_student
    # Every test records the configuration it drew: the same for everyone in a visible test (the visible
    # seed), each student's own in a hidden one (the student's seed); both launches of the signature test.
    configs = {(r["student"], r["test"]): r["config"] for r in tests if r["question"] == "ps1.q1"}
    last = "N = 3 blocks + 1, q = 2: a last block with one body"
    assert configs["right", last] == configs["naive", last] == "bodies[13x4], tile=8, q=2"
    hidden = {s: c for (s, t), c in configs.items() if t == "hidden: random N, tile 32 and q = 16"}
    assert set(hidden) == {"right", "naive", "untouched"}
    assert all(re.fullmatch(r"bodies\[\d+x4\], tile=32, q=16", c) for c in hidden.values())
    assert hidden["right"] != hidden["naive"]  # the seed 3 draws different sizes for them
    assert configs["right", signature] == configs["naive", signature] == (
        "(bodies[201x4], tile=64, q=4); (bodies[101x4], tile=24, q=8)")  # drawn from the visible seed: the same for all
    book = read_class([out])
    assert sum(book.points["right", q] for q in book.questions("ps1")) == 10
    report = tmp_path / "report.html"
    assert course_main(["grading", "report", str(out), "--out", str(report)]) == 0
    text = report.read_text()
    assert "3 students" in text and "1 with full marks" in text and len(_images(text)) == 3
    assert "2 students, median" in text and "<td class='num'>1 of 2</td>" in text  # technique: right and naive
    census = text[text.index("<h2 id='census'>"):text.index("<h2 id='errors'>")]
    assert f"<code>{html.escape(hidden['naive'], quote=True)}</code>" in census  # results per configuration
    assert "hidden tests&#x27; parameters" in census  # two sizes drawn: each parameter on its own
    gradebook = tmp_path / "gradebook.csv"
    assert course_main(["grading", "gradebook", str(out), "--out", str(gradebook)]) == 0
    assert gradebook.read_text().splitlines()[0] == "student,ps1.q1,ps1.q2,ps1.q3,ps1,total"
