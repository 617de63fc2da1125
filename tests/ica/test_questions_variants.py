"""Does ps6.q1 grade the register-blocked tiling rather than one solution?

Kernels written from the problem statement (``minibatch_gemm_kernel(Wt, Xt, perm, start, U)`` launched as
``kernel[(ceil(C / 16), ceil(B / 16)), (8, 8)]``, block (i, j) computing ``U[16 j:16 j + 16, 16 i:16 i + 16]``):
wrong techniques with right results must earn at most half of the question, right techniques written
differently (other register blocks, thread mappings, loop orders, names, early returns) full marks.
"""

import pytest
from numba import cuda, float64

from course_lib.grading import get_question, run_tests

from . import submissions as subs

POINTS = 6


def grade(kernel):
    return run_tests(get_question("ps6.q1"), kernel, hidden=True, seed=11)


def failures(result):
    return " | ".join(" ".join(o.message.split()) for o in result.outcomes if not o.passed)


# ----------------------------------------------------------------------------- wrong techniques
@cuda.jit
def every_operand_from_global(Wt, Xt, perm, start, U):
    """Each thread computes its four outputs one by one, reading both operands from global memory."""
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    n = Wt.shape[0]
    for out in range(4):
        row = cuda.blockIdx.y * 16 + ty + 8 * (out // 2)
        col = cuda.blockIdx.x * 16 + tx + 8 * (out % 2)
        if row < U.shape[0] and col < n:
            sample = perm[start + row]
            s = 0.0
            for k in range(n):
                s += Wt[k, col] * Xt[sample, k]
            U[row, col] = s


@cuda.jit
def one_thread_stages_the_tiles(Wt, Xt, perm, start, U):
    """Register-blocked products, but thread (0, 0) copies both tiles alone while the block waits."""
    xs = cuda.shared.array((16, 16), float64)
    ws = cuda.shared.array((16, 16), float64)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    n, rows = Wt.shape[0], U.shape[0]
    r0, c0 = 16 * cuda.blockIdx.y, 16 * cuda.blockIdx.x
    u00 = u01 = u10 = u11 = 0.0
    for k0 in range(0, n, 16):
        if tx == 0 and ty == 0:
            for a in range(16):
                for b in range(16):
                    xs[a, b] = Xt[perm[start + r0 + a], k0 + b] if r0 + a < rows and k0 + b < n else 0.0
                    ws[a, b] = Wt[k0 + a, c0 + b] if k0 + a < n and c0 + b < n else 0.0
        cuda.syncthreads()
        for k in range(16):
            x0, x1 = xs[2 * ty, k], xs[2 * ty + 1, k]
            w0, w1 = ws[k, 2 * tx], ws[k, 2 * tx + 1]
            u00 += x0 * w0
            u01 += x0 * w1
            u10 += x1 * w0
            u11 += x1 * w1
        cuda.syncthreads()
    r, c = r0 + 2 * ty, c0 + 2 * tx
    if r < rows and c < n:
        U[r, c] = u00
    if r < rows and c + 1 < n:
        U[r, c + 1] = u01
    if r + 1 < rows and c < n:
        U[r + 1, c] = u10
    if r + 1 < rows and c + 1 < n:
        U[r + 1, c + 1] = u11


@cuda.jit
def whole_matrix_in_shared(Wt, Xt, perm, start, U):
    """Every block stages all of W^T (C <= 48) and its 16 samples at once, then makes its products."""
    wall = cuda.shared.array((48, 48), float64)
    xall = cuda.shared.array((16, 48), float64)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    t = 8 * ty + tx
    n, rows = Wt.shape[0], U.shape[0]
    r0, c0 = 16 * cuda.blockIdx.y, 16 * cuda.blockIdx.x
    for e in range(t, n * n, 64):
        wall[e // n, e % n] = Wt[e // n, e % n]
    for e in range(t, 16 * n, 64):
        a, k = e // n, e % n
        xall[a, k] = Xt[perm[start + r0 + a], k] if r0 + a < rows else 0.0
    cuda.syncthreads()
    u00 = u01 = u10 = u11 = 0.0
    for k in range(n):
        x0, x1 = xall[2 * ty, k], xall[2 * ty + 1, k]
        w0 = wall[k, c0 + 2 * tx] if c0 + 2 * tx < n else 0.0
        w1 = wall[k, c0 + 2 * tx + 1] if c0 + 2 * tx + 1 < n else 0.0
        u00 += x0 * w0
        u01 += x0 * w1
        u10 += x1 * w0
        u11 += x1 * w1
    r, c = r0 + 2 * ty, c0 + 2 * tx
    if r < rows and c < n:
        U[r, c] = u00
    if r < rows and c + 1 < n:
        U[r, c + 1] = u01
    if r + 1 < rows and c < n:
        U[r + 1, c] = u10
    if r + 1 < rows and c + 1 < n:
        U[r + 1, c + 1] = u11


@cuda.jit
def thread_per_row_gemv(Wt, Xt, perm, start, U):
    """A GEMV per sample: the first 16 threads of the block each walk one sample's 16 outputs, from global
    memory; the other 48 threads idle."""
    t = 8 * cuda.threadIdx.y + cuda.threadIdx.x
    n = Wt.shape[0]
    row = 16 * cuda.blockIdx.y + t
    if t < 16 and row < U.shape[0]:
        sample = perm[start + row]
        for col in range(16 * cuda.blockIdx.x, min(16 * cuda.blockIdx.x + 16, n)):
            acc = 0.0
            for k in range(n):
                acc += Xt[sample, k] * Wt[k, col]
            U[row, col] = acc


@cuda.jit
def warp_barrier_only(Wt, Xt, perm, start, U):
    """Tiles and register blocks, but syncwarp where the block's two warps must wait for each other."""
    xs = cuda.shared.array((16, 16), float64)
    ws = cuda.shared.array((16, 16), float64)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    t = 8 * ty + tx
    n, rows = Wt.shape[0], U.shape[0]
    r0, c0 = 16 * cuda.blockIdx.y, 16 * cuda.blockIdx.x
    u00 = u01 = u10 = u11 = 0.0
    for k0 in range(0, n, 16):
        for e in range(t, 256, 64):
            a, b = e // 16, e % 16
            xs[a, b] = Xt[perm[start + r0 + a], k0 + b] if r0 + a < rows and k0 + b < n else 0.0
            ws[a, b] = Wt[k0 + a, c0 + b] if k0 + a < n and c0 + b < n else 0.0
        cuda.syncwarp()
        for k in range(16):
            x0, x1 = xs[2 * ty, k], xs[2 * ty + 1, k]
            w0, w1 = ws[k, 2 * tx], ws[k, 2 * tx + 1]
            u00 += x0 * w0
            u01 += x0 * w1
            u10 += x1 * w0
            u11 += x1 * w1
        cuda.syncwarp()
    r, c = r0 + 2 * ty, c0 + 2 * tx
    if r < rows and c < n:
        U[r, c] = u00
    if r < rows and c + 1 < n:
        U[r, c + 1] = u01
    if r + 1 < rows and c < n:
        U[r + 1, c] = u10
    if r + 1 < rows and c + 1 < n:
        U[r + 1, c + 1] = u11


@cuda.jit
def tiles_without_register_reuse(Wt, Xt, perm, start, U):
    """Shared tiles staged together, but each output is finished before the next starts: every multiply-add
    reads both of its operands from shared memory."""
    xs = cuda.shared.array((16, 16), float64)
    ws = cuda.shared.array((16, 16), float64)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    t = 8 * ty + tx
    n, rows = Wt.shape[0], U.shape[0]
    r0, c0 = 16 * cuda.blockIdx.y, 16 * cuda.blockIdx.x
    sums = cuda.local.array(4, float64)
    for o in range(4):
        sums[o] = 0.0
    for k0 in range(0, n, 16):
        for e in range(t, 256, 64):
            a, b = e % 16, e // 16
            xs[a, b] = Xt[perm[start + r0 + a], k0 + b] if r0 + a < rows and k0 + b < n else 0.0
            ws[b, a] = Wt[k0 + b, c0 + a] if k0 + b < n and c0 + a < n else 0.0
        cuda.syncthreads()
        for o in range(4):
            a, b = ty + 8 * (o // 2), tx + 8 * (o % 2)
            for k in range(16):
                sums[o] += xs[a, k] * ws[k, b]
        cuda.syncthreads()
    for o in range(4):
        r, c = r0 + ty + 8 * (o // 2), c0 + tx + 8 * (o % 2)
        if r < rows and c < n:
            U[r, c] = sums[o]


WRONG = [every_operand_from_global, one_thread_stages_the_tiles, whole_matrix_in_shared, thread_per_row_gemv,
         warp_barrier_only, tiles_without_register_reuse]


# ----------------------------------------------------------------------------- right, written differently
@cuda.jit
def one_sample_four_channels(Wt, Xt, perm, start, U):
    """Each thread one sample and four channels (a 1 x 4 register block), the k loop counted down."""
    samples = cuda.shared.array((16, 16), float64)
    weights = cuda.shared.array((16, 16), float64)
    lane = cuda.threadIdx.y * 8 + cuda.threadIdx.x
    my_sample = lane // 4
    first_channel = 4 * (lane % 4)
    n_channels = Wt.shape[0]
    batch = U.shape[0]
    row0 = cuda.blockIdx.y * 16
    col0 = cuda.blockIdx.x * 16
    acc = cuda.local.array(4, float64)
    for j in range(4):
        acc[j] = 0.0
    chunk = 0
    while chunk < n_channels:
        for item in range(lane, 256, 64):
            i, k = item // 16, item % 16
            if row0 + i < batch and chunk + k < n_channels:
                samples[i, k] = Xt[perm[start + row0 + i], chunk + k]
            else:
                samples[i, k] = 0.0
            if chunk + i < n_channels and col0 + k < n_channels:
                weights[i, k] = Wt[chunk + i, col0 + k]
            else:
                weights[i, k] = 0.0
        cuda.syncthreads()
        for k in range(15, -1, -1):
            x = samples[my_sample, k]
            for j in range(4):
                acc[j] += x * weights[k, first_channel + j]
        cuda.syncthreads()
        chunk += 16
    for j in range(4):
        if row0 + my_sample < batch and col0 + first_channel + j < n_channels:
            U[row0 + my_sample, col0 + first_channel + j] = acc[j]


@cuda.jit
def strided_two_by_two(Wt, Xt, perm, start, U):
    """A 2 x 2 block per thread on a strided mapping (samples ty and ty + 8, channels tx and tx + 8), the samples
    staged transposed (k-major)."""
    xt = cuda.shared.array((16, 16), float64)  # xt[k, sample]
    wt = cuda.shared.array((16, 16), float64)  # wt[k, channel]
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    n = Wt.shape[0]
    b_base = 16 * cuda.blockIdx.y
    c_base = 16 * cuda.blockIdx.x
    p = q = r = s = 0.0
    for k_base in range(0, n, 16):
        for sweep in range(4):
            idx = 64 * sweep + 8 * ty + tx
            kk = idx // 16
            jj = idx % 16
            ok = k_base + kk < n
            xt[kk, jj] = Xt[perm[start + b_base + jj], k_base + kk] if ok and b_base + jj < U.shape[0] else 0.0
            wt[kk, jj] = Wt[k_base + kk, c_base + jj] if ok and c_base + jj < n else 0.0
        cuda.syncthreads()
        for kk in range(16):
            lo_sample, hi_sample = xt[kk, ty], xt[kk, ty + 8]
            lo_weight, hi_weight = wt[kk, tx], wt[kk, tx + 8]
            p += lo_sample * lo_weight
            q += lo_sample * hi_weight
            r += hi_sample * lo_weight
            s += hi_sample * hi_weight
        cuda.syncthreads()
    for which in range(4):
        b = b_base + ty + 8 * (which // 2)
        c = c_base + tx + 8 * (which % 2)
        if b < U.shape[0] and c < n:
            U[b, c] = p if which == 0 else (q if which == 1 else (r if which == 2 else s))


@cuda.jit
def early_return_after_the_barriers(Wt, Xt, perm, start, U):
    """The 2 x 2 block with an early return: threads whose outputs are past B or C leave after the last barrier;
    staging guards the index first and loads second."""
    tile_x = cuda.shared.array((16, 16), float64)
    tile_w = cuda.shared.array((16, 16), float64)
    ix = cuda.threadIdx.x
    iy = cuda.threadIdx.y
    me = ix + 8 * iy
    C = Wt.shape[0]
    B = U.shape[0]
    top = cuda.blockIdx.y * 16
    left = cuda.blockIdx.x * 16
    acc00 = acc01 = acc10 = acc11 = 0.0
    for base in range(0, C, 16):
        for e in (me, me + 64, me + 128, me + 192):
            i = e // 16
            k = e - 16 * i
            value = 0.0
            if top + i < B and base + k < C:
                value = Xt[perm[start + top + i], base + k]
            tile_x[i, k] = value
            weight = 0.0
            if base + i < C and left + k < C:
                weight = Wt[base + i, left + k]
            tile_w[i, k] = weight
        cuda.syncthreads()
        for k in range(16):
            a = tile_x[2 * iy, k]
            b = tile_x[2 * iy + 1, k]
            v = tile_w[k, 2 * ix]
            w = tile_w[k, 2 * ix + 1]
            acc00 += a * v
            acc01 += a * w
            acc10 += b * v
            acc11 += b * w
        cuda.syncthreads()
    b = top + 2 * iy
    c = left + 2 * ix
    if b >= B or c >= C:
        return
    U[b, c] = acc00
    if c + 1 < C:
        U[b, c + 1] = acc01
    if b + 1 < B:
        U[b + 1, c] = acc10
        if c + 1 < C:
            U[b + 1, c + 1] = acc11


# ----------------------------------------------------------------------------- the technique only in part
# Written from the problem statement by a student who keeps the technique where the visible tests look (C <= 48
# channels), or lets one warp do the block's work while the other waits: at most half, on every grading seed.
@cuda.jit
def tiled_only_up_to_48_channels(Wt, Xt, perm, start, U):
    """The solution's tiling for C <= 48; above, every output's operands from global memory."""
    xs = cuda.shared.array((16, 16), float64)
    ws = cuda.shared.array((16, 16), float64)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    c0 = cuda.blockIdx.x * 16
    b0 = cuda.blockIdx.y * 16
    n_channels = Wt.shape[0]
    batch = U.shape[0]
    if n_channels > 48:
        for j in range(4):
            b = b0 + 2 * ty + j // 2
            c = c0 + 2 * tx + j % 2
            if b < batch and c < n_channels:
                total = 0.0
                for k in range(n_channels):
                    total += Xt[perm[start + b], k] * Wt[k, c]
                U[b, c] = total
        return
    t = ty * 8 + tx
    a00 = 0.0
    a01 = 0.0
    a10 = 0.0
    a11 = 0.0
    for k0 in range(0, n_channels, 16):
        for e in range(t, 256, 64):
            r = e // 16
            q = e % 16
            xs[r, q] = Xt[perm[start + b0 + r], k0 + q] if b0 + r < batch and k0 + q < n_channels else 0.0
            ws[r, q] = Wt[k0 + r, c0 + q] if k0 + r < n_channels and c0 + q < n_channels else 0.0
        cuda.syncthreads()
        for q in range(16):
            x0 = xs[2 * ty, q]
            x1 = xs[2 * ty + 1, q]
            w0 = ws[q, 2 * tx]
            w1 = ws[q, 2 * tx + 1]
            a00 += x0 * w0
            a01 += x0 * w1
            a10 += x1 * w0
            a11 += x1 * w1
        cuda.syncthreads()
    b = b0 + 2 * ty
    c = c0 + 2 * tx
    if b < batch and c < n_channels:
        U[b, c] = a00
    if b < batch and c + 1 < n_channels:
        U[b, c + 1] = a01
    if b + 1 < batch and c < n_channels:
        U[b + 1, c] = a10
    if b + 1 < batch and c + 1 < n_channels:
        U[b + 1, c + 1] = a11


@cuda.jit
def first_warp_does_the_block(Wt, Xt, perm, start, U):
    """The first warp (rows ty < 4) stages the tiles and computes all 256 outputs, a 4 x 2 register block per
    thread; the second warp only waits at the barriers."""
    xs = cuda.shared.array((16, 16), float64)
    ws = cuda.shared.array((16, 16), float64)
    acc = cuda.local.array(8, float64)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    c0 = cuda.blockIdx.x * 16
    b0 = cuda.blockIdx.y * 16
    n_channels = Wt.shape[0]
    batch = U.shape[0]
    t = ty * 8 + tx
    for j in range(8):
        acc[j] = 0.0
    for k0 in range(0, n_channels, 16):
        if t < 32:
            for e in range(t, 256, 32):
                r = e // 16
                q = e % 16
                xs[r, q] = Xt[perm[start + b0 + r], k0 + q] if b0 + r < batch and k0 + q < n_channels else 0.0
                ws[r, q] = Wt[k0 + r, c0 + q] if k0 + r < n_channels and c0 + q < n_channels else 0.0
        cuda.syncthreads()
        if t < 32:
            for q in range(16):
                w0 = ws[q, 2 * tx]
                w1 = ws[q, 2 * tx + 1]
                for i in range(4):
                    x = xs[4 * ty + i, q]
                    acc[2 * i] += x * w0
                    acc[2 * i + 1] += x * w1
        cuda.syncthreads()
    if t < 32:
        for i in range(4):
            b = b0 + 4 * ty + i
            c = c0 + 2 * tx
            if b < batch and c < n_channels:
                U[b, c] = acc[2 * i]
            if b < batch and c + 1 < n_channels:
                U[b, c + 1] = acc[2 * i + 1]


PARTIAL = [tiled_only_up_to_48_channels, first_warp_does_the_block]


@pytest.mark.parametrize("seed", [3, 4])
@pytest.mark.parametrize("kernel", PARTIAL, ids=lambda k: k.__name__)
def test_the_technique_only_in_part_earns_at_most_half_on_every_seed(kernel, seed):
    result = run_tests(get_question("ps6.q1"), kernel, hidden=True, seed=seed)
    assert result.points <= POINTS / 2 and result.capped, failures(result)


RIGHT = [one_sample_four_channels, strided_two_by_two, early_return_after_the_barriers, subs.four_by_one]


@pytest.mark.parametrize("kernel", WRONG, ids=lambda k: k.__name__)
def test_a_wrong_technique_with_right_results_earns_at_most_half(kernel):
    result = grade(kernel)
    assert result.points <= POINTS / 2, failures(result)
    assert any(o.technique and not o.passed for o in result.outcomes), failures(result)


@pytest.mark.parametrize("seed", [11, 12])
@pytest.mark.parametrize("kernel", RIGHT, ids=lambda k: getattr(k, "__name__", str(k)))
def test_the_technique_written_differently_earns_full_marks(kernel, seed):
    result = run_tests(get_question("ps6.q1"), kernel, hidden=True, seed=seed)
    assert result.points == POINTS, failures(result)


def test_the_solution_earns_full_marks_and_a_kernel_doing_nothing_none():
    assert grade(subs.solution).points == POINTS

    @cuda.jit
    def nothing(Wt, Xt, perm, start, U):
        pass

    assert grade(nothing).points == 0
