"""The root conftest's failure log: each failure's traceback is written as it happens (benchmarks/gpu_check.sh)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_each_failure_is_written_with_its_traceback_as_it_happens(tmp_path):
    tests = tmp_path / "test_planted.py"
    tests.write_text("def test_fails():\n    assert 1 + 1 == 3, 'planted failure'\n\n"
                     "def test_passes():\n    pass\n")
    log = tmp_path / "failures.txt"
    env = dict(os.environ, COURSE_FAILURES_FILE=str(log))
    env.pop("PYTEST_XDIST_WORKER", None)
    # The planted file lies outside the checkout: the root conftest comes in as a plugin (-p conftest).
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conftest",
                          "--rootdir", str(tmp_path), str(tests)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stdout + run.stderr
    text = log.read_text()
    assert "test_planted.py::test_fails (call)" in text
    assert "planted failure" in text
    assert "test_passes" not in text
