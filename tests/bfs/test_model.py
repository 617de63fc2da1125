"""The lane-efficiency model of the frontier kernels."""


import pytest
from course_lib import bfs
from course_lib.bfs import data

def test_warp_efficiency():
    assert bfs.warp_efficiency([3] * 32) == 1.0
    assert bfs.warp_efficiency([32] + [0] * 31) == pytest.approx(1 / 32)
    assert bfs.warp_efficiency([1] * 33) == 1.0  # the second warp has one lane, equally busy
    assert bfs.warp_efficiency([4, 0] + [1] * 30 + [2, 2, 1]) == pytest.approx((4 + 30 + 5) / (32 * 4 + 3 * 2))
    assert bfs.warp_efficiency([]) == 1.0
    with pytest.raises(ValueError, match=">= 0"):
        bfs.warp_efficiency([-1])
    g = bfs.as_graph(data.star(40), directed=False)
    depth = bfs.bfs(g, 0, method="cpu")
    assert bfs.level_warp_efficiency(g, depth) == [1.0, 1.0]  # one centre, then 39 leaves of degree 1
    mixed = bfs.as_graph(data.from_edges([0, 0, 1, 1, 1], [1, 2, 3, 4, 5], 6), directed=False)
    # Level 1 holds vertex 1 (degree 4) and vertex 2 (degree 1) in one warp: 5 / (2 * 4).
    assert bfs.level_warp_efficiency(mixed, bfs.bfs(mixed, 0, method="cpu"))[1] == pytest.approx(5 / 8)
