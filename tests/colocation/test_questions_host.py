"""ps8.q3, the batched filter whose survivors are chosen on the device: an atomic compaction, a scan and a fixed
buffer of survivors get full marks; copying every bound back (the library's way), copying survivors or reading the
count per batch, or copying the bounds back past some number of candidates is capped at half; the trusted
survivors are the source's bounds, cut halfway between two of them."""

import dataclasses

import numpy as np
import pytest
from numba import cuda, int32

from course_lib.colocation.kernels import (BOUND_BLOCK, candidate_bound_kernel, fill_kernel, grid_count_kernel,
                                           quadruplet_filter_kernel)
from course_lib.colocation.questions import bounds_reference, filter_case, q3_upload_bytes, survivors_reference
from course_lib.colocation._questions_q3 import threshold_between, with_more_losers
from course_lib.grading import get_question, run_tests

GROWTH = "launches, bytes, copies and allocations"


def grade(answer, only=None):
    """The question's grade, or (``only``: the start of a test's name) that test's alone."""
    question = get_question("ps8.q3")
    if only is not None:
        tests = tuple(t for t in question.tests if t.name.startswith(only))
        question = dataclasses.replace(question, tests=tests, points=sum(t.points for t in tests))
        assert len(question.tests) == 1
    return run_tests(question, answer, hidden=True, seed=7)


def failures(result):
    return " | ".join(" ".join(o.message.split()) for o in result.outcomes if not o.passed)


def _bounds_on_device(x, y, features, n_features, grid, candidates, batch):
    """Device preprocessing (one fill, one count), then the launch pair per batch into one device bounds buffer."""
    n = len(features)
    counters = cuda.device_array(grid.n_cells * n_features + grid.n_cells + n_features, np.int32)
    fill_kernel[-(-len(counters) // 64), 64](counters, 0)
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
        quadruplet_filter_kernel[(grid.n_quads, e - s), (k, 2, 2)](count, n_features, grid.n_cols, grid.n_rows,
                                                                   d_candidates[s * k:e * k], k, flags)
        candidate_bound_kernel[e - s, BOUND_BLOCK](count, n_features, grid.n_cols, grid.n_rows,
                                                   d_candidates[s * k:e * k], k, flags, feature_count, bounds[s:e])
    return bounds


@cuda.jit
def gather_kernel(bounds, threshold, out, count):
    """Atomic compaction: out[slot] = i for every bound >= threshold, count[0] the survivors."""
    i = cuda.grid(1)
    if i < bounds.shape[0] and bounds[i] >= threshold:
        out[cuda.atomic.add(count, 0, 1)] = i


def _gathered(bounds, threshold):
    out, count = cuda.device_array(max(len(bounds), 1), np.int32), cuda.device_array(1, np.int32)
    fill_kernel[1, 32](count, 0)
    gather_kernel[-(-len(bounds) // 64), 64](bounds, threshold, out, count)
    return out, count


def survivors_atomic(x, y, features, n_features, grid, candidates, batch, threshold):
    """Right: the bounds stay on the device, an atomic compaction, the count then the survivors copied back."""
    out, count = _gathered(_bounds_on_device(x, y, features, n_features, grid, candidates, batch), threshold)
    return np.sort(out[:int(count.copy_to_host()[0])].copy_to_host())


SCAN_THREADS = 64


@cuda.jit
def scan_kernel(bounds, threshold, out, count):
    """One block: each thread counts the survivors of its contiguous chunk, a shared prefix sum gives its offset,
    then it writes them in order (sorted), and thread 0 the total."""
    sums = cuda.shared.array(SCAN_THREADS, int32)
    t = cuda.threadIdx.x
    chunk = -(-bounds.shape[0] // SCAN_THREADS)
    start, stop = t * chunk, min((t + 1) * chunk, bounds.shape[0])
    mine = 0
    for i in range(start, stop):
        if bounds[i] >= threshold:
            mine += 1
    sums[t] = mine
    cuda.syncthreads()
    offset = 1
    while offset < SCAN_THREADS:  # Hillis-Steele inclusive scan
        add = sums[t - offset] if t >= offset else 0
        cuda.syncthreads()
        sums[t] += add
        cuda.syncthreads()
        offset *= 2
    slot = sums[t] - mine
    for i in range(start, stop):
        if bounds[i] >= threshold:
            out[slot] = i
            slot += 1
    if t == SCAN_THREADS - 1:
        count[0] = sums[t]


def survivors_scan(x, y, features, n_features, grid, candidates, batch, threshold):
    """Right but different: a scan instead of an atomic counter (the survivors come out sorted)."""
    bounds = _bounds_on_device(x, y, features, n_features, grid, candidates, batch)
    out, count = cuda.device_array(max(len(bounds), 1), np.int32), cuda.device_array(1, np.int32)
    scan_kernel[1, SCAN_THREADS](bounds, threshold, out, count)
    return out[:int(count.copy_to_host()[0])].copy_to_host()


SLOTS = 16


@cuda.jit
def gather_with_count_kernel(bounds, threshold, head, out, count):
    """Atomic compaction into out, and the first SLOTS survivors into head[1:] beside the count in head[0]."""
    i = cuda.grid(1)
    if i < bounds.shape[0] and bounds[i] >= threshold:
        slot = cuda.atomic.add(count, 0, 1)
        out[slot] = i
        if slot < SLOTS:
            head[1 + slot] = i
        cuda.atomic.max(head, 0, slot + 1)


def survivors_fixed_buffer(x, y, features, n_features, grid, candidates, batch, threshold):
    """Right but different: one small buffer (the count and 16 slots) copied once, the rest only when it does not
    fit."""
    bounds = _bounds_on_device(x, y, features, n_features, grid, candidates, batch)
    head, count = cuda.device_array(1 + SLOTS, np.int32), cuda.device_array(1, np.int32)
    out = cuda.device_array(max(len(bounds), 1), np.int32)
    fill_kernel[1, 32](head, 0)
    fill_kernel[1, 32](count, 0)
    gather_with_count_kernel[-(-len(bounds) // 64), 64](bounds, threshold, head, out, count)
    host = head.copy_to_host()
    n = int(host[0])
    picked = host[1:1 + n] if n <= SLOTS else out[:n].copy_to_host()
    return np.sort(picked)


def survivors_from_all_bounds(x, y, features, n_features, grid, candidates, batch, threshold):
    """The library's way: every bound copied back, the survivors chosen on the host."""
    bounds = _bounds_on_device(x, y, features, n_features, grid, candidates, batch).copy_to_host()
    return np.flatnonzero(bounds >= threshold).astype(np.int32)


def survivors_per_batch(x, y, features, n_features, grid, candidates, batch, threshold):
    """Compaction after each batch, its survivors copied back per batch."""
    bounds = _bounds_on_device(x, y, features, n_features, grid, candidates, batch)
    picked = []
    for s in range(0, len(bounds), batch):
        out, count = _gathered(bounds[s:s + batch], threshold)
        picked.append(s + out[:int(count.copy_to_host()[0])].copy_to_host())
    return np.sort(np.concatenate(picked)).astype(np.int32)


def survivors_all_bounds_past_eight(x, y, features, n_features, grid, candidates, batch, threshold):
    """Compaction for a few candidates, every bound copied back past 8 of them."""
    if len(candidates) > 8:
        return survivors_from_all_bounds(x, y, features, n_features, grid, candidates, batch, threshold)
    return survivors_atomic(x, y, features, n_features, grid, candidates, batch, threshold)


def survivors_reading_the_count_per_batch(x, y, features, n_features, grid, candidates, batch, threshold):
    """A compaction per batch into one buffer, the count read element by element on the host after each batch."""
    bounds = _bounds_on_device(x, y, features, n_features, grid, candidates, batch)
    out, count = cuda.device_array(max(len(bounds), 1), np.int32), cuda.device_array(1, np.int32)
    fill_kernel[1, 32](count, 0)
    n, starts = 0, []
    for s in range(0, len(bounds), batch):
        gather_kernel[1, 64](bounds[s:s + batch], threshold, out[n:], count)
        starts.append((n, s))
        n = n + int(count[0])  # the element read: a copy back per batch
        fill_kernel[1, 32](count, 0)
    picked = out.copy_to_host()[:n]
    ends = [first for first, _ in starts[1:]] + [n]
    for (first, s), end in zip(starts, ends):  # a batch's indices count from its start
        picked[first:end] += s
    return np.sort(picked)


def test_the_atomic_compaction_gets_full_marks():
    result = grade(survivors_atomic)
    assert result.points == 4, failures(result)


@pytest.mark.parametrize("answer", [survivors_scan, survivors_fixed_buffer])
def test_a_scan_or_a_fixed_buffer_of_survivors_passes_the_technique_test(answer):
    result = grade(answer, only=GROWTH)
    assert result.points == result.max_points, failures(result)


@pytest.mark.parametrize("answer, measured", [
    (survivors_from_all_bounds, "bytes copied back"), (survivors_per_batch, "copies"),
    (survivors_all_bounds_past_eight, "bytes copied back"), (survivors_reading_the_count_per_batch, "launches")])
def test_copying_the_bounds_or_anything_per_batch_fails_the_technique_test(answer, measured):
    result = grade(answer, only=GROWTH)
    (outcome,) = result.outcomes
    assert not outcome.passed and outcome.technique and measured in outcome.message, failures(result)


def survivors_in_reverse(x, y, features, n_features, grid, candidates, batch, threshold):
    """Right: an atomic counter's order is the threads' arrival (fixed in the simulator only), so any order is."""
    return survivors_atomic(x, y, features, n_features, grid, candidates, batch, threshold)[::-1].copy()


def test_the_survivors_order_is_not_graded_on_any_backend():
    result = grade(survivors_in_reverse, only="one batch")
    assert result.points == result.max_points, failures(result)


def test_an_element_read_on_the_host_is_counted_as_a_copy_back():
    from course_lib.grading.authoring.hostcosts import counted_call

    count = cuda.to_device(np.zeros(1, np.int32))
    _, counts = counted_call(lambda: [int(count[0]) for _ in range(3)])
    assert counts["DtoH_count"] == 3 and counts["DtoH_bytes"] == 12


def test_the_library_s_way_is_capped_at_half():
    question = get_question("ps8.q3")
    tests = tuple(t for t in question.tests if not t.hidden)  # the visible ones: 3.5 points, 2 of them results
    question = dataclasses.replace(question, tests=tests, points=sum(t.points for t in tests))
    result = run_tests(question, survivors_from_all_bounds, seed=7)
    assert result.points == 1.75 and "bytes copied back" in failures(result), failures(result)


def test_thresholds_lie_halfway_between_two_distinct_bounds():
    bounds = np.array([0.2, 0.5, 0.5, 0.8, 1.0])
    assert threshold_between(bounds, 0.4) == pytest.approx(0.65)
    assert threshold_between(bounds, 0.0) > 1 and threshold_between(bounds, 1.0) == 0
    data = filter_case(24, 5, 2, 2, seed=3)
    b, t = bounds_reference(data), data["threshold"]
    assert np.min(np.abs(b - t)) > 1e-3 and 0 < len(survivors_reference(data)) < len(b)


def test_more_losers_keep_the_survivors():
    data = filter_case(20, 4, 2, 2, seed=1)
    more = with_more_losers(data, 2)
    assert len(more["candidates"]) > len(data["candidates"])
    assert np.array_equal(survivors_reference(more), survivors_reference(data))


def test_the_upload_bound_is_the_inputs_bytes():
    data = filter_case(50, 4, 3, 2, seed=1)
    assert q3_upload_bytes(data) == 50 * 8 * 2 + 50 * 4 + 4 * 3 * 4
