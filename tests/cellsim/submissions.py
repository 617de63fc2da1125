"""Answers to problem set 7 for the grader tests: the solution, right answers written differently, wrong
techniques and typical bugs. Each is a factory ``make_compact_kernel(block)`` as the question asks; the ps7
fixtures of ``tests/grading/make_fixtures.py`` put the same sources into notebooks (:func:`source_of`)."""

import ast
from pathlib import Path

import numpy as np
from numba import cuda, int32

from course_lib.cellsim.questions import divide_cells, keep_daughters


def make_solution(block):
    """Right: each warp scans its flags in registers with shuffles, the warps' totals in shared memory, the last
    thread reserves the block's slots."""
    n_warps = block // 32

    @cuda.jit
    def compact_recorded(flags, phis, counter, out_ids, out_phis):
        totals = cuda.shared.array(n_warps, int32)
        start = cuda.shared.array(1, int32)
        t = cuda.threadIdx.x
        lane, warp = t % 32, t // 32
        i = cuda.blockIdx.x * block + t
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

    return compact_recorded


def make_shuffle_exclusive(block):
    """Right, written differently: an exclusive offset (inclusive minus the own flag), the warps' totals
    scanned by warp 0 with shuffles too, thread 0 reserving, no atomic for a block without recorded cells."""
    n_warps = block // 32

    @cuda.jit
    def compact_recorded(flags, phis, counter, out_ids, out_phis):
        warp_sum = cuda.shared.array(n_warps, int32)
        base = cuda.shared.array(1, int32)
        tid = cuda.threadIdx.x
        lane = tid & 31
        w = tid >> 5
        idx = cuda.blockIdx.x * cuda.blockDim.x + tid
        flag = 0
        if idx < flags.shape[0]:
            flag = flags[idx]
        acc = flag
        for step in (1, 2, 4, 8, 16):
            other = cuda.shfl_up_sync(0xFFFFFFFF, acc, step)
            if lane >= step:
                acc += other
        if lane == 31:
            warp_sum[w] = acc
        cuda.syncthreads()
        if w == 0:
            total = warp_sum[lane] if lane < n_warps else 0
            for step in (1, 2, 4, 8, 16):
                other = cuda.shfl_up_sync(0xFFFFFFFF, total, step)
                if lane >= step:
                    total += other
            if lane < n_warps:
                warp_sum[lane] = total  # inclusive over the warps
            if lane == n_warps - 1 and total > 0:
                base[0] = cuda.atomic.add(counter, 0, total)
        cuda.syncthreads()
        earlier = warp_sum[w - 1] if w > 0 else 0
        if flag == 1:
            slot = base[0] + earlier + acc - flag
            out_ids[slot] = idx
            out_phis[slot] = phis[idx]

    return compact_recorded


def make_hillis_steele(block):
    """Another technique: the lesson's printed Hillis-Steele scan in shared memory (right results, capped)."""
    @cuda.jit
    def compact_recorded(flags, phis, counter, out_ids, out_phis):
        scanned = cuda.shared.array(block, int32)
        start = cuda.shared.array(1, int32)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * block + t
        mine = flags[i] if i < flags.shape[0] else 0
        scanned[t] = mine
        cuda.syncthreads()
        distance = 1
        while distance < block:
            from_left = scanned[t - distance] if t >= distance else 0
            cuda.syncthreads()
            scanned[t] += from_left
            cuda.syncthreads()
            distance *= 2
        if t == block - 1:
            start[0] = cuda.atomic.add(counter, 0, scanned[block - 1])
        cuda.syncthreads()
        if mine == 1:
            slot = start[0] + scanned[t] - 1
            out_ids[slot] = i
            out_phis[slot] = phis[i]

    return compact_recorded


def make_blelloch(block):
    """Another technique (right results, capped): Blelloch's up-sweep and down-sweep in shared memory."""
    @cuda.jit
    def compact_recorded(flags, phis, counter, out_ids, out_phis):
        tree = cuda.shared.array(block, int32)
        start = cuda.shared.array(1, int32)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * block + t
        flag = 0
        if i < flags.shape[0]:
            flag = flags[i]
        tree[t] = flag
        cuda.syncthreads()
        stride = 1
        while stride < block:  # up-sweep: partial sums at the right end of each 2 * stride segment
            right = (t + 1) * 2 * stride - 1
            if right < block:
                tree[right] += tree[right - stride]
            stride *= 2
            cuda.syncthreads()
        if t == 0:
            start[0] = cuda.atomic.add(counter, 0, tree[block - 1])
            tree[block - 1] = 0
        cuda.syncthreads()
        stride = block // 2
        while stride >= 1:  # down-sweep: exclusive sums
            right = (t + 1) * 2 * stride - 1
            if right < block:
                left_sum = tree[right - stride]
                tree[right - stride] = tree[right]
                tree[right] += left_sum
            stride //= 2
            cuda.syncthreads()
        if flag != 0:
            out_ids[start[0] + tree[t]] = i
            out_phis[start[0] + tree[t]] = phis[i]

    return compact_recorded


def make_double_buffer(block):
    """Another technique (right results, capped): a ping-pong Hillis-Steele scan (one barrier per step), thread 0 reads the
    total and makes the block's atomic only when the block has a recorded cell."""
    @cuda.jit
    def compact_recorded(flags, phis, counter, out_ids, out_phis):
        buf = cuda.shared.array((2, block), int32)
        base = cuda.shared.array(1, int32)
        tid = cuda.threadIdx.x
        cell = cuda.blockIdx.x * cuda.blockDim.x + tid
        recorded = cell < flags.shape[0] and flags[cell] == 1
        buf[0, tid] = 1 if recorded else 0
        cuda.syncthreads()
        src = 0
        d = 1
        while d < block:
            value = buf[src, tid]
            if tid >= d:
                value += buf[src, tid - d]
            buf[1 - src, tid] = value
            src = 1 - src
            d *= 2
            cuda.syncthreads()
        if tid == 0 and buf[src, block - 1] > 0:
            base[0] = cuda.atomic.add(counter, 0, buf[src, block - 1])
        cuda.syncthreads()
        if recorded:
            k = base[0] + buf[src, tid] - 1
            out_phis[k] = phis[cell]
            out_ids[k] = cell

    return compact_recorded


def make_atomic_per_cell(block):
    """Wrong technique: right packed set, but one global atomic per recorded cell and no scan."""
    @cuda.jit
    def compact_recorded(flags, phis, counter, out_ids, out_phis):
        i = cuda.grid(1)
        if i < flags.shape[0] and flags[i] == 1:
            slot = cuda.atomic.add(counter, 0, 1)
            out_ids[slot] = i
            out_phis[slot] = phis[i]

    return compact_recorded


def make_serial_scan(block):
    """Wrong technique: thread 0 scans the whole block alone (block steps on one lane), then reserves."""
    @cuda.jit
    def compact_recorded(flags, phis, counter, out_ids, out_phis):
        offsets = cuda.shared.array(block, int32)
        start = cuda.shared.array(1, int32)
        t = cuda.threadIdx.x
        first = cuda.blockIdx.x * block
        if t == 0:
            running = 0
            for k in range(block):
                offsets[k] = running
                if first + k < flags.shape[0]:
                    running += flags[first + k]
            start[0] = cuda.atomic.add(counter, 0, running)
        cuda.syncthreads()
        i = first + t
        if i < flags.shape[0] and flags[i] == 1:
            out_ids[start[0] + offsets[t]] = i
            out_phis[start[0] + offsets[t]] = phis[i]

    return compact_recorded


def make_recount(block):
    """Wrong technique: each recorded cell counts the flags before it in its block from global memory."""
    @cuda.jit
    def compact_recorded(flags, phis, counter, out_ids, out_phis):
        start = cuda.shared.array(1, int32)
        t = cuda.threadIdx.x
        first = cuda.blockIdx.x * block
        i = first + t
        if t == 0:
            total = 0
            for k in range(first, min(first + block, flags.shape[0])):
                total += flags[k]
            start[0] = cuda.atomic.add(counter, 0, total)
        cuda.syncthreads()
        if i < flags.shape[0] and flags[i] == 1:
            before = 0
            for k in range(first, i):
                before += flags[k]
            out_ids[start[0] + before] = i
            out_phis[start[0] + before] = phis[i]

    return compact_recorded


def make_shifted(block):
    """Bug: the inclusive scan used as the exclusive one (slot start + scanned[t], one too far)."""
    @cuda.jit
    def compact_recorded(flags, phis, counter, out_ids, out_phis):
        scanned = cuda.shared.array(block, int32)
        start = cuda.shared.array(1, int32)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * block + t
        mine = flags[i] if i < flags.shape[0] else 0
        scanned[t] = mine
        cuda.syncthreads()
        distance = 1
        while distance < block:
            from_left = scanned[t - distance] if t >= distance else 0
            cuda.syncthreads()
            scanned[t] += from_left
            cuda.syncthreads()
            distance *= 2
        if t == block - 1:
            start[0] = cuda.atomic.add(counter, 0, scanned[block - 1])
        cuda.syncthreads()
        if mine == 1:
            out_ids[start[0] + scanned[t]] = i
            out_phis[start[0] + scanned[t]] = phis[i]

    return compact_recorded


def make_missing_barrier(block):
    """Bug: no barrier between a step's reads and its writes (a shared-memory race)."""
    @cuda.jit
    def compact_recorded(flags, phis, counter, out_ids, out_phis):
        scanned = cuda.shared.array(block, int32)
        start = cuda.shared.array(1, int32)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * block + t
        mine = flags[i] if i < flags.shape[0] else 0
        scanned[t] = mine
        cuda.syncthreads()
        distance = 1
        while distance < block:
            from_left = scanned[t - distance] if t >= distance else 0
            scanned[t] += from_left
            cuda.syncthreads()
            distance *= 2
        if t == block - 1:
            start[0] = cuda.atomic.add(counter, 0, scanned[block - 1])
        cuda.syncthreads()
        if mine == 1:
            slot = start[0] + scanned[t] - 1
            out_ids[slot] = i
            out_phis[slot] = phis[i]

    return compact_recorded


def source_of(name: str) -> str:
    """The source of one factory above, renamed ``make_compact_kernel`` (the name the question asks for)."""
    text = Path(__file__).read_text()
    (node,) = [n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == name]
    lines = text.splitlines()
    docstring = node.body[0]  # every factory above has one: the notebook's cell does not
    body = lines[docstring.end_lineno:node.end_lineno]
    return "def make_compact_kernel(block):\n" + "\n".join(body) + "\n"


# ps7.q3: host programs ``run_levels(phis, levels, phi_min, capacity, block, sm_count)`` calling the question's kernels.
def _level_buffers(phis, levels, capacity):
    """Device totals (level 0's known, the rest 0), the padded initial cells, and three buffers of the loop."""
    first = np.zeros(levels + 1, np.int32)
    first[0] = len(phis)
    padded = np.zeros(capacity)
    padded[: len(phis)] = phis
    return (cuda.to_device(first), cuda.to_device(padded), cuda.device_array(capacity),
            cuda.device_array(2 * capacity), cuda.device_array(2 * capacity, np.int32))


def _device_grid(block, sm_count):
    return sm_count * min(32, 2048 // block)


def levels_solution(phis, levels, phi_min, capacity, block, sm_count):
    """Right: one grid sized for the device, the totals stay on the device, two copies back at the end."""
    totals, now, then, halves, kept = _level_buffers(phis, levels, capacity)
    grid = _device_grid(block, sm_count)
    for g in range(levels):
        divide_cells[grid, block](totals, g, now, halves, kept, phi_min)
        keep_daughters[grid, block](totals, g, halves, kept, then)
        now, then = then, now
    counts = totals.copy_to_host()
    return counts, now.copy_to_host()[: counts[-1]]


def levels_capped_grid(phis, levels, phi_min, capacity, block, sm_count):
    """Right, written differently: each kernel's grid is the fewer of what the capacity needs and what the device
    holds at once (2048 threads per SM, no block count limit), so small capacities launch less."""
    totals, now, then, halves, kept = _level_buffers(phis, levels, capacity)
    most = sm_count * 2048 // block
    cell_grid, daughter_grid = min(most, -(-capacity // block)), min(most, -(-2 * capacity // block))
    for g in range(levels):
        divide_cells[cell_grid, block](totals, g, now, halves, kept, phi_min)
        keep_daughters[daughter_grid, block](totals, g, halves, kept, then)
        now, then = then, now
    counts = totals.copy_to_host()
    return counts, now.copy_to_host()[: counts[-1]]


def levels_capacity_grid(phis, levels, phi_min, capacity, block, sm_count):
    """Right results, but grids covering the capacity every level (the grid grows with the capacity)."""
    totals, now, then, halves, kept = _level_buffers(phis, levels, capacity)
    for g in range(levels):
        divide_cells[-(-capacity // block), block](totals, g, now, halves, kept, phi_min)
        keep_daughters[-(-2 * capacity // block), block](totals, g, halves, kept, then)
        now, then = then, now
    counts = totals.copy_to_host()
    return counts, now.copy_to_host()[: counts[-1]]


def levels_one_block(phis, levels, phi_min, capacity, block, sm_count):
    """Right results, but a single block per launch: the grid-stride loops cover every level, on one SM."""
    totals, now, then, halves, kept = _level_buffers(phis, levels, capacity)
    for g in range(levels):
        divide_cells[1, block](totals, g, now, halves, kept, phi_min)
        keep_daughters[1, block](totals, g, halves, kept, then)
        now, then = then, now
    counts = totals.copy_to_host()
    return counts, now.copy_to_host()[: counts[-1]]


def levels_copy_per_level(phis, levels, phi_min, capacity, block, sm_count):
    """Right results, but the level's total copied back every level to size the grids (a copy per level)."""
    totals, now, then, halves, kept = _level_buffers(phis, levels, capacity)
    for g in range(levels):
        alive = max(1, int(totals.copy_to_host()[g]))
        divide_cells[-(-alive // block), block](totals, g, now, halves, kept, phi_min)
        keep_daughters[-(-2 * alive // block), block](totals, g, halves, kept, then)
        now, then = then, now
    counts = totals.copy_to_host()
    return counts, now.copy_to_host()[: counts[-1]]


def levels_allocating_per_level(phis, levels, phi_min, capacity, block, sm_count):
    """Right results, but a new next-level buffer allocated every level."""
    totals, now, _, halves, kept = _level_buffers(phis, levels, capacity)
    grid = _device_grid(block, sm_count)
    for g in range(levels):
        then = cuda.device_array(capacity)
        divide_cells[grid, block](totals, g, now, halves, kept, phi_min)
        keep_daughters[grid, block](totals, g, halves, kept, then)
        now = then
    counts = totals.copy_to_host()
    return counts, now.copy_to_host()[: counts[-1]]


def levels_no_swap(phis, levels, phi_min, capacity, block, sm_count):
    """Wrong: the buffers are never swapped, so every level divides the initial cells again."""
    totals, now, then, halves, kept = _level_buffers(phis, levels, capacity)
    grid = _device_grid(block, sm_count)
    for g in range(levels):
        divide_cells[grid, block](totals, g, now, halves, kept, phi_min)
        keep_daughters[grid, block](totals, g, halves, kept, then)
    counts = totals.copy_to_host()
    return counts, then.copy_to_host()[: counts[-1]]
