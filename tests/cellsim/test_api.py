"""Do all simulators give exactly the same result for the same seed, whatever the launch, and refuse bad input?"""

import numpy as np
import pytest

from course_lib import cellsim as cs
from course_lib.cellsim import model

KW = {"tau_max": 150.0, "phi_min": 11.0}


@pytest.fixture(scope="module")
def reference(h0, thesis_types):
    return cs.simulate(h0, thesis_types, seed=3, method="reference", **KW)


@pytest.mark.parametrize("method", ["compact", "tree", "cpu"])
def test_every_method_equals_the_reference(h0, thesis_types, reference, method):
    result = cs.simulate(h0, thesis_types, seed=3, method=method, **KW)
    assert result.same_as(reference), (result, reference)
    assert result.recorded > 0 and result.divisions > 0 and result.discarded > 0


def test_the_counts_add_up(reference, h0):
    assert reference.counts.sum() + reference.outside == reference.recorded
    # every division makes two cells; each cell is recorded, discarded or divides
    assert reference.recorded + reference.discarded == h0.n_cells + reference.divisions
    assert reference.level_counts.shape == (model.depth_bound(h0.fluorescence.max(), 11.0) + 1, 3)


@pytest.mark.parametrize("block", [2, 3, 33, 64])
def test_the_launch_configuration_does_not_change_the_result(h0, thesis_types, reference, block):
    assert cs.simulate(h0, thesis_types, seed=3, block=block, **KW).same_as(reference)


def test_batches_under_a_small_budget_give_the_same_result(h0, thesis_types, reference):
    budget = 5000
    result = cs.simulate(h0, thesis_types, seed=3, memory_budget=budget, block=16, **KW)
    assert result.same_as(reference)
    assert result.stats["peak_device_bytes"] <= budget
    unbatched = cs.simulate(h0, thesis_types, seed=3, block=16, **KW)
    assert result.stats["batches"] > unbatched.stats["batches"]
    assert result.stats["cells_per_batch"] < h0.n_cells


def test_memory_stays_within_the_budget_whatever_the_depth(thesis_types):
    """One initial value, deep trees (phi_0 / phi_min = 2**9): at most depth + 1 batches live at once."""
    h0 = cs.single_value_histogram(6, fluorescence=512.0)
    budget = 10 * model.frame_bytes(8, 8)
    result = cs.simulate(h0, thesis_types, tau_max=500.0, phi_min=1.0, seed=1, memory_budget=budget, block=8)
    assert result.stats["peak_device_bytes"] <= budget
    assert result.same_as(cs.simulate(h0, thesis_types, tau_max=500.0, phi_min=1.0, seed=1, method="cpu"))


def test_a_budget_below_one_cell_per_generation_is_refused(h0, thesis_types):
    with pytest.raises(ValueError, match="memory_budget of 100 bytes cannot hold one cell per generation"):
        cs.simulate(h0, thesis_types, seed=3, memory_budget=100, **KW)


def test_the_tree_hits_the_memory_wall(h0, thesis_types):
    with pytest.raises(ValueError, match="memory wall"):
        cs.simulate(h0, thesis_types, seed=3, method="tree", memory_budget=20_000, **KW)


@pytest.mark.parametrize("n_cells", [1, 31, 33, 37])
def test_awkward_population_sizes(thesis_types, n_cells):
    h0 = cs.lognormal_histogram(n_cells, seed=n_cells, median=100.0)
    expected = cs.simulate(h0, thesis_types, tau_max=120.0, phi_min=8.7, seed=n_cells, method="reference")
    for method in ("compact", "tree"):
        assert cs.simulate(h0, thesis_types, tau_max=120.0, phi_min=8.7, seed=n_cells, method=method,
                           block=32).same_as(expected)


def test_edge_cases_of_the_stop_rules(h0):
    one_type = cs.CellTypes.from_text("1.0 20 0")  # every timer is exactly 20 h
    # tau_max = 0: no division at all, every cell recorded at generation 0 with its own fluorescence.
    r = cs.simulate(h0, one_type, tau_max=0.0, phi_min=11.0, method="compact")
    assert r.divisions == 0 and r.discarded == 0 and r.recorded == h0.n_cells
    np.testing.assert_array_equal(r.counts, cs.simulate(h0, one_type, tau_max=0.0, phi_min=11.0,
                                                        method="reference").counts)
    # A division exactly at tau_max happens (tau + timer <= tau_max).
    r = cs.simulate(h0, one_type, tau_max=20.0, phi_min=1.0, method="compact")
    assert r.divisions == h0.n_cells and r.by_generation.tolist()[:2] == [0, 2 * h0.n_cells]
    # phi_min above every phi_0 / 2: every cell that would divide is discarded.
    r = cs.simulate(h0, one_type, tau_max=100.0, phi_min=1e6, method="compact")
    assert r.discarded == h0.n_cells and r.recorded == 0 and r.divisions == 0


def test_quiescent_cells_are_recorded_unchanged(h0):
    quiet = cs.CellTypes.from_text("1.0 -1 -1")
    for method in ("compact", "tree", "cpu", "reference"):
        r = cs.simulate(h0, quiet, tau_max=720.0, phi_min=11.0, method=method)
        assert r.recorded == h0.n_cells and r.divisions == 0 and r.by_generation[0] == h0.n_cells


def test_edges_given_by_the_user_and_cells_outside_them(h0, thesis_types, reference):
    edges = np.array([20.0, 40.0, 80.0, 160.0])
    results = [cs.simulate(h0, thesis_types, seed=3, bins=edges, method=m, **KW) for m in ("reference", "compact")]
    assert results[0].same_as(results[1])
    assert results[0].outside > 0 and results[0].recorded == reference.recorded


def test_seeds_matter_and_large_seeds_use_the_high_key_word(h0, thesis_types, reference):
    other = cs.simulate(h0, thesis_types, seed=4, method="cpu", **KW)
    assert not other.same_as(reference)
    big = [cs.simulate(h0, thesis_types, seed=3 + 2**40, method=m, **KW) for m in ("cpu", "compact")]
    assert big[0].same_as(big[1]) and not big[0].same_as(reference)


@pytest.mark.parametrize("kwargs, message", [
    ({"method": "gpu"}, "method must be one of"),
    ({"tau_max": -1.0}, "tau_max must be a finite number >= 0, got -1.0"),
    ({"tau_max": float("nan")}, "tau_max must be a finite number >= 0, got nan"),
    ({"phi_min": 0.0}, "phi_min must be a finite positive number"),
    ({"seed": -1}, "seed must be None or a non-negative integer"),
    ({"seed": 1.5}, "seed must be None or a non-negative integer"),
    ({"block": 0}, "block must be an integer between 1 and 1024"),
    ({"block": 1}, "at least 2"),
    ({"block": 2048}, "block must be an integer between 1 and 1024"),
    ({"memory_budget": 0}, "memory_budget must be a positive integer"),
    ({"method": "cpu", "block": 32}, "only apply to the device methods"),
    ({"bins": [3.0, 2.0]}, "strictly increasing"),
    ({"bins": [3.0]}, "at least 2 edges"),
    ({"bins": np.linspace(1, 2, 5000)}, "at most 4096"),
])
def test_bad_arguments_are_refused(h0, thesis_types, kwargs, message):
    args = {**KW, **kwargs}
    with pytest.raises(ValueError, match=message):
        cs.simulate(h0, thesis_types, **args)


def test_bad_inputs_are_refused_before_any_work(thesis_types):
    with pytest.raises(ValueError, match="histogram is empty"):
        cs.simulate(([], []), thesis_types, **KW)
    with pytest.raises(ValueError, match="sum to 1"):
        cs.simulate("100 5\n", "0.5 10 1\n", **KW)
    with pytest.raises(ValueError, match="beyond 63 bits"):
        cs.simulate(([2.0**70], [1000]), "1 10 1\n", tau_max=1.0, phi_min=1.0)


def test_default_edges_cover_every_recorded_cell(h0, reference):
    assert reference.outside == 0
    edges = cs.default_edges(h0, 11.0)
    assert edges[0] <= min(11.0, h0.fluorescence.min()) and edges[-1] >= h0.fluorescence.max()
    assert np.allclose(np.diff(np.log2(edges[1:-1])), 1 / 8)
