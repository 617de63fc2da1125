"""Problem set 8 in one process: the grader's references, and what the feedback says about typical kernels.

The instructor grader's verdict on every fixture is asserted in tests/grading/test_problem_sets.py; the
wrong-technique and right-but-different families are in test_questions_variants.py.
"""

import math
import sys
from pathlib import Path

import numpy as np
from numba import cuda, int32

from course_lib import colocation as co
from course_lib.colocation import questions
from course_lib.grading import get_question, run_tests
from course_lib.sim import profile

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grading"))
import make_fixtures  # noqa: E402


def _namespace(fixture, *grade_ids):
    namespace = {"cuda": cuda, "int32": int32, "np": np, "math": math, "co": co, "profile": profile}
    for grade_id in grade_ids:
        make_fixtures.run_cell(make_fixtures.answer_cell("ps8", fixture, grade_id), namespace)
    return namespace


def _kernel(fixture):
    return _namespace(fixture, "ps8_q1_answer")["feature_count_kernel"]


def _q2_answer(fixture):
    namespace = _namespace(fixture, "ps8_q1_answer", "ps8_q2_answer")
    return {k: namespace[k] for k in ("feature_count_kernel", "predicted_global_atomics", "measure")}


def grade(answer, question="ps8.q1"):
    return run_tests(get_question(question), answer, hidden=True, seed=7)


def _failed(result, start):
    return next(o for o in result.outcomes if o.name.startswith(start))


def test_right_and_different_kernels_get_full_marks():
    for fixture in ("right", "right_but_different"):
        assert grade(_kernel(fixture)).points == 6


def test_global_atomics_per_instance_are_capped_with_the_measured_feature_named():
    result = grade(_kernel("global_atomics"))
    assert result.points == 3 and result.capped
    message = " ".join(_failed(result, "warp-aggregated atomics").message.split())
    assert "global atomics: measured 320" in message


def test_every_lane_adding_its_group_is_a_wrong_value_with_its_cause():
    result = grade(_kernel("every_peer_adds"))
    assert result.points <= 1.5 and "Likely cause: value" in " ".join(o.message for o in result.outcomes)


def test_counts_privatised_per_block_are_another_technique_capped_at_half():
    """Lesson 7's technique (counts per block in shared memory) gives right counts but is not this question's."""
    result = grade(_kernel("one_thread"))
    assert result.points == 3 and result.capped


def test_signature_configurations_have_several_warps_and_an_awkward_partial_block():
    rng = np.random.default_rng(0)
    many, awkward = questions._case(320, 6, 64)(rng, {}), questions._case(293, 7, 96, used=6)(rng, {})
    assert many["block"] >= 64 and len(many["features"]) % many["block"] == 0
    assert awkward["block"] % 32 == 0 and awkward["block"] & (awkward["block"] - 1)  # 96: not a power of two
    assert len(awkward["features"]) % awkward["block"] and 6 not in awkward["features"]  # an empty feature
    # The bounds come from the model: one atomic per feature held by a warp, warps x F at most.
    assert questions._distinct_per_warp(many) <= questions._merges(many) == 10 * 6 < len(many["features"])


def test_q2_model_is_what_the_profiler_measures_for_the_solution_on_features_i_mod_f():
    kernel = _kernel("right")
    for n, block, f in ((1, 32, 5), (31, 32, 32), (64, 64, 6), (65, 64, 6), (97, 96, 7), (293, 96, 7)):
        counts = np.zeros(f, np.int32)
        report = profile(kernel, math.ceil(n / block), block, (np.arange(n) % f).astype(np.int32), counts)
        assert report.total.global_atomics == questions._expected_global_atomics(n, block, f)
        assert counts.sum() == n


def test_q2_configurations_are_drawn_at_grading_time_with_a_partial_last_block():
    drawn = [questions._measure_configs(np.random.default_rng(seed), {}) for seed in range(20)]
    assert len({tuple(c) for c in drawn}) > 10
    assert all(n % block and 2 <= f <= min(block, 24) and block % 32 == 0 for configs in drawn
               for n, block, f in configs)


def test_q2_answers_right_and_different_get_full_marks_and_an_unmeasured_number_loses_its_part():
    for fixture in ("right", "right_but_different"):
        result = grade(_q2_answer(fixture), "ps8.q2")
        assert result.points == 4, [o.message for o in result.outcomes if not o.passed]
    result = grade(_q2_answer("not_measured"), "ps8.q2")
    assert result.points == 2
    assert "the course's profiler measures" in _failed(result, "your measure()").message
    result = grade(_q2_answer("full_warps"), "ps8.q2")
    assert result.points == 2
    assert "predicted_global_atomics(1, 32, 5) = 5, expected 1" in _failed(result, "the prediction").message
