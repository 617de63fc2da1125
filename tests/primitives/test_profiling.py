"""The profiler's counts of the kernels equal the counting model (adds and barriers), and the padding
brings the shared-memory wavefronts to the ideal."""

import pytest

from course_lib.primitives import model
from course_lib.primitives.profiling import measure_scan


@pytest.mark.parametrize("method,block,n", [("reduce", 32, 70), ("hillis_steele", 64, 64), ("blelloch", 32, 100)])
def test_adds_and_barriers_equal_the_model(method, block, n):
    m = measure_scan(method, n, block=block)
    tile = 2 * block if method == "blelloch" else block
    assert m["adds"] == m["tiles"] * model.scan_adds(method, tile)
    assert m["barriers_per_block"] == model.scan_barriers(method, tile)


def test_padding_brings_the_wavefronts_to_the_ideal():
    plain, padded = measure_scan("blelloch", 128, block=64), measure_scan("blelloch_padded", 128, block=64)
    assert plain["conflict_ratio"] > 1.2 and padded["conflict_ratio"] < 1.1
    assert plain["adds"] == padded["adds"] and plain["barriers_per_block"] == padded["barriers_per_block"]


def test_unknown_method():
    with pytest.raises(ValueError, match="method"):
        measure_scan("radix", 10)
