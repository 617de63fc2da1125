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


#: Tests most exposed to a new release of a dependency (pickling, the simulator's internals, notebooks,
#: widgets, plots, the lock itself): ``.ci/drift`` runs them (``-m drift``) with the newest releases.
DRIFT_EXPOSED = ("tests/sim/", "tests/test_lock.py", "tests/test_packaging.py", "tests/test_compile_check.py",
                 "tests/grading/test_notebooks.py", "tests/grading/test_nbgrader.py", "tests/grading/test_release.py",
                 "tests/test_show.py", "/test_widgets.py", "/test_plots.py")

#: Distributions whose version a test run should state (the drift check compares runs by them).
REPORTED_VERSIONS = ("numpy", "numba", "numba-cuda", "cloudpickle", "nbclient", "nbformat", "ipywidgets", "matplotlib")


def pytest_report_header(config):
    from importlib import metadata

    versions = []
    for name in REPORTED_VERSIONS:
        try:
            versions.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{name} (not installed)")
    return [f"course backend: {device.backend()} ({device.info()})", "versions: " + ", ".join(versions)]


def pytest_collection_modifyitems(config, items):
    for item in items:
        path = item.path.as_posix()
        if any(part in path for part in DRIFT_EXPOSED):
            item.add_marker(pytest.mark.drift)


gpu_only = pytest.mark.skipif(device.is_simulator(), reason="needs a real GPU: the simulator has no timings")
sim_only = pytest.mark.skipif(not device.is_simulator(),
                              reason="tests the simulator's own machinery (a GPU has none to test)")


class NotebookRunner:
    """Executes a notebook as a student would and reads its score cell (problem-set tests)."""

    @staticmethod
    def execute(path):
        """Run every cell (errors recorded, not raised); return the notebook and its error outputs."""
        import nbformat
        from course_lib.site import notebook_client  # waits for the kernel in slices: no stall on a missed wake-up

        nb = nbformat.read(path, as_version=4)
        notebook_client(nb, timeout=600, kernel_name="python3", allow_errors=True,
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
