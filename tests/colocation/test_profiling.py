"""Does batching make the launches per level independent of the number of candidates (record()'s counts)?"""

import pytest

from course_lib import colocation as co
from course_lib.colocation import profiling
from course_lib.colocation.profiling import FILTER_KERNELS, REFINE_KERNELS, kernel_launches, measure_versions
from course_lib.sim import record


def _launches(n_features, batched):
    data = co.planted_colocations(60, n_features, groups=((0, 1),), extent=3.0, seed=n_features)
    with record() as log:
        result = co.mine(data.points, data.features, 1.0, 0.05, method="gpu", batched=batched, max_size=2)
    return kernel_launches(log), result.levels[0]


@pytest.mark.parametrize("n_features", [3, 5])
def test_batched_levels_launch_a_fixed_number_of_kernels(n_features):
    per_kernel, level = _launches(n_features, batched=True)
    assert level.candidates == n_features * (n_features - 1) // 2
    assert [per_kernel[k] for k in FILTER_KERNELS] == [1, 1]
    assert [per_kernel[k] for k in REFINE_KERNELS] == [1, 1, 1]


def test_per_candidate_filter_launches_two_kernels_per_candidate():
    per_kernel, level = _launches(4, batched=False)
    assert sum(per_kernel[k] for k in FILTER_KERNELS) == co.filter_launches(4, 2, batched=False) == 12
    assert per_kernel["extend_count_kernel"] == level.after_filter


def test_versions_measure_fewer_copies_as_the_source_optimises():
    data = co.planted_colocations(80, 4, groups=((0, 1),), extent=4.0, seed=2)
    rows = {row["version"].split(":")[0]: row for row in measure_versions(data.points, data.features, 1.0, 0.3)}
    assert len({str(row["patterns"]) for row in rows.values()}) == 1  # every version finds the same patterns
    # Device preprocessing: the grid is born on the device, so fewer host-to-device copies.
    assert rows["v1"]["HtoD_count"] < rows["v0"]["HtoD_count"]
    # Batching: copies and launches no longer grow with the number of candidates.
    assert rows["v2"]["HtoD_count"] < rows["v1"]["HtoD_count"] and rows["v2"]["launches"] < rows["v1"]["launches"]
    assert rows["v2"]["DtoH_count"] < rows["v1"]["DtoH_count"]


def test_pinned_staging_allocates_per_upload_once_or_never():
    """Does "pinned_reused" pin once and reuse, where "pinned_per_upload" pins every upload?"""
    data = co.planted_colocations(120, 4, groups=((0, 1, 2),), seed=5)
    runs = {memory: co.mine(data.points, data.features, 1.0, 0.4, method="gpu", host_memory=memory)
            for memory in co.HOST_MEMORY}
    assert len({str(r.patterns) for r in runs.values()}) == 1
    per_upload, reused, pageable = (runs[m].stats for m in ("pinned_per_upload", "pinned_reused", "pageable"))
    assert per_upload["pinned_allocations"] == per_upload["uploads"] > 3
    assert reused["pinned_allocations"] == 1 and reused["uploads"] == per_upload["uploads"]
    assert reused["pinned_bytes"] < per_upload["pinned_bytes"]
    assert pageable["pinned_allocations"] == pageable["pinned_bytes"] == 0


def test_phase_traffic_adds_up_to_the_whole_run():
    """Do the per-phase logs hold every copy and launch of the run, once?"""
    data = co.planted_colocations(120, 4, groups=((0, 1, 2),), seed=5)
    traffic = profiling.phase_traffic(data.points, data.features, 1.0, 0.4, block=32)
    with record() as log:
        whole = co.mine(data.points, data.features, 1.0, 0.4, method="gpu", block=32)
    total = log.summary()
    for key in ("HtoD_count", "HtoD_bytes", "DtoH_count", "DtoH_bytes", "launches"):
        assert sum(traffic[phase][key] for phase in profiling.PHASES) == total[key], key
    assert traffic["result"].patterns == whole.patterns
    assert traffic["filter"]["runs"] == len(whole.levels)
    assert profiling.table_bytes_per_level(whole) == [lv.rows * (lv.size + 1) * 4 for lv in whole.levels]
    with pytest.raises(ValueError, match="pinned"):
        profiling.phase_traffic(data.points, data.features, 1.0, 0.4, pinned=True)


def test_batched_levels_reuse_their_device_buffers():
    """Three levels: per candidate, every buffer a level asks for is a new allocation; batched, only a growing one."""
    data = co.planted_colocations(50, 4, groups=((0, 1, 2),), extent=4.0, seed=2)
    with record() as log:
        batched = co.mine(data.points, data.features, 1.0, 0.3, method="gpu", block=32)
    per_candidate = co.mine(data.points, data.features, 1.0, 0.3, method="gpu", block=32, batched=False)
    assert batched.patterns == per_candidate.patterns and len(batched.levels) == 3
    reused, fresh = batched.stats, per_candidate.stats
    assert fresh["device_allocations"] >= fresh["device_requests"] > 0
    # Batched, a request is served by the named buffer unless it must grow: allocations (uploads and the
    # mapped counter included) stay below the requests, and far below the per-candidate run's.
    assert reused["device_allocations"] < reused["device_requests"]
    assert fresh["device_allocations"] > 2 * reused["device_allocations"]
    # No blocking copy of a scan's total: per level the bounds and the participation counts come back, and the
    # feature counts once after preprocessing.
    assert log.summary()["DtoH_count"] == 2 * len(batched.levels) + 1
    assert reused["synchronisations"] == 1 + len(batched.levels)  # the cell scan, then one scan per level


def test_phase_breakdown_times_each_phase_and_counts_host_costs():
    data = co.planted_colocations(120, 4, groups=((0, 1, 2),), seed=5)
    out = profiling.phase_breakdown(data.points, data.features, 1.0, 0.4, block=32)
    levels = len(out["result"].levels)
    assert set(out["phase_seconds"]) == set(profiling.PHASES)
    assert all(v > 0 for v in out["phase_seconds"].values())
    assert out["device_seconds"] <= out["wall_seconds"]
    assert out["runs"] == {"preprocess": 1, "filter": levels, "refine": levels}
    assert out["launches"]["filter"] == 2 * levels
    assert out["copies"]["filter"] == 2 * levels  # candidates up, bounds down
    assert out["synchronisations"] == 1 + levels
    assert out["device_allocations"] > 0 and out["pinned_allocations"] == 0
