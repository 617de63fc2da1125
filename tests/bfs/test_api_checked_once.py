"""traverse checks the graph and the source once, at its door: the CPU queue takes them checked."""

import pytest

from course_lib import bfs
from course_lib.bfs import api, cpu, data


@pytest.mark.parametrize("method", ["cpu", "frontier_atomic"])
def test_the_graph_and_source_are_checked_once(monkeypatch, method):
    calls = []

    def counting(name, original):
        def count(*args, **kwargs):
            calls.append(name)
            return original(*args, **kwargs)
        return count

    as_graph, check_source = counting("graph", data.as_graph), counting("source", data.check_source)
    for module in (api, cpu, data):
        monkeypatch.setattr(module, "as_graph", as_graph)
        monkeypatch.setattr(module, "check_source", check_source)
    depth, parent = bfs.bfs(bfs.chain(5), 1, method=method, parents=True)
    assert calls == ["graph", "source"]
    assert depth.tolist() == [1, 0, 1, 2, 3] and parent[1] == 1


def test_bfs_cpu_still_checks_what_students_pass():
    with pytest.raises(ValueError, match="source"):
        bfs.bfs_cpu(bfs.chain(3), 3)
    with pytest.raises(ValueError, match="return_levels"):
        bfs.bfs_cpu(bfs.chain(3), 0, return_levels="yes")
