"""Answers that are, or merely call, the course's own code are rejected; NumPy is fine."""

import functools

import numpy as np
import pytest
from numba import cuda

from course_lib import nbody
from course_lib.grading import TestFailure, as_student_function
from course_lib.nbody.questions import two_body_tile

FETCHES = nbody.global_fetches


def own_tile(n, sm_count, max_threads_per_block, max_threads_per_sm):
    p = max_threads_per_block
    while p > 1 and (-(-n // p) < sm_count or 2 * p > max_threads_per_sm):
        p //= 2
    return p


def helper_calling_the_library(n, *args):
    return two_body_tile(n, *args)


def answer_through_a_helper(n, *args):
    return helper_calling_the_library(n, *args)


def test_own_work_and_numpy_pass():
    assert as_student_function(own_tile, "choose_tile") is own_tile
    total = lambda values: float(np.sum(values))  # noqa: E731
    assert as_student_function(total, "total") is total


@pytest.mark.parametrize("answer", [
    two_body_tile,
    functools.partial(two_body_tile, 1 << 20),
    lambda *args: two_body_tile(*args),
    answer_through_a_helper,
    lambda n: FETCHES(n, "naive"),
    lambda n: nbody.global_fetches(n, "naive"),
    lambda ns: [nbody.model.global_fetches(n, "naive") for n in ns],
])
def test_library_code_is_rejected_however_it_is_reached(answer):
    with pytest.raises(TestFailure, match="uses the course's own"):
        as_student_function(answer, "choose_tile")


def test_forbidden_library_constants():
    flops = nbody.FLOPS_PER_INTERACTION
    with pytest.raises(TestFailure, match="FLOPS_PER_INTERACTION"):
        as_student_function(lambda n: n * n * nbody.FLOPS_PER_INTERACTION, "flops",
                            forbidden_names=("FLOPS_PER_INTERACTION",))
    assert as_student_function(lambda n: n * n * 20, "flops", forbidden_names=("FLOPS_PER_INTERACTION",))
    assert flops == 20


def test_not_a_function():
    with pytest.raises(TestFailure, match="must be a function"):
        as_student_function(3, "total")


@cuda.jit
def fill(a):
    a[cuda.grid(1)] = 1.0


def test_a_students_own_kernel_launch_is_allowed():
    """Simulated launches go through course_lib.sim; the kernel is still the student's."""

    def counts_with_a_kernel(n):
        ones = np.zeros(n)
        fill[1, n](ones)
        return int(ones.sum())

    assert as_student_function(counts_with_a_kernel, "count") is counts_with_a_kernel
    assert counts_with_a_kernel(4) == 4
