"""The PrairieLearn question: its files follow PrairieLearn's external-grading documentation, and its
entrypoint, run the way PrairieLearn runs it (a /grade folder with serverFilesCourse/, student/ and
data/data.json; no network), writes a results.json of PrairieLearn's format."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course_lib.cli import main as course_main

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import make_fixtures  # noqa: E402

#: externalGradingOptions' documented fields (PrairieLearn's docs/Dev-Guide/How-To-Guide/externalGrading.md).
OPTIONS = {"enabled", "image", "entrypoint", "serverFilesCourse", "timeout", "enableNetworking", "environment"}
TEST_FIELDS = {"name", "description", "points", "max_points", "message", "output", "images"}


def _no_network() -> list:
    """A command prefix giving the job a network namespace of its own (no network), as PrairieLearn's
    container has, where this machine allows it."""
    if shutil.which("unshare") and subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode == 0:
        return ["unshare", "-rn"]
    return []


def validate(results: dict) -> None:
    """results.json against PrairieLearn's documented format."""
    if results.get("gradable", True) is False:
        assert results["format_errors"] and all(isinstance(e, str) for e in results["format_errors"])
        return
    assert 0.0 <= results["score"] <= 1.0
    for test in results["tests"]:
        assert set(test) <= TEST_FIELDS and {"name", "points", "max_points"} <= set(test)
        assert 0 <= test["points"] <= test["max_points"] + 1e-9
    assert len(json.dumps(results)) < 2**20  # PrairieLearn's 1 MB limit


def _job(grade: Path, question: dict, server_files: Path, student_files: dict, env: dict):
    """One external grading job as PrairieLearn runs it: a fresh /grade, the entrypoint made executable."""
    if grade.exists():
        shutil.rmtree(grade)
    options = question["externalGradingOptions"]
    for folder in options["serverFilesCourse"]:
        shutil.copytree(server_files / folder, grade / "serverFilesCourse" / folder)
    (grade / "student").mkdir(parents=True)
    for name, content in student_files.items():
        (grade / "student" / name).write_bytes(content)
    (grade / "data").mkdir()
    (grade / "data" / "data.json").write_text(json.dumps({"params": {}, "submitted_answers": {}}))
    entrypoint = [options["entrypoint"][0].replace("/grade", str(grade), 1), *options["entrypoint"][1:]]
    os.chmod(entrypoint[0], 0o755)
    done = subprocess.run(_no_network() + entrypoint, env=dict(env, GRADE_ROOT=str(grade)), capture_output=True,
                          text=True, timeout=options["timeout"])
    return done, json.loads((grade / "results" / "results.json").read_text())


def test_question_files_and_a_job_graded_the_way_prairielearn_runs_it(tmp_path):
    lock = tmp_path / "lock.txt"
    lock.write_text("numpy==2.1.3\n")
    out = tmp_path / "pl"
    assert course_main(["grading", "prairielearn", "nbody", "--out", str(out), "--lock", str(lock), "--timeout",
                        "400", "--test-timeout", "120", "--image", "example/gpu-grader:ps1"]) == 0
    question = json.loads((out / "questions" / "ps1_nbody" / "info.json").read_text())
    assert question["gradingMethod"] == "External" and question["type"] == "v3"
    options = question["externalGradingOptions"]
    assert set(options) <= OPTIONS and options["enabled"] is True and options["enableNetworking"] is False
    assert options["image"] == "example/gpu-grader:ps1" and 0 < options["timeout"] <= 600
    assert options["entrypoint"][0].startswith("/grade/serverFilesCourse/course_grader/")
    html = (out / "questions" / "ps1_nbody" / "question.html").read_text()
    assert '<pl-file-upload file-names="ps1_nbody.ipynb">' in html and "<pl-external-grader-results>" in html
    dockerfile = (out / "grader_image" / "Dockerfile").read_text()
    assert "COPY course /opt/course" in dockerfile and "-c requirements/lock.txt -e" in dockerfile
    assert dockerfile.index("gradescope prepare ps1") < dockerfile.index("manifest --out /opt/course/manifest.json")
    course = out / "grader_image" / "course"
    assert (course / "course_lib" / "grading" / "running" / "grader.py").is_file()
    assert [p.name for p in (course / "solutions").iterdir()] == ["ps1_nbody.ipynb"]
    assert [p.name for p in (course / "grading_resources" / "hints").iterdir()] == ["ps1_nbody.json"]
    assert (course / "requirements" / "lock.txt").read_bytes() == lock.read_bytes()
    # The image's build steps after the install (the test's environment has the packages)
    env = dict(os.environ, COURSE_DIR=str(course), COURSE_PYTHON=sys.executable,
               COURSE_GRADING_MANIFEST=str(course / "manifest.json"), TMPDIR=str(tmp_path))
    env.pop("PYTHONPATH", None)
    env.pop("NUMBA_CACHE_DIR", None)
    for step in (["-m", "course_lib.grading.reporting.gradescope", "prepare", "ps1"],
                 ["-m", "course_lib.grading", "manifest", "--out", str(course / "manifest.json")]):
        subprocess.run([sys.executable, *step], cwd=course, env=env, check=True, capture_output=True, timeout=300)

    fixtures = make_fixtures.fixtures("ps1")
    naive = nbformat.writes(make_fixtures.notebook("ps1", fixtures["naive"])).encode()
    done, results = _job(tmp_path / "grade", question, out / "serverFilesCourse", {"ps1_nbody.ipynb": naive}, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "deleted 1 solution notebook(s)" in done.stdout
    validate(results)
    expected = sum(fixtures["naive"].points) / 10
    assert results["gradable"] is True and results["score"] == pytest.approx(expected)
    assert sum(t["points"] for t in results["tests"]) == pytest.approx(10 * expected, abs=1e-3)
    assert sum(t["max_points"] for t in results["tests"]) == pytest.approx(10)
    assert any("(hidden)" in t["name"] for t in results["tests"])
    assert any("technique" in t["output"] and t["message"] == "failed" for t in results["tests"])

    # A second job from the same image: an upload that is not a notebook is not gradable (the attempt is kept)
    done, results = _job(tmp_path / "grade", question, out / "serverFilesCourse", {"ps1_nbody.ipynb": b"\xff\x00"},
                         env)
    assert done.returncode == 0, done.stdout + done.stderr
    validate(results)
    assert results["gradable"] is False and "not a notebook" in results["format_errors"][0]
    # and no upload at all
    done, results = _job(tmp_path / "grade", question, out / "serverFilesCourse", {}, env)
    assert results["gradable"] is False and "no .ipynb file" in results["format_errors"][0]
    assert not [p for p in (course / "course_lib").rglob("*") if p.suffix in (".nbi", ".nbc")]


def test_bad_limits_are_refused(tmp_path, capsys):
    assert course_main(["grading", "prairielearn", "ps1", "--out", str(tmp_path), "--timeout", "900"]) == 2
    assert "PrairieLearn allows 1 to 600 s" in capsys.readouterr().err
