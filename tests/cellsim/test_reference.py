"""Is the event-driven reference right, and do the simulators agree with it statistically?"""

import numpy as np
import pytest

from course_lib import cellsim as cs
from course_lib.cellsim import reference

KW = {"tau_max": 200.0, "phi_min": 11.0}
RUNS = 20


def test_recorded_cells_obey_the_model(h0, thesis_types):
    result, cells = cs.simulate_reference(h0, thesis_types, seed=5, return_cells=True, **KW)
    assert cells["id"].size == result.recorded
    phi0 = h0.fluorescence
    # fluorescence is an initial value halved once per generation, and stays >= phi_min after a division
    origin = cells["fluorescence"] * 2.0 ** cells["generation"]
    assert np.all(np.isin(origin, phi0))
    assert np.all((cells["generation"] == 0) | (cells["fluorescence"] >= 11.0))
    assert np.all(cells["birth"] <= 200.0)
    # ids are slots of the binary tree: below L * 2**generation
    assert np.all(cells["id"] < h0.n_cells * 2 ** cells["generation"])
    # quiescent cells never divide
    assert np.all(cells["generation"][cells["type"] == 2] == 0)


def test_numpy_streams_are_reproducible(h0, thesis_types):
    a = cs.simulate_reference(h0, thesis_types, seed=8, streams="numpy", **KW)
    assert a.same_as(cs.simulate_reference(h0, thesis_types, seed=8, streams="numpy", **KW))


@pytest.fixture(scope="module")
def philox_runs(thesis_types):
    h0 = cs.lognormal_histogram(300, seed=1, median=300.0)
    # The CPU version equals the kernels exactly (test_api), so it stands for them here.
    return h0, [cs.simulate(h0, thesis_types, seed=s, method="cpu", **KW) for s in range(RUNS)]


def test_counter_based_and_numpy_streams_simulate_the_same_model(philox_runs, thesis_types):
    """Over 20 seeds each: Hellinger <= 0.05 and permutation / Mann-Whitney p-values >= 0.01."""
    h0, runs = philox_runs
    numpy_runs = [cs.simulate_reference(h0, thesis_types, seed=100 + s, streams="numpy", **KW) for s in range(RUNS)]
    comparison = reference.compare_runs(runs, numpy_runs)
    assert comparison.agree, str(comparison)


def test_the_comparison_detects_a_ten_percent_slower_division(philox_runs, thesis_types):
    h0, runs = philox_runs
    means = thesis_types.means.copy()
    means[:2] *= 1.1
    slower = cs.CellTypes.from_arrays(thesis_types.proportions, means, thesis_types.stds)
    other = [cs.simulate_reference(h0, slower, seed=100 + s, streams="numpy", **KW) for s in range(RUNS)]
    comparison = reference.compare_runs(runs, other)
    assert not comparison.agree
    assert comparison.pvalue_generation_type < reference.ALPHA


# Statistics: do the distance and the tests behave as they should?


def test_hellinger_limits():
    assert reference.hellinger([1, 2, 3], [2, 4, 6]) == 0.0
    assert reference.hellinger([1, 0], [0, 1]) == pytest.approx(1.0)
    assert reference.hellinger([1, 3], [3, 1]) == pytest.approx(reference.hellinger([3, 1], [1, 3]))
    with pytest.raises(ValueError, match="same number of bins"):
        reference.hellinger([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="empty"):
        reference.hellinger([0, 0], [1, 2])


def test_permutation_test_accepts_same_and_rejects_different_sources():
    rng = np.random.default_rng(0)
    same_a = rng.multinomial(500, [0.2, 0.3, 0.5], size=15)
    same_b = rng.multinomial(500, [0.2, 0.3, 0.5], size=15)
    other = rng.multinomial(500, [0.3, 0.3, 0.4], size=15)
    assert reference.permutation_pvalue(same_a, same_b, permutations=199)[1] >= reference.ALPHA
    assert reference.permutation_pvalue(same_a, other, permutations=199)[1] < reference.ALPHA


def test_compare_runs_needs_matching_runs(h0, thesis_types):
    a = [cs.simulate_reference(h0, thesis_types, tau_max=50.0, phi_min=11.0, seed=s) for s in range(2)]
    b = [cs.simulate_reference(h0, thesis_types, tau_max=50.0, phi_min=20.0, seed=s) for s in range(2)]
    with pytest.raises(ValueError, match="share the bin edges"):
        reference.compare_runs(a, b)
    with pytest.raises(ValueError, match="at least 2 runs"):
        reference.compare_runs(a[:1], a)
    with pytest.raises(ValueError, match="runs_b must be a list of SimulationResult"):
        reference.compare_runs(a, [a[0].counts, a[1].counts])
    with pytest.raises(ValueError, match="p must hold counts >= 0"):
        reference.hellinger([-1, 2], [1, 2])
