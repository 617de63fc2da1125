"""Problem set 1: right answers get full marks, typical wrong ones partial or 0 with a reason."""

import math

import numpy as np
import pytest
from numba import cuda, float32

from course_lib import device
from course_lib.grading import get_question, run_tests
from course_lib.nbody import kernels
from course_lib.nbody.questions import recommended_tile

TILE = 8
interaction = kernels.interaction


@cuda.jit
def soa_tiled_kernel(bodies, softening_sq, acc):
    """Correct but written differently: four shared arrays, guarded inner loop."""
    sx = cuda.shared.array(TILE, float32)
    sy = cuda.shared.array(TILE, float32)
    sz = cuda.shared.array(TILE, float32)
    sm = cuda.shared.array(TILE, float32)
    i = cuda.grid(1)
    n = bodies.shape[0]
    me = min(i, n - 1)
    ax = float32(0.0)
    ay = float32(0.0)
    az = float32(0.0)
    for base in range(0, n, TILE):
        j = base + cuda.threadIdx.x
        if j < n:
            sx[cuda.threadIdx.x] = bodies[j, 0]
            sy[cuda.threadIdx.x] = bodies[j, 1]
            sz[cuda.threadIdx.x] = bodies[j, 2]
            sm[cuda.threadIdx.x] = bodies[j, 3]
        cuda.syncthreads()
        for k in range(min(TILE, n - base)):
            fx, fy, fz = interaction(bodies[me, 0], bodies[me, 1], bodies[me, 2], sx[k], sy[k], sz[k], sm[k],
                                     softening_sq)
            ax += fx
            ay += fy
            az += fz
        cuda.syncthreads()
    if i < n:
        acc[i, 0] = ax
        acc[i, 1] = ay
        acc[i, 2] = az


@cuda.jit
def unpadded_tiled_kernel(bodies, softening_sq, acc):
    """Wrong: the last tile keeps stale bodies of the previous tile (no zero-mass padding)."""
    tile_bodies = cuda.shared.array((TILE, 4), float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TILE + t
    n = bodies.shape[0]
    me = min(i, n - 1)
    ax = float32(0.0)
    ay = float32(0.0)
    az = float32(0.0)
    for start in range(0, n, TILE):
        if start + t < n:
            for c in range(4):
                tile_bodies[t, c] = bodies[start + t, c]
        cuda.syncthreads()
        for k in range(TILE):
            fx, fy, fz = interaction(bodies[me, 0], bodies[me, 1], bodies[me, 2], tile_bodies[k, 0],
                                     tile_bodies[k, 1], tile_bodies[k, 2], tile_bodies[k, 3], softening_sq)
            ax += fx
            ay += fy
            az += fz
        cuda.syncthreads()
    if i < n:
        acc[i, 0] = ax
        acc[i, 1] = ay
        acc[i, 2] = az


@cuda.jit
def unguarded_store_kernel(bodies, softening_sq, acc):
    """Wrong: only correct when N is a multiple of the tile (reads and writes past the end)."""
    i = cuda.grid(1)
    ax = float32(0.0)
    ay = float32(0.0)
    az = float32(0.0)
    for j in range(bodies.shape[0]):
        fx, fy, fz = interaction(bodies[i, 0], bodies[i, 1], bodies[i, 2], bodies[j, 0], bodies[j, 1],
                                 bodies[j, 2], bodies[j, 3], softening_sq)
        ax += fx
        ay += fy
        az += fz
    acc[i, 0] = ax
    acc[i, 1] = ay
    acc[i, 2] = az


def grade(question_id, answer, **options):
    return run_tests(get_question(question_id), answer, hidden=True, seed=7, options=options)


def test_correct_but_different_kernel_gets_full_marks():
    result = grade("ps1.q1", soa_tiled_kernel, tile=TILE)
    assert result.passed and result.points == 6, str(result)


def test_unpadded_last_tile_loses_points_with_a_helpful_message():
    result = grade("ps1.q1", unpadded_tiled_kernel, tile=TILE)
    assert 0 < result.points < 6, str(result)
    first = next(o for o in result.outcomes if not o.passed)
    assert "values are wrong" in first.message and "Hint: guard the loads" in first.message


def test_unguarded_kernel_fails_awkward_sizes():
    result = grade("ps1.q1", unguarded_store_kernel, tile=TILE)
    assert result.points < 6
    assert not result.outcomes[1].passed  # N = tile - 1


def test_reference_kernel_is_rejected():
    result = grade("ps1.q1", kernels.nbody_tiled_kernel(TILE), tile=TILE)
    assert result.points == 0 and "course's own reference kernel" in result.error


def test_missing_tile_or_non_kernel_answers():
    assert "pass the tile size" in grade("ps1.q1", soa_tiled_kernel).error
    assert "must be a @cuda.jit kernel" in grade("ps1.q1", lambda *a: None, tile=TILE).error


def test_fetch_counting_accepts_2n_and_2n_minus_2():
    for naive in (lambda n: 2 * n, lambda n: 2 * n - 2):
        assert grade("ps1.q2", {"naive_fetches_per_body": naive, "tiled_fetches_per_tile": lambda p: 2 * p}).passed
    wrong = grade("ps1.q2", {"naive_fetches_per_body": lambda n: n, "tiled_fetches_per_tile": lambda p: 2 * p})
    assert wrong.points == 1 and "source AND as a destination" in str(wrong)
    assert "lacks" in grade("ps1.q2", {"naive_fetches_per_body": lambda n: n}).error


def test_tile_choice_rule():
    assert recommended_tile(1 << 20, 132, 1024, 2048) == 1024
    assert recommended_tile(8192, 68, 1024, 1536) == 64
    assert recommended_tile(1 << 20, 68, 1024, 1536) == 512      # two blocks must fit: 2P <= 1536
    def own_choice(n, sm_count, max_threads_per_block, max_threads_per_sm):
        p = max_threads_per_block
        while p > 1 and (math.ceil(n / p) < sm_count or 2 * p > max_threads_per_sm):
            p //= 2
        return p

    assert grade("ps1.q3", own_choice).passed
    assert "course's own recommended_tile" in grade("ps1.q3", recommended_tile).error
    assert grade("ps1.q3", lambda *args: recommended_tile(*args)).points == 0
    always_max = grade("ps1.q3", lambda n, sms, per_block, per_sm: per_block)
    assert always_max.points == 0 and "gives every SM a block" in str(always_max)


def test_tile_rule_examples_are_powers_of_two():
    for n in (5000, 1 << 16, 1 << 22):
        p = recommended_tile(n, 132, 1024, 2048)
        assert p == 2 ** int(math.log2(p)) and math.ceil(n / p) >= 132


@cuda.jit
def one_barrier_kernel(bodies, softening_sq, acc):
    """Wrong: no second syncthreads, so the next tile overwrites shared memory still being read."""
    tile_bodies = cuda.shared.array((TILE, 4), float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TILE + t
    n = bodies.shape[0]
    me = min(i, n - 1)
    ax = float32(0.0)
    ay = float32(0.0)
    az = float32(0.0)
    for start in range(0, n, TILE):
        for c in range(4):
            tile_bodies[t, c] = bodies[start + t, c] if start + t < n else float32(0.0)
        cuda.syncthreads()
        for k in range(TILE):
            fx, fy, fz = interaction(bodies[me, 0], bodies[me, 1], bodies[me, 2], tile_bodies[k, 0],
                                     tile_bodies[k, 1], tile_bodies[k, 2], tile_bodies[k, 3], softening_sq)
            ax += fx
            ay += fy
            az += fz
    if i < n:
        acc[i, 0] = ax
        acc[i, 1] = ay
        acc[i, 2] = az


@pytest.mark.skipif(not device.is_simulator(), reason="the race checker runs kernels in the simulator")
def test_missing_second_barrier_loses_the_hidden_race_test():
    result = grade("ps1.q1", one_barrier_kernel, tile=TILE)
    race = next(o for o in result.outcomes if o.name == "hidden: race and barrier check")
    assert not race.passed and "both syncthreads are needed" in race.message
    assert result.points < 6


def test_writes_past_the_end_are_caught_even_where_they_do_not_fault():
    """On a GPU a store one row past the end rarely faults: the grader's guard rows catch it."""
    from course_lib.grading import TestFailure
    from course_lib.nbody.questions import GUARD_ROWS, GUARD_VALUE, _exact_rows

    n = 5
    padded = np.full((n + GUARD_ROWS, 3), GUARD_VALUE, np.float32)
    padded[:n] = 1.0
    np.testing.assert_array_equal(_exact_rows(padded, n), np.ones((n, 3)))
    padded[n + 1] = np.nan
    with pytest.raises(TestFailure, match=r"wrote past the end of acc \(row 6 of an array of 5 rows\)"):
        _exact_rows(padded, n)


@pytest.mark.skipif(not device.is_simulator(), reason="the race checker runs kernels in the simulator")
def test_rebinding_the_checker_in_the_notebook_does_not_hide_a_race(monkeypatch):
    import course_lib.sim

    class AllClear:
        ok = True

        def __str__(self):
            return "no problems"

    monkeypatch.setattr(course_lib.sim, "check", lambda *args, **kwargs: AllClear())
    result = grade("ps1.q1", one_barrier_kernel, tile=TILE)
    race = next(o for o in result.outcomes if o.name == "hidden: race and barrier check")
    assert not race.passed
