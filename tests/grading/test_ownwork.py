"""Answers that are, or merely call, the course's own code are rejected; NumPy is fine."""

import functools
import os
import types

import numpy as np
import pytest
from numba import cuda

from course_lib import nbody
from course_lib.grading import TestFailure, as_student_function
from course_lib.nbody.questions import split_rule

FETCHES = nbody.global_fetches


def own_tile(n, sm_count, max_threads_per_block, max_threads_per_sm):
    p = max_threads_per_block
    while p > 1 and (-(-n // p) < sm_count or 2 * p > max_threads_per_sm):
        p //= 2
    return p


def helper_calling_the_library(n, *args):
    return split_rule(n, *args)


def answer_through_a_helper(n, *args):
    return helper_calling_the_library(n, *args)


def test_own_work_and_numpy_pass():
    assert as_student_function(own_tile, "choose_split") is own_tile
    total = lambda values: float(np.sum(values))  # noqa: E731
    assert as_student_function(total, "total") is total


@pytest.mark.parametrize("answer", [
    split_rule,
    functools.partial(split_rule, 1 << 20),
    lambda *args: split_rule(*args),
    answer_through_a_helper,
    lambda n: FETCHES(n, "naive"),
    lambda n: nbody.global_fetches(n, "naive"),
    lambda ns: [nbody.model.global_fetches(n, "naive") for n in ns],
])
def test_library_code_is_rejected_however_it_is_reached(answer):
    with pytest.raises(TestFailure, match="uses the course's own"):
        as_student_function(answer, "choose_split")


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


# ----------------------------------------------------------------------------- routes around a plain name
def import_inside_a_function(n, *args):
    from course_lib.nbody.questions import split_rule as rule

    return rule(n, *args)


def import_module_inside_a_function(n, *args):
    import course_lib.nbody.questions

    return course_lib.nbody.questions.split_rule(n, *args)


def dunder_import(n, *args):
    return __import__("course_lib.nbody.questions", fromlist=["x"]).split_rule(n, *args)


def dunder_import_of_a_computed_name(n, *args):
    name = "course" + "_lib.nbody.questions"
    return __import__(name, fromlist=["x"]).split_rule(n, *args)


def importlib_route(n, *args):
    import importlib

    return importlib.import_module(".".join(["course", "lib"]).replace(".", "_") + ".nbody.questions").split_rule(
        n, *args)


def sys_modules_route(n, *args):
    import sys

    module = [m for k, m in sys.modules.items() if k.endswith("nbody.questions")][0]
    return module.split_rule(n, *args)


def attribute_walk_from_another_module(n, *args):
    module = [m for k, m in os.sys.modules.items() if k.endswith("nbody.questions")][0]
    return module.split_rule(n, *args)


def getattr_on_a_course_module(n, *args):
    return getattr(getattr(nbody, "ques" + "tions"), "split_rule")(n, *args)


def globals_route(n, *args):
    return globals()["split_rule"](n, *args)


def eval_route(n, *args):
    return eval("split_" + "rule")(n, *args)


@pytest.mark.parametrize("answer", [import_inside_a_function, import_module_inside_a_function, dunder_import,
                                    dunder_import_of_a_computed_name, importlib_route, sys_modules_route,
                                    attribute_walk_from_another_module, getattr_on_a_course_module, globals_route,
                                    eval_route], ids=lambda f: f.__name__)
def test_every_route_to_the_course_code_is_found(answer):
    """Each route does reach the course's rule (it gives the right answer), and each is refused."""
    assert answer(1 << 20, 256, 132, 2048, 32) == split_rule(1 << 20, 256, 132, 2048, 32)
    with pytest.raises(TestFailure, match="uses the course's own"):
        as_student_function(answer, "choose_split")


def test_a_route_hidden_in_a_helper_or_a_lambda_is_found_too():
    def helper(n, *args):
        import importlib

        return importlib.import_module("course_lib.nbody.questions").split_rule(n, *args)

    with pytest.raises(TestFailure, match="uses the course's own"):
        as_student_function(lambda *a: helper(*a), "choose_split")


def test_a_helper_made_by_exec_with_globals_of_its_own_is_read_too():
    """``exec`` into a fresh dict gives a function whose globals are not the notebook's: it is read in its
    own namespace, so the course's rule it calls is found."""
    namespace = {"_rule": split_rule}
    exec("def _helper(*a):\n    return _rule(*a)", namespace)
    helper = namespace["_helper"]

    def choose_split(n, tile, sm, max_threads, warps):
        return helper(n, tile, sm, max_threads, warps)

    assert choose_split(1 << 20, 256, 132, 2048, 32) == split_rule(1 << 20, 256, 132, 2048, 32)
    with pytest.raises(TestFailure, match="uses the course's own"):
        as_student_function(choose_split, "choose_split")
    made = types.FunctionType(helper.__code__, {"_rule": split_rule, "__builtins__": __builtins__})
    with pytest.raises(TestFailure, match="uses the course's own"):
        as_student_function(made, "choose_split")


def test_imports_of_other_packages_inside_a_function_are_fine():
    def own(values):
        import math

        from numpy import asarray

        return math.fsum(asarray(values).tolist())

    assert as_student_function(own, "total") is own


def _measures_with_the_profiler(A):
    from course_lib.sim import profile

    return profile


def _reads_the_graders_figure(A):
    from course_lib.spmv.questions import measured_ratio

    return measured_ratio(A)


def _imports_the_grading_package(A):
    import course_lib.grading.authoring.measuring as measuring

    return measuring


def _imports_a_model(A):
    from course_lib.ica.model import occupancy

    return occupancy


@pytest.mark.parametrize("answer, found", [
    (_measures_with_the_profiler, []),
    (_reads_the_graders_figure, ["course_lib.spmv.questions"]),
    (_imports_the_grading_package, ["course_lib.grading.authoring.measuring"]),
    (_imports_a_model, ["course_lib.ica.model"]),
])
def test_a_measurement_may_use_the_tools_but_not_a_model_or_the_graders_own_figure(answer, found):
    from course_lib.grading.authoring.ownwork import model_uses

    assert model_uses(answer) == found
