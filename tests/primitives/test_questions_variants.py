"""Does problem set 9 grade the techniques rather than one solution?

Kernels written from the problem statements: right techniques written differently get full marks, wrong
techniques with right results at most half.
"""

import numpy as np
import pytest
from numba import cuda, float32, int32

from course_lib.grading import get_question, run_tests
from course_lib.primitives.model import wavefronts

FULL = 0xFFFFFFFF


#: Grading seeds: the hidden technique tests draw their sizes, blocks and sampled blocks from each.
SEEDS = (3, 4)


def grade(question_id, factory, seed=3):
    return run_tests(get_question(question_id), factory, hidden=True, seed=seed)


# ----------------------------------------------------------------------------- ps9.q1, right techniques
def tree_over_totals(block):
    """4 values per thread in a padded tile; the B totals scanned by a Blelloch tree, padded too."""
    tile = 4 * block
    words = tile + tile // 32
    total_words = block + block // 32

    @cuda.jit
    def kernel(x, out, block_sums):
        staged = cuda.shared.array(words, float32)
        totals = cuda.shared.array(total_words, float32)
        t = cuda.threadIdx.x
        base = cuda.blockIdx.x * tile
        for r in range(4):
            k = r * block + t
            staged[k + (k >> 5)] = x[base + k] if base + k < x.shape[0] else float32(0)
        cuda.syncthreads()
        own = float32(0)
        for s in range(4):
            k = 4 * t + s
            own += staged[k + (k >> 5)]
        totals[t + (t >> 5)] = own
        stride = 1
        while stride < block:
            cuda.syncthreads()
            i = (t + 1) * 2 * stride - 1
            if i < block:
                totals[i + (i >> 5)] += totals[i - stride + ((i - stride) >> 5)]
            stride *= 2
        cuda.syncthreads()
        if t == 0:
            last = block - 1 + ((block - 1) >> 5)
            block_sums[cuda.blockIdx.x] = totals[last]
            totals[last] = 0
        stride = block // 2
        while stride > 0:
            cuda.syncthreads()
            i = (t + 1) * 2 * stride - 1
            if i < block:
                left = i - stride + ((i - stride) >> 5)
                right = i + (i >> 5)
                carried = totals[left]
                totals[left] = totals[right]
                totals[right] += carried
            stride //= 2
        cuda.syncthreads()
        running = totals[t + (t >> 5)]
        for s in range(4):
            k = 4 * t + s
            v = staged[k + (k >> 5)]
            staged[k + (k >> 5)] = running
            running += v
        cuda.syncthreads()
        for r in range(4):
            k = r * block + t
            if base + k < x.shape[0]:
                out[base + k] = staged[k + (k >> 5)]

    return kernel


# ----------------------------------------------------------------------------- ps9.q1, wrong techniques
def hillis_steele_over_the_tile(block):
    """Every value at every step: log2(4B) steps over the tile, double-buffered (more work per value)."""
    tile = 4 * block
    both = 2 * tile

    @cuda.jit
    def kernel(x, out, block_sums):
        buf = cuda.shared.array(both, float32)
        t = cuda.threadIdx.x
        base = cuda.blockIdx.x * tile
        for r in range(4):
            k = r * block + t
            buf[k] = x[base + k] if base + k < x.shape[0] else float32(0)
        src = 0
        off = 1
        while off < tile:
            cuda.syncthreads()
            for r in range(4):
                k = r * block + t
                v = buf[src * tile + k]
                if k >= off:
                    v += buf[src * tile + k - off]
                buf[(1 - src) * tile + k] = v
            src = 1 - src
            off *= 2
        cuda.syncthreads()
        for r in range(4):
            k = r * block + t
            if base + k < x.shape[0]:
                out[base + k] = buf[src * tile + k] - buf[(1 - src) * tile + k] + buf[(1 - src) * tile + k] - \
                    (buf[src * tile + k] - buf[src * tile + k - 1] if k > 0 else buf[src * tile + k])
        if t == block - 1:
            block_sums[cuda.blockIdx.x] = buf[src * tile + tile - 1]

    return kernel


# ----------------------------------------------------------------------------- ps9.q2
def offsets_by_thread_zero(block):
    """Ballots, then thread 0 turns the warps' counts into offsets: two barriers, right."""
    warps = block // 32

    @cuda.jit
    def kernel(x, threshold, out, counts):
        kept = cuda.shared.array(warps, int32)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * block + t
        keep = i < x.shape[0] and x[i] > threshold
        votes = cuda.ballot_sync(FULL, keep)
        if t % 32 == 0:
            kept[t // 32] = cuda.popc(votes)
        cuda.syncthreads()
        if t == 0:
            running = 0
            for w in range(warps):
                here = kept[w]
                kept[w] = running
                running += here
            counts[cuda.blockIdx.x] = running
        cuda.syncthreads()
        if keep:
            below = cuda.popc(votes & ((1 << (t % 32)) - 1))
            out[cuda.blockIdx.x * block + kept[t // 32] + below] = x[i]

    return kernel


def atomic_slots(block):
    """Each kept value takes a slot from an atomic counter: right count, but the order is lost."""
    @cuda.jit
    def kernel(x, threshold, out, counts):
        slot = cuda.shared.array(1, int32)
        t = cuda.threadIdx.x
        if t == 0:
            slot[0] = 0
        cuda.syncthreads()
        i = cuda.blockIdx.x * block + t
        if i < x.shape[0] and x[i] > threshold:
            out[cuda.blockIdx.x * block + cuda.atomic.add(slot, 0, 1)] = x[i]
        cuda.syncthreads()
        if t == 0:
            counts[cuda.blockIdx.x] = slot[0]

    return kernel


# ----------------------------------------------------------------------------- the technique only where the
# visible tests look (their sizes, blocks of several warps), or in one warp of the block
def technique_only_up_to_2048_values(block):
    """The padded coarsened scan while n <= 2048 (every size the visible tests use); beyond, thread 0 of each
    block scans its tile serially."""
    tile = 4 * block
    words = tile + tile // 32
    total_words = block + block // 32

    @cuda.jit
    def kernel(x, out, block_sums):
        t = cuda.threadIdx.x
        base = cuda.blockIdx.x * tile
        if x.shape[0] > 2048:
            if t == 0:
                running = float32(0)
                for k in range(tile):
                    if base + k < x.shape[0]:
                        v = x[base + k]
                        out[base + k] = running
                        running += v
                block_sums[cuda.blockIdx.x] = running
            return
        staged = cuda.shared.array(words, float32)
        totals = cuda.shared.array(total_words, float32)
        for r in range(4):
            k = r * block + t
            staged[k + (k >> 5)] = x[base + k] if base + k < x.shape[0] else float32(0)
        cuda.syncthreads()
        own = float32(0)
        for s in range(4):
            k = 4 * t + s
            own += staged[k + (k >> 5)]
        totals[t + (t >> 5)] = own
        stride = 1
        while stride < block:
            cuda.syncthreads()
            i = (t + 1) * 2 * stride - 1
            if i < block:
                totals[i + (i >> 5)] += totals[i - stride + ((i - stride) >> 5)]
            stride *= 2
        cuda.syncthreads()
        if t == 0:
            last = block - 1 + ((block - 1) >> 5)
            block_sums[cuda.blockIdx.x] = totals[last]
            totals[last] = 0
        stride = block // 2
        while stride > 0:
            cuda.syncthreads()
            i = (t + 1) * 2 * stride - 1
            if i < block:
                left = i - stride + ((i - stride) >> 5)
                right = i + (i >> 5)
                carried = totals[left]
                totals[left] = totals[right]
                totals[right] += carried
            stride //= 2
        cuda.syncthreads()
        running = totals[t + (t >> 5)]
        for s in range(4):
            k = 4 * t + s
            v = staged[k + (k >> 5)]
            staged[k + (k >> 5)] = running
            running += v
        cuda.syncthreads()
        for r in range(4):
            k = r * block + t
            if base + k < x.shape[0]:
                out[base + k] = staged[k + (k >> 5)]

    return kernel


def first_warp_scans_the_tile(block):
    """The block stages its tile coalesced in a padded array; then the first warp alone scans it (B / 8 values
    per lane and a shuffle scan of its 32 totals) while the other warps wait at the barrier."""
    tile = 4 * block
    per_lane = tile // 32
    words = tile + tile // 32

    @cuda.jit
    def kernel(x, out, block_sums):
        staged = cuda.shared.array(words, float32)
        t = cuda.threadIdx.x
        base = cuda.blockIdx.x * tile
        for r in range(4):
            k = r * block + t
            staged[k + (k >> 5)] = x[base + k] if base + k < x.shape[0] else float32(0)
        cuda.syncthreads()
        if t < 32:
            own = float32(0)
            for s in range(per_lane):
                k = t * per_lane + s
                own += staged[k + (k >> 5)]
            inclusive = own
            d = 1
            while d < 32:
                up = cuda.shfl_up_sync(FULL, inclusive, d)
                if t >= d:
                    inclusive += up
                d *= 2
            running = inclusive - own
            for s in range(per_lane):
                k = t * per_lane + s
                v = staged[k + (k >> 5)]
                staged[k + (k >> 5)] = running
                running += v
            if t == 31:
                block_sums[cuda.blockIdx.x] = inclusive
        cuda.syncthreads()
        for r in range(4):
            k = r * block + t
            if base + k < x.shape[0]:
                out[base + k] = staged[k + (k >> 5)]

    return kernel


def thread_zero_compacts_one_warp_blocks(block):
    """Ranks by warp votes for blocks of several warps; for a block of one warp, thread 0 walks the tile."""
    if block > 32:
        return offsets_by_thread_zero(block)

    @cuda.jit
    def kernel(x, threshold, out, counts):
        if cuda.threadIdx.x == 0:
            base = cuda.blockIdx.x * block
            kept = 0
            for k in range(block):
                if base + k < x.shape[0] and x[base + k] > threshold:
                    out[base + kept] = x[base + k]
                    kept += 1
            counts[cuda.blockIdx.x] = kept

    return kernel


def first_warp_compacts_the_block(block):
    """The first warp votes on the block's values 32 at a time and places them; the other warps wait."""
    @cuda.jit
    def kernel(x, threshold, out, counts):
        t = cuda.threadIdx.x
        base = cuda.blockIdx.x * block
        if t < 32:
            placed = 0
            for chunk in range(0, block, 32):
                i = base + chunk + t
                keep = i < x.shape[0] and x[i] > threshold
                votes = cuda.ballot_sync(FULL, keep)
                if keep:
                    out[base + placed + cuda.popc(votes & ((1 << t) - 1))] = x[i]
                placed += cuda.popc(votes)
            if t == 0:
                counts[cuda.blockIdx.x] = placed
        cuda.syncthreads()

    return kernel


# ----------------------------------------------------------------------------- ps9.q3, layouts
def gap_every_32_words(per_thread, block):
    """The lesson's padding for every C: conflicts at C = 6 or 12, wasted words at an odd C."""
    return 32, 1


def never_a_gap(per_thread, block):
    return 1, 0


def gap_for_powers_of_two_only(per_thread, block):
    """A rule seen in libraries' exchanges: right at C = 2, 4, 8, 16 and odd C, conflicts at C = 6, 10, 12, 14."""
    return (32, 1) if per_thread & (per_thread - 1) == 0 else (1, 0)


def gap_per_thread(per_thread, block):
    """One gap word after each thread's values: the reads are conflict-free, the warp's coalesced stores are not."""
    return per_thread, 1


def visible_answers_only(per_thread, block):
    """Right on the visible configurations, a gap every 32 words elsewhere."""
    return {(4, 64): (32, 1), (3, 64): (1, 0), (6, 32): (96, 1), (12, 128): (96, 1)}.get((per_thread, block), (32, 1))


def longest_period_by_search(per_thread, block):
    """Right, found rather than reasoned: the longest period with one gap word that the model finds conflict-free
    for the stores and the reads of every warp, or no gap when none is needed."""
    def conflict_free(period, gap):
        for warp in range(block // 32):
            lanes = 32 * warp + np.arange(32)
            for k in range(per_thread):
                for words in (k * block + lanes, per_thread * lanes + k):
                    if wavefronts(words + gap * (words // period)) > 1:
                        return False
        return True

    if conflict_free(1, 0):
        return per_thread * block, 0
    return next((p, 1) for p in range(per_thread * block, 0, -1) if conflict_free(p, 1))


WRONG = [("ps9.q1", technique_only_up_to_2048_values), ("ps9.q1", first_warp_scans_the_tile),
         ("ps9.q2", thread_zero_compacts_one_warp_blocks), ("ps9.q2", first_warp_compacts_the_block),
         ("ps9.q3", gap_every_32_words), ("ps9.q3", never_a_gap), ("ps9.q3", gap_for_powers_of_two_only),
         ("ps9.q3", gap_per_thread), ("ps9.q3", visible_answers_only)]
RIGHT = [("ps9.q1", tree_over_totals), ("ps9.q2", offsets_by_thread_zero), ("ps9.q3", longest_period_by_search)]
POINTS = {"ps9.q1": 6, "ps9.q2": 3, "ps9.q3": 2}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("question_id,factory", WRONG, ids=lambda v: getattr(v, "__name__", v))
def test_the_technique_only_on_some_configurations_or_in_one_warp_earns_at_most_half(question_id, factory, seed):
    result = grade(question_id, factory, seed)
    assert result.points <= POINTS[question_id] / 2, str(result)
    assert any(o.technique and not o.passed for o in result.outcomes), str(result)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("question_id,factory", RIGHT, ids=lambda v: getattr(v, "__name__", v))
def test_right_techniques_keep_full_marks_on_every_seed(question_id, factory, seed):
    assert grade(question_id, factory, seed).points == POINTS[question_id]


def test_hillis_steele_over_the_whole_tile_is_capped_by_its_work():
    result = grade("ps9.q1", hillis_steele_over_the_tile)
    assert result.points <= 3 and "statements per value" in " ".join(str(result).split())


def test_an_atomic_counter_loses_the_order():
    result = grade("ps9.q2", atomic_slots)
    assert result.points <= 1.5
