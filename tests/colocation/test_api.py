"""Do the GPU pipeline (every version) and the CPU miner find exactly the reference's patterns?"""

import numpy as np
import pytest

from course_lib import colocation as co

#: Awkward inputs on purpose, each (points, features, r, threshold).
AWKWARD = {
    "no instances": (np.zeros((0, 2)), np.zeros(0, np.int32), 1.0, 0.5),
    "one instance": (np.array([[1.0, 2.0]]), np.array([0]), 1.0, 0.5),
    "one feature": (np.random.default_rng(1).uniform(0, 3, (20, 2)), np.zeros(20, np.int32), 1.0, 0.1),
    "features with one instance": (np.array([[0.0, 0.0], [0.6, 0.0], [0.3, 0.4], [9.0, 9.0]]),
                                   np.array([0, 1, 2, 3]), 1.0, 1.0),
    "exactly at distance r": (np.array([[0.0, 0.0], [3.0, 4.0], [10.0, 0.0], [13.0, 4.0]]),
                              np.array([0, 1, 0, 2]), 5.0, 0.5),
    "all in one cell": (np.random.default_rng(2).uniform(0, 0.5, (12, 2)), np.arange(12) % 3, 1.0, 1.0),
    "empty cells between groups": (np.array([[0.0, 0.0], [0.2, 0.1], [9.0, 9.0], [9.3, 9.0], [5.0, 0.0]]),
                                   np.array([0, 1, 0, 1, 2]), 1.0, 0.5),
    "unused feature id": (np.array([[0.0, 0.0], [0.5, 0.0]]), np.array([0, 3]), 1.0, 0.5),
}


@pytest.mark.parametrize("name", AWKWARD)
def test_awkward_inputs_match_the_reference(name):
    points, features, r, threshold = AWKWARD[name]
    expected = co.mine(points, features, r, threshold, method="reference").patterns
    assert co.mine(points, features, r, threshold, method="cpu").patterns == expected
    assert co.mine(points, features, r, threshold, method="gpu").patterns == expected


@pytest.mark.parametrize("version", co.VERSIONS)
def test_every_gpu_version_finds_the_planted_patterns(version):
    data = co.planted_colocations(150, 4, groups=((0, 1, 2),), seed=7)
    expected = co.mine(data.points, data.features, 1.0, 0.4, method="reference").patterns
    got = co.mine(data.points, data.features, 1.0, 0.4, method="gpu", **co.VERSIONS[version])
    assert got.patterns == expected
    assert (0, 1, 2) in expected


def test_cpu_miner_on_a_larger_random_set():
    data = co.planted_colocations(1500, 6, groups=((0, 1), (2, 3, 4)), seed=3)
    for threshold in (0.15, 0.3, 0.6):
        expected = co.mine(data.points, data.features, 1.0, threshold, method="reference")
        got = co.mine(data.points, data.features, 1.0, threshold, method="cpu")
        assert got.patterns == expected.patterns
    assert (2, 3, 4) in got.patterns


def test_max_size_stops_the_search():
    data = co.planted_colocations(200, 4, groups=((0, 1, 2),), seed=5)
    got = co.mine(data.points, data.features, 1.0, 0.3, method="cpu", max_size=2)
    assert got.patterns and all(len(p) == 2 for p in got.patterns)


def test_levels_report_what_the_filter_pruned():
    # Two far-apart clusters, each with two features: (0, 1) and (2, 3) co-locate, cross pairs never do.
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 1, (40, 2))
    b = rng.uniform(0, 1, (40, 2)) + 6
    points = np.concatenate([a, b])
    features = np.concatenate([np.arange(40) % 2, 2 + np.arange(40) % 2])
    got = co.mine(points, features, 1.0, 0.5, method="gpu")
    level = got.levels[0]
    assert (level.candidates, level.after_filter, level.prevalent) == (6, 2, 2)
    assert got.patterns == {(0, 1): 1.0, (2, 3): 1.0}


@pytest.mark.parametrize("bad, message", [
    (dict(points=None), "points"),
    (dict(points=[[0.0, np.nan]]), "points"),
    (dict(points=np.zeros((2, 3))), "points"),
    (dict(features=[0]), "features must have one entry per point"),
    (dict(features=[0.0, 1.0]), "features"),
    (dict(features=[0, -1]), "features"),
    (dict(r=0.0), "r"),
    (dict(r=-1.0), "r"),
    (dict(r=float("nan")), "r"),
    (dict(threshold=0.0), "threshold"),
    (dict(threshold=1.5), "threshold"),
    (dict(method="fast"), "method"),
    (dict(max_size=1), "max_size"),
    (dict(n_features=1), "n_features"),
    (dict(batched="yes"), "batched"),
])
def test_bad_input_is_refused_with_the_arguments_name(bad, message):
    args = dict(points=[[0.0, 0.0], [0.5, 0.0]], features=[0, 1], r=1.0, threshold=0.5)
    args.update(bad)
    with pytest.raises(ValueError, match=message):
        co.mine(args.pop("points"), args.pop("features"), args.pop("r"), args.pop("threshold"), **args)
