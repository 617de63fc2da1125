"""The batched GPU miner with one upload and one download per level (``mine(..., copies="per_level")``).

The lesson's batched miner (``copies="per_phase"``) copies twice each way per level: the candidates
up and their bounds down (the filter), then the plan up and the participation counts down (the
refine), and the host decides between the two which candidates survive the filter. Here the host
plans the refine for every candidate before the filter runs (the plan does not depend on the
bounds), so one copy takes the candidates and the plan up. On the device, :func:`keep_kernel`
compares each bound with the threshold and unlinks the candidates below it from the plan (their
``child_of`` entry becomes -1, so the neighbour search never extends a row by them); it also zeroes
the participation counters, the launch the lesson's refine spends on that. One copy brings back,
together, which candidates survived and the distinct participants of each: the host then computes
every participation index of the level with NumPy, without a loop per candidate. Same kernels for
the filter and the search, same tables, same patterns.

What it costs: the flags of the participation counters are sized (and zeroed) for every candidate,
not only those that survive, and a level where no candidate survives still launches its (empty)
search, since the host learns that only from the level's one download.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
from numba import cuda

from ..registry import course_kernel
from ._types import LevelStats, MiningResult
from .kernels import LESSON
from .model import level_plan
from .reference import apriori_candidates

__all__ = ["keep_kernel", "mine_per_level"]


def _example_keep():
    candidates = np.array([0, 1, 0, 2, 1, 2], np.int32)
    slots = np.array([1, 2, 5], np.int32)  # parent (the first feature) * 3 + the last feature
    child_of = np.full(9, -1, np.int32)
    child_of[slots] = np.arange(3, dtype=np.int32)
    out = np.ones(3 + 6 + 40, np.int32)
    return 2, 32, (np.zeros(3), np.array([3, 2, 0, 4, 5, 5], np.int32), np.int32(1), np.array([6, 4, 5], np.int32),
                   candidates, np.int32(2), 0.4, slots, child_of, out)


@course_kernel("void(float64[::1], int32[::1], int32, int32[::1], int32[::1], int32, float64, int32[::1], int32[::1], "
               "int32[::1])", lesson=LESSON, example=_example_keep)
def keep_kernel(bounds, sums, from_sums, feature_count, candidates, k, threshold, slots, child_of, out):
    """Apply the filter on the device: keep or unlink each candidate, and zero the refine's counters.

    One thread per candidate and per counter (``max(C, out.size - C)`` threads, 1-D).

    Parameters
    ----------
    bounds : float64 array of shape (C,)
        The upper bounds of PI (from ``candidate_bound_kernel``); written here when ``from_sums``.
    sums : int32 array of shape (C * k,)
        ``fused_filter_kernel``'s sums, read when ``from_sums`` (the bound is then computed as
        :func:`~course_lib.colocation._fused_kernels.bounds_from_sums` does on the host).
    from_sums : int32
        1: the bounds come from ``sums``; 0: from ``bounds``.
    feature_count : int32 array of shape (F,)
    candidates : int32 array of shape (C * k,)
    k : int32
    threshold : float64
    slots : int32 array of shape (C,)
        Where candidate c sits in ``child_of`` (its parent's id * F + its last feature).
    child_of : int32 array
        The level's plan: ``child_of[slots[c]]`` becomes c if c's bound reaches the threshold, else -1.
    out : int32 array of shape (C + C * k + n_flags,)
        ``out[c]`` becomes 1 if candidate c is kept, else 0; the rest (the participation counts, then
        the flags) is zeroed.
    """
    i = cuda.grid(1)
    n = slots.shape[0]
    if i < out.shape[0] - n:
        out[n + i] = 0
    if i < n:
        if from_sums:
            bound = 1.0
            for j in range(k):
                total = feature_count[candidates[i * k + j]]
                ratio = sums[i * k + j] / total if total > 0 else 0.0
                bound = min(bound, ratio)
            bounds[i] = bound
        else:
            bound = bounds[i]
        if bound >= threshold:
            out[i] = 1
            child_of[slots[i]] = i
        else:
            out[i] = 0
            child_of[slots[i]] = -1


def _blocks(n, block):
    return max((n + block - 1) // block, 1)


def _filter_and_keep(miner, candidates, parents, n_parents, k, threshold):
    """Upload the level (candidates and plan, one copy), run the filter, then :func:`keep_kernel`.

    Returns
    -------
    common : tuple
        The neighbour search's arguments (the plan with the filtered candidates unlinked).
    d_seg_start : device array
    d_out : device array
        Kept flags (C), participation counts (C * k), zeroed flags (n_flags).
    """
    from . import kernels
    from ._fused_kernels import fused_filter_kernel

    g, nf, n = miner.grid, miner.n_features, len(candidates)
    child_of, seg_start, n_flags = level_plan(candidates, parents, n_parents, nf, miner.feature_count)
    slots = (np.asarray(parents, np.int64) * nf + candidates[:, -1]).astype(np.int32)
    fused = miner.filter == "fused"
    parts = [candidates.reshape(-1), child_of, seg_start, slots] + ([np.zeros(n * k, np.int32)] if fused else [])
    d_in = miner._upload(np.concatenate(parts), into="level_in")
    bounds_at = np.cumsum([0] + [len(p) for p in parts]).tolist()  # plain ints to slice device arrays
    d_cand, d_child_of, d_seg_start, d_slots = (d_in[bounds_at[i]: bounds_at[i + 1]] for i in range(4))
    shape = (np.int32(g.n_cols), np.int32(g.n_rows))
    d_bounds = miner._alloc("bounds", n, np.float64)
    if fused:
        d_sums = d_in[bounds_at[4]: bounds_at[5]]
        fused_filter_kernel[(_blocks(g.n_cells, miner.block), n), miner.block](
            miner.d_count_map, np.int32(nf), *shape, d_cand, np.int32(k), d_sums)
    else:
        d_sums = d_cand  # not read
        d_qualifies = miner._alloc("qualifies", n * g.n_quads)
        kernels.quadruplet_filter_kernel[(g.n_quads, n), (k, 2, 2)](
            miner.d_count_map, np.int32(nf), *shape, d_cand, np.int32(k), d_qualifies)
        kernels.candidate_bound_kernel[n, kernels.BOUND_BLOCK](
            miner.d_count_map, np.int32(nf), *shape, d_cand, np.int32(k), d_qualifies, miner._d_feature_count,
            d_bounds)
    d_out = miner._alloc("level_out", n + n * k + n_flags)
    keep_kernel[_blocks(max(n, len(d_out) - n), miner.block), miner.block](
        d_bounds, d_sums, np.int32(fused), miner._d_feature_count, d_cand, np.int32(k), float(threshold), d_slots,
        d_child_of, d_out)
    common = (np.int32(k - 1), d_child_of, np.int32(nf), miner.d_x, miner.d_y, miner.d_features, miner.d_cell_of,
              miner.d_cell_start, miner.d_order, *shape, miner.r * miner.r)
    return common, d_seg_start, d_out


def mine_per_level(miner, threshold, max_size) -> MiningResult:
    """:meth:`~course_lib.colocation.api._DeviceMiner.run` (batched) with one copy each way per level."""
    from .kernels import participation_kernel

    with miner._phase("preprocess"):
        miner._preprocess()
        miner._d_feature_count = miner._upload(miner.feature_count.astype(np.int32))
        d_table, rows = miner._singleton_tables()["all"]
    fc = miner.feature_count.astype(np.int64)
    candidates = np.array(list(combinations(np.flatnonzero(fc > 0).tolist(), 2)), np.int32).reshape(-1, 2)
    parents, n_parents = candidates[:, 0], miner.n_features  # the table of size 1: pattern id = the feature
    found, levels, k = {}, [], 2
    while len(candidates) and k <= max_size:
        n = len(candidates)
        with miner._phase("filter"):
            common, d_seg_start, d_out = _filter_and_keep(miner, candidates, parents, n_parents, k, threshold)
        with miner._phase("refine"):
            d_new, total = miner._extend((d_table,) + common, rows, k)
            if total:
                participation_kernel[_blocks(total, miner.block), miner.block](
                    d_new[: total * (k + 1)], np.int32(k), d_seg_start, miner.d_local, d_out[n + n * k:],
                    d_out[n: n + n * k])
            level = d_out[: n + n * k].copy_to_host()  # the level's one download
        kept = level[:n] != 0
        with np.errstate(divide="ignore", invalid="ignore"):
            pi = (level[n:].reshape(n, k) / fc[candidates]).min(axis=1)
        prevalent = kept & (pi >= threshold)
        levels.append(LevelStats(k, n, int(kept.sum()), int(prevalent.sum()), total))
        patterns = [tuple(c) for c in candidates[prevalent].tolist()]
        found.update(zip(patterns, pi[prevalent].tolist()))
        ids = dict(zip(patterns, np.flatnonzero(prevalent).tolist()))  # a prevalent pattern's id: its index
        following = apriori_candidates(patterns, k)
        parents = np.array([ids[c[:-1]] for c in following], np.int64)
        candidates = np.array(following, np.int32).reshape(-1, k + 1)
        d_table, rows, n_parents = d_new, total, n
        k += 1
    return MiningResult(dict(sorted(found.items())), levels, "gpu", dict(miner.stats))
