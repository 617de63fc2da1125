"""Does ps7.q1 grade the warp-scan compaction rather than one solution?

Factories written from the problem statement (``make_compact_kernel(block)`` returning a kernel
``(flags, phis, counter, out_ids, out_phis)`` launched as ``kernel[ceil(n / block), block]``): wrong techniques
must earn at most half of the question (those with right results lose the technique test), right techniques
written differently (other scans, other reserving threads, shuffles, early returns) full marks.
"""

import pytest
from numba import cuda, int32

from course_lib.grading import get_question, run_tests

from . import submissions as subs

POINTS = 6


def grade(factory):
    return run_tests(get_question("ps7.q1"), factory, hidden=True, seed=11)


def failures(result):
    return " | ".join(" ".join(o.message.split()) for o in result.outcomes if not o.passed)


# ----------------------------------------------------------------------------- wrong techniques
def lane_zero_scans_serially(block):
    """All threads stage their flags in shared memory, then lane 0 scans them one after the other."""
    @cuda.jit
    def kernel(flags, phis, counter, out_ids, out_phis):
        marks = cuda.shared.array(block, int32)
        base = cuda.shared.array(1, int32)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * cuda.blockDim.x + t
        marks[t] = flags[i] if i < flags.shape[0] else 0
        cuda.syncthreads()
        if t == 0:
            total = 0
            for k in range(block):
                f = marks[k]
                marks[k] = total
                total += f
            base[0] = cuda.atomic.add(counter, 0, total)
        cuda.syncthreads()
        if i < flags.shape[0] and flags[i] == 1:
            out_ids[base[0] + marks[t]] = i
            out_phis[base[0] + marks[t]] = phis[i]

    return kernel


def scan_shifted_by_one(block):
    """A parallel scan, but each recorded cell takes the offset of the cell after it (the scan shifted by one
    position): the last slot of a block lands on the next block's first, and the last one past the end."""
    @cuda.jit
    def kernel(flags, phis, counter, out_ids, out_phis):
        s = cuda.shared.array(block, int32)
        base = cuda.shared.array(1, int32)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * block + t
        f = flags[i] if i < flags.shape[0] else 0
        s[t] = f
        cuda.syncthreads()
        step = 1
        while step < block:
            add = s[t - step] if t >= step else 0
            cuda.syncthreads()
            s[t] += add
            cuda.syncthreads()
            step *= 2
        if t == 0:
            base[0] = cuda.atomic.add(counter, 0, s[block - 1])
        cuda.syncthreads()
        if f == 1:
            k = base[0] + s[t]  # the inclusive scan: the offset of the next cell
            out_ids[k] = i
            out_phis[k] = phis[i]

    return kernel


def global_atomic_for_every_slot(block):
    """Every thread adds its flag to the global counter; a recorded cell writes at what its atomic returned."""
    @cuda.jit
    def kernel(flags, phis, counter, out_ids, out_phis):
        i = cuda.blockIdx.x * block + cuda.threadIdx.x
        if i < flags.shape[0]:
            slot = cuda.atomic.add(counter, 0, flags[i])
            if flags[i] != 0:
                out_ids[slot] = i
                out_phis[slot] = phis[i]

    return kernel


def one_thread_per_block_compacts(block):
    """Thread 0 of each block counts, reserves and writes all the block's recorded cells alone."""
    @cuda.jit
    def kernel(flags, phis, counter, out_ids, out_phis):
        if cuda.threadIdx.x == 0:
            first = cuda.blockIdx.x * block
            last = min(first + block, flags.shape[0])
            count = 0
            for k in range(first, last):
                count += flags[k]
            slot = cuda.atomic.add(counter, 0, count)
            for k in range(first, last):
                if flags[k] == 1:
                    out_ids[slot] = k
                    out_phis[slot] = phis[k]
                    slot += 1

    return kernel


def block_barriers_as_warp_barriers(block):
    """The parallel scan with syncwarp where the block's warps must wait for each other."""
    @cuda.jit
    def kernel(flags, phis, counter, out_ids, out_phis):
        s = cuda.shared.array(block, int32)
        base = cuda.shared.array(1, int32)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * block + t
        f = flags[i] if i < flags.shape[0] else 0
        s[t] = f
        cuda.syncwarp()
        step = 1
        while step < block:
            add = s[t - step] if t >= step else 0
            cuda.syncwarp()
            s[t] += add
            cuda.syncwarp()
            step *= 2
        if t == block - 1:
            base[0] = cuda.atomic.add(counter, 0, s[t])
        cuda.syncwarp()
        if f == 1:
            out_ids[base[0] + s[t] - 1] = i
            out_phis[base[0] + s[t] - 1] = phis[i]

    return kernel


#: Right results, wrong technique: the technique test fails.
WRONG_TECHNIQUE = [lane_zero_scans_serially, global_atomic_for_every_slot, one_thread_per_block_compacts]
#: Wrong results or races from a wrong technique: at most half, whatever fails.
WRONG = [*WRONG_TECHNIQUE, scan_shifted_by_one, block_barriers_as_warp_barriers]


# ----------------------------------------------------------------------------- right, written differently
def warp_shuffles_then_warp_totals(block):
    """Each warp scans with shfl_up_sync; the warps' totals are scanned in shared memory by the first warp;
    thread 0 reserves."""
    warps = block // 32

    @cuda.jit
    def kernel(flags, phis, counter, out_ids, out_phis):
        totals = cuda.shared.array(4, int32)
        base = cuda.shared.array(1, int32)
        t = cuda.threadIdx.x
        lane = t % 32
        warp = t // 32
        i = cuda.blockIdx.x * block + t
        flag = flags[i] if i < flags.shape[0] else 0
        inclusive = flag
        d = 1
        while d < 32:
            other = cuda.shfl_up_sync(0xFFFFFFFF, inclusive, d)
            if lane >= d:
                inclusive += other
            d *= 2
        if lane == 31:
            totals[warp] = inclusive
        cuda.syncthreads()
        if t == 0:
            running = 0
            for w in range(warps):
                here = totals[w]
                totals[w] = running
                running += here
            base[0] = cuda.atomic.add(counter, 0, running)
        cuda.syncthreads()
        if flag == 1:
            slot = base[0] + totals[warp] + inclusive - 1
            out_ids[slot] = i
            out_phis[slot] = phis[i]

    return kernel


def exclusive_from_shifted_input(block):
    """The scan runs on the flags shifted right by one (an exclusive scan directly), a counted loop of steps;
    thread 0 reserves the block's total, read from the last offset and the last flag."""
    steps = block.bit_length() - 1

    @cuda.jit
    def kernel(flags, phis, counter, out_ids, out_phis):
        offset = cuda.shared.array(block, int32)
        first_slot = cuda.shared.array(1, int32)
        me = cuda.threadIdx.x
        n = flags.shape[0]
        cell = cuda.blockIdx.x * block + me
        prev = cell - 1
        offset[me] = flags[prev] if me > 0 and prev < n else 0
        cuda.syncthreads()
        for s in range(steps):
            reach = 1 << s
            carried = 0
            if me >= reach:
                carried = offset[me - reach]
            cuda.syncthreads()
            offset[me] = offset[me] + carried
            cuda.syncthreads()
        if me == 0:
            last = cuda.blockIdx.x * block + block - 1
            total = offset[block - 1] + (flags[last] if last < n else 0)
            first_slot[0] = cuda.atomic.add(counter, 0, total)
        cuda.syncthreads()
        if cell < n and flags[cell] == 1:
            out_phis[first_slot[0] + offset[me]] = phis[cell]
            out_ids[first_slot[0] + offset[me]] = cell

    return kernel


def early_return_after_the_reservation(block):
    """A Hillis-Steele scan with a temporary per step; once the block's start is shared, cells not recorded (and
    threads past n) return early."""
    @cuda.jit
    def kernel(flags, phis, counter, out_ids, out_phis):
        prefix = cuda.shared.array(block, int32)
        where = cuda.shared.array(1, int32)
        tid = cuda.threadIdx.x
        gid = cuda.grid(1)
        inside = gid < flags.shape[0]
        prefix[tid] = flags[gid] if inside else 0
        cuda.syncthreads()
        width = 1
        while width < block:
            tmp = prefix[tid]
            if tid >= width:
                tmp += prefix[tid - width]
            cuda.syncthreads()
            prefix[tid] = tmp
            cuda.syncthreads()
            width <<= 1
        if tid == block - 1 and prefix[tid] > 0:
            where[0] = cuda.atomic.add(counter, 0, prefix[tid])
        cuda.syncthreads()
        if not inside:
            return
        if flags[gid] == 0:
            return
        position = where[0] + prefix[tid] - 1
        out_ids[position] = gid
        out_phis[position] = phis[gid]

    return kernel


# ----------------------------------------------------------------------------- the technique only in part
# Written from the problem statement by a student who keeps the technique where the visible tests look: another
# kernel for blocks of one warp, or for inputs larger than the visible ones; or one warp scanning the block's flags
# while the others wait. At most half, on every grading seed.
def _atomic_per_cell():
    @cuda.jit
    def kernel(flags, phis, counter, out_ids, out_phis):
        i = cuda.grid(1)
        if i < flags.shape[0] and flags[i] == 1:
            slot = cuda.atomic.add(counter, 0, 1)
            out_ids[slot] = i
            out_phis[slot] = phis[i]

    return kernel


def thread_zero_compacts_one_warp_blocks(block):
    """The warp scan for blocks of two warps or more; for a block of one warp, thread 0 compacts it alone."""
    if block > 32:
        return subs.make_solution(block)

    @cuda.jit
    def kernel(flags, phis, counter, out_ids, out_phis):
        if cuda.threadIdx.x == 0:
            first = cuda.blockIdx.x * 32
            last = min(first + 32, flags.shape[0])
            total = 0
            for i in range(first, last):
                total += flags[i]
            slot = cuda.atomic.add(counter, 0, total)
            for i in range(first, last):
                if flags[i] == 1:
                    out_ids[slot] = i
                    out_phis[slot] = phis[i]
                    slot += 1

    return kernel


def global_atomics_for_one_warp_blocks(block):
    """The warp scan for blocks of two warps or more; a global atomic per recorded cell for blocks of one warp."""
    return subs.make_solution(block) if block > 32 else _atomic_per_cell()


def first_warp_scans_the_block(block):
    """Warp 0 scans the flags of every warp of the block by shuffles and leaves each cell's offset in shared memory;
    the other warps wait at the barrier, then write their cells."""
    n_warps = block // 32

    @cuda.jit
    def kernel(flags, phis, counter, out_ids, out_phis):
        offsets = cuda.shared.array(block, int32)
        start = cuda.shared.array(1, int32)
        t = cuda.threadIdx.x
        first = cuda.blockIdx.x * block
        if t < 32:
            before = 0
            for w in range(n_warps):
                i = first + 32 * w + t
                mine = flags[i] if i < flags.shape[0] else 0
                running = mine
                delta = 1
                while delta < 32:
                    below = cuda.shfl_up_sync(0xFFFFFFFF, running, delta)
                    if t >= delta:
                        running += below
                    delta *= 2
                offsets[32 * w + t] = before + running - mine
                before += cuda.shfl_sync(0xFFFFFFFF, running, 31)
            if t == 0:
                start[0] = cuda.atomic.add(counter, 0, before)
        cuda.syncthreads()
        i = first + t
        if i < flags.shape[0] and flags[i] == 1:
            out_ids[start[0] + offsets[t]] = i
            out_phis[start[0] + offsets[t]] = phis[i]

    return kernel


def first_warp_scans_every_other_block(block):
    """The warp scan in even blocks; in odd blocks warp 0 scans the block's flags while the other warps wait (a warp
    share judged as the median of the sampled blocks let one block in two pass)."""
    n_warps = block // 32

    @cuda.jit
    def kernel(flags, phis, counter, out_ids, out_phis):
        offsets = cuda.shared.array(block, int32)
        totals = cuda.shared.array(n_warps, int32)
        start = cuda.shared.array(1, int32)
        t = cuda.threadIdx.x
        first = cuda.blockIdx.x * block
        if cuda.blockIdx.x % 2 == 1:
            if t < 32:
                before = 0
                for w in range(n_warps):
                    i = first + 32 * w + t
                    mine = flags[i] if i < flags.shape[0] else 0
                    running = mine
                    delta = 1
                    while delta < 32:
                        below = cuda.shfl_up_sync(0xFFFFFFFF, running, delta)
                        if t >= delta:
                            running += below
                        delta *= 2
                    offsets[32 * w + t] = before + running - mine
                    before += cuda.shfl_sync(0xFFFFFFFF, running, 31)
                if t == 0:
                    start[0] = cuda.atomic.add(counter, 0, before)
        else:
            lane, warp = t % 32, t // 32
            i = first + t
            mine = flags[i] if i < flags.shape[0] else 0
            running = mine
            delta = 1
            while delta < 32:
                below = cuda.shfl_up_sync(0xFFFFFFFF, running, delta)
                if lane >= delta:
                    running += below
                delta *= 2
            if lane == 31:
                totals[warp] = running
            cuda.syncthreads()
            before = 0
            for w in range(warp):
                before += totals[w]
            offsets[t] = before + running - mine
            if t == block - 1:
                start[0] = cuda.atomic.add(counter, 0, before + running)
        cuda.syncthreads()
        i = first + t
        if i < flags.shape[0] and flags[i] == 1:
            out_ids[start[0] + offsets[t]] = i
            out_phis[start[0] + offsets[t]] = phis[i]

    return kernel


def scan_only_on_small_inputs(block):
    """The warp scan up to 400 cells (more than the visible tests use); a global atomic per recorded cell above."""
    n_warps = block // 32

    @cuda.jit
    def kernel(flags, phis, counter, out_ids, out_phis):
        totals = cuda.shared.array(n_warps, int32)
        start = cuda.shared.array(1, int32)
        t = cuda.threadIdx.x
        lane, warp = t % 32, t // 32
        i = cuda.blockIdx.x * block + t
        if flags.shape[0] > 400:
            if i < flags.shape[0] and flags[i] == 1:
                slot = cuda.atomic.add(counter, 0, 1)
                out_ids[slot] = i
                out_phis[slot] = phis[i]
            return
        mine = flags[i] if i < flags.shape[0] else 0
        running = mine
        delta = 1
        while delta < 32:
            below = cuda.shfl_up_sync(0xFFFFFFFF, running, delta)
            if lane >= delta:
                running += below
            delta *= 2
        if lane == 31:
            totals[warp] = running
        cuda.syncthreads()
        before = 0
        for w in range(warp):
            before += totals[w]
        if t == block - 1:
            start[0] = cuda.atomic.add(counter, 0, before + running)
        cuda.syncthreads()
        if mine == 1:
            slot = start[0] + before + running - 1
            out_ids[slot] = i
            out_phis[slot] = phis[i]

    return kernel


PARTIAL = [thread_zero_compacts_one_warp_blocks, global_atomics_for_one_warp_blocks, first_warp_scans_the_block,
           first_warp_scans_every_other_block, scan_only_on_small_inputs]


RIGHT = [warp_shuffles_then_warp_totals, subs.make_shuffle_exclusive]
#: Scans in shared memory (the lesson's Hillis-Steele, written differently, or Blelloch's): right results, another
#: technique than the question's warp scan in registers.
SHARED_MEMORY_SCANS = [exclusive_from_shifted_input, early_return_after_the_reservation, subs.make_blelloch,
                       subs.make_hillis_steele]


@pytest.mark.parametrize("factory", SHARED_MEMORY_SCANS, ids=lambda f: f.__name__)
def test_a_scan_in_shared_memory_is_another_technique_capped_at_half(factory):
    result = run_tests(get_question("ps7.q1"), factory, hidden=True, seed=3)
    assert result.points == 3 and result.capped


@pytest.mark.parametrize("factory", WRONG, ids=lambda f: f.__name__)
def test_a_wrong_technique_earns_at_most_half(factory):
    result = grade(factory)
    assert result.points <= POINTS / 2, failures(result)
    if factory in WRONG_TECHNIQUE:
        assert any(o.technique and not o.passed for o in result.outcomes), failures(result)


@pytest.mark.parametrize("seed", [11, 12])
@pytest.mark.parametrize("factory", RIGHT, ids=lambda f: f.__name__)
def test_the_technique_written_differently_earns_full_marks(factory, seed):
    result = run_tests(get_question("ps7.q1"), factory, hidden=True, seed=seed)
    assert result.points == POINTS, failures(result)


@pytest.mark.parametrize("seed", [3, 4])
@pytest.mark.parametrize("factory", PARTIAL, ids=lambda f: f.__name__)
def test_the_technique_only_in_part_earns_at_most_half_on_every_seed(factory, seed):
    result = run_tests(get_question("ps7.q1"), factory, hidden=True, seed=seed)
    assert result.points <= POINTS / 2 and result.capped, failures(result)


def test_the_solution_earns_full_marks_and_a_kernel_doing_nothing_only_the_empty_case():
    assert grade(subs.make_solution).points == POINTS

    def make_nothing(block):
        @cuda.jit
        def kernel(flags, phis, counter, out_ids, out_phis):
            pass

        return kernel

    result = grade(make_nothing)
    assert result.points == 0.25 and [o.name for o in result.outcomes if o.passed and o.points] == [
        "no cell recorded (n = 40, block 32): nothing may be written"], failures(result)
