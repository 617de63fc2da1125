"""pytest plugin standing in for the ``conftest.py`` of numba-cuda's source tree.

numba-cuda's wheel ships its tests (``numba.cuda.tests``) but not the conftest that
defines what ``numba.cuda.testing.CUDATestCase`` asks for: the class-scoped fixture
``initialize_from_pytest_config`` and the ``--dump-failed-filechecks`` option it reads.
This plugin (loaded with ``-p tests.numba_suite.plugin``) provides both.
"""

import pytest


def pytest_addoption(parser):
    parser.addoption("--dump-failed-filechecks", action="store_true",
                     help="numba-cuda: dump reproducers of failing FileCheck tests (unused in the simulator)")


@pytest.fixture(scope="class")
def initialize_from_pytest_config(request):
    """Give each CUDATestCase class the option it expects (FileCheck tests read it)."""
    request.cls._dump_failed_filechecks = request.config.getoption("dump_failed_filechecks")
