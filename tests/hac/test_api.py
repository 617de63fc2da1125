"""Does cluster() route every method and refuse what a method cannot do, with a clear message?"""

import numpy as np
import pytest
import scipy.sparse as sp

from course_lib import hac
from course_lib.hac import data


def test_every_method_on_a_sparse_matrix():
    g = data.random_graph(8, 0.5, seed=1)
    matrix = g.to_sparse()
    trees = {m: hac.cluster(matrix, m) for m in hac.METHODS}
    for tree in trees.values():
        assert np.array_equal(tree.parent, trees["reference"].parent)
    assert trees["gpu"].height.dtype == np.float32 and trees["cpu"].height.dtype == np.float64
    assert trees["scipy"].method == "scipy"


def test_default_block_is_a_power_of_two():
    b = hac.default_block()
    assert b & (b - 1) == 0


@pytest.mark.parametrize("kwargs, words", [
    (dict(method="fast"), "method"),
    (dict(method="gpu", fusion="cpu_sort"), "gpu_roundtrip"),
    (dict(method="gpu", fusion="magic"), "fusion"),
    (dict(method="gpu", layout="soaa"), "layout"),
    (dict(method="gpu", block=48), "power of two"),
    (dict(method="gpu", block=0), "block"),
    (dict(method="gpu", block=2048), "block"),
    (dict(method="cpu", fusion="atomic"), "GPU methods"),
    (dict(method="cpu", block=32), "GPU methods"),
    (dict(method="cpu", dtype=np.int32), "float32 or float64"),
    (dict(method="cpu", dtype="float16"), "float32 or float64"),
    (dict(method="scipy", dtype=np.float32), "float64"),
    (dict(method="cpu", max_merges=3), "max_merges"),
    (dict(method="gpu", max_merges=-1), "max_merges"),
])
def test_bad_options_are_refused(kwargs, words):
    with pytest.raises(ValueError, match=words):
        hac.cluster(data.path_graph(3), **kwargs)


@pytest.mark.parametrize("graph, words", [
    (sp.csr_matrix(np.array([[0, 1.0], [2.0, 0]])), "not symmetric"),
    (sp.csr_matrix(np.array([[0, -1.0], [-1.0, 0]])), "negative"),
    ((np.array([0, 5]), np.array([5, 0]), np.ones(2)), "self-loop|below"),
])
@pytest.mark.parametrize("method", ["gpu", "cpu"])
def test_bad_graphs_reach_the_user_as_value_errors(graph, words, method):
    if isinstance(graph, tuple):
        graph, words = (graph[0], graph[1], graph[2]), "below n_elements"
        with pytest.raises(ValueError, match=words):
            hac.cluster(hac.as_graph(graph, n_elements=3), method)
        return
    with pytest.raises(ValueError, match=words):
        hac.cluster(graph, method)


def test_nothing_half_written_the_input_is_not_modified():
    g = data.random_graph(9, 0.5, seed=3)
    src, dst, w = g.src.copy(), g.dst.copy(), g.weight.copy()
    for method in ("gpu", "gpu_roundtrip", "cpu", "cpu_scan", "reference"):
        hac.cluster(g, method)
    assert np.array_equal(g.src, src) and np.array_equal(g.dst, dst) and np.array_equal(g.weight, w)


def test_measured_stages_and_max_merges():
    g = data.path_graph(6)
    tree = hac.cluster(g, "gpu", measure_stages=True, max_merges=2)
    assert set(tree.stage_seconds) == set(hac.STAGES)
    assert np.isfinite(tree.merge_heights).sum() == 2
