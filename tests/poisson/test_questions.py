"""Problem set 4 in one process: the colour-separated layout, the grader's red-black reference, and what the
feedback says about typical answers.

The instructor grader's verdict on every fixture is asserted in tests/grading/test_problem_sets.py; the variant
families are in test_questions_variants.py.
"""

import sys
from pathlib import Path

import numpy as np
import pytest
from numba import cuda, float32

from course_lib import poisson
from course_lib.grading import get_question, run_tests
from course_lib.poisson.questions import (Q1, Q3, colour_cells, colour_columns, colour_pixels, merge_colours,
                                          packed_width, ran_mask, red_black_reference, sectors_per_row_of_lanes)
from course_lib.poisson.reference import exact_solve, prepare
from course_lib.sim import profile

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grading"))
import make_fixtures  # noqa: E402


def _answers(fixture):
    namespace = {"cuda": cuda, "float32": float32, "np": np, "poisson": poisson, "profile": profile}
    for grade_id in ("ps4_q1_answer", "ps4_q2_answer", "ps4_q3_answer"):
        make_fixtures.run_cell(make_fixtures.answer_cell("ps4", fixture, grade_id), namespace)
    return namespace


@pytest.fixture(scope="module")
def right():
    return _answers("right")


# ----------------------------------------------------------------------------- the layout
@pytest.mark.parametrize("shape", [(4, 6), (5, 7), (1, 1), (3, 2)])
def test_the_two_colours_hold_every_pixel_once_and_merge_back(shape):
    planes = np.arange(3 * shape[0] * shape[1], dtype=np.float32).reshape(3, *shape) + 1
    red, black = colour_cells(planes, 0), colour_cells(planes, 1)
    assert red.shape == black.shape == (3, shape[0], packed_width(shape[1]))
    values = np.concatenate([red[red > 0], black[black > 0]])
    assert sorted(values) == sorted(planes.ravel())  # padding cells are the only zeros
    np.testing.assert_array_equal(merge_colours(red, black, shape[1]), planes)


def test_a_cell_of_one_colour_is_the_pixel_of_that_colour_its_row_parity_says():
    columns = colour_columns(3, 5, 1)
    np.testing.assert_array_equal(columns, [[1, 3, 5], [0, 2, 4], [1, 3, 5]])  # (y + x) odd; 5 is a padding cell
    y = np.arange(3)[:, None]
    assert np.all((y + columns) % 2 == 1)


def test_the_neighbours_of_a_cell_are_the_cells_the_solution_reads():
    """(y +- 1, k) above and below, (y, k - 1 + o) and (y, k + o) beside, o = (y + c) % 2: from the full image."""
    height, width = 5, 8
    full = np.arange(height * width, dtype=np.float32).reshape(1, height, width)
    for colour in (0, 1):
        other = colour_cells(full, 1 - colour)[0]
        columns = colour_columns(height, width, colour)
        for y in range(1, height - 1):
            for k in range(packed_width(width)):
                x, o = columns[y, k], (y + colour) % 2
                if 0 < x < width - 1:
                    assert other[y - 1, k] == full[0, y - 1, x] and other[y + 1, k] == full[0, y + 1, x]
                    assert other[y, k - 1 + o] == full[0, y, x - 1] and other[y, k + o] == full[0, y, x + 1]


def test_the_ran_mask_covers_the_sampled_blocks_only():
    mask = ran_mask((10, 20), (8, 4), ((1, 2, 0), (2, 0, 0)))
    # Block (1, 2) is cut to rows 8-9 by the array's bottom edge, block (2, 0) to columns 16-19 by its right edge.
    assert mask.sum() == 2 * 8 + 4 * 4
    assert mask[8:10, 8:16].all() and mask[0:4, 16:20].all() and not mask[0:4, 0:16].any()


def test_sectors_per_request_bound_follows_the_rows_a_warp_covers():
    assert sectors_per_row_of_lanes((32, 8)) == sectors_per_row_of_lanes((64, 1)) == 5
    assert sectors_per_row_of_lanes((16, 16)) == 2 * 3 and sectors_per_row_of_lanes((8, 8)) == 4 * 2


def _signature_configs(question, name, seed):
    test = next(t for t in question.tests if t.name.startswith(name))
    return test.inputs(np.random.default_rng(seed), {})["configs"]


@pytest.mark.parametrize("seed", [0, 1])
def test_the_signatures_measure_one_warp_and_several_warp_blocks_and_sampled_large_grids(seed):
    for question, name in ((Q1, "the half-sweep technique"), (Q3, "the split, measured")):
        configs = _signature_configs(question, name, seed)
        drawn = [c for c in configs if c["blocks"] is not None]
        assert drawn and all(len(c["blocks"]) == 3 for c in drawn)
        assert any(c["block"][0] * c["block"][1] >= 256 for c in configs)
    blocks = [c["block"] for c in _signature_configs(Q1, "the half-sweep technique", seed)]
    assert blocks.count((32, 1)) == 2  # one warp: a fixed launch and a drawn one


# ----------------------------------------------------------------------------- the reference
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


# ----------------------------------------------------------------------------- feedback on typical answers
def test_the_solution_earns_full_marks(right):
    assert run_tests(get_question("ps4.q1"), right["half_sweep_kernel"], hidden=True, seed=7).points == 6
    assert run_tests(get_question("ps4.q3"), right["split_kernel"], hidden=True, seed=7).points == 2


def test_swapped_x_and_y_is_named_as_uncoalesced_loads():
    result = run_tests(get_question("ps4.q1"), _answers("swapped_x_and_y")["half_sweep_kernel"], hidden=False,
                       seed=7)
    said = " ".join(str(result).split())
    assert result.points == 3 and result.capped and "global load sectors per request" in said, said


def test_storing_the_other_colour_is_a_race_and_fails_the_signature():
    result = run_tests(get_question("ps4.q1"), _answers("rewrites_other_colour")["half_sweep_kernel"],
                       hidden=True, seed=7)
    checker = next(o for o in result.outcomes if o.name.startswith("one launch under the checker"))
    signature = next(o for o in result.outcomes if o.technique)
    assert "[race]" in checker.message and not signature.passed and result.points == 3


def test_only_a_measure_that_runs_the_kernel_it_is_given_passes(right):
    """measure(kernel, problem, colour) is called on the grader's own kernels and on problems drawn at grading time."""
    kernel, predict, measure = right["half_sweep_kernel"], right["predicted_store_bytes"], right["measure"]
    answer = {"kernel": kernel, "predicted_store_bytes": predict}
    assert run_tests(get_question("ps4.q2"), {**answer, "measure": measure}, hidden=True, seed=2).points == 2
    cheat = {**answer, "measure": lambda k, problem, colour: [1104, 1044][colour]}
    result = run_tests(get_question("ps4.q2"), cheat, hidden=True, seed=2)
    said = " ".join(str(result).split())
    assert result.points == 1 and "but the course's profiler measures" in said, said
