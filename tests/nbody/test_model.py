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
