"""Shared test setup: the backend is chosen before anything imports numba.cuda.

The same suite runs in the simulator (no GPU: CI, laptops) and on a GPU
(``COURSE_BACKEND=gpu``); sizes come from :func:`course_lib.pick`.
"""

import numpy as np
import pytest

import course_lib  # noqa: F401  (configures the backend first)
from course_lib import device

#: Sizes that are awkward on purpose for block size ``block``: 1, block - 1, block + 1, primes.
def awkward_sizes(block):
    return sorted({1, 2, block - 1, block, block + 1, 2 * block + 3, 7, 31})


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)


def pytest_report_header(config):
    return f"course backend: {device.backend()} ({device.info()})"


gpu_only = pytest.mark.skipif(device.is_simulator(), reason="needs a real GPU: the simulator has no timings")
