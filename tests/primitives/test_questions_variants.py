"""Does problem set 9 grade the techniques rather than one solution?

Kernels written from the problem statements: right techniques written differently get full marks, wrong
techniques with right results at most half.
"""

import pytest
from numba import cuda, float32, int32

from course_lib.grading import get_question, run_tests

FULL = 0xFFFFFFFF


def grade(question_id, factory):
    return run_tests(get_question(question_id), factory, hidden=True, seed=3)


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


def test_a_tree_over_the_totals_is_right_too():
    assert grade("ps9.q1", tree_over_totals).points == 6


def test_hillis_steele_over_the_whole_tile_is_capped_by_its_work():
    result = grade("ps9.q1", hillis_steele_over_the_tile)
    assert result.points <= 3 and "statements per value" in " ".join(str(result).split())


@pytest.mark.parametrize("factory,points", [(offsets_by_thread_zero, 3)])
def test_compaction_variants(factory, points):
    assert grade("ps9.q2", factory).points == points


def test_an_atomic_counter_loses_the_order():
    result = grade("ps9.q2", atomic_slots)
    assert result.points <= 1.5
