"""Does ps3.q1 grade the bottom-up technique rather than one solution?

Kernels written from the problem statement (one thread per vertex; an unvisited vertex looks through
its in-neighbours for one whose frontier bit is set, stops at the first, writes only its own entries; each
warp votes its word of the next frontier, stored by one lane and counted once): wrong techniques with right
results earn at most half, right ones written differently (another scan order included) full marks.
"""

import pytest
from numba import cuda, int32

from course_lib.grading import get_question, run_tests

POINTS = 6


#: Grading seeds: the hidden technique test draws its graphs, levels and blocks from each.
SEEDS = (3, 8)


def grade(kernel, seed=3):
    return run_tests(get_question("ps3.q1"), kernel, hidden=True, seed=seed)


# ----------------------------------------------------------------------------- wrong techniques
@cuda.jit
def no_early_exit(in_indptr, in_indices, frontier_bits, current, depth, parent, next_bits, next_count):
    v = cuda.grid(1)
    found = -1
    if v < depth.shape[0] and depth[v] == -1:
        for k in range(in_indptr[v], in_indptr[v + 1]):
            u = in_indices[k]
            if (frontier_bits[u >> 5] >> (u & 31)) & 1 and found == -1:
                found = u
        if found != -1:
            depth[v] = current + 1
            parent[v] = found
    word = cuda.ballot_sync(0xFFFFFFFF, found != -1)
    if v % 32 == 0 and word != 0:
        next_bits[v >> 5] = word
        cuda.atomic.add(next_count, 0, cuda.popc(word))


@cuda.jit
def top_down_with_cas(in_indptr, in_indices, frontier_bits, current, depth, parent, next_bits, next_count):
    """Each frontier vertex claims its unvisited neighbours with compare-and-swap (undirected graphs)."""
    u = cuda.grid(1)
    if u < depth.shape[0] and (frontier_bits[u >> 5] >> (u & 31)) & 1:
        for k in range(in_indptr[u], in_indptr[u + 1]):
            v = in_indices[k]
            if cuda.atomic.cas(depth, v, -1, current + 1) == -1:
                parent[v] = u
                cuda.atomic.or_(next_bits, v >> 5, 1 << (v & 31))
                cuda.atomic.add(next_count, 0, 1)


@cuda.jit
def a_bit_and_a_count_per_vertex(in_indptr, in_indices, frontier_bits, current, depth, parent, next_bits,
                                 next_count):
    """Bottom-up with the early exit, but each vertex sets its bit and counts itself by atomics: no warp vote."""
    v = cuda.grid(1)
    if v < depth.shape[0] and depth[v] == -1:
        for k in range(in_indptr[v], in_indptr[v + 1]):
            u = in_indices[k]
            if (frontier_bits[u >> 5] >> (u & 31)) & 1:
                depth[v] = current + 1
                parent[v] = u
                cuda.atomic.or_(next_bits, v >> 5, 1 << (v & 31))
                cuda.atomic.add(next_count, 0, 1)
                break


@cuda.jit
def one_thread_sweeps_every_vertex(in_indptr, in_indices, frontier_bits, current, depth, parent, next_bits,
                                   next_count):
    if cuda.grid(1) != 0:
        return
    for v in range(depth.shape[0]):
        if depth[v] == -1:
            for k in range(in_indptr[v], in_indptr[v + 1]):
                u = in_indices[k]
                if (frontier_bits[u >> 5] >> (u & 31)) & 1:
                    depth[v] = current + 1
                    parent[v] = u
                    next_bits[v >> 5] |= 1 << (v & 31)
                    next_count[0] += 1
                    break


# The technique only where the visible test looks (blocks of several warps), written from the problem statement.
@cuda.jit
def per_vertex_atomics_in_one_warp_blocks(in_indptr, in_indices, frontier_bits, current, depth, parent, next_bits,
                                          next_count):
    """The vote for blocks of several warps; blocks of one warp set bits and count with an atomic per vertex."""
    v = cuda.grid(1)
    found = False
    if v < depth.shape[0] and depth[v] == -1:
        for k in range(in_indptr[v], in_indptr[v + 1]):
            u = in_indices[k]
            if (frontier_bits[u >> 5] >> (u & 31)) & 1:
                depth[v] = current + 1
                parent[v] = u
                found = True
                break
    if cuda.blockDim.x == 32:
        if found:
            cuda.atomic.or_(next_bits, v >> 5, 1 << (v & 31))
            cuda.atomic.add(next_count, 0, 1)
        return
    word = cuda.ballot_sync(0xFFFFFFFF, found)
    if v % 32 == 0 and word != 0:
        next_bits[v >> 5] = word
        cuda.atomic.add(next_count, 0, cuda.popc(word))


@cuda.jit
def thread_zero_walks_one_warp_blocks(in_indptr, in_indices, frontier_bits, current, depth, parent, next_bits,
                                      next_count):
    """Blocks of one warp: thread 0 scans the block's 32 vertices itself; larger blocks: one thread per vertex."""
    n = depth.shape[0]
    if cuda.blockDim.x == 32:
        if cuda.threadIdx.x == 0:
            word = 0
            count = 0
            first = cuda.blockIdx.x * 32
            for i in range(32):
                v = first + i
                if v < n and depth[v] == -1:
                    for k in range(in_indptr[v], in_indptr[v + 1]):
                        u = in_indices[k]
                        if (frontier_bits[u >> 5] >> (u & 31)) & 1:
                            depth[v] = current + 1
                            parent[v] = u
                            word |= 1 << i
                            count += 1
                            break
            if word != 0:
                next_bits[first >> 5] = word
                cuda.atomic.add(next_count, 0, count)
        return
    v = cuda.grid(1)
    found = False
    if v < n and depth[v] == -1:
        for k in range(in_indptr[v], in_indptr[v + 1]):
            u = in_indices[k]
            if (frontier_bits[u >> 5] >> (u & 31)) & 1:
                depth[v] = current + 1
                parent[v] = u
                found = True
                break
    word = cuda.ballot_sync(0xFFFFFFFF, found)
    if v % 32 == 0 and word != 0:
        next_bits[v >> 5] = word
        cuda.atomic.add(next_count, 0, cuda.popc(word))


WRONG = [no_early_exit, top_down_with_cas, a_bit_and_a_count_per_vertex, one_thread_sweeps_every_vertex,
         per_vertex_atomics_in_one_warp_blocks, thread_zero_walks_one_warp_blocks]


# ----------------------------------------------------------------------------- right, written differently
@cuda.jit
def scan_from_the_last(in_indptr, in_indices, frontier_bits, current, depth, parent, next_bits, next_count):
    """The in-neighbours scanned from the last one down: the technique in another order."""
    v = cuda.grid(1)
    hit = False
    if v < depth.shape[0] and depth[v] == -1:
        first = in_indptr[v]
        k = in_indptr[v + 1] - 1
        while k >= first:
            u = in_indices[k]
            if frontier_bits[u // 32] & (1 << (u % 32)) != 0:
                depth[v] = current + 1
                parent[v] = u
                hit = True
                break
            k -= 1
    word = cuda.ballot_sync(0xFFFFFFFF, hit)
    if cuda.laneid == 0 and word:
        next_bits[v // 32] = word
        cuda.atomic.add(next_count, 0, cuda.popc(word))


@cuda.jit
def the_vote_counted_by_the_last_lane(in_indptr, in_indices, frontier_bits, current, depth, parent, next_bits,
                                      next_count):
    """Lane 31 stores the word and counts it; visited vertices skip the scan without returning."""
    me = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    got = 0
    if me < depth.shape[0]:
        if depth[me] == -1:
            for e in range(in_indptr[me], in_indptr[me + 1]):
                w = in_indices[e]
                if (frontier_bits[w >> 5] >> (w & 31)) & 1 == 1:
                    parent[me] = w
                    depth[me] = current + 1
                    got = 1
                    break
    mask = cuda.ballot_sync(0xFFFFFFFF, got)
    if me % 32 == 31 and mask != 0:
        next_bits[me // 32] = mask
        cuda.atomic.add(next_count, 0, cuda.popc(mask))


@cuda.jit
def found_flag_then_write(in_indptr, in_indices, frontier_bits, current, depth, parent, next_bits, next_count):
    """A loop that stops on a flag, and the writes after it."""
    vertex = cuda.grid(1)
    hit = -1
    if vertex < depth.shape[0]:
        if depth[vertex] < 0:
            first, last = in_indptr[vertex], in_indptr[vertex + 1]
            pos = first
            while hit < 0 and pos < last:
                u = in_indices[pos]
                if (frontier_bits[u >> 5] >> (u & 31)) & 1:
                    hit = u
                pos += 1
            if hit >= 0:
                parent[vertex] = hit
                depth[vertex] = current + 1
    word = cuda.ballot_sync(0xFFFFFFFF, hit >= 0)
    if vertex % 32 == 0 and word != 0:
        cuda.atomic.add(next_count, 0, cuda.popc(word))
        next_bits[vertex >> 5] = word


@cuda.jit
def privatised_block_counter(in_indptr, in_indices, frontier_bits, current, depth, parent, next_bits, next_count):
    """Each warp votes its word; the block adds the warps' popcs in a shared counter, one global add per block."""
    block_count = cuda.shared.array(1, int32)
    if cuda.threadIdx.x == 0:
        block_count[0] = 0
    cuda.syncthreads()
    v = cuda.grid(1)
    found = False
    if v < depth.shape[0] and depth[v] == -1:
        for k in range(in_indptr[v], in_indptr[v + 1]):
            u = in_indices[k]
            if (frontier_bits[u >> 5] >> (u & 31)) & 1:
                depth[v] = current + 1
                parent[v] = u
                found = True
                break
    word = cuda.ballot_sync(0xFFFFFFFF, found)
    if cuda.threadIdx.x % 32 == 0 and word != 0:
        next_bits[v >> 5] = word
        cuda.atomic.add(block_count, 0, cuda.popc(word))
    cuda.syncthreads()
    if cuda.threadIdx.x == 0 and block_count[0] != 0:
        cuda.atomic.add(next_count, 0, block_count[0])


RIGHT = [scan_from_the_last, the_vote_counted_by_the_last_lane, found_flag_then_write, privatised_block_counter]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kernel", WRONG, ids=lambda k: k.__name__)
def test_a_wrong_technique_with_right_results_earns_at_most_half(kernel, seed):
    result = grade(kernel, seed)
    assert result.points <= POINTS / 2, str(result)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kernel", RIGHT, ids=lambda k: k.__name__)
def test_the_technique_written_differently_earns_full_marks(kernel, seed):
    result = grade(kernel, seed)
    assert result.points == POINTS, str(result)
