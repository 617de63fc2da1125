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


def pytest_addoption(parser):
    parser.addoption("--numba-suite", action="store_true", default=False,
                     help="also run numba-cuda's own simulator tests on course_lib's scheduler "
                          "(tests/sim/test_numba_suite.py; a few minutes)")
