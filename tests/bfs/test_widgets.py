"""The BFS benchmark runs (its CPU part without a GPU); the figures and the explorer draw."""


import matplotlib
import pytest
from course_lib.bfs import data, widgets

matplotlib.use("Agg")


def test_level_explorer_steps_through_levels():
    graph = data.star(6)
    explorer = widgets.level_explorer(graph, 0, methods=("cpu", "frontier_atomic"))
    slider, counters, _ = explorer.children
    assert slider.max == 1 and "level 0: frontier of 1 vertices" in counters.value
    slider.value = 1
    assert "level 1: frontier of 5 vertices, 6 of 6 reached" in counters.value
    assert "edges examined at this level:      5" in counters.value
    with pytest.raises(ValueError, match="at most 400"):
        widgets.level_explorer(data.chain(401))
