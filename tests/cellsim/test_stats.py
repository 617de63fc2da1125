"""Do the statistics behave as distances and tests should?"""

import numpy as np
import pytest

from course_lib.cellsim import stats


def test_hellinger_limits():
    assert stats.hellinger([1, 2, 3], [2, 4, 6]) == 0.0
    assert stats.hellinger([1, 0], [0, 1]) == pytest.approx(1.0)
    assert stats.hellinger([1, 3], [3, 1]) == pytest.approx(stats.hellinger([3, 1], [1, 3]))
    with pytest.raises(ValueError, match="same number of bins"):
        stats.hellinger([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="empty"):
        stats.hellinger([0, 0], [1, 2])


def test_permutation_test_accepts_same_and_rejects_different_sources():
    rng = np.random.default_rng(0)
    same_a = rng.multinomial(500, [0.2, 0.3, 0.5], size=15)
    same_b = rng.multinomial(500, [0.2, 0.3, 0.5], size=15)
    other = rng.multinomial(500, [0.3, 0.3, 0.4], size=15)
    assert stats.permutation_pvalue(same_a, same_b, permutations=199)[1] >= stats.ALPHA
    assert stats.permutation_pvalue(same_a, other, permutations=199)[1] < stats.ALPHA


def test_compare_runs_needs_matching_runs(h0, thesis_types):
    from course_lib import cellsim as cs

    a = [cs.simulate_reference(h0, thesis_types, tau_max=50.0, phi_min=11.0, seed=s) for s in range(2)]
    b = [cs.simulate_reference(h0, thesis_types, tau_max=50.0, phi_min=20.0, seed=s) for s in range(2)]
    with pytest.raises(ValueError, match="share the bin edges"):
        stats.compare_runs(a, b)
    with pytest.raises(ValueError, match="at least 2 runs"):
        stats.compare_runs(a[:1], a)
