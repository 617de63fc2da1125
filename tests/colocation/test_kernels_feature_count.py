"""The per-block shared-memory feature count (:func:`course_lib.colocation.kernels.feature_count_kernel`)
against NumPy's ``bincount`` on awkward sizes, and what the profiler sees of it."""

import numpy as np
import pytest

from course_lib.colocation.kernels import MAX_FEATURES, feature_count_kernel
from course_lib.sim import profile

BLOCK = 64


def run(features, n_features, block=BLOCK):
    features = np.asarray(features, np.int32)
    counts = np.zeros(n_features, np.int32)
    report = profile(feature_count_kernel, max(1, -(-features.size // block)), block, features, counts)
    return counts, report


@pytest.mark.parametrize("n", [0, 1, BLOCK - 1, BLOCK + 1, 97, 131])
def test_counts_match_bincount_on_awkward_sizes(n):
    features = np.random.default_rng(n).integers(0, 5, n).astype(np.int32)
    counts, _ = run(features, 7)  # features 5 and 6 have no instance
    assert np.array_equal(counts, np.bincount(features, minlength=7))


def test_awkward_block_and_every_feature():
    features = (np.arange(151) * 7 % MAX_FEATURES).astype(np.int32)
    counts, report = run(features, MAX_FEATURES, block=96)
    assert np.array_equal(counts, np.bincount(features, minlength=MAX_FEATURES))
    assert report.blocks == 2


def test_one_feature_everywhere_and_an_empty_input():
    counts, report = run(np.zeros(130, np.int32), 3)
    assert counts.tolist() == [130, 0, 0]
    assert report.total.global_atomics == 3  # one merge per block, none for the empty counts
    counts, _ = run(np.zeros(0, np.int32), 4)
    assert counts.tolist() == [0, 0, 0, 0]


def test_global_atomics_are_per_block_not_per_instance():
    features = (np.arange(293) % 7).astype(np.int32)
    _, report = run(features, 7, block=96)
    assert report.total.global_atomics == 3 * 7 + 5  # full blocks hold every feature; the last has 5 instances
    assert report.total.atomics == 293 + report.total.global_atomics  # the rest are on shared memory
    assert report.shared_bytes_per_block == 4 * MAX_FEATURES and report.barriers_per_block == 2
