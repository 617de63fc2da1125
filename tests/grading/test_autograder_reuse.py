"""Grading problem set 1 imports (so compiles) nothing of another unit. (``run_autograder`` run three times in
one Gradescope-layout container is tested in ``test_gradescope.py``, on the runs its end-to-end tests read.)"""

import ast
import os
import subprocess
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_fixtures  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


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
