"""Graph generators: seeded, shaped, and clear errors for bad arguments."""


import numpy as np
import pytest
from course_lib.bfs import data

@pytest.mark.parametrize("call,message", [
    (lambda: data.chain(0), "n_vertices must be an integer >= 1"),
    (lambda: data.kronecker(31), "at most 30"),
    (lambda: data.kronecker(4, abc=(0.6, 0.3, 0.3)), "abc"),
    (lambda: data.real_graph("facebook"), "name must be one of"),
    (lambda: data.from_edges([0], [3], 3), "0..2"),
    (lambda: data.star(3, center=3), "center"),
])
def test_generators_reject_bad_arguments(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_generators_are_seeded_and_shaped():
    a, b = data.kronecker(6, 8, seed=1), data.kronecker(6, 8, seed=1)
    assert (a != b).nnz == 0 and a.shape == (64, 64)
    assert (a != a.T).nnz == 0  # undirected graphs are symmetric
    assert data.kronecker(6, 8, seed=2).nnz != a.nnz or (data.kronecker(6, 8, seed=2) != a).nnz
    degrees = np.diff(data.kronecker(10, 16, seed=0).indptr)
    assert degrees.max() > 10 * degrees.mean()  # power-law: hubs far above the mean
    assert data.grid_2d(3, 4).nnz == 2 * (3 * 3 + 2 * 4)
    dup = data.with_self_loops_and_duplicates(data.chain(5), n_loops=2, n_duplicates=3)
    assert dup.nnz == data.chain(5).nnz + 5 and not dup.has_canonical_format
    for name in data.REAL_GRAPHS:
        adjacency, labels = data.real_graph(name)
        assert adjacency.shape == (len(labels), len(labels)) and (adjacency != adjacency.T).nnz == 0
