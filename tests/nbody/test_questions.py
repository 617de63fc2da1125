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
from course_lib.nbody.questions import predicted_bytes, split_rule, split_warps

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grading"))
import make_fixtures  # noqa: E402


def _factory(fixture, grade_id="ps1_q1_answer", name="make_split_kernel"):
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
    assert ("[PASS] the split technique, measured (profiler; tile 64 with q = 4, tile 24 with q = 8) (technique)  "
            "[2/2]") in str(visible)


def test_naive_kernel_is_capped_at_half_and_told_what_was_measured():
    result = grade("ps1.q1", _factory("naive"))
    assert result.points == 3 and result.capped
    technique = next(o for o in result.outcomes if o.technique and not o.passed)
    # The features that missed, each with its measured value against the bound and what the technique does.
    message = " ".join(technique.message.split())  # feedback lines are wrapped
    assert "global loads (body records per interaction): measured 1.75" in message
    assert "block barriers (syncthreads) per block: measured 1" in message
    assert "The technique: every block loads each source body once" in message
    assert "Hint: stage each source once per block" in message
    assert result.reason.startswith("the split technique, measured")


def test_each_bug_gets_the_hint_of_its_cause():
    sign = graded_fixture("sign")
    assert sign.points == 0
    visible = [o for o in sign.outcomes if not o.hidden and o.max_points]
    assert all("Likely cause: sign" in o.message and "Hint: r_ij = p_j - p_i" in o.message for o in visible)
    barrier = grade("ps1.q1", _factory("missing_barrier"))
    race = next(o for o in barrier.outcomes if o.name.startswith("race and barrier check"))
    assert "read-write race on shared array staged" in race.message and "Likely cause: barrier" in race.message
    unwritten = grade("ps1.q1", _factory("unwritten"))
    assert any("Likely cause: unwritten" in o.message for o in unwritten.outcomes)


def test_hidden_tests_show_only_their_name_and_result():
    result = graded_fixture("sign")
    hidden = [o for o in result.outcomes if o.hidden]
    assert hidden and all("N =" not in o.message and "Hint" not in o.message and "tile" not in o.message
                          for o in hidden)


def test_answers_that_are_not_the_students_own_are_refused():
    library = grade("ps1.q1", lambda tile, q: nbody.kernels.nbody_tiled_kernel(tile))
    assert library.points == 0 and "course's own" in library.error
    assert "must be a function returning a @cuda.jit kernel" in grade("ps1.q1", nbody.kernels.nbody_naive_kernel).error
    assert "unexpected option" in grade("ps1.q1", _factory("right"), tile=8).error
    assert "uses the course's own split_rule" in grade("ps1.q3", split_rule).error


def test_prediction_and_measurement():
    make = _factory("right")
    measure = _factory("right", "ps1_q2_answer", "measure")
    result = grade("ps1.q2", {"kernel": make, "measure": measure,
                              "predicted_bytes": lambda n, p, q: 12 * n * q + 16 * n * math.ceil(n * q / p)})
    assert result.points == 2, str(result)
    # 16 blocks of 4 bodies each load the 64 sources; each body is loaded by its 4 threads
    assert predicted_bytes(64, 16, 4) == 16 * 64 * 16 + 12 * 64 * 4
    assert measure(make, 64, 16, 4) == pytest.approx(predicted_bytes(64, 16, 4) / 64**2)
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
    cheats = {"pasted": lambda make_kernel, n, tile, q: 4.75,
              "the model": lambda make_kernel, n, tile, q: predict(n, tile, q) / n**2,
              "always its own kernel": lambda make_kernel, n, tile, q: measure(make, n, tile, q),
              "the kernel given, always at N = 64": lambda make_kernel, n, tile, q: measure(make_kernel, 64, tile, q)}
    for what, cheat in cheats.items():
        result = grade("ps1.q2", {"kernel": make, "predicted_bytes": predict, "measure": cheat})
        assert result.points == 1 and any(o.technique and not o.passed for o in result.outcomes), (what, str(result))
        assert "but the course's profiler measures" in " ".join(str(result).split()), what
    decoyed = " ".join(str(grade("ps1.q2", {"kernel": make, "predicted_bytes": predict,
                                            "measure": cheats["the model"]})).split())
    assert "the grader gave measure one of its own kernels" in decoyed
    # A right measure written differently (another data set, its own launch arithmetic) passes.
    from course_lib.sim import profile

    def measure_uniform(make_kernel, n, tile, q):
        pos, _, mass = nbody.uniform_cube(n, seed=5)
        bodies = nbody.pack_bodies(pos, mass)
        report = profile(make_kernel(tile, q), math.ceil(n * q / tile), tile, bodies, np.float32(0.01),
                         np.empty((n, 3), np.float32))
        return report.total.global_load_bytes / (n * n)

    assert grade("ps1.q2", {"kernel": make, "predicted_bytes": predict, "measure": measure_uniform}).points == 2


def model_inside(make_kernel, n, tile, q):
    """A measure that imports the course's model inside the function: a prediction, not a measurement."""
    from course_lib.nbody import model

    return 16 * q * model.global_fetches(n, "tiled", tile) / n**2


def test_a_measure_that_imports_the_course_model_inside_caps_the_question():
    make = _factory("right")
    predict = _factory("right", "ps1_q2_answer", "predicted_bytes")
    result = grade("ps1.q2", {"kernel": make, "predicted_bytes": predict, "measure": model_inside})
    said = " ".join(str(result).split())
    assert result.points <= 1 and "course_lib.nbody.model" in said, said


def test_split_rule_examples():
    # N = 32,768 on an H100, P = 256: one thread per body gives 8 warps per SM; q = 8 gives 64, the most it holds
    assert split_rule(32768, 256, 132, 2048, 32) == 8
    assert split_rule(1 << 20, 256, 132, 2048, 32) == 1  # a large N needs no split
    # a grid too small for every SM even at q = 32: the q reaching the most SMs and warps
    assert split_rule(500, 256, 132, 2048, 48) == 32
    # one block of 1,024 threads per SM (1,536 threads): 32 warps, reached once the grid covers the SMs
    assert split_rule(65536, 1024, 68, 1536, 32) == 2
    assert split_rule(100, 8, 16, 1024, 64) == 8  # q never exceeds the tile
    for n in (3000, 20000, 1 << 16):  # the smallest q that fills the SMs: half of it does not
        q = split_rule(n, 128, 108, 2048, 16)
        busy, warps = split_warps(n, 128, q, 108, 2048)
        assert busy == 108 and warps >= 16
        half_busy, half_warps = split_warps(n, 128, max(q // 2, 1), 108, 2048)
        assert q == 1 or half_busy < 108 or half_warps < 16
