"""Root pytest setup for tests/, lessons/ and solutions/ (nbval).

Notebook kernels (nbval, nbclient in tests) are child processes: put this checkout first
on their PYTHONPATH so they import the same course_lib as the tests, installed or not.
"""

import os
from pathlib import Path

ROOT = str(Path(__file__).resolve().parent)
os.environ["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                                                     if p and p != ROOT])

import course_lib  # noqa: E402,F401  (chooses the backend before anything imports numba.cuda)

#: Under `--dist loadfile` the longest test files go first (tests/scheduling.py).
pytest_plugins = ["tests.scheduling"]


def pytest_configure(config):
    # Only a real GPU warns that a grid of fewer than 128 blocks under-uses it (or that host arrays are
    # copied): expected for the tests' small inputs (sizes 0, 1, block+1). numba-cuda raises its own
    # NumbaPerformanceWarning, not a subclass of numba's that pyproject.toml ignores, and naming it there
    # would import numba.cuda before course_lib chooses the backend; hence here, after that import.
    config.addinivalue_line("filterwarnings", "ignore::numba.cuda.core.errors.NumbaPerformanceWarning")


def pytest_runtest_logreport(report):
    # A run stopped at its time limit prints no failure's traceback (pytest prints them at the end), so
    # benchmarks/gpu_check.sh names a file here that gets each failure as it happens.
    path = os.environ.get("COURSE_FAILURES_FILE")
    if path and report.failed and not os.environ.get("PYTEST_XDIST_WORKER"):  # the controller writes it once
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"=== {report.nodeid} ({report.when})\n{report.longreprtext[-6000:]}\n")


def pytest_addoption(parser):
    parser.addoption("--numba-suite", action="store_true", default=False,
                     help="also run numba-cuda's own simulator tests on course_lib's scheduler "
                          "(tests/sim/test_numba_suite.py; a few minutes)")
