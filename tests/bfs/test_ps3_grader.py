"""The instructor grader on the PS3 submissions of ``submissions/`` (built by make_ps3_submissions.py)."""

import csv
import os
import subprocess
import sys
from pathlib import Path

import nbformat

from course_lib.bfs.questions import QUESTIONS

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_ps3_submissions  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SUBMISSIONS = Path(__file__).resolve().parent / "submissions"


def test_committed_submissions_are_up_to_date(tmp_path):
    make_ps3_submissions.write(tmp_path)
    for fresh in sorted(tmp_path.iterdir()):
        committed = SUBMISSIONS / fresh.name
        assert committed.exists(), f"run python tests/bfs/make_ps3_submissions.py ({fresh.name} missing)"
        sources = [[c.source for c in nbformat.read(p, as_version=4).cells] for p in (fresh, committed)]
        assert sources[0] == sources[1], f"run python tests/bfs/make_ps3_submissions.py ({fresh.name} is stale)"


def test_every_test_is_judged_in_the_grader():
    """A test that is not split would be judged in the student's process, which can rig it."""
    assert [f"{q.id} {t.name}" for q in QUESTIONS for t in q.tests if not t.split] == []


def test_patching_the_judgement_in_the_notebook_scores_zero(tmp_path):
    out = tmp_path / "grades.csv"
    command = [sys.executable, "-m", "course_lib.grading", "grade", "ps3", *sorted(map(str, SUBMISSIONS.iterdir())),
               "--out", str(out), "--jobs", "2", "--timeout", "60", "--quiet"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert "not split" not in done.stdout + done.stderr
    with open(out, newline="") as f:
        rows = {(r["student"], r["question"]): r for r in csv.DictReader(f)}

    def points(student):
        return [float(rows[student, q]["points"]) for q in ("ps3.q1", "ps3.q2", "ps3.q3")]

    assert points("solution") == [6, 2, 2], [rows["solution", q]["reason"] for q in ("ps3.q1", "ps3.q2", "ps3.q3")]
    # A garbage kernel, answers equal to everything, and the references, the parent-tree check, NumPy
    # and the judges replaced in the notebook: refused for tampering (the judgement runs in the grader anyway).
    assert points("monkeypatch") == [0, 0, 0]
    assert all(rows["monkeypatch", q]["reason"].startswith("refused for tampering") for q in ("ps3.q1", "ps3.q2"))
    # Counting the work with the library's own code earns nothing.
    assert points("library") == [6, 0, 0]
    assert "uses the course's own bfs" in rows["library", "ps3.q2"]["reason"]
