"""What each argument of Unit 5's public functions is (for tests/test_bad_inputs.py)."""

import numpy as np

from tests.bad_inputs import NO_ARGUMENTS, Call


def _graph():
    from course_lib.hac import random_graph

    return random_graph(8, 0.5, seed=1)


def _trees():
    from course_lib.hac import cluster

    graph = _graph()
    return {"a": cluster(graph, "cpu"), "b": cluster(graph, "reference")}


def _fibers():
    from course_lib.hac import fiber_graph

    fg = fiber_graph(n_parcels=6)
    return {"fiber_graph_": fg, "parcel_labels": np.arange(6) % 3}


_GRAPH = "sparse"  # a SciPy sparse matrix of affinities (the graph may also be an edge list or an AffinityGraph)

ARGUMENTS = {
    "adjusted_rand_index": Call(lambda: {"a": np.array([0, 0, 1, 1]), "b": np.array([1, 1, 0, 2])},
                                a="int_array", b="int_array"),
    "amdahl_limit": Call(lambda: {"fraction": 0.5}, fraction="fraction"),
    "amdahl_speedup": Call(lambda: {"fraction": 0.5, "speedup": 10.0}, fraction="fraction", speedup="positive"),
    "as_graph": Call(lambda: {"graph": _graph().to_sparse(), "n_elements": 8}, graph=_GRAPH, n_elements="count?"),
    "average_link_cpu": Call(lambda: {"graph": _graph().to_sparse(), "dtype": np.float64}, graph=_GRAPH,
                             dtype="precision"),
    "average_link_reference": Call(lambda: {"graph": _graph().to_sparse(), "dtype": np.float64, "max_merges": 3},
                                   graph=_GRAPH, dtype="precision", max_merges="nonneg_int?"),
    "average_link_rounds": Call(lambda: {"graph": _graph().to_sparse(), "dtype": np.float64, "stats": True},
                                graph=_GRAPH, dtype="precision", stats="flag"),
    "average_link_scan": Call(lambda: {"graph": _graph().to_sparse(), "dtype": np.float64}, graph=_GRAPH,
                              dtype="precision"),
    "bytes_per_iteration": Call(lambda: {"n_entries": 100, "dtype": np.float32, "layout": "soa",
                                         "fusion": "segmented"},
                                n_entries="nonneg_int", dtype="precision", layout="choice", fusion="choice"),
    "cluster": Call(lambda: {"graph": _graph().to_sparse(), "method": "reference", "dtype": np.float64,
                             "max_merges": 3},
                    graph=_GRAPH, method="choice", dtype="precision?", max_merges="nonneg_int?"),
    # Dendrograms are objects, not arrays: the cuts are the arguments to break.
    "compare_dendrograms": Call(_trees),
    "complete_graph": Call(lambda: {"n": 5, "seed": 1}, n="count", seed="seed"),
    "components_graph": Call(lambda: {"sizes": (3, 2), "n_isolated": 1, "density": 0.6, "seed": 1},
                             n_isolated="nonneg_int", density="fraction", seed="seed"),
    "cophenetic_correlation": Call(_trees),
    "default_block": NO_ARGUMENTS,
    "fiber_bundles": Call(_fibers, parcel_labels="index_array"),
    "fiber_graph": Call(lambda: {"n_parcels": 6, "seed": 1}, n_parcels="count", seed="seed"),
    "from_pairs": Call(lambda: {"n_elements": 4, "i": np.array([0, 1, 2]), "j": np.array([1, 2, 3]),
                                "w": np.array([0.5, 1.0, 2.0])},
                       # no pairs at all is a graph of isolated elements
                       n_elements="count", i="index_array+empty", j="index_array+empty", w="real_array+empty"),
    "kmeans": Call(lambda: {"points": np.random.default_rng(0).random((20, 3)), "k": 3, "seed": 1, "iterations": 5},
                   points="real_array", k="count", seed="seed", iterations="count"),
    "load_fibers": Call(lambda: {"name": "bundles", "subject": 1}, name="choice", subject="count"),
    "path_graph": Call(lambda: {"n": 5, "seed": 1}, n="count", seed="seed"),
    "planted_graph": Call(lambda: {"n_elements": 20, "n_entries": 80, "n_groups": 2, "n_subgroups": 2, "seed": 1,
                                   "p_subgroup": 0.5, "p_group": 0.3},
                          n_elements="count", n_entries="count", n_groups="count", n_subgroups="count", seed="seed",
                          p_subgroup="fraction", p_group="fraction"),
    "precision_study": Call(lambda: {"graph": _graph().to_sparse(), "method": "cpu"}, graph=_GRAPH, method="choice"),
    "random_graph": Call(lambda: {"n": 6, "density": 0.5, "seed": 1, "connected": True},
                         n="count", density="fraction", seed="seed", connected="flag"),
    "scipy_average_linkage": Call(lambda: {"graph": _graph().to_sparse()}, graph=_GRAPH),
    "stage_fractions": Call(lambda: {"stage_seconds": {"matching": 1.0, "fusion": 3.0}}),
    "star_graph": Call(lambda: {"n": 5, "seed": 1}, n="count", seed="seed"),
    "thesis_size_graph": Call(lambda: {"seed": 1}, seed="seed"),
    "tied_graph": Call(lambda: {"n": 6, "density": 0.5, "levels": 3, "seed": 1},
                       n="count", density="fraction", levels="count", seed="seed"),
    "to_linkage": Call(lambda: {"tree": _trees()["a"], "offset": 10.0}, offset="real?"),
}
