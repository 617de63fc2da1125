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


class NotebookRunner:
    """Executes a notebook as a student would and reads its score cell (problem-set tests)."""

    @staticmethod
    def execute(path):
        """Run every cell (errors recorded, not raised); return the notebook and its error outputs."""
        import nbformat
        from nbclient import NotebookClient

        nb = nbformat.read(path, as_version=4)
        NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
        return nb, errors

    @staticmethod
    def score(nb):
        """The text printed by the notebook's nbval-checked score cell (tagged ``nbval-check-output``)."""
        (cell,) = [c for c in nb.cells if "nbval-check-output" in c.metadata.get("tags", [])]
        return "".join(o.get("text", "") for o in cell.outputs)


@pytest.fixture
def notebooks():
    return NotebookRunner()
