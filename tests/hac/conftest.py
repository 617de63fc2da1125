"""Shared fixtures of the Unit 5 tests."""

import pytest


@pytest.fixture(scope="session")
def fibers():
    """20 parcels of fibers and their CPU clustering (shared by the plot and explorer tests)."""
    from course_lib import hac

    fg = hac.fiber_graph(n_parcels=20)
    return fg, hac.cluster(fg.graph, "cpu")
