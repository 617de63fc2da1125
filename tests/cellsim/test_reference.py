"""Is the event-driven reference right, and do the simulators agree with it statistically?"""

import numpy as np
import pytest

from course_lib import cellsim as cs
from course_lib.cellsim import stats

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
    comparison = stats.compare_runs(runs, numpy_runs)
    assert comparison.agree, str(comparison)


def test_the_comparison_detects_a_ten_percent_slower_division(philox_runs, thesis_types):
    h0, runs = philox_runs
    means = thesis_types.means.copy()
    means[:2] *= 1.1
    slower = cs.CellTypes.from_arrays(thesis_types.proportions, means, thesis_types.stds)
    other = [cs.simulate_reference(h0, slower, seed=100 + s, streams="numpy", **KW) for s in range(RUNS)]
    comparison = stats.compare_runs(runs, other)
    assert not comparison.agree
    assert comparison.pvalue_generation_type < stats.ALPHA
