"""Does the one-launch merge loop make the CPU version's merges, race-free, in a fixed number of launches?"""

import numpy as np
import pytest

from course_lib import hac
from course_lib.hac import data
from course_lib.hac._persistent import PersistentClustering, merge_loop_kernel
from course_lib.sim import check, record

GRAPHS = {
    "one": lambda: data.path_graph(1),
    "two": lambda: data.path_graph(2),
    "path": lambda: data.path_graph(7),
    "star": lambda: data.star_graph(6),
    "components_and_isolated": lambda: data.components_graph((4, 3), n_isolated=2, seed=1),
    "ties": lambda: data.tied_graph(9, density=0.5, levels=2, seed=4),
}


@pytest.mark.parametrize("name", GRAPHS)
def test_the_persistent_loop_matches_the_cpu_version(name):
    g = GRAPHS[name]()
    expected = hac.cluster(g, "cpu", dtype=np.float32)
    got = hac.cluster(g, "gpu_persistent")
    assert got.method == "gpu_persistent"
    assert np.array_equal(got.parent, expected.parent)
    assert np.array_equal(got.height, expected.height)


def test_it_is_the_default_gpu_method():
    assert hac.METHODS[0] == "gpu_persistent"
    g = data.path_graph(5)
    assert np.array_equal(hac.cluster(g).parent, hac.cluster(g, "cpu").parent)


@pytest.mark.parametrize("block", [4, 8])
def test_float64_many_blocks_and_a_block_that_does_not_divide_m(block):
    """13 pairs = 26 entries: 4 or 7 blocks, the last one partly empty; float64 weights."""
    g = data.random_graph(12, 0.2, seed=7)
    assert g.n_entries % block
    expected = hac.cluster(g, "cpu", dtype=np.float64)
    got = hac.cluster(g, "gpu_persistent", dtype=np.float64, block=block)
    assert np.array_equal(got.parent, expected.parent)
    assert np.array_equal(got.height, expected.height)


def test_a_loop_split_over_launches_resumes_where_it_stopped():
    """Stage A of a resumed launch clears the accumulators the previous launch's last merge used."""
    g = data.tied_graph(10, density=0.5, levels=3, seed=2)
    whole = hac.cluster(g, "gpu_persistent", block=8)
    with record() as log:
        split = PersistentClustering(g, np.float32, 8, merges_per_launch=2).run()
    assert len(log.launches) == -(-(g.n_elements - g.n_components) // 2)
    assert np.array_equal(split.parent, whole.parent) and np.array_equal(split.height, whole.height)


def test_max_merges_stops_early():
    g = data.tied_graph(9, density=0.5, levels=2, seed=4)
    part = hac.cluster(g, "gpu_persistent", max_merges=3)
    staged = hac.cluster(g, "gpu", fusion="atomic", max_merges=3)
    assert np.array_equal(part.parent, staged.parent) and np.array_equal(part.height, staged.height)
    assert np.isfinite(part.height[9:12]).all() and np.isinf(part.height[12:]).all()


@pytest.mark.parametrize("n_elements", [6, 14])
def test_one_launch_and_two_downloads_per_clustering_whatever_the_size(n_elements):
    """The count does not grow with N or M: uploads are per array, the merges all run in the one launch."""
    g = data.random_graph(n_elements, 0.4, seed=1)
    with record() as log:
        hac.cluster(g, "gpu_persistent", block=8)
    summary = log.summary()
    assert len(log.launches) == 1
    assert log.launches[0].kernel.startswith("merge_loop")
    assert summary["DtoH_count"] == 2
    assert summary["HtoD_count"] <= 8


def test_the_host_driven_loop_pays_launches_per_merge():
    """What the persistent loop replaces: 8 launches per merge in the lesson's device-resident loop."""
    g = data.path_graph(5)
    with record() as log:
        hac.cluster(g, "gpu", fusion="atomic")
    assert len(log.launches) == 8 * (g.n_elements - 1)


def test_no_race_under_the_checker():
    g = data.tied_graph(8, density=0.6, levels=2, seed=3)
    run = PersistentClustering(g, np.float32, 8)
    args = [a.copy_to_host() if hasattr(a, "copy_to_host") else a for a in run._args(0, g.n_elements - 1)]
    report = check(merge_loop_kernel(8), run.grid, 8, *args, seed=1)
    assert report.ok, report
    expected = hac.cluster(g, "cpu", dtype=np.float32)
    assert np.array_equal(args[4], expected.parent) and np.array_equal(args[5], expected.height)


def test_options_of_the_staged_loop_are_refused():
    g = data.path_graph(3)
    for kwargs in ({"fusion": "atomic"}, {"layout": "aos"}, {"measure_stages": True}, {"block": 12}):
        with pytest.raises(ValueError):
            hac.cluster(g, "gpu_persistent", **kwargs)
