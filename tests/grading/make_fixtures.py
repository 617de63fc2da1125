"""The graded fixtures of every problem set, by path: ``tests/grading/fixtures/`` holds them, one module
a problem set (see its docstring); this file is their entry point for ``course_lib.grading.reporting.throughput``
(which loads it by path), for the tests that import it, and as a script::

    python tests/grading/make_fixtures.py ps1 /tmp/ps1-fixtures   # to look at them
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # loaded by path, or run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from tests.grading.fixtures import (FIXTURES, UNTOUCHED, Fixture, answer_cell, fixtures, notebook, run_cell,  # noqa: E402
                                   write)
from tests.grading.fixtures._common import edit  # noqa: E402

__all__ = ["FIXTURES", "ROOT", "UNTOUCHED", "Fixture", "answer_cell", "edit", "fixtures", "notebook", "run_cell", "write"]

if __name__ == "__main__":
    for written in write(sys.argv[1], sys.argv[2]):
        print(written)
