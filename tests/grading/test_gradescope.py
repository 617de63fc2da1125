"""The Gradescope autograder: the archive follows Gradescope's specification, and its run_autograder,
run end to end in a temporary /autograder, writes a results.json with the documented fields."""

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from course_lib.cli import main as course_main
from course_lib.grading.core import QuestionResult, TestOutcome
from course_lib.grading.reporting.gradescope import LOCK, build_archive, results_of

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_fixtures  # noqa: E402

#: Gradescope's fields (https://gradescope-autograders.readthedocs.io/en/latest/specs/).
TOP_FIELDS = {"score", "execution_time", "output", "output_format", "test_output_format", "test_name_format",
              "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard"}
TEST_FIELDS = {"score", "max_score", "status", "name", "name_format", "number", "output", "output_format", "tags",
               "visibility", "extra_data"}
VISIBILITIES = {"hidden", "after_due_date", "after_published", "visible"}


def validate(results: dict) -> None:
    """results.json against Gradescope's documented fields and types."""
    assert set(results) <= TOP_FIELDS, set(results) - TOP_FIELDS
    assert isinstance(results["score"], (int, float))
    assert results.get("visibility", "visible") in VISIBILITIES
    assert results.get("stdout_visibility", "visible") in VISIBILITIES
    for test in results["tests"]:
        assert set(test) <= TEST_FIELDS, set(test) - TEST_FIELDS
        assert {"name", "score", "max_score", "output", "visibility"} <= set(test)
        assert isinstance(test["score"], (int, float)) and isinstance(test["max_score"], (int, float))
        assert 0 <= test["score"] <= test["max_score"] + 1e-9
        assert test["visibility"] in VISIBILITIES and test.get("status", "passed") in ("passed", "failed")
        assert isinstance(test["name"], str) and isinstance(test["output"], str)


@pytest.fixture
def lock(tmp_path):
    path = tmp_path / "lock.txt"
    path.write_text("numpy==2.1.3\n")
    return path


def _extract(archive, root):
    """As Gradescope does: the archive's contents in /autograder/source, run_autograder copied beside it."""
    source = root / "source"
    with zipfile.ZipFile(archive) as z:
        z.extractall(source)
        for info in z.infolist():  # zipfile does not restore modes
            (source / info.filename).chmod((info.external_attr >> 16) & 0o777)
    shutil.copy(source / "run_autograder", root / "run_autograder")
    (root / "submission").mkdir()
    return source


def test_archive_follows_the_specification(tmp_path, lock):
    out = tmp_path / "ps1_autograder.zip"
    assert course_main(["grading", "gradescope", "nbody", "--out", str(out), "--lock", str(lock)]) == 0
    with zipfile.ZipFile(out) as z:
        names = set(z.namelist())
        assert {"setup.sh", "run_autograder"} <= names  # at the root, not in a folder
        for name in ("setup.sh", "run_autograder"):
            assert (z.getinfo(name).external_attr >> 16) & stat.S_IXUSR
        assert {"course/pyproject.toml", "course/setup.py", "course/README.md", f"course/{LOCK.as_posix()}",
                "course/course_lib/grading/running/grader.py", "course/course_lib/nbody/questions.py"} <= names
        # Only this problem set's solution; no bytecode.
        assert [n for n in names if n.startswith("course/solutions/")] == ["course/solutions/ps1_nbody.ipynb"]
        assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
        assert z.read(f"course/{LOCK.as_posix()}") == lock.read_bytes()
        setup = z.read("setup.sh").decode()
        run = z.read("run_autograder").decode()
    assert f"-c {LOCK.as_posix()} -e" in setup and "bubblewrap" in setup and "manifest --out" in setup
    assert "run ps1 " in run and "--hide-solutions" in run
    for script in ("setup.sh", "run_autograder"):
        (tmp_path / script).write_text(setup if script == "setup.sh" else run)
        assert subprocess.run(["bash", "-n", str(tmp_path / script)]).returncode == 0


def test_archive_needs_the_lock(tmp_path, capsys):
    missing = tmp_path / "none.txt"
    with pytest.raises(ValueError, match="no lock file at .*none.txt"):
        build_archive("ps1", tmp_path / "a.zip", lock=missing)
    assert course_main(["grading", "gradescope", "ps1", "--out", str(tmp_path / "a.zip"), "--lock", str(missing)]) == 2
    assert "no lock file" in capsys.readouterr().err and not (tmp_path / "a.zip").exists()
    with pytest.raises(ValueError, match="problem set must be"):
        build_archive("ps99", tmp_path / "a.zip", lock=missing)


def test_results_spread_a_cap_over_the_tests():
    """Test scores add up to the question's points, a technique cap included."""
    r = QuestionResult("ps1.q1", "kernel", 3.0, 6.0, capped=True)
    r.outcomes = [TestOutcome("visible one", True, points=2, max_points=2),
                  TestOutcome("hidden one", True, hidden=True, points=2, max_points=2),
                  TestOutcome("technique", False, "measured 1.75", points=0, max_points=2, technique=True)]
    error = QuestionResult("ps1.q2", "tile", 0.0, 4.0, error="timed out after 60 s")
    results = results_of([r, error])
    validate(results)
    assert results["score"] == 3.0
    assert sum(t["score"] for t in results["tests"]) == pytest.approx(3.0)
    assert sum(t["max_score"] for t in results["tests"]) == pytest.approx(10.0)
    hidden = [t for t in results["tests"] if "(hidden)" in t["name"]]
    assert [t["visibility"] for t in hidden] == ["after_published"]
    assert "capped at 3 points" in results["tests"][2]["output"]
    assert results["tests"][3]["output"] == "timed out after 60 s" and results["tests"][3]["max_score"] == 4.0


@pytest.mark.parametrize("fixture, points", [("right", 10.0), ("naive", None)])
def test_run_autograder_end_to_end(tmp_path, lock, fixture, points):
    archive = build_archive("ps1", tmp_path / "ps1_autograder.zip", lock=lock, timeout=120)
    root = tmp_path / "autograder"
    source = _extract(archive, root)
    fixtures = make_fixtures.fixtures("ps1")
    nbformat.write(make_fixtures.notebook("ps1", fixtures[fixture]), root / "submission" / "ps1_nbody.ipynb")
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), COURSE_PYTHON=sys.executable)
    env.pop("PYTHONPATH", None)
    done = subprocess.run([str(root / "run_autograder")], cwd=root, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    # The grader ran from the archive's copy of the course, and deleted its solution before grading.
    assert "deleted 1 solution notebook(s)" in done.stdout
    assert not list((source / "course" / "solutions").glob("*.ipynb"))
    results = json.loads((root / "results" / "results.json").read_text())
    validate(results)
    expected = points if points is not None else float(sum(fixtures[fixture].points))
    assert results["score"] == pytest.approx(expected)
    assert sum(t["score"] for t in results["tests"]) == pytest.approx(expected, abs=1e-3)
    assert any(t["visibility"] == "after_published" for t in results["tests"])
    assert all(t["visibility"] == "visible" for t in results["tests"] if "(hidden)" not in t["name"])
    if fixture == "naive":
        assert any("technique" in t["output"] and t["status"] == "failed" for t in results["tests"])


def test_a_submission_without_a_notebook(tmp_path, lock):
    archive = build_archive("ps1", tmp_path / "ps1_autograder.zip", lock=lock)
    root = tmp_path / "autograder"
    _extract(archive, root)
    (root / "submission" / "answers.py").write_text("print('hello')\n")
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), COURSE_PYTHON=sys.executable)
    done = subprocess.run([str(root / "run_autograder")], cwd=root, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    validate(results)
    assert results["score"] == 0 and "no .ipynb file in the submission" in results["output"]
