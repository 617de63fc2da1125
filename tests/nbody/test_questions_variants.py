"""Does ps1.q1 grade the tiling technique rather than one solution?

Kernels written from the problem statement (two destination bodies per thread, P threads per
block, ``kernel[ceil(N / 2P), P](bodies, softening_sq, acc)``): wrong techniques with right
results must earn at most half of the question, right techniques written differently (other
mappings, loop orders, staging shapes) full marks.
"""

import pytest
from numba import cuda, float32

from course_lib.grading import get_question, run_tests
from course_lib.nbody.kernels import interaction

POINTS = 6


#: Grading seeds: the hidden technique test draws its N, tile and profiled block from each.
SEEDS = (11, 12)


def grade(factory, seed=11):
    return run_tests(get_question("ps1.q1"), factory, hidden=True, seed=seed)


# ----------------------------------------------------------------------------- wrong techniques
def one_thread_stages(tile):
    """Lane 0 copies the whole tile while the others wait at the barrier."""
    @cuda.jit
    def kernel(bodies, softening_sq, acc):
        staged = cuda.shared.array((tile, 4), float32)
        t = cuda.threadIdx.x
        n = bodies.shape[0]
        a = 2 * tile * cuda.blockIdx.x + t
        b = a + tile
        ax = bodies[a, 0] if a < n else float32(0)
        ay = bodies[a, 1] if a < n else float32(0)
        az = bodies[a, 2] if a < n else float32(0)
        bx = bodies[b, 0] if b < n else float32(0)
        by = bodies[b, 1] if b < n else float32(0)
        bz = bodies[b, 2] if b < n else float32(0)
        sa0 = sa1 = sa2 = sb0 = sb1 = sb2 = float32(0)
        for base in range(0, n, tile):
            if t == 0:
                for k in range(tile):
                    for c in range(4):
                        staged[k, c] = bodies[base + k, c] if base + k < n else float32(0)
            cuda.syncthreads()
            for s in range(tile):
                g = interaction(ax, ay, az, staged[s, 0], staged[s, 1], staged[s, 2], staged[s, 3], softening_sq)
                h = interaction(bx, by, bz, staged[s, 0], staged[s, 1], staged[s, 2], staged[s, 3], softening_sq)
                sa0 += g[0]
                sa1 += g[1]
                sa2 += g[2]
                sb0 += h[0]
                sb1 += h[1]
                sb2 += h[2]
            cuda.syncthreads()
        if a < n:
            acc[a, 0], acc[a, 1], acc[a, 2] = sa0, sa1, sa2
        if b < n:
            acc[b, 0], acc[b, 1], acc[b, 2] = sb0, sb1, sb2

    return kernel


def whole_input_in_shared(tile):
    """Every block stages all N bodies (up to 512) at once, then computes from them."""
    @cuda.jit
    def kernel(bodies, softening_sq, acc):
        everything = cuda.shared.array((512, 4), float32)
        t = cuda.threadIdx.x
        n = bodies.shape[0]
        for k in range(t, n, tile):
            for c in range(4):
                everything[k, c] = bodies[k, c]
        cuda.syncthreads()
        for d in (2 * tile * cuda.blockIdx.x + t, 2 * tile * cuda.blockIdx.x + t + tile):
            if d < n:
                sx = sy = sz = float32(0)
                for s in range(n):
                    g = interaction(bodies[d, 0], bodies[d, 1], bodies[d, 2], everything[s, 0], everything[s, 1],
                                    everything[s, 2], everything[s, 3], softening_sq)
                    sx += g[0]
                    sy += g[1]
                    sz += g[2]
                acc[d, 0], acc[d, 1], acc[d, 2] = sx, sy, sz

    return kernel


def warp_barrier(tile):
    """The solution's structure with syncwarp where the block must wait (right only within one warp)."""
    @cuda.jit
    def kernel(bodies, softening_sq, acc):
        staged = cuda.shared.array((tile, 4), float32)
        t = cuda.threadIdx.x
        n = bodies.shape[0]
        a = 2 * tile * cuda.blockIdx.x + t
        b = a + tile
        ax = bodies[a, 0] if a < n else float32(0)
        ay = bodies[a, 1] if a < n else float32(0)
        az = bodies[a, 2] if a < n else float32(0)
        bx = bodies[b, 0] if b < n else float32(0)
        by = bodies[b, 1] if b < n else float32(0)
        bz = bodies[b, 2] if b < n else float32(0)
        sa0 = sa1 = sa2 = sb0 = sb1 = sb2 = float32(0)
        for base in range(0, n, tile):
            for c in range(4):
                staged[t, c] = bodies[base + t, c] if base + t < n else float32(0)
            cuda.syncwarp()
            for s in range(tile):
                g = interaction(ax, ay, az, staged[s, 0], staged[s, 1], staged[s, 2], staged[s, 3], softening_sq)
                h = interaction(bx, by, bz, staged[s, 0], staged[s, 1], staged[s, 2], staged[s, 3], softening_sq)
                sa0 += g[0]
                sa1 += g[1]
                sa2 += g[2]
                sb0 += h[0]
                sb1 += h[1]
                sb2 += h[2]
            cuda.syncwarp()
        if a < n:
            acc[a, 0], acc[a, 1], acc[a, 2] = sa0, sa1, sa2
        if b < n:
            acc[b, 0], acc[b, 1], acc[b, 2] = sb0, sb1, sb2

    return kernel


def no_shared_memory(tile):
    """Both destinations read every source from global memory."""
    @cuda.jit
    def kernel(bodies, softening_sq, acc):
        n = bodies.shape[0]
        for d in (2 * tile * cuda.blockIdx.x + cuda.threadIdx.x, 2 * tile * cuda.blockIdx.x + cuda.threadIdx.x + tile):
            if d < n:
                sx = sy = sz = float32(0)
                for s in range(n):
                    g = interaction(bodies[d, 0], bodies[d, 1], bodies[d, 2], bodies[s, 0], bodies[s, 1],
                                    bodies[s, 2], bodies[s, 3], softening_sq)
                    sx += g[0]
                    sy += g[1]
                    sz += g[2]
                acc[d, 0], acc[d, 1], acc[d, 2] = sx, sy, sz

    return kernel


def one_destination_per_thread_twice(tile):
    """Tiled, but each tile is staged twice per block (once per destination): twice the traffic."""
    @cuda.jit
    def kernel(bodies, softening_sq, acc):
        staged = cuda.shared.array((tile, 4), float32)
        t = cuda.threadIdx.x
        n = bodies.shape[0]
        for d in (2 * tile * cuda.blockIdx.x + t, 2 * tile * cuda.blockIdx.x + t + tile):
            dx = bodies[d, 0] if d < n else float32(0)
            dy = bodies[d, 1] if d < n else float32(0)
            dz = bodies[d, 2] if d < n else float32(0)
            sx = sy = sz = float32(0)
            for base in range(0, n, tile):
                for c in range(4):
                    staged[t, c] = bodies[base + t, c] if base + t < n else float32(0)
                cuda.syncthreads()
                for s in range(tile):
                    g = interaction(dx, dy, dz, staged[s, 0], staged[s, 1], staged[s, 2], staged[s, 3],
                                    softening_sq)
                    sx += g[0]
                    sy += g[1]
                    sz += g[2]
                cuda.syncthreads()
            if d < n:
                acc[d, 0], acc[d, 1], acc[d, 2] = sx, sy, sz

    return kernel


def sums_scattered_with_atomics(tile):
    """Tiled, but every source adds its pull to the destinations in global memory with atomics."""
    @cuda.jit
    def kernel(bodies, softening_sq, acc):
        staged = cuda.shared.array((tile, 4), float32)
        t = cuda.threadIdx.x
        n = bodies.shape[0]
        a = 2 * tile * cuda.blockIdx.x + t
        b = a + tile
        for d in (a, b):
            if d < n:
                for c in range(3):
                    acc[d, c] = 0.0
        for base in range(0, n, tile):
            for c in range(4):
                staged[t, c] = bodies[base + t, c] if base + t < n else float32(0)
            cuda.syncthreads()
            for s in range(tile):
                for d in (a, b):
                    if d < n:
                        g = interaction(bodies[d, 0], bodies[d, 1], bodies[d, 2], staged[s, 0], staged[s, 1],
                                        staged[s, 2], staged[s, 3], softening_sq)
                        for c in range(3):
                            cuda.atomic.add(acc, (d, c), g[c])
            cuda.syncthreads()

    return kernel


WRONG = [sums_scattered_with_atomics, one_thread_stages, whole_input_in_shared, warp_barrier, no_shared_memory, one_destination_per_thread_twice]


# ----------------------------------------------------------------------------- the technique only where the
# visible tests look (N <= 512), or in one warp of the block
def tiled_only_up_to_512_bodies(tile):
    """The tiled two-body kernel while N <= 512 (every size the visible tests use); beyond, every source is read
    from global memory."""
    @cuda.jit
    def kernel(bodies, softening_sq, acc):
        staged = cuda.shared.array((tile, 4), float32)
        t = cuda.threadIdx.x
        n = bodies.shape[0]
        a = 2 * tile * cuda.blockIdx.x + t
        b = a + tile
        ax = bodies[a, 0] if a < n else float32(0)
        ay = bodies[a, 1] if a < n else float32(0)
        az = bodies[a, 2] if a < n else float32(0)
        bx = bodies[b, 0] if b < n else float32(0)
        by = bodies[b, 1] if b < n else float32(0)
        bz = bodies[b, 2] if b < n else float32(0)
        sa0 = sa1 = sa2 = sb0 = sb1 = sb2 = float32(0)
        if n > 512:
            for s in range(n):
                g = interaction(ax, ay, az, bodies[s, 0], bodies[s, 1], bodies[s, 2], bodies[s, 3], softening_sq)
                h = interaction(bx, by, bz, bodies[s, 0], bodies[s, 1], bodies[s, 2], bodies[s, 3], softening_sq)
                sa0 += g[0]
                sa1 += g[1]
                sa2 += g[2]
                sb0 += h[0]
                sb1 += h[1]
                sb2 += h[2]
        else:
            for base in range(0, n, tile):
                for c in range(4):
                    staged[t, c] = bodies[base + t, c] if base + t < n else float32(0)
                cuda.syncthreads()
                for s in range(tile):
                    g = interaction(ax, ay, az, staged[s, 0], staged[s, 1], staged[s, 2], staged[s, 3],
                                    softening_sq)
                    h = interaction(bx, by, bz, staged[s, 0], staged[s, 1], staged[s, 2], staged[s, 3],
                                    softening_sq)
                    sa0 += g[0]
                    sa1 += g[1]
                    sa2 += g[2]
                    sb0 += h[0]
                    sb1 += h[1]
                    sb2 += h[2]
                cuda.syncthreads()
        if a < n:
            acc[a, 0], acc[a, 1], acc[a, 2] = sa0, sa1, sa2
        if b < n:
            acc[b, 0], acc[b, 1], acc[b, 2] = sb0, sb1, sb2

    return kernel


def first_warp_computes_the_block(tile):
    """The whole block stages each tile, then the first warp computes all 2P destinations of the block (2P / 32
    per lane) while the other warps wait at the barrier; with P <= 32 the block is one warp anyway."""
    lanes = min(tile, 32)  # the first warp's threads
    per_lane = -(-2 * tile // lanes)

    @cuda.jit
    def kernel(bodies, softening_sq, acc):
        staged = cuda.shared.array((tile, 4), float32)
        sums = cuda.local.array((per_lane, 3), float32)
        mine = cuda.local.array((per_lane, 3), float32)
        t = cuda.threadIdx.x
        n = bodies.shape[0]
        first = 2 * tile * cuda.blockIdx.x
        for j in range(per_lane):
            d = first + t + lanes * j
            for c in range(3):
                sums[j, c] = float32(0)
                mine[j, c] = bodies[d, c] if t < lanes and t + lanes * j < 2 * tile and d < n else float32(0)
        for base in range(0, n, tile):
            for c in range(4):
                staged[t, c] = bodies[base + t, c] if base + t < n else float32(0)
            cuda.syncthreads()
            if t < lanes:
                for j in range(per_lane):
                    k = t + lanes * j
                    d = first + k
                    if k < 2 * tile and d < n:
                        for s in range(tile):
                            g = interaction(mine[j, 0], mine[j, 1], mine[j, 2], staged[s, 0], staged[s, 1],
                                            staged[s, 2], staged[s, 3], softening_sq)
                            sums[j, 0] += g[0]
                            sums[j, 1] += g[1]
                            sums[j, 2] += g[2]
            cuda.syncthreads()
        if t < lanes:
            for j in range(per_lane):
                k = t + lanes * j
                d = first + k
                if k < 2 * tile and d < n:
                    acc[d, 0], acc[d, 1], acc[d, 2] = sums[j, 0], sums[j, 1], sums[j, 2]

    return kernel


#: Graded on every seed: what catches them is drawn at grading time.
WRONG_ON_SOME_CONFIGURATIONS = [tiled_only_up_to_512_bodies, first_warp_computes_the_block]


# ----------------------------------------------------------------------------- right, written differently
def adjacent_pair_reverse_order(tile):
    """Thread t owns bodies 2t and 2t + 1 of its block; the tile is read from its last record down."""
    @cuda.jit
    def kernel(bodies, softening_sq, acc):
        cache = cuda.shared.array((tile, 4), float32)
        me = cuda.threadIdx.x
        n = bodies.shape[0]
        lo = 2 * (tile * cuda.blockIdx.x + me)
        hi = lo + 1
        p = cuda.local.array(3, float32)
        q = cuda.local.array(3, float32)
        fp = cuda.local.array(3, float32)
        fq = cuda.local.array(3, float32)
        for c in range(3):
            p[c] = bodies[lo, c] if lo < n else float32(0)
            q[c] = bodies[hi, c] if hi < n else float32(0)
            fp[c] = float32(0)
            fq[c] = float32(0)
        tiles = (n + tile - 1) // tile
        for k in range(tiles):
            j = k * tile + me
            for c in range(4):
                cache[me, c] = bodies[j, c] if j < n else float32(0)
            cuda.syncthreads()
            for s in range(tile - 1, -1, -1):
                g = interaction(p[0], p[1], p[2], cache[s, 0], cache[s, 1], cache[s, 2], cache[s, 3], softening_sq)
                h = interaction(q[0], q[1], q[2], cache[s, 0], cache[s, 1], cache[s, 2], cache[s, 3], softening_sq)
                for c in range(3):
                    fp[c] += g[c]
                    fq[c] += h[c]
            cuda.syncthreads()
        if lo < n:
            for c in range(3):
                acc[lo, c] = fp[c]
        if hi < n:
            for c in range(3):
                acc[hi, c] = fq[c]

    return kernel


def double_buffered(tile):
    """Two tiles in shared memory: the next is staged while the current one is used, one barrier per tile."""
    @cuda.jit
    def kernel(bodies, softening_sq, acc):
        buffers = cuda.shared.array((2, tile, 4), float32)
        t = cuda.threadIdx.x
        n = bodies.shape[0]
        a = 2 * tile * cuda.blockIdx.x + t
        b = a + tile
        ax = bodies[a, 0] if a < n else float32(0)
        ay = bodies[a, 1] if a < n else float32(0)
        az = bodies[a, 2] if a < n else float32(0)
        bx = bodies[b, 0] if b < n else float32(0)
        by = bodies[b, 1] if b < n else float32(0)
        bz = bodies[b, 2] if b < n else float32(0)
        sa0 = sa1 = sa2 = sb0 = sb1 = sb2 = float32(0)
        for c in range(4):
            buffers[0, t, c] = bodies[t, c] if t < n else float32(0)
        cuda.syncthreads()
        tiles = (n + tile - 1) // tile
        for k in range(tiles):
            now = k % 2
            nxt = (k + 1) * tile + t
            if k + 1 < tiles:
                for c in range(4):
                    buffers[1 - now, t, c] = bodies[nxt, c] if nxt < n else float32(0)
            for s in range(tile):
                g = interaction(ax, ay, az, buffers[now, s, 0], buffers[now, s, 1], buffers[now, s, 2],
                                buffers[now, s, 3], softening_sq)
                h = interaction(bx, by, bz, buffers[now, s, 0], buffers[now, s, 1], buffers[now, s, 2],
                                buffers[now, s, 3], softening_sq)
                sa0 += g[0]
                sa1 += g[1]
                sa2 += g[2]
                sb0 += h[0]
                sb1 += h[1]
                sb2 += h[2]
            cuda.syncthreads()
        if a < n:
            acc[a, 0], acc[a, 1], acc[a, 2] = sa0, sa1, sa2
        if b < n:
            acc[b, 0], acc[b, 1], acc[b, 2] = sb0, sb1, sb2

    return kernel


def skip_idle_destinations(tile):
    """Threads whose two destinations are both past N still stage and wait, but compute nothing."""
    @cuda.jit
    def kernel(bodies, softening_sq, acc):
        xs = cuda.shared.array(tile, float32)
        ys = cuda.shared.array(tile, float32)
        zs = cuda.shared.array(tile, float32)
        ms = cuda.shared.array(tile, float32)
        t = cuda.threadIdx.x
        n = bodies.shape[0]
        first = cuda.blockIdx.x * 2 * tile + t
        second = first + tile
        busy = first < n
        p0 = bodies[first, 0] if busy else float32(0)
        p1 = bodies[first, 1] if busy else float32(0)
        p2 = bodies[first, 2] if busy else float32(0)
        q0 = bodies[second, 0] if second < n else float32(0)
        q1 = bodies[second, 1] if second < n else float32(0)
        q2 = bodies[second, 2] if second < n else float32(0)
        f0 = f1 = f2 = g0 = g1 = g2 = float32(0)
        for start in range(0, n, tile):
            src = start + t
            inside = src < n
            xs[t] = bodies[src, 0] if inside else float32(0)
            ys[t] = bodies[src, 1] if inside else float32(0)
            zs[t] = bodies[src, 2] if inside else float32(0)
            ms[t] = bodies[src, 3] if inside else float32(0)
            cuda.syncthreads()
            if busy:
                for s in range(min(tile, n - start)):
                    u = interaction(p0, p1, p2, xs[s], ys[s], zs[s], ms[s], softening_sq)
                    f0 += u[0]
                    f1 += u[1]
                    f2 += u[2]
                    if second < n:
                        w = interaction(q0, q1, q2, xs[s], ys[s], zs[s], ms[s], softening_sq)
                        g0 += w[0]
                        g1 += w[1]
                        g2 += w[2]
            cuda.syncthreads()
        if busy:
            acc[first, 0], acc[first, 1], acc[first, 2] = f0, f1, f2
        if second < n:
            acc[second, 0], acc[second, 1], acc[second, 2] = g0, g1, g2

    return kernel


RIGHT = [adjacent_pair_reverse_order, double_buffered, skip_idle_destinations]


@pytest.mark.parametrize("factory", WRONG, ids=lambda f: f.__name__)
def test_a_wrong_technique_with_right_results_earns_at_most_half(factory):
    result = grade(factory)
    assert result.points <= POINTS / 2, str(result)
    assert any(o.technique and not o.passed for o in result.outcomes), str(result)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("factory", WRONG_ON_SOME_CONFIGURATIONS, ids=lambda f: f.__name__)
def test_the_technique_only_on_small_sizes_or_in_one_warp_earns_at_most_half(factory, seed):
    result = grade(factory, seed)
    assert result.points <= POINTS / 2, str(result)
    assert any(o.technique and not o.passed for o in result.outcomes), str(result)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("factory", RIGHT, ids=lambda f: f.__name__)
def test_the_technique_written_differently_earns_full_marks(factory, seed):
    result = grade(factory, seed)
    assert result.points == POINTS, str(result)
