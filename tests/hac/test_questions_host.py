"""ps5.q3, the device-resident merge loop written on the host: the solution gets full marks, a loop that copies,
allocates or writes element by element is capped at half, and the given kernels and the trusted loop agree with
SciPy's average linkage."""

import numpy as np
import pytest
from numba import cuda
from scipy.cluster.hierarchy import linkage
from scipy.spatial.distance import squareform

from course_lib.grading import get_question, run_tests
from course_lib.hac.questions import PAIR_BLOCK, closest_pair_kernel, merge_pair_kernel, merges_reference, \
    similarity_case


def grade(answer):
    return run_tests(get_question("ps5.q3"), answer, hidden=True, seed=7)


def failures(result):
    return " | ".join(" ".join(o.message.split()) for o in result.outcomes if not o.passed)


def _state(similarity):
    n = similarity.shape[0]
    return (cuda.to_device(np.ascontiguousarray(similarity, np.float64)), cuda.to_device(np.ones(n, np.int32)),
            cuda.to_device(np.ones(n)), cuda.to_device(np.arange(n, dtype=np.int32)), cuda.device_array(1, np.int64),
            cuda.device_array((n - 1, 2), np.int32), cuda.device_array(n - 1))


def merge_all_resident(similarity):
    """Right: everything stays on the device; the tree comes back once."""
    n = similarity.shape[0]
    matrix, alive, sizes, node_of, best, merges, heights = _state(similarity)
    for step in range(n - 1):
        closest_pair_kernel[1, PAIR_BLOCK](matrix, alive, best)
        merge_pair_kernel[1, 32](matrix, alive, sizes, node_of, best, step, merges, heights)
    return merges.copy_to_host(), heights.copy_to_host()


def merge_all_reading_the_pair(similarity):
    """Right tree, but the winning pair copied back every merge (to print it, say)."""
    n = similarity.shape[0]
    matrix, alive, sizes, node_of, best, merges, heights = _state(similarity)
    seen = []
    for step in range(n - 1):
        closest_pair_kernel[1, PAIR_BLOCK](matrix, alive, best)
        seen.append(int(best.copy_to_host()[0]))
        merge_pair_kernel[1, 32](matrix, alive, sizes, node_of, best, step, merges, heights)
    return merges.copy_to_host(), heights.copy_to_host()


def merge_all_allocating(similarity):
    """Right tree, but a fresh device array for the pair every merge."""
    n = similarity.shape[0]
    matrix, alive, sizes, node_of, _, merges, heights = _state(similarity)
    for step in range(n - 1):
        best = cuda.device_array(1, np.int64)
        closest_pair_kernel[1, PAIR_BLOCK](matrix, alive, best)
        merge_pair_kernel[1, 32](matrix, alive, sizes, node_of, best, step, merges, heights)
    return merges.copy_to_host(), heights.copy_to_host()


def merge_all_element_by_element(similarity):
    """Right tree, but the sizes copied into the device array one element at a time (a copy each)."""
    n = similarity.shape[0]
    matrix, alive, sizes, node_of, best, merges, heights = _state(similarity)
    for k in range(n):
        sizes[k:k + 1].copy_to_device(np.ones(1))
    for step in range(n - 1):
        closest_pair_kernel[1, PAIR_BLOCK](matrix, alive, best)
        merge_pair_kernel[1, 32](matrix, alive, sizes, node_of, best, step, merges, heights)
    return merges.copy_to_host(), heights.copy_to_host()


@cuda.jit
def _set_one(values, k):
    values[k] = 1.0


def merge_all_launching_per_element(similarity):
    """Right tree, but the sizes set by a launch per element."""
    n = similarity.shape[0]
    matrix, alive, sizes, node_of, best, merges, heights = _state(similarity)
    for k in range(n):
        _set_one[1, 1](sizes, k)
    for step in range(n - 1):
        closest_pair_kernel[1, PAIR_BLOCK](matrix, alive, best)
        merge_pair_kernel[1, 32](matrix, alive, sizes, node_of, best, step, merges, heights)
    return merges.copy_to_host(), heights.copy_to_host()


def merge_all_unweighted(similarity):
    """Wrong: the sizes are never set (every cluster weighs 0), so every merged row becomes NaN."""
    n = similarity.shape[0]
    matrix, alive, _, node_of, best, merges, heights = _state(similarity)
    sizes = cuda.to_device(np.zeros(n))
    for step in range(n - 1):
        closest_pair_kernel[1, PAIR_BLOCK](matrix, alive, best)
        merge_pair_kernel[1, 32](matrix, alive, sizes, node_of, best, step, merges, heights)
    return merges.copy_to_host(), heights.copy_to_host()


def test_the_device_resident_loop_gets_full_marks():
    result = grade(merge_all_resident)
    assert result.points == 4, failures(result)


@pytest.mark.parametrize("answer, measured", [(merge_all_reading_the_pair, "copies back to the host"),
                                              (merge_all_allocating, "device allocations"),
                                              (merge_all_element_by_element, "copies between host and device"),
                                              (merge_all_launching_per_element, "launches")])
def test_a_loop_that_copies_allocates_or_works_per_element_is_capped_at_half(answer, measured):
    result = grade(answer)
    assert result.points <= 2 and measured in failures(result), failures(result)


def test_merging_with_sizes_left_at_zero_fails_every_result_test():
    result = grade(merge_all_unweighted)
    assert result.points == 0, failures(result)


@pytest.mark.parametrize("n", [2, 3, 9, 30])
def test_the_trusted_loop_gives_scipys_average_linkage(n):
    similarity = similarity_case(n, seed=n)["similarity"]
    distances = 1.0 - similarity
    np.fill_diagonal(distances, 0.0)
    scipy_heights = 1.0 - linkage(squareform(distances), "average")[:, 2]
    merges, heights = merges_reference(similarity)
    np.testing.assert_allclose(heights, scipy_heights, rtol=1e-12)
    # every node is merged once, the last merge makes the root
    assert sorted(merges.ravel().tolist()) == list(range(2 * n - 2))


def test_the_given_kernels_keep_the_smallest_pair_among_ties():
    similarity = np.full((5, 5), 0.5)
    best = cuda.to_device(np.zeros(1, np.int64))
    closest_pair_kernel[1, PAIR_BLOCK](cuda.to_device(similarity), cuda.to_device(np.array([0, 1, 1, 1, 1],
                                                                                           np.int32)), best)
    assert best.copy_to_host()[0] == 1 * 5 + 2
    assert merges_reference(similarity)[0][0].tolist() == [0, 1]
