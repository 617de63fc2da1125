"""The instructor grader on PS4 submissions (``submissions/``, built by make_ps4_submissions.py)."""

import csv
import importlib.util
import subprocess
import sys
from pathlib import Path

import nbformat

# Loaded by path under its own name: tests/grading has a make_submissions module too.
_spec = importlib.util.spec_from_file_location("make_ps4_submissions",
                                               Path(__file__).resolve().parent / "make_ps4_submissions.py")
make_submissions = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_submissions)

SUBMISSIONS = Path(__file__).resolve().parent / "submissions"
QUESTIONS = ("ps4.q1", "ps4.q2", "ps4.q3")


def test_committed_submissions_are_up_to_date(tmp_path):
    make_submissions.write(tmp_path)
    for fresh in sorted(tmp_path.iterdir()):
        committed = SUBMISSIONS / fresh.name
        assert committed.exists(), f"run python tests/poisson/make_ps4_submissions.py ({fresh.name} missing)"
        sources = [[c.source for c in nbformat.read(p, as_version=4).cells] for p in (fresh, committed)]
        assert sources[0] == sources[1], f"run python tests/poisson/make_ps4_submissions.py ({fresh.name} is stale)"


def test_patching_the_judges_in_the_notebook_scores_zero(tmp_path):
    """A kernel writing garbage, the library's classify and rigged numbers, with every comparison, reference
    and judge of the notebook's process replaced: 0 points; the solution, graded alongside, 10."""
    out = tmp_path / "grades.csv"
    command = [sys.executable, "-m", "course_lib.grading", "grade", "ps4", *sorted(map(str, SUBMISSIONS.iterdir())),
               "--out", str(out), "--jobs", "2", "--timeout", "60", "--quiet"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    with open(out, newline="") as f:
        rows = {(r["student"], r["question"]): r for r in csv.DictReader(f)}

    def points(student):
        return [float(rows[student, q]["points"]) for q in QUESTIONS]

    assert points("solution") == [6, 2, 2], [rows["solution", q]["reason"] for q in QUESTIONS]
    assert points("monkeypatch") == [0, 0, 0], [rows["monkeypatch", q]["reason"] for q in QUESTIONS]
    # Patching the judges in the notebook's process is refused for tampering.
    assert all(rows["monkeypatch", q]["reason"].startswith("refused for tampering") for q in QUESTIONS)
