"""The Gradescope autograder: the archive follows Gradescope's specification, and its run_autograder,
run end to end in a temporary /autograder, writes a results.json with the documented fields; run three
times in that one container, it leaves the course as installed (the runs are made once, for both tests
that read them)."""

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from dataclasses import dataclass
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
        assert sorted(n for n in names if n.startswith("course/solutions/")) == ["course/solutions/ps1_nbody.ipynb"]
        # And only its hints and answer keys (course_lib.grading.resources), which the grader reads when it judges.
        assert sorted(n for n in names if n.startswith("course/grading_resources/")) == \
            ["course/grading_resources/hints/ps1_nbody.json", "course/grading_resources/keys/ps1_nbody.py"]
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


def _course_files(course: Path) -> dict:
    """``relative path -> bytes`` of the installed course's package, caches apart."""
    return {p.relative_to(course).as_posix(): p.read_bytes() for p in (course / "course_lib").rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


@dataclass
class AutograderRun:
    """One ``run_autograder`` in the shared container, and what it left behind.

    Attributes
    ----------
    fixture : str
        The graded fixture of ``tests/grading/fixtures/ps1.py``.
    expected : float
        Its points.
    done : subprocess.CompletedProcess
        The exit status and output (text).
    results : dict or None
        The results.json it wrote.
    scratch_left : list of Path
        What remained in the container's TMPDIR once it ended.
    solutions_left : list of Path
        The solution notebooks still in the archive's course once it ended.
    """

    fixture: str
    expected: float
    done: subprocess.CompletedProcess
    results: dict | None
    scratch_left: list
    solutions_left: list


@dataclass
class Container:
    """A Gradescope-layout container in which ``run_autograder`` ran three times, one after another."""

    runs: dict
    installed: dict
    course: Path


@pytest.fixture(scope="module")
def container(tmp_path_factory):
    """The archive of ps1 set up as Gradescope sets it up (``setup.sh``'s last two steps: the test's environment
    has the packages), then ``run_autograder`` on the right, the untouched and the naive fixtures, in that order:
    both tests below read these three runs (one container, built and graded once)."""
    tmp_path = tmp_path_factory.mktemp("gradescope")
    lock = tmp_path / "lock.txt"
    lock.write_text("numpy==2.1.3\n")
    archive = build_archive("ps1", tmp_path / "ps1_autograder.zip", lock=lock, timeout=120)
    root = tmp_path / "autograder"
    source = _extract(archive, root)
    course = source / "course"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), COURSE_PYTHON=sys.executable, TMPDIR=str(scratch))
    env.pop("PYTHONPATH", None)
    env.pop("NUMBA_CACHE_DIR", None)
    setup = (root / "source" / "setup.sh").read_text()
    assert setup.index("gradescope prepare ps1") < setup.index("manifest --out")
    for step in (["-m", "course_lib.grading.reporting.gradescope", "prepare", "ps1"],
                 ["-m", "course_lib.grading", "manifest", "--out", str(source / "manifest.json")]):
        subprocess.run([sys.executable, *step], cwd=course, env=env, check=True, capture_output=True, timeout=300)
    installed = _course_files(course)
    fixtures = make_fixtures.fixtures("ps1")
    runs = {}
    for name, expected in (("right", 10.0), (make_fixtures.UNTOUCHED, 0.0),
                           ("naive", float(sum(fixtures["naive"].points)))):
        for old in (root / "submission").iterdir():
            old.unlink()
        for old in (root / "results").glob("*"):  # a run that writes no results.json must not pass on the last one's
            old.unlink()
        nbformat.write(make_fixtures.notebook("ps1", fixtures[name]), root / "submission" / "ps1_nbody.ipynb")
        done = subprocess.run([str(root / "run_autograder")], cwd=root, env=env, capture_output=True, text=True,
                              timeout=600)
        results_file = root / "results" / "results.json"
        results = json.loads(results_file.read_text()) if results_file.exists() else None
        runs[name] = AutograderRun(name, expected, done, results, list(scratch.iterdir()),
                                   list((course / "solutions").glob("*.ipynb")))
    return Container(runs, installed, course)


@pytest.mark.parametrize("fixture", ["right", "naive"])
def test_run_autograder_end_to_end(container, fixture):
    run = container.runs[fixture]
    assert run.done.returncode == 0, run.done.stdout + run.done.stderr
    # The grader ran from the archive's copy of the course, and deleted its solution before the first grading.
    assert "deleted 1 solution notebook(s)" in container.runs["right"].done.stdout
    assert not run.solutions_left
    results = run.results
    validate(results)
    assert results["score"] == pytest.approx(run.expected)
    assert sum(t["score"] for t in results["tests"]) == pytest.approx(run.expected, abs=1e-3)
    assert any(t["visibility"] == "after_published" for t in results["tests"])
    assert all(t["visibility"] == "visible" for t in results["tests"] if "(hidden)" not in t["name"])
    if fixture == "naive":
        assert any("technique" in t["output"] and t["status"] == "failed" for t in results["tests"])


def test_run_autograder_three_times_in_one_container(container):
    """The autograder leaves the course it runs from as installed: ``run_autograder`` run three times in one
    container grades each submission right, and Numba's caches go to each run's own folder."""
    for i, run in enumerate(container.runs.values()):
        name = run.fixture
        assert run.done.returncode == 0, f"run {i + 1} ({name}): {run.done.stdout}{run.done.stderr}"
        assert "course files differ" not in run.done.stdout + run.done.stderr
        assert f"deleted {1 if i == 0 else 0} solution notebook(s)" in run.done.stdout
        validate(run.results)
        assert run.results["score"] == run.expected, (name, run.results["output"])
        # each run's own folder (its Numba cache) is gone once it ends
        assert not run.scratch_left
    # The course is as installed: no file changed or added, and no Numba cache file written into it.
    assert _course_files(container.course) == container.installed
    assert not [p for p in (container.course / "course_lib").rglob("*") if p.suffix in (".nbi", ".nbc")]


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
