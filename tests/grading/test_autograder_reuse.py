"""The autograder leaves the course it runs from as installed: ``run_autograder`` run three times in one
Gradescope-layout container grades each submission right, Numba's caches go to each run's own folder, and
grading problem set 1 imports (so compiles) nothing of another unit."""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat

from course_lib.grading.reporting.gradescope import build_archive

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_fixtures  # noqa: E402
from tests.grading.test_gradescope import _extract, validate  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _course_files(course: Path) -> dict:
    """``relative path -> bytes`` of the installed course's package, caches apart."""
    return {p.relative_to(course).as_posix(): p.read_bytes() for p in (course / "course_lib").rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


def test_run_autograder_three_times_in_one_container(tmp_path):
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
    # setup.sh's last two steps (the ones before install packages, which the test's environment has)
    setup = (root / "source" / "setup.sh").read_text()
    assert setup.index("gradescope prepare ps1") < setup.index("manifest --out")
    for step in (["-m", "course_lib.grading.reporting.gradescope", "prepare", "ps1"],
                 ["-m", "course_lib.grading", "manifest", "--out", str(source / "manifest.json")]):
        subprocess.run([sys.executable, *step], cwd=course, env=env, check=True, capture_output=True, timeout=300)
    installed = _course_files(course)
    fixtures = make_fixtures.fixtures("ps1")
    runs = [("right", 10.0), (make_fixtures.UNTOUCHED, 0.0), ("naive", float(sum(fixtures["naive"].points)))]
    for i, (name, expected) in enumerate(runs):
        for old in (root / "submission").iterdir():
            old.unlink()
        nbformat.write(make_fixtures.notebook("ps1", fixtures[name]), root / "submission" / "ps1_nbody.ipynb")
        done = subprocess.run([str(root / "run_autograder")], cwd=root, env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, f"run {i + 1} ({name}): {done.stdout}{done.stderr}"
        assert "course files differ" not in done.stdout + done.stderr
        assert f"deleted {1 if i == 0 else 0} solution notebook(s)" in done.stdout
        results = json.loads((root / "results" / "results.json").read_text())
        validate(results)
        assert results["score"] == expected, (name, results["output"])
        # each run's own folder (its Numba cache) is gone once it ends
        assert not list(scratch.iterdir())
    # The course is as installed: no file changed or added, and no Numba cache file written into it.
    assert _course_files(course) == installed
    assert not [p for p in (course / "course_lib").rglob("*") if p.suffix in (".nbi", ".nbc")]


def test_grading_problem_set_1_imports_no_other_unit(tmp_path):
    """Looking up a problem set reads the units' PROBLEM_SET lines instead of importing every unit (the HAC
    and ICA CPU code is compiled with Numba's on-disk cache)."""
    fixtures = make_fixtures.fixtures("ps1")
    nbformat.write(make_fixtures.notebook("ps1", fixtures["right"]), tmp_path / "ps1_nbody.ipynb")
    script = f"""
import sys
from course_lib.grading.running.grader import grade
rows = grade("ps1", [{str(tmp_path / "ps1_nbody.ipynb")!r}], {str(tmp_path / "grades.csv")!r}, progress=False,
             sandbox="off", log=lambda *a: None)
print([r["reason"] for r in rows if r["status"] != "passed"])
print(sum(float(r["points"]) for r in rows))
print(sorted({{m.split(".")[1] for m in sys.modules if m.startswith("course_lib.") and m.count(".") >= 1}}))
"""
    env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    reasons, points, modules = done.stdout.strip().splitlines()[-3:]
    assert float(points) == 10.0, reasons
    imported = set(ast.literal_eval(modules))
    assert "nbody" in imported
    assert not imported & {"spmv", "bfs", "poisson", "hac", "ica", "cellsim", "colocation"}, imported
