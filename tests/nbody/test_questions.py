"""Problem set 1 in one process: the rules the grader uses, and what the feedback says about typical kernels.

The instructor grader's verdict on every fixture is asserted in tests/grading/test_problem_sets.py.
"""

import functools
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import cuda, float32

from course_lib import nbody
from course_lib.grading import get_question, run_tests
from course_lib.nbody.questions import predicted_bytes, two_body_tile

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grading"))
import make_fixtures  # noqa: E402


def _factory(fixture, grade_id="ps1_q1_answer", name="make_two_body_kernel"):
    from course_lib.sim import profile

    namespace = {"cuda": cuda, "float32": float32, "nbody": nbody, "np": np, "math": math, "profile": profile}
    if grade_id != "ps1_q1_answer":
        make_fixtures.run_cell(make_fixtures.answer_cell("ps1", fixture, "ps1_q1_answer"), namespace)
    make_fixtures.run_cell(make_fixtures.answer_cell("ps1", fixture, grade_id), namespace)
    return namespace[name]


def grade(question_id, answer, **options):
    return run_tests(get_question(question_id), answer, hidden=True, seed=7, options=options)


@functools.lru_cache(maxsize=None)
def graded_fixture(fixture):
    """ps1.q1's hidden grading of a fixture's kernel, once per test run (several tests read one result)."""
    return grade("ps1.q1", _factory(fixture))


def test_right_and_different_kernels_get_full_marks_and_check_shows_every_test_with_its_points():
    for fixture in ("right", "right_but_different"):
        result = grade("ps1.q1", _factory(fixture))
        assert result.points == 6, str(result)
    visible = run_tests(get_question("ps1.q1"), _factory("right"))
    assert visible.points == 6 and not any(o.hidden for o in visible.outcomes)
    assert "[PASS] the tiling technique, measured (profiler; tile 64 and tile 24) (technique)  [2/2]" in str(visible)


def test_naive_kernel_is_capped_at_half_and_told_what_was_measured():
    result = grade("ps1.q1", _factory("naive"))
    assert result.points == 3 and result.capped
    technique = next(o for o in result.outcomes if o.technique and not o.passed)
    # The features that missed, each with its measured value against the bound and what the technique does.
    message = " ".join(technique.message.split())  # feedback lines are wrapped
    assert "global loads (body records per interaction): measured 1.75" in message
    assert "shared bytes allocated per block: measured 0" in message
    assert "The technique: every block loads each source body once" in message
    assert "Hint: stage each source once per block" in message
    assert result.reason.startswith("the tiling technique, measured")


def test_each_bug_gets_the_hint_of_its_cause():
    sign = graded_fixture("sign")
    assert sign.points == 0
    visible = [o for o in sign.outcomes if not o.hidden and o.max_points]
    assert all("Likely cause: sign" in o.message and "Hint: r_ij = p_j - p_i" in o.message for o in visible)
    barrier = grade("ps1.q1", _factory("missing_barrier"))
    race = next(o for o in barrier.outcomes if o.name.startswith("race and barrier check"))
    assert "write-read race on shared array" in race.message and "Likely cause: barrier" in race.message
    unwritten = grade("ps1.q1", _factory("unwritten"))
    assert any("Likely cause: unwritten" in o.message for o in unwritten.outcomes)


def test_hidden_tests_show_only_their_name_and_result():
    result = graded_fixture("sign")
    hidden = [o for o in result.outcomes if o.hidden]
    assert hidden and all("N =" not in o.message and "Hint" not in o.message and "tile" not in o.message
                          for o in hidden)


def test_answers_that_are_not_the_students_own_are_refused():
    library = grade("ps1.q1", lambda tile: nbody.kernels.nbody_tiled_kernel(tile))
    assert library.points == 0 and "course's own" in library.error
    assert "must be a function returning a @cuda.jit kernel" in grade("ps1.q1", nbody.kernels.nbody_naive_kernel).error
    assert "unexpected option" in grade("ps1.q1", _factory("right"), tile=8).error
    assert "uses the course's own two_body_tile" in grade("ps1.q3", two_body_tile).error


def test_prediction_and_measurement():
    make = _factory("right")
    measure = _factory("right", "ps1_q2_answer", "measure")
    result = grade("ps1.q2", {"kernel": make, "predicted_bytes": lambda n, p: 12 * n + 16 * n * math.ceil(n / (2 * p)),
                              "measure": measure})
    assert result.points == 2, str(result)
    assert predicted_bytes(64, 4) == 8960 and measure(make, 64, 4) == pytest.approx(8960 / 64**2)
    predict = _factory("right", "ps1_q2_answer", "predicted_bytes")
    library = grade("ps1.q2", {"kernel": make, "predicted_bytes": predicted_bytes, "measure": measure})
    # Only the predicted_bytes part is refused; the kernel and the measurements are graded on their own.
    refused = [o for o in library.outcomes if not o.passed]
    assert refused and all("uses the course's own predicted_bytes" in o.message for o in refused), str(library)
    assert library.points == 2 - sum(o.max_points for o in refused)


def test_only_a_measure_that_runs_the_kernel_it_is_given_passes():
    """Numbers pasted from a scratch run, the model's own value, or always measuring one's own kernel fail:
    the grader calls measure on kernels of its own and on sizes it draws."""
    make = _factory("right")
    predict = _factory("right", "ps1_q2_answer", "predicted_bytes")
    measure = _factory("right", "ps1_q2_answer", "measure")
    cheats = {"pasted": lambda make_kernel, n, tile: 2.1875,
              "the model": lambda make_kernel, n, tile: predict(n, tile) / n**2,
              "always its own kernel": lambda make_kernel, n, tile: measure(make, n, tile),
              "the kernel given, always at N = 64": lambda make_kernel, n, tile: measure(make_kernel, 64, tile)}
    for what, cheat in cheats.items():
        result = grade("ps1.q2", {"kernel": make, "predicted_bytes": predict, "measure": cheat})
        assert result.points == 1 and any(o.technique and not o.passed for o in result.outcomes), (what, str(result))
        assert "but the course's profiler measures" in " ".join(str(result).split()), what
    decoyed = " ".join(str(grade("ps1.q2", {"kernel": make, "predicted_bytes": predict,
                                            "measure": cheats["the model"]})).split())
    assert "the grader gave measure one of its own kernels" in decoyed
    # A right measure written differently (another data set, its own launch arithmetic) passes.
    from course_lib.sim import profile

    def measure_uniform(make_kernel, n, tile):
        pos, _, mass = nbody.uniform_cube(n, seed=5)
        bodies = nbody.pack_bodies(pos, mass)
        report = profile(make_kernel(tile), math.ceil(n / (2 * tile)), tile, bodies, np.float32(0.01),
                         np.empty((n, 3), np.float32))
        return report.total.global_load_bytes / (n * n)

    assert grade("ps1.q2", {"kernel": make, "predicted_bytes": predict, "measure": measure_uniform}).points == 2


def model_inside(make_kernel, n, tile):
    """A measure that imports the course's model inside the function: a prediction, not a measurement."""
    from course_lib.nbody import model

    return 16 * model.global_fetches(n, "tiled", tile) / n**2


def test_a_measure_that_imports_the_course_model_inside_caps_the_question():
    make = _factory("right")
    predict = _factory("right", "ps1_q2_answer", "predicted_bytes")
    result = grade("ps1.q2", {"kernel": make, "predicted_bytes": predict, "measure": model_inside})
    said = " ".join(str(result).split())
    assert result.points <= 1 and "course_lib.nbody.model" in said, said


def test_tile_rule_examples():
    assert two_body_tile(1 << 20, 132, 1024, 2048) == 1024
    assert two_body_tile(65536, 108, 1024, 2048) == 256
    assert two_body_tile(8192, 68, 1024, 1536) == 32
    for n in (5000 * 64, 1 << 16, 1 << 22):
        p = two_body_tile(n, 132, 1024, 2048)
        assert p == 2 ** int(math.log2(p)) and math.ceil(n / (2 * p)) >= 132
