"""Does as_graph accept the graphs the thesis clusters, and refuse the others with a message naming the problem?"""

import numpy as np
import pytest
import scipy.sparse as sp

from course_lib.hac import as_graph, components_graph, from_pairs


def test_edge_list_and_sparse_matrix_give_the_same_canonical_graph():
    src, dst, w = [2, 0, 1, 1], [1, 1, 0, 2], [3.0, 0.5, 0.5, 3.0]
    g = as_graph((src, dst, w))
    assert g.n_elements == 3 and g.n_entries == 4 and g.n_pairs == 2 and g.n_components == 1
    assert g.src.tolist() == [0, 1, 1, 2] and g.dst.tolist() == [1, 0, 2, 1]  # sorted by (src, dst)
    h = as_graph(sp.csr_matrix((w, (src, dst)), shape=(3, 3)))
    assert np.array_equal(g.src, h.src) and np.array_equal(g.weight, h.weight)
    assert g.src.dtype == np.int32 and g.weight.dtype == np.float64


def test_isolated_elements_count_as_components():
    g = as_graph(([0, 1], [1, 0], [1.0, 1.0]), n_elements=5)
    assert g.n_components == 4 and g.n_nodes == 6
    assert g.component.tolist()[:2] == [0, 0]


def test_explicit_zero_affinity_is_an_edge():
    g = from_pairs(3, [0, 1], [1, 2], [0.0, 1.0])
    assert g.n_components == 1


def test_disconnected_generator():
    g = components_graph((5, 4, 3), n_isolated=2)
    assert g.n_elements == 14 and g.n_components == 5


@pytest.mark.parametrize("graph, words", [
    (([0, 1], [1, 2], [1.0, 1.0]), "not symmetric"),
    (([0, 1], [1, 0], [1.0, 2.0]), "not symmetric"),
    (([0, 1], [1, 0], [-1.0, -1.0]), "negative"),
    (([0, 1], [1, 0], [np.nan, np.nan]), "finite"),
    (([0, 1], [1, 0], [np.inf, np.inf]), "finite"),
    (([0, 0], [0, 0], [1.0, 1.0]), "self-loop"),
    (([0, 1, 0, 1], [1, 0, 1, 0], [1.0, 1.0, 1.0, 1.0]), "repeated"),
    (([0, -1], [-1, 0], [1.0, 1.0]), "non-negative"),
    (([0.0, 1.0], [1.0, 0.0], [1.0, 1.0]), "integer"),
    (([0, 1, 2], [1, 0], [1.0, 1.0]), "same length"),
    (("abc", [1], [1.0]), "src"),
    ((np.zeros(0, int), np.zeros(0, int), np.zeros(0)), "empty"),
    (np.eye(3), "SciPy sparse"),
    (None, "SciPy sparse"),
])
def test_bad_graphs_are_refused_by_name(graph, words):
    with pytest.raises(ValueError, match=words):
        as_graph(graph)


def test_bad_sparse_matrices():
    with pytest.raises(ValueError, match="square"):
        as_graph(sp.csr_matrix(np.ones((2, 3))))
    with pytest.raises(ValueError, match="self-loop"):
        as_graph(sp.csr_matrix(np.ones((3, 3))))
    with pytest.raises(ValueError, match="empty"):
        as_graph(sp.csr_matrix((0, 0)))
    m = sp.csr_matrix(np.array([[0, np.nan], [np.nan, 0]]))
    with pytest.raises(ValueError, match="non-finite"):
        as_graph(m)
    with pytest.raises(ValueError, match="real"):
        as_graph(sp.csr_matrix(np.array([[0, 1j], [1j, 0]])))


def test_index_beyond_n_elements_is_refused():
    with pytest.raises(ValueError, match="below n_elements=2"):
        as_graph(([0, 2], [2, 0], [1.0, 1.0]), n_elements=2)
    with pytest.raises(ValueError, match="n_elements"):
        as_graph(sp.csr_matrix((2, 2)), n_elements=3)
