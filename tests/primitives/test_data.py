"""The generators are seeded and have the documented form."""

import numpy as np

from course_lib import primitives as P


def test_generators():
    assert np.array_equal(P.random_values(50, seed=3), P.random_values(50, seed=3))
    x = P.random_values(1000, seed=1)
    assert x.dtype == np.float32 and x.min() >= -1 and x.max() < 1
    heads = P.segment_heads(1000, 10, seed=1)
    assert heads.dtype == np.int32 and heads[0] == 1 and 50 < heads.sum() < 150
    keys = P.skewed_keys(1000, 8, 0.8, seed=1)
    assert keys.dtype == np.int32 and 0 <= keys.min() and keys.max() < 8 and (keys == 0).mean() > 0.75
    assert P.uniform_keys(0, 3).size == 0 and P.segment_heads(0, 2).size == 0
