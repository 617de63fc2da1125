"""cluster and precision_study check the graph and the dtype once, at their door: the CPU and reference
paths take them checked."""

import numpy as np
import pytest

from course_lib import hac
from course_lib.hac import _graph, api, cpu, reference


@pytest.fixture
def checks(monkeypatch):
    calls = []
    original_graph, original_dtype = _graph.as_graph, api.check_dtype

    def as_graph(graph, *args, **kwargs):
        if not isinstance(graph, _graph.AffinityGraph):  # an AffinityGraph is returned as it is, not checked
            calls.append("graph")
        return original_graph(graph, *args, **kwargs)

    def check_dtype(*args, **kwargs):
        calls.append("dtype")
        return original_dtype(*args, **kwargs)

    for module in (api, cpu, reference):
        monkeypatch.setattr(module, "as_graph", as_graph)
        monkeypatch.setattr(module, "check_dtype", check_dtype)
    return calls


@pytest.mark.parametrize("method", ["cpu", "cpu_scan", "reference"])
def test_cluster_checks_once(checks, method):
    tree = hac.cluster(hac.path_graph(5).to_sparse(), method, dtype=np.float64)
    assert checks == ["graph", "dtype"]
    assert tree.parent.tolist() == hac.average_link_reference(hac.path_graph(5)).parent.tolist()


def test_the_precision_study_checks_the_graph_once(checks):
    hac.precision_study(hac.path_graph(5).to_sparse(), "cpu", cuts=(2,))
    assert checks == ["graph", "dtype", "dtype"]


def test_the_inner_functions_still_check_what_students_pass():
    with pytest.raises(ValueError, match="dtype"):
        hac.average_link_cpu(hac.path_graph(3), dtype=np.int32)
    with pytest.raises(ValueError, match="graph"):
        hac.average_link_scan(np.ones((3, 3)))
    with pytest.raises(ValueError, match="max_merges"):
        hac.average_link_reference(hac.path_graph(3), max_merges=-1)
