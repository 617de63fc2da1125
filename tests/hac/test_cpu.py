"""Do the compiled CPU versions make exactly the reference's merges, ties and precision included?"""

import numpy as np
import pytest

from course_lib import hac
from course_lib.hac import data

GRAPHS = {
    "one": lambda: data.path_graph(1),
    "two": lambda: data.path_graph(2),
    "path": lambda: data.path_graph(12),
    "star": lambda: data.star_graph(10),
    "components_and_isolated": lambda: data.components_graph((7, 4, 2), n_isolated=3, seed=5),
    "ties": lambda: data.tied_graph(25, density=0.4, levels=2, seed=3),
    "planted": lambda: data.planted_graph(300, 6000, n_groups=4, seed=2)[0],
    "only_isolated": lambda: hac.as_graph((np.zeros(0, int), np.zeros(0, int), np.zeros(0)), n_elements=4),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("version", [hac.average_link_cpu, hac.average_link_scan])
def test_identical_to_reference(version, name, dtype):
    g = GRAPHS[name]()
    expected = hac.average_link_reference(g, dtype)
    got = version(g, dtype)
    assert np.array_equal(got.parent, expected.parent)
    assert got.height.dtype == np.dtype(dtype)
    assert np.array_equal(got.height, expected.height)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("selection", ["heap", "scan"])
def test_both_selections_identical_to_reference(selection, name, dtype):
    """average_link_cpu picks its selection by size; each one alone makes the reference's merges."""
    from course_lib.hac.cpu import _average_link

    g = GRAPHS[name]()
    expected = hac.average_link_reference(g, dtype)
    got = _average_link(g, dtype, selection)
    assert np.array_equal(got.parent, expected.parent) and np.array_equal(got.height, expected.height)


@pytest.mark.parametrize("selection", ["heap", "scan"])
def test_bigger_planted_graph_with_heap_rebuilds(selection):
    from course_lib.hac.cpu import _average_link

    g, _ = data.planted_graph(1500, 45_000, n_groups=5, seed=7)
    a, b = _average_link(g, np.float32, selection), hac.average_link_scan(g, np.float32)
    assert np.array_equal(a.parent, b.parent) and np.array_equal(a.height, b.height)


def test_selection_by_size(monkeypatch):
    """Up to SCAN_UP_TO elements the scan runs, above it the heap; the same tree either way."""
    from course_lib.hac import cpu

    used = []
    for name in ("_scan_best_merges", "_fast_merges"):
        original = getattr(cpu, name)
        monkeypatch.setattr(cpu, name, lambda *args, original=original, name=name: (used.append(name),
                                                                                       original(*args))[1])
    g, _ = data.planted_graph(200, 2000, n_groups=3, seed=4)
    small = cpu.average_link_cpu(g)
    monkeypatch.setattr(cpu, "SCAN_UP_TO", 199)
    large = cpu.average_link_cpu(g)
    assert used == ["_scan_best_merges", "_fast_merges"]
    assert np.array_equal(small.parent, large.parent) and np.array_equal(small.height, large.height)
