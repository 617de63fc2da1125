"""Answers to problem set 6, q1, for the grader tests: the solution, right answers written differently, wrong
techniques and typical bugs, each a kernel ``minibatch_gemm_kernel(Wt, Xt, perm, start, U)`` launched as
``kernel[(ceil(C / 16), ceil(B / 16)), (8, 8)]``. The ps6 fixtures of ``tests/grading/make_fixtures.py`` put the
same sources into notebooks (:func:`source_of`)."""

import ast
from pathlib import Path

from numba import cuda, float64


@cuda.jit
def solution(Wt, Xt, perm, start, U):
    """Right: 16 x 16 tiles of the samples and of Wt in shared memory, a 2 x 2 block of U per thread."""
    xs = cuda.shared.array((16, 16), float64)
    ws = cuda.shared.array((16, 16), float64)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    c0 = cuda.blockIdx.x * 16
    b0 = cuda.blockIdx.y * 16
    n_channels = Wt.shape[0]
    batch = U.shape[0]
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
def four_by_one(Wt, Xt, perm, start, U):
    """Right, another register tile: each thread 4 samples of one channel, k-chunks of 8, lanes along channels."""
    xs = cuda.shared.array((16, 8), float64)
    ws = cuda.shared.array((8, 16), float64)
    lane = cuda.threadIdx.x + 8 * cuda.threadIdx.y
    channel = lane % 16
    group = lane // 16
    n = Wt.shape[0]
    rows = U.shape[0]
    first_sample = 16 * cuda.blockIdx.y
    first_channel = 16 * cuda.blockIdx.x
    acc = cuda.local.array(4, float64)
    for j in range(4):
        acc[j] = 0.0
    for base in range(0, n, 8):
        for e in range(lane, 128, 64):
            s, k = e // 8, e % 8
            if first_sample + s < rows and base + k < n:
                xs[s, k] = Xt[perm[start + first_sample + s], base + k]
            else:
                xs[s, k] = 0.0
            k, c = e // 16, e % 16
            if base + k < n and first_channel + c < n:
                ws[k, c] = Wt[base + k, first_channel + c]
            else:
                ws[k, c] = 0.0
        cuda.syncthreads()
        for k in range(8):
            w = ws[k, channel]
            for j in range(4):
                acc[j] += xs[4 * group + j, k] * w
        cuda.syncthreads()
    for j in range(4):
        s = first_sample + 4 * group + j
        if s < rows and first_channel + channel < n:
            U[s, first_channel + channel] = acc[j]


@cuda.jit
def naive(Wt, Xt, perm, start, U):
    """Wrong technique: each thread's four outputs read their row of samples and column of Wt from global memory."""
    n_channels = Wt.shape[0]
    for j in range(4):
        b = 16 * cuda.blockIdx.y + 2 * cuda.threadIdx.y + j // 2
        c = 16 * cuda.blockIdx.x + 2 * cuda.threadIdx.x + j % 2
        if b < U.shape[0] and c < n_channels:
            total = 0.0
            for k in range(n_channels):
                total += Xt[perm[start + b], k] * Wt[k, c]
            U[b, c] = total


@cuda.jit
def registers_only(Wt, Xt, perm, start, U):
    """Wrong technique: the 2 x 2 register block, but its operands read from global memory (no shared tiles)."""
    n_channels = Wt.shape[0]
    b = 16 * cuda.blockIdx.y + 2 * cuda.threadIdx.y
    c = 16 * cuda.blockIdx.x + 2 * cuda.threadIdx.x
    a00 = 0.0
    a01 = 0.0
    a10 = 0.0
    a11 = 0.0
    for k in range(n_channels):
        x0 = Xt[perm[start + b], k] if b < U.shape[0] else 0.0
        x1 = Xt[perm[start + b + 1], k] if b + 1 < U.shape[0] else 0.0
        w0 = Wt[k, c] if c < n_channels else 0.0
        w1 = Wt[k, c + 1] if c + 1 < n_channels else 0.0
        a00 += x0 * w0
        a01 += x0 * w1
        a10 += x1 * w0
        a11 += x1 * w1
    if b < U.shape[0] and c < n_channels:
        U[b, c] = a00
    if b < U.shape[0] and c + 1 < n_channels:
        U[b, c + 1] = a01
    if b + 1 < U.shape[0] and c < n_channels:
        U[b + 1, c] = a10
    if b + 1 < U.shape[0] and c + 1 < n_channels:
        U[b + 1, c + 1] = a11


@cuda.jit
def shared_no_registers(Wt, Xt, perm, start, U):
    """Wrong technique: the shared tiles, but each of a thread's four outputs reads both operands from shared
    memory on its own (no value reused from a register)."""
    xs = cuda.shared.array((16, 16), float64)
    ws = cuda.shared.array((16, 16), float64)
    t = cuda.threadIdx.y * 8 + cuda.threadIdx.x
    c0 = cuda.blockIdx.x * 16
    b0 = cuda.blockIdx.y * 16
    n_channels = Wt.shape[0]
    batch = U.shape[0]
    acc = cuda.local.array(4, float64)
    for j in range(4):
        acc[j] = 0.0
    for k0 in range(0, n_channels, 16):
        for e in range(t, 256, 64):
            r = e // 16
            q = e % 16
            xs[r, q] = Xt[perm[start + b0 + r], k0 + q] if b0 + r < batch and k0 + q < n_channels else 0.0
            ws[r, q] = Wt[k0 + r, c0 + q] if k0 + r < n_channels and c0 + q < n_channels else 0.0
        cuda.syncthreads()
        for j in range(4):
            for q in range(16):
                acc[j] += xs[2 * cuda.threadIdx.y + j // 2, q] * ws[q, 2 * cuda.threadIdx.x + j % 2]
        cuda.syncthreads()
    for j in range(4):
        b = b0 + 2 * cuda.threadIdx.y + j // 2
        c = c0 + 2 * cuda.threadIdx.x + j % 2
        if b < batch and c < n_channels:
            U[b, c] = acc[j]


@cuda.jit
def missing_barrier(Wt, Xt, perm, start, U):
    """Bug: no barrier after the products, so a fast thread overwrites a tile others still read."""
    xs = cuda.shared.array((16, 16), float64)
    ws = cuda.shared.array((16, 16), float64)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    c0 = cuda.blockIdx.x * 16
    b0 = cuda.blockIdx.y * 16
    n_channels = Wt.shape[0]
    batch = U.shape[0]
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
            a00 += xs[2 * ty, q] * ws[q, 2 * tx]
            a01 += xs[2 * ty, q] * ws[q, 2 * tx + 1]
            a10 += xs[2 * ty + 1, q] * ws[q, 2 * tx]
            a11 += xs[2 * ty + 1, q] * ws[q, 2 * tx + 1]
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


def source_of(name: str) -> str:
    """The source of one kernel above, named ``minibatch_gemm_kernel`` (the name the question asks for)."""
    text = Path(__file__).read_text()
    (node,) = [n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == name]
    lines = text.splitlines()
    header = lines[node.lineno - 1].replace(f"def {name}(", "def minibatch_gemm_kernel(")
    body = lines[node.body[0].end_lineno:node.end_lineno]  # without the docstring
    return "@cuda.jit\n" + header + "\n" + "\n".join(body) + "\n"
