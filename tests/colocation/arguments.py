"""What each argument of Unit 8's public functions is (for tests/test_bad_inputs.py)."""

import numpy as np

from tests.bad_inputs import NO_ARGUMENTS, Call

# Two features, three instances: (0, 1) are neighbours; the third is far away.
_POINTS = np.array([[0.0, 0.0], [0.5, 0.0], [5.0, 5.0]])
_FEATURES = np.array([0, 1, 1], np.int32)


def _mining(**extra):
    return lambda: {"points": _POINTS, "features": _FEATURES, "r": 1.0, "threshold": 0.5, **extra}


_MINING_KINDS = dict(points="real_array", features="index_array", r="positive", threshold="fraction")


def _grid():
    from course_lib.colocation import grid_for

    return grid_for(_POINTS, 1.0, 2)


def _counts():
    from course_lib.colocation import count_map

    return {"grid": _grid(), "counts": count_map(_grid(), _POINTS, _FEATURES, 2), "pattern": (0, 1)}


ARGUMENTS = {
    "apriori_candidates": Call(lambda: {"prevalent": [(0, 1), (0, 2), (1, 2)], "k": 2}, k="count"),
    "check_inputs": Call(_mining(n_features=2, max_size=2), **_MINING_KINDS, n_features="count?",
                         max_size="count?"),
    "count_map": Call(lambda: {"grid": _grid(), "points": _POINTS, "features": _FEATURES, "n_features": 2},
                      points="real_array", features="index_array", n_features="count"),
    "default_block": NO_ARGUMENTS,
    "filter_launches": Call(lambda: {"n_features": 5, "size": 2, "batched": False}, n_features="count", size="count",
                            batched="flag"),
    "grid_for": Call(lambda: {"points": _POINTS, "r": 1.0, "n_features": 2}, points="real_array+empty",
                     r="positive", n_features="count"),
    "instance_table_reference": Call(lambda: {"points": _POINTS, "features": _FEATURES, "r": 1.0, "pattern": (0, 1)},
                                     points="real_array", features="index_array", r="positive"),
    # method="reference" keeps the valid call cheap; every option is checked before any work.
    "mine": Call(_mining(n_features=2, method="reference", max_size=2, preprocess="host", batched=True,
                         host_memory="pageable", block=32),
                 **_MINING_KINDS, n_features="count?", method="choice", max_size="count?", preprocess="choice",
                 batched="flag", host_memory="choice", block="block?"),
    # One feature: no candidate, so the valid call needs no compilation.
    "mine_cpu": Call(lambda: {"points": _POINTS, "features": np.zeros(3, np.int32), "r": 1.0, "threshold": 0.5,
                              "n_features": 1, "max_size": 2},
                     **_MINING_KINDS, n_features="count?", max_size="count?"),
    "mine_reference": Call(_mining(n_features=2, max_size=2), **_MINING_KINDS, n_features="count?",
                           max_size="count?"),
    "neighbour_pairs_reference": Call(lambda: {"points": _POINTS, "r": 1.0}, points="real_array+empty",
                                      r="positive"),
    "participation_index_reference": Call(lambda: {"points": _POINTS, "features": _FEATURES, "r": 1.0,
                                                   "pattern": (0, 1)},
                                          points="real_array", features="index_array", r="positive"),
    "pi_upper_bound": Call(lambda: {**_counts(), "feature_count": np.array([1, 2])}, counts="index_array",
                           feature_count="index_array"),
    "planted_colocations": Call(lambda: {"n_instances": 20, "n_features": 3, "groups": ((0, 1),), "r": 1.0,
                                         "extent": 4.0, "group_fraction": 0.5, "seed": 1},
                                n_instances="nonneg_int", n_features="count", r="positive", extent="positive?",
                                group_fraction="fraction", seed="seed"),
    "qualifying_cells": Call(_counts, counts="index_array"),
    "uniform_features": Call(lambda: {"n_instances": 20, "n_features": 3, "extent": 4.0, "seed": 1},
                             n_instances="nonneg_int", n_features="count", extent="positive", seed="seed"),
}
