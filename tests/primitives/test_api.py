"""The public entry points against the float64 references, on awkward sizes, every method."""

import numpy as np
import pytest

from course_lib import primitives as P

SIZES = [0, 1, 31, 64, 65, 200, 1000]


@pytest.mark.parametrize("method", P.SCAN_METHODS)
@pytest.mark.parametrize("n", SIZES)
def test_scan_matches_the_reference(method, n):
    x = P.random_values(n, seed=n)
    for inclusive in (False, True):
        got = P.scan(x, method=method, inclusive=inclusive, block=32)
        assert got.dtype == np.float32 and got.shape == (n,)
        np.testing.assert_allclose(got, P.scan_reference(x, inclusive), atol=1e-4)


def test_int_scans_are_exact_and_blocks_of_64_work():
    x = (np.arange(777) % 7 - 3).astype(np.int32)
    for method in ("blelloch_padded", "hillis_steele"):
        assert np.array_equal(P.scan(x, method=method, block=64), P.scan_reference(x).astype(np.int32))


def test_extreme_values_keep_float32_rounding():
    x = np.full(300, 1e30, np.float32)
    np.testing.assert_allclose(P.scan(x, block=32, inclusive=True), np.arange(1, 301) * 1e30, rtol=1e-5)


@pytest.mark.parametrize("n", SIZES)
def test_reduce(n):
    x = P.random_values(n, seed=n)
    assert P.reduce(x, block=32) == pytest.approx(P.reduce_reference(x), abs=1e-4)
    assert P.reduce(np.ones(n, np.int32), block=32) == n


@pytest.mark.parametrize("n", [0, 1, 33, 250])
def test_segmented_scan(n):
    x = P.random_values(n, seed=3)
    for heads in (P.segment_heads(n, 7, seed=n), np.zeros(n, np.int32), np.ones(n, np.int32)):
        got = P.segmented_scan(x, heads, block=32)
        np.testing.assert_allclose(got, P.segmented_scan_reference(x, heads), atol=1e-4)


def test_segmented_scan_carries_across_tiles_without_heads():
    x = np.ones(100, np.float32)
    heads = np.zeros(100, np.int32)
    heads[70] = 1
    got = P.segmented_scan(x, heads, block=32)
    assert got[69] == 70 and got[70] == 1 and got[99] == 30


@pytest.mark.parametrize("method", P.SCAN_METHODS)
@pytest.mark.parametrize("n", [0, 1, 65, 300])
def test_compact_keeps_the_order(method, n):
    x = P.random_values(n, seed=5)
    for threshold in (-2.0, 0.3, 2.0):
        assert np.array_equal(P.compact(x, threshold, method=method, block=32), x[x > threshold])


@pytest.mark.parametrize("method", P.HISTOGRAM_METHODS)
def test_histogram(method):
    for keys in (P.skewed_keys(500, 10, 0.9, seed=1), P.uniform_keys(77, 3, seed=2), np.zeros(0, np.int32)):
        got = P.histogram(keys, 10, method=method, block=32, blocks=3 if method == "private" else None)
        assert np.array_equal(got, P.histogram_reference(keys, 10))


def test_bad_keys_and_blocks_are_refused():
    with pytest.raises(ValueError, match="keys must lie"):
        P.histogram(np.array([0, 5], np.int32), 5)
    with pytest.raises(ValueError, match="block"):
        P.scan(np.ones(4, np.float32), block=96)
    with pytest.raises(ValueError, match="x"):
        P.scan(np.ones(4, np.float64))


def test_default_block():
    """256 threads per block on a GPU (the measured default), 32 in the simulator (a warp: fast to simulate)."""
    from course_lib import device

    assert P.default_block() == (32 if device.is_simulator() else 256)
    assert P.default_block() in P.kernels.BLOCKS
