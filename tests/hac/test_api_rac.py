"""Do the rounds of reciprocal pairs make the sequential algorithm's tree, race-free, in one launch?"""

from fractions import Fraction

import numpy as np
import pytest

from course_lib import hac
from course_lib.hac import data
from course_lib.hac._rac import GRID_SYNCS_PER_ROUND, RoundsClustering, rounds_kernel
from course_lib.hac._rounds import average_link_rounds
from course_lib.sim import check, get_seed, record, set_seed
from tests.conftest import sim_only

AWKWARD = {
    "one": lambda: data.path_graph(1),
    "two": lambda: data.path_graph(2),
    "path_7": lambda: data.path_graph(7),
    "star_13": lambda: data.star_graph(13),
    "components_and_isolated": lambda: data.components_graph((5, 3), n_isolated=2, seed=1),
    "random_11": lambda: data.random_graph(11, 0.5, seed=7),
}


# float64 once: every dtype is another typing of the cooperative kernel in the simulator (seconds per process).
@pytest.mark.parametrize("name, dtype", [(name, np.float32) for name in AWKWARD] + [("random_11", np.float64)])
def test_the_same_tree_as_the_float64_cpu_reference(name, dtype):
    """Distinct affinities, no near ties: the same merges, numbered the same; heights to the dtype's rounding."""
    g = AWKWARD[name]()
    expected = hac.cluster(g, "cpu", dtype=np.float64)
    got = hac.cluster(g, "gpu_rac", dtype=dtype, block=8)
    assert got.method == "gpu_rac" and got.height.dtype == dtype
    assert np.array_equal(got.parent, expected.parent)
    rtol = 1e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got.merge_heights, expected.merge_heights, rtol=rtol)


def test_no_elements_is_refused_clearly():
    with pytest.raises(ValueError, match="empty"):
        hac.cluster((np.zeros(0, int), np.zeros(0, int), np.zeros(0)), "gpu_rac")


@pytest.mark.parametrize("seed", [1, 2])
def test_bit_for_bit_the_numpy_rounds_on_exact_ties_whatever_the_block_order(seed):
    """The kernel's atomics run in any order; the tie rule (largest average, then smallest pair key) does not care."""
    g = data.tied_graph(13, density=0.5, levels=2, seed=seed)
    expected = average_link_rounds(g, np.float32)
    before = get_seed()
    try:
        for sim_seed in (3, 4):
            set_seed(sim_seed)
            got = RoundsClustering(g, np.float32, 8).run()
            assert np.array_equal(got.parent, expected.parent) and np.array_equal(got.height, expected.height)
    finally:
        set_seed(before)


@pytest.mark.parametrize("value", [0.0, 1.0])
def test_when_every_pair_ties_the_tie_rule_is_the_cpu_versions(value):
    """All affinities equal (explicit zeros too): the averages stay exact, and the smallest pair key wins, as the
    lowest entry index does in the sequential version: the same tree. An increasing path is the rounds' worst
    case: one reciprocal pair per round but the last (7 rounds for 8 merges)."""
    base = data.random_graph(12, 0.4, seed=3)
    g = hac.as_graph((base.src, base.dst, np.full(base.n_entries, value)))
    expected = hac.cluster(g, "cpu", dtype=np.float64)
    assert np.array_equal(hac.cluster(g, "gpu_rac", block=8).parent, expected.parent)
    i = np.arange(8)
    path = hac.from_pairs(9, i, i + 1, 1.0 + i)
    tree, stats = average_link_rounds(path, stats=True)
    assert np.array_equal(tree.parent, hac.cluster(path, "cpu").parent) and stats.rounds == 7


def _greedy_replay(g, tree):
    """Replay the tree's merges in order in exact arithmetic: each must be a largest average at its step."""
    n = g.n_elements
    sums = {}
    for a, b, w in zip(g.src, g.dst, g.weight):
        if a < b:
            sums[(int(a), int(b))] = Fraction(float(w))
    size = {i: 1 for i in range(n)}
    for q, (a, b) in enumerate(tree.children()):
        average = {pair: s / (size[pair[0]] * size[pair[1]]) for pair, s in sums.items()}
        top = max(average.values())
        assert average[(int(a), int(b))] == top, f"merge {q} is not a largest average"
        assert float(top) == pytest.approx(float(tree.merge_heights[q]), rel=1e-6)
        k = n + q
        size[k] = size[a] + size[b]
        merged = {}
        for (u, v), s in sums.items():
            u, v = (k if u in (a, b) else u), (k if v in (a, b) else v)
            if u != v:
                key = (min(u, v), max(u, v))
                merged[key] = merged.get(key, 0) + s
        sums = merged


@pytest.mark.parametrize("seed", [1, 5])
def test_on_exact_ties_every_merge_is_a_largest_average(seed):
    """Fiber counts tie exactly. The CPU version breaks a tie by its entry order, but its weighted averages round
    (1/3 + 2/3 need not be 1), so which tied pair it takes can differ; the rounds add exact sums. Either way the
    tree must be an average-linkage tree: replayed in exact arithmetic, each merge is a largest average."""
    g = data.tied_graph(12, density=0.5, levels=2, seed=seed)
    _greedy_replay(g, hac.cluster(g, "gpu_rac", block=8))


def test_where_float32_swaps_nearly_equal_affinities_the_difference_is_bounded():
    """Three pairs within 2e-9 of each other: equal in float32, ordered in float64. The merges are numbered in
    another order (parents differ), the tree means the same (cophenetic correlation, heights)."""
    i, j = np.array([0, 1, 2, 3, 4]), np.array([1, 2, 3, 4, 5])
    w = np.array([1.0 + 1e-9, 0.1, 1.0, 0.2, 1.0 + 2e-9])
    g = hac.from_pairs(6, i, j, w)
    reference = hac.cluster(g, "cpu", dtype=np.float64)
    got = hac.cluster(g, "gpu_rac", block=8)
    assert np.array_equal(got.parent, average_link_rounds(g, np.float32).parent)
    assert not np.array_equal(got.parent, reference.parent)  # float32 sees ties the float64 run does not
    assert hac.cophenetic_correlation(got, reference) > 1 - 1e-6
    np.testing.assert_allclose(np.sort(got.merge_heights), np.sort(reference.merge_heights), rtol=1e-6)


def test_float32_at_a_planted_size_is_the_float64_tree():
    """The NumPy rounds are the kernel bit for bit (above): a planted graph far larger than the simulator runs."""
    g, _ = data.planted_graph(1000, 30_000, n_groups=4, seed=3)
    got, stats = average_link_rounds(g, np.float32, stats=True)
    expected = hac.cluster(g, "cpu", dtype=np.float64)
    assert np.array_equal(got.parent, expected.parent)
    np.testing.assert_allclose(got.merge_heights, expected.merge_heights, rtol=1e-6)
    assert stats.rounds < 40 and stats.merges.sum() == 999 and stats.entries[0] == 30_000
    assert np.all(np.diff(stats.entries) < 0)  # compaction: the edge list shrinks every round


@pytest.mark.parametrize("n_elements", [6, 14])
def test_four_allocations_three_uploads_one_launch_one_download_whatever_the_size(n_elements):
    g = data.random_graph(n_elements, 0.4, seed=1)
    with record() as log:
        hac.cluster(g, "gpu_rac", block=8)
    summary = log.summary()
    assert (summary["launches"], summary["HtoD_count"], summary["DtoH_count"], len(log.allocations)) == (
        RoundsClustering.LAUNCHES, RoundsClustering.UPLOADS, RoundsClustering.DOWNLOADS, RoundsClustering.ALLOCATIONS)
    assert log.launches[0].kernel.startswith("rounds_loop")


def test_a_graph_without_pairs_needs_no_device():
    with record() as log:
        tree = hac.cluster(hac.from_pairs(3, np.zeros(0, int), np.zeros(0, int), np.zeros(0)), "gpu_rac")
    assert log.summary()["launches"] == 0 and len(log.allocations) == 0
    assert np.array_equal(tree.parent, [0, 1, 2])


@sim_only  # counts the simulator's grid barriers
def test_grid_syncs_per_round(monkeypatch):
    """One barrier after the initialisation, then GRID_SYNCS_PER_ROUND per round (counted per thread)."""
    from course_lib.sim import _baton

    calls = []
    original = _baton.Carrier.grid_sync

    def counting(self, line):
        calls.append(line)
        return original(self, line)

    monkeypatch.setattr(_baton.Carrier, "grid_sync", counting)
    g = data.random_graph(9, 0.5, seed=2)
    run = RoundsClustering(g, np.float32, 8)
    args = run._arrays()
    grid = run.grid(args)
    run.kernel[grid, 8](*args)
    _, stats = average_link_rounds(g, np.float32, stats=True)
    assert GRID_SYNCS_PER_ROUND == 6
    assert len(calls) == grid * 8 * (1 + GRID_SYNCS_PER_ROUND * stats.rounds)


def test_no_race_under_the_checker():
    g = data.tied_graph(8, density=0.6, levels=2, seed=3)
    run = RoundsClustering(g, np.float32, 8)
    device_args = run._arrays()
    args = [a.copy_to_host() if hasattr(a, "copy_to_host") else a for a in device_args]
    report = check(rounds_kernel(8), run.grid(device_args), 8, *args, seed=1)
    assert report.ok, report
    from course_lib.hac._rounds import dendrogram_from_merges

    got = dendrogram_from_merges(g.n_elements, args[10], np.float32, "gpu_rac")
    assert np.array_equal(got.parent, average_link_rounds(g, np.float32).parent)


@pytest.mark.parametrize("kwargs", [{"fusion": "atomic"}, {"layout": "aos"}, {"measure_stages": True}, {"block": 12},
                                    {"max_merges": 2}])
def test_options_it_does_not_take_are_refused(kwargs):
    with pytest.raises(ValueError):
        hac.cluster(data.path_graph(3), "gpu_rac", **kwargs)


def test_it_is_a_public_gpu_method_but_not_the_default_before_a_gpu_measures_it():
    assert "gpu_rac" in hac.GPU_METHODS and hac.METHODS[0] == "gpu_persistent"
    assert hac.cluster(data.path_graph(4), "gpu_rac").height.dtype == np.float32
