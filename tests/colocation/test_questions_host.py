"""ps8.q3, the batched filter written on the host: the solution gets full marks; a filter that launches per
candidate, copies each batch's bounds back, allocates per batch or builds the CountMap on the host is capped at
half; the trusted bounds are the source's filter."""

import numpy as np
import pytest
from numba import cuda

from course_lib.colocation.kernels import (BOUND_BLOCK, candidate_bound_kernel, fill_kernel, grid_count_kernel,
                                           quadruplet_filter_kernel)
from course_lib.colocation.questions import bounds_reference, filter_case, q3_upload_bytes
from course_lib.grading import get_question, run_tests


def grade(answer):
    return run_tests(get_question("ps8.q3"), answer, hidden=True, seed=7)


def failures(result):
    return " | ".join(" ".join(o.message.split()) for o in result.outcomes if not o.passed)


def _preprocessed(x, y, features, n_features, grid):
    """The device CountMap and instances per feature, from the uploaded points (one fill, one count)."""
    n = len(features)
    counters = cuda.device_array(grid.n_cells * n_features + grid.n_cells + n_features, np.int32)
    fill_kernel[-(-len(counters) // 64), 64](counters, 0)
    count = counters[:grid.n_cells * n_features]
    feature_count = counters[grid.n_cells * n_features + grid.n_cells:]
    grid_count_kernel[-(-n // 64), 64](cuda.to_device(x), cuda.to_device(y), cuda.to_device(features), grid.x0,
                                       grid.y0, grid.cell, grid.n_cols, n_features, cuda.device_array(n, np.int32),
                                       count, counters[grid.n_cells * n_features:][:grid.n_cells], feature_count,
                                       cuda.device_array(n, np.int32))
    return count, feature_count


def _filter(count, feature_count, n_features, grid, d_candidates, k, flags, bounds):
    """One batch: the two launches on slices."""
    n_batch = len(bounds)
    quadruplet_filter_kernel[(grid.n_quads, n_batch), (k, 2, 2)](count, n_features, grid.n_cols, grid.n_rows,
                                                                 d_candidates, k, flags)
    candidate_bound_kernel[n_batch, BOUND_BLOCK](count, n_features, grid.n_cols, grid.n_rows, d_candidates, k, flags,
                                                 feature_count, bounds)


def filter_batched(x, y, features, n_features, grid, candidates, batch):
    """Right: device preprocessing, one flags buffer for a batch, two launches per batch, one copy back."""
    count, feature_count = _preprocessed(x, y, features, n_features, grid)
    n_candidates, k = candidates.shape
    d_candidates = cuda.to_device(np.ascontiguousarray(candidates).ravel())
    flags = cuda.device_array(batch * grid.n_quads, np.int32)
    bounds = cuda.device_array(n_candidates, np.float64)
    for s in range(0, n_candidates, batch):
        e = min(s + batch, n_candidates)
        _filter(count, feature_count, n_features, grid, d_candidates[s * k:e * k], k, flags, bounds[s:e])
    return bounds.copy_to_host()


def filter_per_candidate(x, y, features, n_features, grid, candidates, batch):
    """Right bounds, but the batch ignored: two launches per candidate."""
    return filter_batched(x, y, features, n_features, grid, candidates, 1)


def filter_copying_each_batch(x, y, features, n_features, grid, candidates, batch):
    """Right bounds, but each batch's bounds copied back as it finishes."""
    count, feature_count = _preprocessed(x, y, features, n_features, grid)
    n_candidates, k = candidates.shape
    d_candidates = cuda.to_device(np.ascontiguousarray(candidates).ravel())
    flags = cuda.device_array(batch * grid.n_quads, np.int32)
    bounds = cuda.device_array(n_candidates, np.float64)
    out = []
    for s in range(0, n_candidates, batch):
        e = min(s + batch, n_candidates)
        _filter(count, feature_count, n_features, grid, d_candidates[s * k:e * k], k, flags, bounds[s:e])
        out.append(bounds[s:e].copy_to_host())
    return np.concatenate(out)


def filter_allocating_each_batch(x, y, features, n_features, grid, candidates, batch):
    """Right bounds, but the flags allocated for every batch."""
    count, feature_count = _preprocessed(x, y, features, n_features, grid)
    n_candidates, k = candidates.shape
    d_candidates = cuda.to_device(np.ascontiguousarray(candidates).ravel())
    bounds = cuda.device_array(n_candidates, np.float64)
    for s in range(0, n_candidates, batch):
        e = min(s + batch, n_candidates)
        flags = cuda.device_array((e - s) * grid.n_quads, np.int32)
        _filter(count, feature_count, n_features, grid, d_candidates[s * k:e * k], k, flags, bounds[s:e])
    return bounds.copy_to_host()


def filter_host_count_map(x, y, features, n_features, grid, candidates, batch):
    """Right bounds, but the CountMap and the feature counts built with NumPy and uploaded."""
    cells = (np.floor((y - grid.y0) / grid.cell).astype(np.int64) * grid.n_cols
             + np.floor((x - grid.x0) / grid.cell).astype(np.int64))
    host_count = np.zeros(grid.n_cells * n_features, np.int32)
    np.add.at(host_count, cells * n_features + features, 1)
    count = cuda.to_device(host_count)
    feature_count = cuda.to_device(np.bincount(features, minlength=n_features).astype(np.int32))
    n_candidates, k = candidates.shape
    d_candidates = cuda.to_device(np.ascontiguousarray(candidates).ravel())
    flags = cuda.device_array(batch * grid.n_quads, np.int32)
    bounds = cuda.device_array(n_candidates, np.float64)
    for s in range(0, n_candidates, batch):
        e = min(s + batch, n_candidates)
        _filter(count, feature_count, n_features, grid, d_candidates[s * k:e * k], k, flags, bounds[s:e])
    return bounds.copy_to_host()


def filter_first_batch_only(x, y, features, n_features, grid, candidates, batch):
    """Wrong: one batch launched, the later candidates' bounds never written (zeros)."""
    count, feature_count = _preprocessed(x, y, features, n_features, grid)
    n_candidates, k = candidates.shape
    d_candidates = cuda.to_device(np.ascontiguousarray(candidates).ravel())
    flags = cuda.device_array(batch * grid.n_quads, np.int32)
    bounds = cuda.to_device(np.zeros(n_candidates))
    e = min(batch, n_candidates)
    _filter(count, feature_count, n_features, grid, d_candidates[:e * k], k, flags, bounds[:e])
    return bounds.copy_to_host()


def test_the_batched_filter_gets_full_marks():
    result = grade(filter_batched)
    assert result.points == 4, failures(result)


@pytest.mark.parametrize("answer, measured", [(filter_per_candidate, "launches"),
                                              (filter_copying_each_batch, "copies back to the host"),
                                              (filter_allocating_each_batch, "device allocations"),
                                              (filter_host_count_map, "grid_count_kernel was not launched")])
def test_a_filter_per_candidate_copying_allocating_or_counting_on_the_host_is_capped_at_half(answer, measured):
    result = grade(answer)
    assert result.points <= 2 and measured in failures(result), failures(result)


def test_a_filter_that_runs_only_the_first_batch_passes_only_the_one_batch_case():
    result = grade(filter_first_batch_only)
    assert result.points == 1 and "first wrong: candidate 3" in failures(result), failures(result)


def test_the_trusted_bounds_never_fall_below_the_planted_pairs_and_match_the_cpu_filter():
    data = filter_case(90, 6, 2, 4, seed=2)
    bounds = bounds_reference(data)
    candidates = [tuple(c) for c in data["candidates"]]
    # the planted pairs (0, 1) and (2, 3) are co-located at most sites: their bound stays high
    assert bounds[candidates.index((0, 1))] > 0.5 and bounds[candidates.index((2, 3))] > 0.5
    # one bound per candidate, each a ratio
    assert bounds.shape == (15,) and np.all((0 <= bounds) & (bounds <= 1))


def test_the_upload_bound_is_the_inputs_bytes():
    data = filter_case(50, 4, 3, 2, seed=1)
    assert q3_upload_bytes(data) == 50 * 8 * 2 + 50 * 4 + 4 * 3 * 4


def filter_counters_from_the_host(x, y, features, n_features, grid, candidates, batch):
    """Right bounds, counted on the device, but the zeroed counters uploaded from the host instead of filled there."""
    n = len(features)
    counters = cuda.to_device(np.zeros(grid.n_cells * n_features + grid.n_cells + n_features, np.int32))
    count = counters[:grid.n_cells * n_features]
    feature_count = counters[grid.n_cells * n_features + grid.n_cells:]
    grid_count_kernel[-(-n // 64), 64](cuda.to_device(x), cuda.to_device(y), cuda.to_device(features), grid.x0,
                                       grid.y0, grid.cell, grid.n_cols, n_features, cuda.device_array(n, np.int32),
                                       count, counters[grid.n_cells * n_features:][:grid.n_cells], feature_count,
                                       cuda.device_array(n, np.int32))
    n_candidates, k = candidates.shape
    d_candidates = cuda.to_device(np.ascontiguousarray(candidates).ravel())
    flags = cuda.device_array(batch * grid.n_quads, np.int32)
    bounds = cuda.device_array(n_candidates, np.float64)
    for s in range(0, n_candidates, batch):
        e = min(s + batch, n_candidates)
        _filter(count, feature_count, n_features, grid, d_candidates[s * k:e * k], k, flags, bounds[s:e])
    return bounds.copy_to_host()


def test_counters_zeroed_on_the_host_cost_their_bytes_on_the_bus():
    result = grade(filter_counters_from_the_host)
    assert result.points <= 2 and "bytes copied to the device" in failures(result), failures(result)
