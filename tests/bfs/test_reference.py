"""The parent-tree validator: each kind of mistake, and the direction of the edges."""


import numpy as np
import pytest
from course_lib import bfs
from course_lib.bfs import data

def test_validator_finds_each_kind_of_mistake():
    graph = data.from_edges([0, 0, 1, 2, 3], [1, 2, 3, 3, 4], 6)  # vertex 5 unreachable
    good = np.array([0, 0, 0, 1, 3, -1])
    assert bfs.parent_tree_problems(graph, 0, good, directed=False) == []
    assert bfs.parent_tree_problems(graph, 0, [0, 0, 0, 2, 3, -1], directed=False) == []  # other valid tree
    cases = {
        "parent[source]": [1, 0, 0, 1, 3, -1],
        "one level closer": [0, 0, 0, 1, 3, -1][:3] + [3, 3, -1],
        "no edge": [0, 0, 0, 0, 3, -1],
        "not reachable": [0, 0, 0, 1, 3, 4],
        "valid parent id": [0, 0, 0, 1, 9, -1],
    }
    for needle, parent in cases.items():
        problems = bfs.parent_tree_problems(graph, 0, np.array(parent), directed=False)
        assert any(needle in p for p in problems), (needle, problems)
    with pytest.raises(ValueError, match="not a valid BFS parent tree"):
        bfs.check_parent_tree(graph, 0, np.array(cases["no edge"]), directed=False)
    assert "shape" in bfs.parent_tree_problems(graph, 0, np.zeros(3, int))[0]


def test_validator_respects_direction():
    graph = data.chain(3, directed=True)
    assert bfs.parent_tree_problems(graph, 0, [0, 0, 1]) == []
    assert bfs.parent_tree_problems(graph, 2, [-1, -1, 2]) == []
    assert bfs.parent_tree_problems(graph, 2, [1, 2, 2]) != []
