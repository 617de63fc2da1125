"""What a host program costs, as the host-loop questions measure it (course_lib.grading.authoring.hostcosts)."""

import numpy as np
import pytest
from numba import cuda

from course_lib.grading.authoring.hostcosts import CountedAllocations, counted_call, judge_bounded
from course_lib.grading.model import TestFailure


@cuda.jit
def _add_one(values):
    i = cuda.grid(1)
    if i < values.shape[0]:
        values[i] += 1


def test_every_allocating_call_counts_and_a_copy_into_an_existing_array_does_not():
    with CountedAllocations() as allocations:
        a = cuda.device_array(4)
        cuda.device_array_like(a)
        b = cuda.to_device(np.zeros(4))
        cuda.to_device(np.ones(4), to=b)
    assert allocations.count == 3
    np.testing.assert_array_equal(b.copy_to_host(), np.ones(4))


def test_the_functions_of_numba_cuda_are_restored_even_after_an_exception():
    saved = cuda.device_array
    with pytest.raises(ZeroDivisionError), CountedAllocations():
        cuda.device_array(1)
        1 / 0
    assert cuda.device_array is saved


def _two_launches_one_copy_each_way(n):
    values = cuda.to_device(np.zeros(n, np.int32))
    for _ in range(2):
        _add_one[1, 32](values)
    return values.copy_to_host()


def test_counted_call_returns_the_result_and_what_the_call_cost():
    out, counts = counted_call(_two_launches_one_copy_each_way, 5)
    np.testing.assert_array_equal(out, np.full(5, 2))
    assert counts == {"launches": 2, "copies": 2, "HtoD_count": 1, "DtoH_count": 1, "HtoD_bytes": 20,
                      "DtoH_bytes": 20, "allocations": 1, "kernels": ("_add_one", "_add_one")}


def test_the_first_count_over_its_bound_fails_the_technique_with_its_measurement():
    judge_bounded((("launches", 4, 4, "two per step"),), "for 2 steps")  # at the bound: passes
    with pytest.raises(TestFailure) as failure:
        judge_bounded((("launches", 4, 4, "two per step"), ("copies", 9, 5, "none in the loop"),
                       ("allocations", 99, 1, "once")), "for 2 steps")
    assert "9 copies for 2 steps; the technique needs at most 5 (none in the loop)" in str(failure.value)
    assert failure.value.cause == "technique" and failure.value.public
    assert failure.value.measurement == {"measured": 9.0, "low": 0.0, "high": 5.0, "unit": "copies"}
