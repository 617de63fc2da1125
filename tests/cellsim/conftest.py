"""Shared small inputs for the cellsim tests (the simulator costs ~0.1 ms per simulated thread)."""

import pytest

import course_lib  # noqa: F401  (chooses the backend first)
from course_lib import cellsim as cs


@pytest.fixture(scope="session")
def h0():
    """70 initial cells over ~40 fluorescence values around 200 (6 generations to phi_min = 11)."""
    return cs.lognormal_histogram(70, seed=1, median=200.0)


@pytest.fixture(scope="session")
def thesis_types():
    return cs.THESIS_TYPES
