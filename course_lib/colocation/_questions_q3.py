"""Problem set 8, question 3 (``ps8.q3``): the batched filter whose survivors are chosen on the device, its cases,
its reference and its grading. Part of problem set 8 (:mod:`course_lib.colocation.questions`, which lists it in
``QUESTIONS`` and re-exports the case makers the problem set imports).

ps8.q3 (4 points): **only the survivors cross the bus**. The lesson's batched miner copies every candidate's upper
bound of PI back and prunes on the host (its ``copies="per_level"`` variant decides on the device but still brings
back a flag per candidate). Here the host needs only the candidates whose bound reaches a threshold, and the
student decides how to gather them on the device. The source's kernels are given (in
:mod:`course_lib.colocation.kernels`: ``fill_kernel``, ``grid_count_kernel``, ``quadruplet_filter_kernel``,
``candidate_bound_kernel``); the student writes ``filter_survivors(x, y, features, n_features, grid, candidates,
batch, threshold)``: the CountMap and the instances per feature built on the device from the uploaded points, the
candidates filtered ``batch`` at a time (two launches per batch, one flags buffer reused), then a kernel of their
own that gathers the indices of the candidates whose bound is ``>= threshold`` into a device buffer (an atomic
counter or a scan: their choice), and only the survivors copied back; it returns their indices (int32) into
``candidates``, each once, in any order (an atomic counter's order is the threads' arrival, which only the simulator
fixes; the grader sorts them).

Graded on results (the survivors of the float64 bounds of the library's NumPy
:func:`~course_lib.colocation.model.pi_upper_bound`; every threshold lies halfway between two distinct bounds, so
sums in another order decide the same way) and on counts measured in the student's process
(:func:`course_lib.grading.authoring.hostcosts.counted_call`), per run: ``grid_count_kernel`` launched, at most two
launches per batch plus :data:`Q3_PREPROCESS_LAUNCHES` and :data:`Q3_SELECT_LAUNCHES`; to the device the inputs and
at most :data:`Q3_UPLOAD_SPARE` bytes more; at most :data:`Q3_MAX_DTOH` copies back carrying at most 4 x (survivors +
1) + :data:`Q3_DTOH_SPARE_BYTES` bytes; :data:`Q3_MAX_COPIES` copies and :data:`Q3_MAX_ALLOCATIONS` allocations. And
between two runs with the same survivors, the second with many more candidates that do not survive (more batches):
no more copies, bytes back or allocations, and two more launches per added batch. Copying every bound back (and
pruning on the host), copying survivors or reading the count per batch, or doing so past some number of candidates,
is capped at half.
"""

from __future__ import annotations

import copy

import numpy as np

from ..grading.authoring.buffers import fail
from ..grading.authoring.coverage import host_coverage_test
from ..grading.authoring.harness import function, question, result_test
from ..grading.authoring.hostcosts import copies_and_allocations_bounds, counted_call, growth_test, judge_bounded
from .kernels import candidate_bound_kernel, fill_kernel, grid_count_kernel, quadruplet_filter_kernel

#: Launches of the preprocessing: zeroing the counters (one to three fills) and the grid count.
Q3_PREPROCESS_LAUNCHES = 4
#: Launches of the student's selection, whatever the number of batches: zeroing a counter, a compaction (or a
#: scan's passes and its scatter).
Q3_SELECT_LAUNCHES = 4
#: Bytes a run may upload besides the inputs: a zeroed counter or two.
Q3_UPLOAD_SPARE = 16
#: Copies back to the host: the count, then the survivors (or one buffer holding both, and the rest when it did not
#: fit).
Q3_MAX_DTOH = 2
#: Bytes back beyond 4 x (survivors + 1): a fixed buffer of up to 32 slots more than the survivors.
Q3_DTOH_SPARE_BYTES = 128
#: Copies a run may make: x, y, the features, the candidates and a counter in, two out, one spare.
Q3_MAX_COPIES = 8
#: Device allocations: the inputs, the CountMap, the counters, each instance's cell and local number, the flags,
#: the bounds, the selection's buffers, spares.
Q3_MAX_ALLOCATIONS = 16


def q3_upload_bytes(data):
    """Bytes the inputs take on the bus: x and y (float64), the features and the candidates (int32). A CountMap
    built on the host, or counters zeroed there, cost more."""
    return 20 * len(data["features"]) + 4 * np.asarray(data["candidates"]).size


def filter_grid(data):
    """The :class:`~course_lib.colocation.model.Grid` of a case: its fields travel as a plain dict between the grader
    and the student's process, which carry plain data only."""
    from .model import Grid

    return Grid(**data["grid"])


def bounds_reference(data):
    """Each candidate's upper bound of PI from the NumPy CountMap (:func:`course_lib.colocation.model.count_map`),
    float64 (C,)."""
    from .model import count_map, pi_upper_bound

    points = np.column_stack([data["x"], data["y"]])
    grid = filter_grid(data)
    counts = count_map(grid, points, data["features"], data["n_features"])
    feature_count = np.bincount(data["features"], minlength=data["n_features"])
    return np.array([pi_upper_bound(grid, counts, tuple(c), feature_count) for c in data["candidates"]],
                    np.float64).reshape(-1)


def survivors_reference(data):
    """The indices (int32, ascending) of the candidates whose bound is at least the case's threshold."""
    return np.flatnonzero(bounds_reference(data) >= data["threshold"]).astype(np.int32)


def threshold_between(bounds, share):
    """A threshold halfway between two distinct bounds, letting about ``share`` of the candidates survive: 0 lets
    none through (above every bound, which are at most 1), 1 lets all (0). Halfway between two ratios of small
    counts, it is far from both: float sums in another order decide the same way."""
    if share >= 1:
        return 0.0
    if share <= 0 or len(bounds) == 0:
        return 2.0
    values = np.unique(bounds)[::-1]  # distinct, largest first
    kept = np.array([np.count_nonzero(bounds >= v) for v in values])
    j = int(np.argmin(np.abs(kept - share * len(bounds))))
    if j == len(values) - 1:
        return 0.0
    return float(0.5 * (values[j] + values[j + 1]))


def filter_case(n_instances, n_features, k, batch, seed, share=0.3):
    """``inputs`` data: planted co-locations (two groups) in a square of side 5 (a few dozen instances there make
    bounds that differ between candidates, on a grid of at most 16 quadruplets), the grid of r = 1 (its fields,
    :func:`filter_grid`), every k-subset of the features as a candidate (sorted ids), the batch size, and a threshold
    letting about ``share`` of the candidates survive (:func:`threshold_between`)."""
    from dataclasses import asdict
    from itertools import combinations

    from .data import planted_colocations
    from .model import grid_for

    data = planted_colocations(n_instances, n_features, groups=((0, 1), (2, 3)), r=1.0, extent=5.0,
                               seed=seed)
    case = {"x": np.ascontiguousarray(data.points[:, 0]), "y": np.ascontiguousarray(data.points[:, 1]),
            "features": data.features.astype(np.int32), "n_features": int(n_features),
            "grid": asdict(grid_for(data.points, 1.0, n_features)),
            "candidates": np.array(list(combinations(range(n_features), k)), np.int32), "batch": int(batch)}
    case["threshold"] = threshold_between(bounds_reference(case), share)
    return case


def with_more_losers(data, times):
    """The case with its non-surviving candidates appended ``times`` more times: the same survivors, more batches."""
    if not times:
        return data
    losers = np.asarray(data["candidates"])[bounds_reference(data) < data["threshold"]]
    return {**data, "candidates": np.concatenate([data["candidates"]] + [losers] * times).astype(np.int32)}


def _inputs(n_instances, n_features, k, batch, share=0.3):
    return lambda rng, info: filter_case(n_instances, n_features, k, batch, int(rng.integers(1 << 30)), share)


#: The growth test's case: 6 pairs of 4 features in batches of 2, then the same with the non-surviving pairs added
#: again until there are at least three times as many candidates.
GROWTH = dict(n_instances=20, n_features=4, k=2, batch=2)


def _growth_inputs(more):
    """The growth test's run (``more``: the second one): both runs draw the same seed (the first from a copy of the
    generator), the first seed from there with survivors and candidates that do not survive."""
    def make(rng, info):
        seed = int((rng if more else copy.deepcopy(rng)).integers(1 << 30))
        while True:
            data = filter_case(**GROWTH, seed=seed)
            n_candidates, n_survivors = len(data["candidates"]), len(survivors_reference(data))
            if 0 < n_survivors < n_candidates:
                return with_more_losers(data, -(-2 * n_candidates // (n_candidates - n_survivors)) if more else 0)
            seed += 1
    return make


def _hidden(rng, info):
    share = float(rng.choice([0.0, 0.2, 0.5, 1.0]))
    return filter_case(int(rng.integers(16, 41)), int(rng.integers(4, 7)), int(rng.integers(2, 4)),
                       int(rng.integers(2, 6)), int(rng.integers(1 << 30)), share)


def _run(answer, data):
    """Runs the student's host program on copies of the inputs, measuring its launches, copies and allocations."""
    out, counts = counted_call(answer.value, np.array(data["x"]), np.array(data["y"]), np.array(data["features"]),
                               data["n_features"], filter_grid(data), np.array(data["candidates"]), data["batch"],
                               data["threshold"])
    return {"survivors": out, **counts}


def _label(data):
    n_candidates, k = np.asarray(data["candidates"]).shape
    return (f"for N = {len(data['features'])}, C = {n_candidates} candidates of k = {k}, batches of {data['batch']}, "
            f"threshold {data['threshold']:.4f}")


def _batches(data):
    return -(-len(data["candidates"]) // data["batch"])


def judge_survivors(data, got):
    """The indices of the candidates whose bound reaches the threshold, each once, in any order: an atomic counter
    hands out its slots in the order the threads arrive, which a GPU does not fix (and the simulator does), so the
    order is not graded, on any backend."""
    want = survivors_reference(data)
    value = got["survivors"]
    if not isinstance(value, np.ndarray) or value.ndim != 1 or not np.issubdtype(value.dtype, np.integer):
        raise fail(f"survivors {_label(data)}: return a 1-D integer NumPy array of indices into candidates, got "
                   f"{type(value).__name__} {getattr(value, 'dtype', '')} {getattr(value, 'shape', '')}", "answer")
    if not np.array_equal(np.sort(value), want):
        missing, extra = np.setdiff1d(want, value), np.setdiff1d(value, want)
        raise fail(f"survivors {_label(data)}: {value.size} indices, expected {want.size}; missing "
                   f"{missing[:5].tolist()}, not surviving {extra[:5].tolist()}"
                   + (", some more than once" if len(np.unique(value)) < value.size else ""), "survivors")


def judge_survivor_counts(data, got):
    """Right survivors, the preprocessing on the device, two launches per batch plus a few, only the inputs up, and
    back only the survivors (and a count, and a few spare slots)."""
    judge_survivors(data, got)
    if "grid_count_kernel" not in got["kernels"]:
        raise fail(f"grid_count_kernel was not launched {_label(data)}: the CountMap and the instances per feature "
                   "must be built on the device, from the uploaded points", "technique", public=True)
    n_survivors = len(survivors_reference(data))
    judge_bounded((("launches", got["launches"], 2 * _batches(data) + Q3_PREPROCESS_LAUNCHES + Q3_SELECT_LAUNCHES,
                    f"two per batch of {data['batch']} candidates, the preprocessing and at most "
                    f"{Q3_SELECT_LAUNCHES} for choosing the survivors"),
                   ("bytes copied to the device", got["HtoD_bytes"], q3_upload_bytes(data) + Q3_UPLOAD_SPARE,
                    "the points, their features and the candidates: the counters are built on the device"),
                   ("copies back to the host", got["DtoH_count"], Q3_MAX_DTOH, "a count and the survivors"),
                   ("bytes copied back to the host", got["DtoH_bytes"], 4 * (n_survivors + 1) + Q3_DTOH_SPARE_BYTES,
                    f"{n_survivors} survivors' indices and a count, and {Q3_DTOH_SPARE_BYTES} bytes of spare slots: "
                    "never the bounds"),
                   *copies_and_allocations_bounds(got, Q3_MAX_COPIES, Q3_MAX_ALLOCATIONS)),
                  _label(data))


#: What one more batch of non-surviving candidates may add: its launch pair, and no copy, byte back or allocation.
PER_BATCH = (("launches", "launches", 2, "the batch's launch pair"),
             ("copies", "copies between host and device", 0, "none per batch"),
             ("DtoH_count", "copies back to the host", 0, "none per batch"),
             ("DtoH_bytes", "bytes copied back to the host", 0, "the survivors are the same"),
             ("allocations", "device allocations", 0, "none per batch"))


Q3 = question(
    "ps8.q3", "the batched filter: the survivors chosen on the device, only they copied back", 4,
    answer=function("filter_survivors", allowed=(fill_kernel, grid_count_kernel, quadruplet_filter_kernel,
                                                 candidate_bound_kernel)),
    tolerance="the survivors exactly: every threshold lies halfway between two distinct bounds",
    tests=[
        result_test("one batch: 4 features, pairs, all 6 candidates at once", 1, inputs=_inputs(24, 4, 2, 6),
                    run=_run, judge=judge_survivors),
        result_test("triples of 5 features in batches of 3 (a partial last batch)", 1, inputs=_inputs(24, 5, 3, 3),
                    run=_run, judge=judge_survivors),
        result_test("hidden: random instances, features, pattern size, batch and threshold (none or all surviving "
                    "too), and the run's costs", 0.5, hidden=True, inputs=_hidden, run=_run,
                    judge=judge_survivor_counts),
        growth_test("launches, bytes, copies and allocations (record(); 6 pairs in batches of 2, then the same with "
                    "the non-surviving pairs again, three times the candidates: the same survivors, nothing more "
                    "back)", 1.5,
                    inputs=(_growth_inputs(False), _growth_inputs(True)), run=_run,
                    judge=judge_survivor_counts, steps=_batches, per_step=PER_BATCH),
        host_coverage_test("hidden: every statement of your host program ran in the grader's runs"),
    ])
