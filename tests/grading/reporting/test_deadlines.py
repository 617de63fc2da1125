"""Late penalties and grace days from submission times (files' times, nbgrader's timestamp.txt, a CSV),
shown in the gradebook."""

import csv
import datetime as dt
import os

import pytest

from course_lib.cli import main as course_main
from course_lib.grading.reporting import deadlines
from course_lib.grading.reporting.deadlines import LatePolicy, lateness, parse_time, submission_times

UTC = dt.timezone.utc
DUE1 = dt.datetime(2026, 2, 1, 23, 59, tzinfo=UTC)
DUE2 = dt.datetime(2026, 2, 8, 23, 59, tzinfo=UTC)


def write_grades(path, problem_set, points):
    """A grades CSV as ``grade`` writes it: ``points`` is ``{student: [points per question]}``, each
    question worth ``maxima``."""
    maxima = {"ps1": [6, 4], "ps2": [10]}[problem_set]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["student", "question", "points", "max_points", "status", "reason"])
        for student, got in points.items():
            for i, (p, m) in enumerate(zip(got, maxima), 1):
                w.writerow([student, f"{problem_set}.q{i}", p, m, "passed" if p == m else "partial", ""])
    return path


def test_times_are_read_in_every_form():
    assert parse_time("2026-02-13 23:59:12.5 UTC") == dt.datetime(2026, 2, 13, 23, 59, 12, 500000, tzinfo=UTC)
    assert parse_time("2026-02-13T23:59-05:00") == dt.datetime(2026, 2, 14, 4, 59, tzinfo=UTC)
    # nbgrader's timestamp format (%Y-%m-%d %H:%M:%S.%f %Z)
    assert parse_time("2015-02-02 14:58:23.948203 PST") == dt.datetime(2015, 2, 2, 22, 58, 23, 948203, tzinfo=UTC)
    assert parse_time("2026-02-13T23:59Z") == dt.datetime(2026, 2, 13, 23, 59, tzinfo=UTC)
    assert parse_time("2026-07-01 12:00", "Europe/Paris") == dt.datetime(2026, 7, 1, 10, 0, tzinfo=UTC)
    assert parse_time("2026-07-01 12:00 Europe/Paris") == dt.datetime(2026, 7, 1, 10, 0, tzinfo=UTC)
    for bad in ("yesterday", "2026-02-31 10:00", "2026-02-13 10:00 Mars/Olympus"):
        with pytest.raises(ValueError):
            parse_time(bad)


def test_grace_days_are_spent_in_deadline_order_then_penalties():
    times = {"ps1": {"ana": DUE1 - dt.timedelta(hours=1), "ben": DUE1 + dt.timedelta(hours=1),
                     "cho": DUE1 + dt.timedelta(hours=49)},
             "ps2": {"ana": DUE2, "ben": DUE2 + dt.timedelta(hours=30), "cho": DUE2 + dt.timedelta(days=10)}}
    late = lateness(times, {"ps2": DUE2, "ps1": DUE1}, ["ana", "ben", "cho", "dev"],
                    LatePolicy(penalty_per_day=10, grace_days=2, max_late_days=7))
    assert late["ana", "ps1"] == deadlines.Late(0, 0, 0.0) and late["ana", "ps2"] == deadlines.Late(0, 0, 0.0)
    # ben: 1 day late (one grace day), then 2 days late: the last grace day and one penalised day
    assert late["ben", "ps1"] == deadlines.Late(1, 1, 0.0)
    assert late["ben", "ps2"] == deadlines.Late(2, 1, pytest.approx(0.1))
    # cho: 3 days late (2 grace days, 1 penalised), then past the maximum: nothing, no grace day spent
    assert late["cho", "ps1"] == deadlines.Late(3, 2, pytest.approx(0.1))
    assert late["cho", "ps2"] == deadlines.Late(10, 0, 1.0)
    # dev: no time recorded, not late
    assert late["dev", "ps1"] == deadlines.Late(0, 0, 0.0)
    with pytest.raises(ValueError, match="bad late policy"):
        LatePolicy(penalty_per_day=150)


def test_nbgrader_timestamps_and_file_times(tmp_path):
    # nbgrader collect's layout: submitted/<student>/<assignment>/timestamp.txt beside the notebook
    collected = tmp_path / "submitted"
    for student, stamp in (("ana", "2026-02-01 22:00:00.000000 UTC"), ("ben", "2026-02-02 01:30:00 UTC")):
        folder = collected / student / "ps1"
        folder.mkdir(parents=True)
        (folder / "ps1_nbody.ipynb").write_text("{}")
        (folder / "timestamp.txt").write_text(stamp + "\n")
    times = submission_times(collected)
    assert times == {"ana/ps1/ps1_nbody": dt.datetime(2026, 2, 1, 22, tzinfo=UTC),
                     "ben/ps1/ps1_nbody": dt.datetime(2026, 2, 2, 1, 30, tzinfo=UTC)}
    # a flat folder: the files' modification times
    flat = tmp_path / "flat"
    flat.mkdir()
    (flat / "cho.ipynb").write_text("{}")
    os.utime(flat / "cho.ipynb", (0, DUE1.timestamp() + 7200))
    assert submission_times(flat) == {"cho": DUE1 + dt.timedelta(hours=2)}
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "x.ipynb").write_text("{}")
    (tmp_path / "bad" / "timestamp.txt").write_text("soon")
    with pytest.raises(ValueError, match="timestamp.txt"):
        submission_times(tmp_path / "bad")


def test_the_gradebook_shows_late_work(tmp_path, capsys):
    ps1 = write_grades(tmp_path / "ps1.csv", "ps1", {"ana": [6, 4], "ben": [6, 2], "cho": [3, 4]})
    ps2 = write_grades(tmp_path / "ps2.csv", "ps2", {"ana": [10], "ben": [8], "cho": [10]})
    (tmp_path / "deadlines.csv").write_text("problem_set,deadline\nps1,2026-02-01T23:59Z\nps2,2026-02-08 18:59 "
                                            "America/New_York\n")
    folder = tmp_path / "ps1_submitted"
    folder.mkdir()
    for student, hours in (("ana", -5), ("ben", 1), ("cho", 49)):
        (folder / f"{student}.ipynb").write_text("{}")
        os.utime(folder / f"{student}.ipynb", (0, DUE1.timestamp() + hours * 3600))
    (tmp_path / "ps2_times.csv").write_text("login,when\nana,2026-02-08T23:00Z\nben,2026-02-10T05:59Z\n"
                                            "cho,2026-02-18T23:59Z\n")
    out = tmp_path / "gradebook.csv"
    assert course_main(["grading", "gradebook", str(ps1), str(ps2), "--out", str(out), "--deadlines",
                        str(tmp_path / "deadlines.csv"), "--times", f"ps1={folder}", "--times",
                        f"ps2={tmp_path / 'ps2_times.csv'}", "--student-column", "login", "--time-column", "when",
                        "--grace-days", "2", "--late-penalty", "10", "--max-late-days", "7",
                        "--points-possible"]) == 0
    assert "late: 4 submission(s), 3 with a penalty" in capsys.readouterr().out
    rows = list(csv.DictReader(out.read_text().splitlines()))
    assert list(rows[0]) == ["student", "ps1.q1", "ps1.q2", "ps1", "ps1 days late", "ps1 penalty %", "ps2.q1", "ps2",
                             "ps2 days late", "ps2 penalty %", "total", "grace days used"]
    maxima, by = rows[0], {r["student"]: r for r in rows[1:]}
    assert (maxima["student"], maxima["ps1"], maxima["total"], maxima["ps1 days late"]) == \
        ("Points Possible", "10", "20", "")
    assert by["ana"] == {**by["ana"], "ps1": "10", "ps1 days late": "0", "ps2": "10", "total": "20",
                         "grace days used": "0"}
    # ben: ps1 1 day late (grace), ps2 30 h late = 2 days: 1 grace + 10 % of 8 points
    assert (by["ben"]["ps1"], by["ben"]["ps2"], by["ben"]["ps2 days late"], by["ben"]["ps2 penalty %"],
            by["ben"]["total"], by["ben"]["grace days used"]) == ("8", "7.2", "2", "10", "15.2", "2")
    assert by["ben"]["ps2.q1"] == "8"  # questions keep the grader's points
    # cho: ps1 3 days late (2 grace, 10 %), ps2 10 days late (past the maximum: 0)
    assert (by["cho"]["ps1"], by["cho"]["ps1 penalty %"], by["cho"]["ps2"], by["cho"]["ps2 penalty %"],
            by["cho"]["total"]) == ("6.3", "10", "0", "100", "6.3")
    # a problem set with a deadline but no times is an error, said plainly
    assert course_main(["grading", "gradebook", str(ps1), "--out", str(out), "--deadlines",
                        str(tmp_path / "deadlines.csv")]) == 2
    assert "no submission times for ['ps1']" in capsys.readouterr().err
