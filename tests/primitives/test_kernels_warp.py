"""The warp-level kernels (shuffles and votes) against the references, on awkward sizes, and their counts."""

import numpy as np
import pytest

from course_lib import primitives
from course_lib.primitives import kernels as warp
from course_lib.primitives.profiling import measure_scan

SIZES = [0, 1, 31, 32, 33, 63, 65, 127, 131]


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_warp_reduce_sums_any_n_with_any_grid(dtype):
    rng = np.random.default_rng(1)
    for n, blocks in [(0, 1), (1, 1), (33, 1), (131, 2), (131, 5), (300, 3)]:
        x = (rng.integers(-9, 10, n)).astype(dtype)
        partial = np.zeros(blocks, dtype)
        warp.warp_reduce_kernel(64, dtype)[blocks, 64](x, partial)
        assert partial.sum() == x.astype(np.int64).sum(), (n, blocks)  # small integers: exact in float32 too


@pytest.mark.parametrize("n", SIZES)
def test_warp_scan_of_each_tile_is_inclusive(n):
    x = (np.arange(n) % 5 - 2).astype(np.int32)
    tiles = max(1, -(-n // 64))
    out, sums = np.zeros(n, np.int32), np.zeros(tiles, np.int32)
    warp.warp_scan_kernel(64, "int32")[tiles, 64](x, out, sums)
    for b in range(tiles):
        tile = x[64 * b:64 * (b + 1)]
        assert np.array_equal(out[64 * b:64 * b + tile.size], np.cumsum(tile)), (n, b)
        assert sums[b] == tile.sum()


@pytest.mark.parametrize("n", [1, 31, 33, 100])
def test_warp_vote_count_counts_the_partial_warp_too(n):
    x = np.random.default_rng(n).random(n).astype(np.float32)
    count = np.zeros(1, np.int32)
    warp.warp_vote_count_kernel[max(1, -(-n // 64)), 64](x, np.float32(0.5), count)
    assert count[0] == np.count_nonzero(x > 0.5)


@pytest.mark.parametrize("n", [0, 1, 63, 65, 331])
def test_public_warp_methods_match_the_references(n):
    x = primitives.random_values(n, seed=4) if n else np.zeros(0, np.float32)
    assert np.allclose(primitives.scan(x, method="warp", block=64), primitives.scan_reference(x), atol=1e-3)
    assert np.allclose(primitives.scan(x, method="warp", inclusive=True, block=32),
                       primitives.scan_reference(x, inclusive=True), atol=1e-3)
    assert np.isclose(primitives.reduce(x, method="warp", block=64), primitives.reduce_reference(x), atol=1e-3)


def test_warp_reduce_is_two_launches_whatever_n():
    from course_lib.sim import record

    for n in (40, 300):
        with record() as log:
            assert primitives.reduce(np.ones(n, np.float32), method="warp", block=32) == n
        assert len(log.launches) == 2, n


def test_the_hybrid_scan_passes_two_barriers_and_the_warp_reduce_one():
    """Whatever the block: the shuffles replace the shared-memory tree's log2(B) barrier-separated levels."""
    for block in (32, 128):
        assert measure_scan("warp_scan", 2 * block, block=block)["barriers_per_block"] == 2
        assert measure_scan("warp_reduce", 2 * block, block=block)["barriers_per_block"] == 1
    assert measure_scan("reduce", 256, block=128)["barriers_per_block"] == 7


def test_the_segmented_scan_carries_on_the_device():
    """Tiles' carries by their own segmented scan on the device (recursively): one copy in per input, one out."""
    from course_lib.sim import record

    for n, block in [(33, 32), (100, 32), (1100, 32)]:  # 1100 values: 35 tiles, whose tails need a second level
        x = primitives.random_values(n, seed=n)
        heads = primitives.segment_heads(n, 7.0, seed=n)
        heads[[n // 2, n - 1]] = [0, 0]  # a segment crossing tiles
        with record() as log:
            out = primitives.segmented_scan(x, heads, block=block)
        assert np.allclose(out, primitives.segmented_scan_reference(x, heads), atol=1e-4), n
        s = log.summary()
        assert (s["HtoD_count"], s["DtoH_count"]) == (2, 1), (n, s)
