"""Initial conditions, the leapfrog integrator, the counting model."""


import pytest
from course_lib import nbody

def test_fetch_model_matches_the_lesson():
    n, p = 1024, 128
    assert nbody.global_fetches(n, "matrix") == 2 * n * n      # 2N per body
    assert nbody.global_fetches(n, "pxp", p) == (n // p) ** 2 * 2 * p   # 2P per tile
    assert nbody.global_fetches(n, "tiled", p) == n + n * n // p
    with pytest.raises(ValueError):
        nbody.global_fetches(n, "tiled")


def test_tile_report_tradeoffs():
    small = nbody.tile_report(16384, 64, sm_count=132)
    large = nbody.tile_report(16384, 1024, sm_count=132)
    assert large["fetches"] < small["fetches"]              # larger P: less traffic
    assert large["busy_sms"] < 132 <= small["blocks"]        # ...but too few blocks for the SMs
    assert large["blocks_per_sm"] == 2 and nbody.tile_report(4096, 2048, sm_count=132)["fits_block"] is False


def test_tile_report_counts_registers_and_the_shared_memory_reserved_per_block():
    # 64 registers x 1024 threads fill the 64 K register file: one resident block, not two.
    heavy = nbody.tile_report(1 << 20, 1024, sm_count=132, registers_per_thread=64)
    assert heavy["limits"]["registers"] == 1 and heavy["blocks_per_sm"] == 1 and heavy["limited_by"] == ["registers"]
    # Registers round up per warp to units of 256: 33 registers cost as much as 40.
    assert (nbody.tile_report(1 << 20, 256, sm_count=132, registers_per_thread=33)["limits"]["registers"]
            == nbody.tile_report(1 << 20, 256, sm_count=132, registers_per_thread=40)["limits"]["registers"] == 6)
    # 16 KiB of tile + 1 KiB reserved per block: two blocks need 34 KiB, more than 32 KiB.
    small_smem = nbody.tile_report(1 << 20, 1024, sm_count=132, shared_per_sm=32 * 1024)
    assert small_smem["limits"]["shared memory"] == 1 and small_smem["blocks_per_sm"] == 1
    assert nbody.tile_report(1 << 20, 1024, sm_count=132, shared_per_sm=32 * 1024,
                             reserved_shared_per_block=0)["limits"]["shared memory"] == 2
    assert "registers" not in nbody.tile_report(1 << 20, 256, sm_count=132)["limits"]
    # Threads are allocated per whole warp: 40 threads count as 64.
    assert nbody.tile_report(1 << 20, 40, sm_count=132)["limits"]["threads"] == 2048 // 64
    for bad in (0, 256, 2.5):
        with pytest.raises(ValueError, match="registers_per_thread"):
            nbody.tile_report(1024, 256, sm_count=132, registers_per_thread=bad)


def test_the_grid_limits_warps_per_sm_whatever_the_tile_at_modest_n():
    # N = 32,768 is 1,024 warps in all: about 7.8 per SM on 132 SMs for every P that keeps the SMs busy.
    for tile in (32, 64, 128):
        r = nbody.tile_report(32768, tile, sm_count=132, registers_per_thread=30)
        assert r["warps_per_sm"] == pytest.approx(1024 / 132) and r["occupancy_limited_by"] == "grid"
        assert r["occupancy"] == pytest.approx(1024 / 132 / 64)
    # P = 1024: 32 blocks on 32 SMs, each with one whole block of 32 warps; 100 SMs idle.
    wide = nbody.tile_report(32768, 1024, sm_count=132)
    assert wide["busy_sms"] == 32 and wide["warps_per_sm"] == 32 and wide["occupancy"] == 0.5
    # At N = 2^20 the grid waits for slots: residency sets the warps (2 blocks of 32 warps per SM).
    big = nbody.tile_report(1 << 20, 1024, sm_count=132)
    assert big["occupancy_limited_by"] == "residency" and big["warps_per_sm"] == 64 and big["occupancy"] == 1.0
    # A grid of exactly as many blocks as the SMs can hold is no longer limited by the grid.
    assert nbody.tile_report(132 * 32 * 64, 64, sm_count=132)["occupancy_limited_by"] == "residency"
    assert nbody.tile_report(132 * 32 * 64 - 64, 64, sm_count=132)["occupancy_limited_by"] == "grid"
    assert nbody.tile_report(0, 64, sm_count=132)["warps_per_sm"] == 0


def test_share_of_saturated_rate_counts_idle_sms_and_warps_short_of_hiding_latency():
    assert "share_of_saturated_rate" not in nbody.tile_report(16384, 128, sm_count=132)
    # 16 of 132 SMs busy, each with 32 warps (more than enough): the busy share alone.
    assert nbody.tile_report(16384, 1024, sm_count=132, warps_to_hide=10)["share_of_saturated_rate"] == \
        pytest.approx(16 / 132)
    # Every SM busy with 4 warps where 10 are needed: 40 % of the rate, 4/132 SMs short of it.
    assert nbody.tile_report(16384, 128, sm_count=132, warps_to_hide=10)["share_of_saturated_rate"] == \
        pytest.approx(128 / 132 * 0.4)
    assert nbody.tile_report(1 << 20, 256, sm_count=132, warps_to_hide=10)["share_of_saturated_rate"] == 1.0
    for bad in (0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="warps_to_hide"):
            nbody.tile_report(16384, 128, sm_count=132, warps_to_hide=bad)
