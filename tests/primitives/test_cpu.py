"""The NumPy peers agree with the float64 references."""

import numpy as np

from course_lib import primitives as P


def test_peers_match_the_references():
    x = P.random_values(500, seed=1)
    heads = P.segment_heads(500, 9, seed=1)
    np.testing.assert_allclose(P.scan_cpu(x), P.scan_reference(x), atol=1e-4)
    np.testing.assert_allclose(P.scan_cpu(x, inclusive=True), P.scan_reference(x, True), atol=1e-4)
    np.testing.assert_allclose(P.segmented_scan_cpu(x, heads), P.segmented_scan_reference(x, heads), atol=1e-4)
    assert abs(P.reduce_cpu(x) - P.reduce_reference(x)) < 1e-4
    assert np.array_equal(P.compact_cpu(x, x > 0), x[x > 0])
    keys = P.uniform_keys(300, 7, seed=2)
    assert np.array_equal(P.histogram_cpu(keys, 7), np.bincount(keys, minlength=7))


def test_empty_and_first_segment_without_a_head():
    assert P.scan_cpu(np.zeros(0, np.float32)).size == 0
    x = np.ones(5, np.float32)
    assert P.segmented_scan_cpu(x, np.array([0, 0, 1, 0, 0], np.int32)).tolist() == [1, 2, 1, 2, 3]
    assert P.segmented_scan_reference(x, np.array([0, 0, 1, 0, 0])).tolist() == [1, 2, 1, 2, 3]
