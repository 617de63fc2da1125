"""The gallery: is every buggy kernel flagged with the right kind and line, and its fixed twin clean?"""

import numpy as np
import pytest
from numba import cuda, float32, int32

from course_lib import device
from course_lib.nbody import kernels as nbody_kernels
from course_lib.sim import FULL_MASK, check, kernels

pytestmark = pytest.mark.skipif(not device.is_simulator(), reason="runs the checker in this process")


def line_of(kernel, text):
    """Line number of the first source line of ``kernel`` containing ``text``."""
    import inspect

    fn = getattr(kernel, "py_func", kernel)
    lines, start = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if text in line:
            return start + k
    raise AssertionError(f"{text!r} not in {fn.__name__}")


def assert_flags(report, kind, kernel, *texts, array=None):
    assert not report.ok, str(report)
    problems = [p for p in report.problems if p.kind == kind]
    assert problems, f"expected a {kind} problem:\n{report}"
    wanted = {f":{line_of(kernel, t)}:" for t in texts}
    for p in problems:
        found = {w for w in wanted if any(w in line for line in p.lines)}
        if found == wanted and (array is None or p.array == array):
            return p
    raise AssertionError(f"no {kind} problem names lines {sorted(wanted)} / array {array}:\n{report}")


# 1. N-body tile loop without its second syncthreads ----------------------------------

TILE = 8


@cuda.jit
def nbody_tiled_missing_sync(bodies, softening_sq, acc):
    tile_bodies = cuda.shared.array((TILE, 4), float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TILE + t
    n = bodies.shape[0]
    ax = float32(0.0)
    xi = bodies[i, 0] if i < n else float32(0.0)
    for start in range(0, n, TILE):
        j = start + t
        tile_bodies[t, 0] = bodies[j, 0] if j < n else float32(0.0)
        tile_bodies[t, 3] = bodies[j, 3] if j < n else float32(0.0)
        cuda.syncthreads()
        for k in range(TILE):
            dx = tile_bodies[k, 0] - xi
            ax += tile_bodies[k, 3] * dx / (dx * dx + softening_sq) ** 1.5
        # the second cuda.syncthreads() is missing: the next tile overwrites this one
    if i < n:
        acc[i, 0] = ax


def test_nbody_tile_loop_without_second_barrier_races():
    bodies = np.random.default_rng(1).random((2 * TILE + 3, 4), dtype=np.float32)
    acc = np.zeros((bodies.shape[0], 3), np.float32)
    report = check(nbody_tiled_missing_sync, 3, TILE, bodies, np.float32(0.01), acc)
    p = assert_flags(report, "race", nbody_tiled_missing_sync, "dx = tile_bodies[k, 0] - xi",
                     "tile_bodies[t, 0] = bodies", array="tile_bodies")
    assert p.space == "shared" and len(p.threads) == 2 and p.threads[0] != p.threads[1]


def test_nbody_tiled_reference_kernel_is_clean():
    bodies = np.random.default_rng(1).random((2 * TILE + 3, 4), dtype=np.float32)
    acc = np.zeros((bodies.shape[0], 3), np.float32)
    report = check(nbody_kernels.nbody_tiled_kernel(TILE), 3, TILE, bodies, np.float32(0.01), acc)
    assert report.ok, str(report)


# 2. In-place Jacobi update --------------------------------------------------------


@cuda.jit
def jacobi_in_place(u):
    i = cuda.grid(1)
    if 0 < i < u.size - 1:
        u[i] = 0.5 * (u[i - 1] + u[i + 1])


@cuda.jit
def jacobi_two_arrays(u, u_new):
    i = cuda.grid(1)
    if 0 < i < u.size - 1:
        u_new[i] = 0.5 * (u[i - 1] + u[i + 1])


def test_in_place_jacobi_races_and_two_arrays_do_not():
    u = np.linspace(0, 1, 40)
    report = check(jacobi_in_place, 3, 16, u)
    p = assert_flags(report, "race", jacobi_in_place, "u[i] = 0.5", array="u")
    assert p.space == "global"
    assert check(jacobi_two_arrays, 3, 16, u, np.zeros_like(u)).ok


# 3. Histogram without atomics ------------------------------------------------------


@cuda.jit
def histogram_plain(data, bins):
    i = cuda.grid(1)
    if i < data.size:
        bins[data[i]] += 1


@cuda.jit
def histogram_atomic(data, bins):
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(bins, data[i], 1)


def test_non_atomic_histogram_races_and_atomic_one_is_clean():
    data = np.random.default_rng(3).integers(0, 4, size=70)
    bins = np.zeros(4, np.int64)
    report = check(histogram_plain, 3, 32, data, bins)
    assert_flags(report, "race", histogram_plain, "bins[data[i]] += 1", array="bins")
    bins = np.zeros(4, np.int64)
    report = check(histogram_atomic, 3, 32, data, bins)
    assert report.ok, str(report)
    np.testing.assert_array_equal(bins, np.bincount(data, minlength=4))  # arguments come back, as in a launch


# 4. Early return before syncthreads -------------------------------------------------


def test_early_return_before_syncthreads_is_a_barrier_problem():
    # The pair of lesson 0: course_lib.sim.kernels.reverse_early_exit_kernel and reverse_kernel.
    x = np.arange(32 + 20, dtype=np.float32)
    report = check(kernels.reverse_early_exit_kernel, 2, 32, x, np.zeros_like(x))
    assert_flags(report, "barrier", kernels.reverse_early_exit_kernel, "cuda.syncthreads()")
    report = check(kernels.reverse_kernel, 2, 32, x, np.zeros_like(x))
    assert report.ok, str(report)


@cuda.jit
def divergent_barrier(out):
    t = cuda.threadIdx.x
    if t < 16:
        cuda.syncthreads()
    else:
        cuda.syncthreads()
    out[t] = t


def test_syncthreads_in_both_branches_is_a_divergent_barrier():
    report = check(divergent_barrier, 1, 32, np.zeros(32))
    p = assert_flags(report, "barrier", divergent_barrier, "cuda.syncthreads()")
    assert "different syncthreads" in p.message and len(p.lines) == 2


# 5. Negative index -------------------------------------------------------------------


@cuda.jit
def difference_unguarded(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] - x[i - 1]


@cuda.jit
def difference_guarded(x, out):
    i = cuda.grid(1)
    if 0 < i < x.size:
        out[i] = x[i] - x[i - 1]


def test_negative_index_wraps_around_as_on_a_gpu_and_is_reported():
    """Numba wraps x[-1] to x[size - 1] on a GPU too (tests/sim/test_gpu_semantics.py reads the PTX)."""
    x = np.arange(10.0) + 1
    out = np.zeros_like(x)
    report = check(difference_unguarded, 1, 16, x, out)
    p = assert_flags(report, "negative-index", difference_unguarded, "x[i] - x[i - 1]", array="x")
    assert p.index == (-1,) and p.threads == [((0, 0, 0), (0, 0, 0))]
    assert "x[9]" in p.message and "other end" in p.message
    assert out[0] == x[0] - x[9]  # the wrapped value, as a GPU computes it
    assert check(difference_guarded, 1, 16, x, np.zeros_like(x)).ok


@cuda.jit
def copy_unguarded(x, out):
    i = cuda.grid(1)
    out[i] = x[i]


def test_index_past_the_end_is_out_of_bounds():
    report = check(copy_unguarded, 2, 8, np.arange(13.0), np.zeros(13))
    p = assert_flags(report, "out-of-bounds", copy_unguarded, "out[i] = x[i]")
    assert p.index == (13,) and p.count == 3 * 1  # x read at 13, 14, 15 (writes of out are a separate entry)


# 6. Two blocks writing the same global element ---------------------------------------


@cuda.jit
def blocks_overwrite(out):
    out[cuda.threadIdx.x] = cuda.blockIdx.x


@cuda.jit
def blocks_own_rows(out):
    out[cuda.blockIdx.x, cuda.threadIdx.x] = cuda.blockIdx.x


def test_two_blocks_writing_one_element_race():
    report = check(blocks_overwrite, 2, 4, np.zeros(4))
    p = assert_flags(report, "race", blocks_overwrite, "out[cuda.threadIdx.x]", array="out")
    assert {t[0] for t in p.threads} == {(0, 0, 0), (1, 0, 0)} and "write-write" in p.message
    assert check(blocks_own_rows, 2, 4, np.zeros((2, 4))).ok


# 7. Warp-level code: shuffle reduction and ballot are clean; a warp-synchronous
#    shared-memory reduction without syncwarp races. -----------------------------------


@cuda.jit
def ballot_count(x, out):
    i = cuda.grid(1)
    bits = cuda.ballot_sync(FULL_MASK, x[i] > 0)
    if cuda.laneid == 0:
        out[i // 32] = cuda.popc(bits)


def test_shuffle_reduction_and_ballot_are_clean_and_right(rng):
    x = rng.integers(-3, 4, size=64).astype(np.int64)
    out = np.zeros(1, np.int64)
    assert check(kernels.warp_sum_kernel, 2, 32, x, out).ok
    assert out[0] == x.sum()
    counts = np.zeros(2, np.int64)
    assert check(ballot_count, 1, 64, x, counts).ok
    np.testing.assert_array_equal(counts, (x.reshape(2, 32) > 0).sum(axis=1))


@cuda.jit
def warp_reduce_shared_unsynced(x, out):
    s = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    s[t] = x[t]
    s[t + 32] = float32(0.0)
    cuda.syncthreads()
    offset = 16
    while offset > 0:
        s[t] += s[t + offset]
        offset //= 2
    if t == 0:
        out[0] = s[0]


@cuda.jit
def warp_reduce_shared_syncwarp(x, out):
    s = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    s[t] = x[t]
    s[t + 32] = float32(0.0)
    cuda.syncthreads()
    offset = 16
    while offset > 0:
        v = s[t + offset]
        cuda.syncwarp(FULL_MASK)
        s[t] += v
        cuda.syncwarp(FULL_MASK)
        offset //= 2
    if t == 0:
        out[0] = s[0]


def test_warp_synchronous_reduction_needs_syncwarp():
    x = np.arange(32, dtype=np.float32)
    report = check(warp_reduce_shared_unsynced, 1, 32, x, np.zeros(1, np.float32))
    assert_flags(report, "race", warp_reduce_shared_unsynced, "s[t] += s[t + offset]", array="s")
    out = np.zeros(1, np.float32)
    report = check(warp_reduce_shared_syncwarp, 1, 32, x, out)
    assert report.ok, str(report)
    assert out[0] == x.sum()


@cuda.jit
def early_exit_ballot(x, out):
    i = cuda.grid(1)
    if x[i] < 0:
        return
    out[i] = cuda.ballot_sync(FULL_MASK, x[i] > 1)


@cuda.jit
def ballot_skipped_by_a_waiting_lane(x, out):
    i = cuda.grid(1)
    if x[i] >= 0:
        out[i] = cuda.ballot_sync(FULL_MASK, x[i] > 1)
    cuda.syncthreads()


def test_a_lane_that_exited_is_out_of_the_vote_but_an_alive_absent_lane_is_reported_not_hung():
    x = np.arange(32, dtype=np.int64) - 1  # lane 0 has x < 0
    out = np.zeros(32, np.int64)
    report = check(early_exit_ballot, 1, 32, x, out)
    assert report.ok, str(report)
    np.testing.assert_array_equal(out[1:], np.uint32(sum(1 << k for k in range(32) if x[k] > 1)).view(np.int32))
    report = check(ballot_skipped_by_a_waiting_lane, 1, 32, x, np.zeros(32, np.int64))
    assert report.kinds() == {"warp"} and "lane 0 waits at syncthreads" in report.problems[0].message


# Shuffled order -------------------------------------------------------------------------


@cuda.jit
def last_writer_wins(out):
    out[0] = cuda.grid(1)


def test_seeded_shuffle_changes_the_order_and_is_reproducible():
    results = {}
    for seed in range(6):
        out = np.zeros(1, np.int64)
        report = check(last_writer_wins, 4, 8, out, seed=seed)
        assert "race" in report.kinds() and report.seed == seed
        results[seed] = out[0]
    assert len(set(results.values())) > 1, results
    out = np.zeros(1, np.int64)
    check(last_writer_wins, 4, 8, out, seed=3)
    assert out[0] == results[3]


def test_report_text_names_kind_array_threads_and_lines():
    report = check(blocks_overwrite, 2, 4, np.zeros(4))
    text = str(report)
    assert "[race]" in text and "out[" in text and "block (1, 0, 0)" in text
    assert f"test_check.py:{line_of(blocks_overwrite, 'out[cuda.threadIdx.x]')}" in text
    assert "<table>" in report._repr_html_()


def test_bad_arguments_are_a_value_error():
    with pytest.raises(ValueError, match="takes 1 arguments"):
        check(blocks_overwrite, 1, 4, np.zeros(4), np.zeros(4))
    with pytest.raises(ValueError, match="kernel"):
        check(42, 1, 4)


@cuda.jit
def two_shared_arrays(out):
    values = cuda.shared.array(8, float32)
    flags = cuda.shared.array(8, int32)
    t = cuda.threadIdx.x
    values[t] = 0.5 * t
    flags[t] = t + 100
    cuda.syncthreads()
    out[t] = values[7 - t] + flags[t]


def test_shared_arrays_of_one_kernel_do_not_alias():
    """Two shared arrays (different dtypes) stay separate under the checker, as in a launch."""
    out = np.zeros(8, np.float32)
    assert check(two_shared_arrays, 1, 8, out).ok
    np.testing.assert_array_equal(out, 0.5 * (7 - np.arange(8)) + np.arange(8) + 100)
