"""Shared inputs of the Unit 4 tests: small images (the simulator costs ~150 us per thread)."""

import numpy as np
import pytest

from course_lib import poisson


@pytest.fixture
def edge_pair():
    """Synthetic 13 x 11 source/target; the mask touches the left edge and the top-left corner."""
    source, target, _ = poisson.synthetic_pair(13, 11, seed=5)
    mask = np.zeros((13, 11), bool)
    mask[:9, :6] = True
    return source, target, mask


@pytest.fixture
def single_interior_pair():
    """5 x 6 images and a 3 x 3 mask block: exactly one strict-interior pixel, at (2, 2)."""
    source, target, _ = poisson.synthetic_pair(5, 6, seed=2)
    mask = np.zeros((5, 6), bool)
    mask[1:4, 1:4] = True
    return source, target, mask

# The submissions under submissions/ are graded by test_questions.py, not run by nbval.
collect_ignore = ["submissions"]
