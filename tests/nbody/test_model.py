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
