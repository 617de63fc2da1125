"""nbgrader runs on our problem sets: generate_assignment writes our student version, autograde
scores the solution 10/10 and the untouched student version 0 (install with ``pip install .[nbgrader]``)."""

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course_lib.grading.reporting.release import solution_path, student_path

pytest.importorskip("nbgrader", reason="nbgrader is not installed (optional extra: pip install .[nbgrader])")

ROOT = Path(__file__).resolve().parents[2]
CONFIG = """c = get_config()
c.CourseDirectory.course_id = "gpu-course"
c.CourseDirectory.db_assignments = [dict(name="ps1")]
c.CourseDirectory.db_students = [dict(id="alice"), dict(id="bob")]
c.ExecutePreprocessor.timeout = 300
"""


def _nbgrader(course, *args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_generate_assignment_and_autograde(tmp_path):
    course = tmp_path / "course"
    name = solution_path("ps1").name
    (course / "source" / "ps1").mkdir(parents=True)
    shutil.copy(solution_path("ps1"), course / "source" / "ps1" / name)
    (course / "nbgrader_config.py").write_text(CONFIG)

    _nbgrader(course, "generate_assignment", "ps1", "--force")
    generated = nbformat.read(course / "release" / "ps1" / name, as_version=4)
    ours = nbformat.read(student_path("ps1"), as_version=4)
    assert [(c.cell_type, c.source) for c in generated.cells] == [(c.cell_type, c.source) for c in ours.cells]
    for mine, theirs in zip(ours.cells, generated.cells):
        for key in ("grade", "grade_id", "points", "solution", "locked"):
            assert mine.metadata.get("nbgrader", {}).get(key) == theirs.metadata.get("nbgrader", {}).get(key)

    for student, notebook in (("alice", solution_path("ps1")), ("bob", course / "release" / "ps1" / name)):
        (course / "submitted" / student / "ps1").mkdir(parents=True)
        shutil.copy(notebook, course / "submitted" / student / "ps1" / name)
    _nbgrader(course, "autograde", "ps1", "--force")
    _nbgrader(course, "export")
    with open(course / "grades.csv", newline="") as f:
        scores = {row["student_id"]: (float(row["score"]), float(row["max_score"])) for row in csv.DictReader(f)}
    assert scores == {"alice": (10.0, 10.0), "bob": (0.0, 10.0)}
