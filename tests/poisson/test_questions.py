"""Problem set 4 in one process: the grader's red-black reference, and what the feedback says about typical kernels.

The instructor grader's verdict on every fixture is asserted in tests/grading/test_problem_sets.py.
"""

import sys
from pathlib import Path

import numpy as np
from numba import cuda, float32

from course_lib import poisson
from course_lib.grading import get_question, run_tests
from course_lib.poisson.questions import colour_pixels, red_black_reference
from course_lib.poisson.reference import exact_solve, prepare

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grading"))
import make_fixtures  # noqa: E402


def _kernel(fixture):
    namespace = {"cuda": cuda, "float32": float32, "np": np, "poisson": poisson}
    exec(make_fixtures.answer_cell("ps4", fixture, "ps4_q1_answer"), namespace)
    return namespace["red_black_kernel"]


def grade(answer):
    return run_tests(get_question("ps4.q1"), answer, hidden=True, seed=7)


def test_right_and_different_kernels_get_full_marks():
    for fixture in ("right", "right_but_different"):
        assert grade(_kernel(fixture)).points == 6


def test_updating_every_pixel_in_place_is_a_race_named_by_the_checker():
    result = grade(_kernel("no_colour"))
    race = next(o for o in result.outcomes if o.name.startswith("in place but race-free"))
    assert "[race]" in race.message and "Likely cause: race" in race.message and result.points == 0


def test_storing_the_other_colour_is_capped_at_half():
    result = grade(_kernel("rewrites_other_colour"))
    assert result.points == 3 and result.capped


def test_red_black_reference_converges_to_the_exact_solution_faster_than_jacobi():
    source, target, mask = poisson.synthetic_pair(10, 11, seed=1)
    prep = prepare(source, target, mask)
    _, exact = exact_solve(source, target, mask)
    interior = prep.labels == poisson.INTERIOR
    jacobi = prep.guess.copy()
    for _ in range(20):
        jacobi = poisson.reference.jacobi_step_reference(jacobi, prep)
    red_black = red_black_reference(prep.labels, prep.rhs, prep.guess, 20)
    assert np.abs(red_black - exact)[:, interior].mean() < np.abs(jacobi - exact)[:, interior].mean()


def test_colour_pixels_split_the_interior():
    labels = poisson.classify_mask(np.ones((5, 6), bool))
    assert colour_pixels(labels, 0) + colour_pixels(labels, 1) == int(np.sum(labels == poisson.INTERIOR))


def _q2_function(name):
    from course_lib.sim import profile

    namespace = {"cuda": cuda, "float32": float32, "np": np, "poisson": poisson, "profile": profile,
                 "INTERIOR": poisson.INTERIOR}
    exec(make_fixtures.answer_cell("ps4", "right", "ps4_q2_answer"), namespace)
    return namespace[name]


def test_only_a_measure_that_runs_the_kernel_it_is_given_passes():
    """measure(kernel, problem, colour) is called on the grader's own kernels and on problems drawn at grading time."""
    kernel, predict, measure = _kernel("right"), _q2_function("predicted_store_bytes"), _q2_function("measure")
    answer = {"kernel": kernel, "predicted_store_bytes": predict}
    assert run_tests(get_question("ps4.q2"), {**answer, "measure": measure}, hidden=True, seed=2).points == 2
    fixed = poisson.synthetic_pair(12, 14, seed=6)
    cheats = {"pasted": lambda k, problem, colour: [1500, 1520][colour],
              "always its own kernel on the fixed problem": lambda k, problem, colour: measure(kernel, fixed, colour)}
    for what, cheat in cheats.items():
        result = run_tests(get_question("ps4.q2"), {**answer, "measure": cheat}, hidden=True, seed=2)
        said = " ".join(str(result).split())
        assert result.points == 1 and "but the course's profiler measures" in said, (what, said)
