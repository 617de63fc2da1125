"""Does mine(copies="per_level") copy once each way per level, launch what the lesson's copies launch, and mine
what the reference mines on awkward inputs?"""

import numpy as np
import pytest

from course_lib import colocation as co
from course_lib.colocation import profiling
from course_lib.sim import record

from .test_api import AWKWARD


def _two_clusters():
    """(0, 1) co-locate in one cluster and (2, 3) in another, far apart: the filter drops the 4 cross pairs."""
    rng = np.random.default_rng(0)
    points = np.concatenate([rng.uniform(0, 1, (12, 2)), rng.uniform(0, 1, (11, 2)) + 6])  # 23: a prime
    return points, np.concatenate([np.arange(12) % 2, 2 + np.arange(11) % 2])


def _pairs_never_together():
    """Every pair of features 0, 1, 2 co-locates, in three places far apart: the triple's bound is 0, so at
    size 3 no candidate survives the filter."""
    points = np.array([[0.0, 0.0], [0.3, 0.0], [10.0, 0.0], [10.3, 0.0], [20.0, 0.0], [20.3, 0.0]])
    return points, np.array([0, 1, 1, 2, 0, 2])


def test_one_copy_each_way_per_level_and_the_lesson_s_launches():
    points, features = _two_clusters()
    traffic = {copies: profiling.phase_traffic(points, features, 1.0, 0.5, copies=copies)
               for copies in co.api.COPIES}
    lesson, one = traffic["per_phase"], traffic["per_level"]
    assert one["result"].patterns == lesson["result"].patterns == {(0, 1): 1.0, (2, 3): 1.0}
    assert one["result"].levels == lesson["result"].levels
    levels = len(one["result"].levels)
    assert one["result"].levels[0].after_filter == 2  # the filter pruned on the device
    # Per level: the candidates and the plan up in one copy (filter), the survivors and their counts down in one.
    assert (one["filter"]["HtoD_count"], one["filter"]["DtoH_count"]) == (levels, 0)
    assert (one["refine"]["HtoD_count"], one["refine"]["DtoH_count"]) == (0, levels)
    assert (lesson["filter"]["HtoD_count"] + lesson["refine"]["HtoD_count"],
            lesson["filter"]["DtoH_count"] + lesson["refine"]["DtoH_count"]) == (2 * levels, 2 * levels)
    # keep_kernel takes the place of the refine's zeroing launch: as many launches in all.
    assert sum(one[p]["launches"] for p in profiling.PHASES) == sum(lesson[p]["launches"] for p in profiling.PHASES)
    assert one["preprocess"] == lesson["preprocess"]
    assert one["result"].stats["synchronisations"] == lesson["result"].stats["synchronisations"] == 1 + levels
    assert one["result"].stats["device_allocations"] <= lesson["result"].stats["device_allocations"]


def test_a_level_where_no_candidate_survives_the_filter():
    points, features = _pairs_never_together()
    expected = co.mine(points, features, 1.0, 0.5, method="reference").patterns
    with record() as log:
        got = co.mine(points, features, 1.0, 0.5, copies="per_level", search="once")
    assert got.patterns == expected == {(0, 1): 0.5, (0, 2): 0.5, (1, 2): 0.5}
    assert [(level.size, level.after_filter, level.prevalent, level.rows) for level in got.levels] == [
        (2, 3, 3, 3), (3, 0, 0, 0)]
    assert log.counts()["DtoH_count"] == 1 + 2  # the instances per feature, then one per level


@pytest.mark.parametrize("name", AWKWARD)
def test_awkward_inputs_match_the_reference(name):
    points, features, r, threshold = AWKWARD[name]
    expected = co.mine(points, features, r, threshold, method="reference").patterns
    filter = "fused" if len(features) % 2 else "two_step"
    assert co.mine(points, features, r, threshold, copies="per_level", filter=filter).patterns == expected


def test_prime_sizes_and_a_second_level_match_the_reference():
    data = co.planted_colocations(31, 4, groups=((0, 1),), extent=5.0, seed=3)
    expected = co.mine(data.points, data.features, 1.0, 0.3, method="reference").patterns
    got = co.mine(data.points, data.features, 1.0, 0.3, copies="per_level", filter="fused", search="once")
    assert got.patterns == expected and max(map(len, expected)) == 3


def test_one_candidate_at_a_time_is_refused():
    with pytest.raises(ValueError, match="copies='per_level' needs batched=True"):
        co.mine(np.zeros((2, 2)), np.array([0, 1]), 1.0, 0.5, copies="per_level", batched=False)
    with pytest.raises(ValueError, match="copies"):
        co.mine(np.zeros((2, 2)), np.array([0, 1]), 1.0, 0.5, copies="once")
