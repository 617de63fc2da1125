"""Problem set 6 in one process: right answers get full marks, typical wrong ones partial or 0 with the cause named.

q1: the solution and two other register blocks get full marks; operands from global memory, or shared tiles
without register reuse (wrong techniques), at most half, with the feature named; a missing barrier fails under
the checker. q2: the solution's decisions (parts 1 and 2) agree with the grader's keys over the drawn range (their
variants are in test_questions_q2_variants.py); the load prediction is the tiled model; a measurement must measure the
kernel it is given. The instructor grader's verdict on every fixture (the same kernels, in notebooks) is asserted in
tests/grading/test_problem_sets.py.
"""

import functools
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import cuda, float64, int32

from course_lib.grading import get_question, run_tests
from course_lib.grading.authoring.harness import Answer, profile_launch
from course_lib.ica import kernels, profiling, questions

from . import submissions as subs

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grading"))
import make_fixtures  # noqa: E402


def _kernel(fixture):
    """The q1 kernel of a PS6 fixture (tests/grading/make_fixtures.py), compiled as the notebook does."""
    namespace = {"cuda": cuda, "float64": float64, "int32": int32, "np": np}
    make_fixtures.run_cell(make_fixtures.answer_cell("ps6", fixture, "ps6_q1_answer"), namespace)
    return namespace["minibatch_gemm_kernel"]


def _no_permutation():
    """Wrong: the solution with the permutation forgotten (reads samples in order from start)."""
    namespace = {"cuda": cuda, "float64": float64, "int32": int32, "np": np}
    forgotten = make_fixtures.edit("ps6", "ps6_q1_answer", ("Xt[source_rows[row], k]", "Xt[start + sample, k]"))
    make_fixtures.run_cell(forgotten, namespace)
    return namespace["minibatch_gemm_kernel"]


def grade(question_id, answer):
    return run_tests(get_question(question_id), answer, hidden=True, seed=7)


def failures(result):
    return " | ".join(" ".join(o.message.split()) for o in result.outcomes if not o.passed)


@pytest.mark.parametrize("answer", ["right", subs.four_by_one, subs.solution])
def test_register_blocked_answers_get_full_marks(answer):
    result = grade("ps6.q1", _kernel(answer) if isinstance(answer, str) else answer)
    assert result.passed and result.points == 6, failures(result)


@pytest.mark.parametrize("kernel, feature", [
    (subs.naive, "operands staged in shared memory (global bytes loaded / the tiled model): measured"),
    (subs.registers_only, "operands staged in shared memory (global bytes loaded / the tiled model): measured"),
    (subs.shared_no_registers, "register blocking (shared-memory accesses per multiply-add): measured"),
])
def test_a_wrong_technique_earns_half_and_is_named_with_its_measure(kernel, feature):
    result = grade("ps6.q1", kernel)
    assert result.points == 3, failures(result)
    assert feature in failures(result) and "the technique gives at most" in failures(result)


def test_the_technique_bounds_follow_the_cost_model():
    """The tiled model is exact for the solution; each wrong technique misses its bound by a margin."""
    for n_channels, batch in questions.TECHNIQUE_CASES:
        assert n_channels % questions.TILE and batch % questions.TILE  # partial tiles both ways
        data = questions.gemv_case(n_channels, batch, 3, seed=1)
        loads, shared = questions.load_ratio, questions.shared_per_fma

        def measured(kernel, feature):
            report = profile_launch(questions.launch_gemm(Answer(kernel, {}), data))
            return feature(report["metrics"], data)

        assert measured(_kernel("right"), loads) == pytest.approx(1.0)  # each permutation entry once per block
        assert 1.15 < measured(subs.solution, loads) < 1.3  # an entry per staged element: within the bound
        assert measured(subs.solution, shared) < 1.2
        assert measured(subs.registers_only, loads) > 4 * 1.5
        assert measured(subs.shared_no_registers, shared) > 2 > questions.MAX_SHARED_PER_FMA


def test_a_missing_barrier_is_a_shared_memory_race():
    result = grade("ps6.q1", subs.missing_barrier)
    assert result.points <= 1 and "write-read race on shared array" in failures(result)


def test_forgotten_permutation_scores_nothing_but_hints():
    result = grade("ps6.q1", _no_permutation())
    assert result.points <= 1, failures(result)
    assert "permutation" in failures(result)


def test_the_lessons_kernel_is_not_an_answer():
    result = grade("ps6.q1", kernels.permuted_gemv_kernel)
    assert result.points < 6


@functools.lru_cache(maxsize=None)
def _q2():
    """The solution's q1 and q2 cells, run as the notebook runs them."""
    from course_lib import ica
    from course_lib.sim import profile

    namespace = {"np": np, "ica": ica, "profile": profile, "cuda": cuda, "float64": float64, "int32": int32}
    make_fixtures.run_cell(make_fixtures.answer_cell("ps6", "right", "ps6_q1_answer"), namespace)
    make_fixtures.run_cell(make_fixtures.answer_cell("ps6", "right", "ps6_q2_answer"), namespace)
    return namespace


def _answers(**replaced):
    q2 = _q2()
    keys = ("smallest_batch", "register_budget", "minibatch_gemm_kernel", "predicted_load_bytes", "measure_load_bytes")
    return {**{k: q2[k] for k in keys}, **replaced}


def test_q2_right_answers():
    result = grade("ps6.q2", _answers())
    assert result.passed and result.points == 4, str(result)


def test_q2_the_solutions_decisions_agree_with_the_keys_over_the_whole_drawn_range():
    """The solution's closed forms (parts 1 and 2) against the grader's keys (every run of B, every register count)
    on the cases of many grading seeds; and the keys against every B on small N."""
    from course_lib.ica import _questions_q2 as keys

    q2 = _q2()
    for seed in range(12):
        rng = np.random.default_rng(seed)
        for args in keys.drawn_batch_cases(rng, {}):
            assert q2["smallest_batch"](*args) == keys.smallest_batch_key(*args), args
        for args in keys.drawn_register_cases(rng, {}):
            assert q2["register_budget"](*args) == keys.register_budget_key(*args), args
    per_minibatch = {"blas": lambda b: b + 5, "custom": lambda b: 6, "fused": lambda b: 2}
    for method, per in per_minibatch.items():
        for n_samples in (1, 2, 7, 60):
            launches = [n_samples // b * per(b) for b in range(1, n_samples + 1)]
            for budget in range(0, launches[0] + 2):
                fits = [b for b, count in enumerate(launches, 1) if count <= budget]
                assert keys.smallest_batch_key(method, n_samples, budget) == (fits[0] if fits else 0)


def test_q2_the_drawn_cases_cover_the_range():
    """Every method, small and large N, budgets that no B meets and that B = 1 meets; small and large blocks, register
    caps of 0, in between and at the per-thread maximum, on several generations' limits."""
    from course_lib.ica import _questions_q2 as keys

    batches = [c for seed in range(10) for c in keys.drawn_batch_cases(np.random.default_rng(seed), {})]
    answers = [keys.smallest_batch_key(*c) for c in batches]
    assert {m for m, _, _ in batches} == set(keys.METHODS)
    assert min(n for _, n, _ in batches) < 100 and max(n for _, n, _ in batches) > keys.MAX_SAMPLES / 10
    assert 0 in answers and 1 in answers and any(1 < a for a in answers)
    registers = [c for seed in range(10) for c in keys.drawn_register_cases(np.random.default_rng(seed), {})]
    caps = [keys.register_budget_key(*c) for c in registers]
    assert min(t for t, *_ in registers) < 32 and max(t for t, *_ in registers) > 512
    assert 0 in caps and any(0 < c < limits["max_thread_registers"] for c, (*_, limits) in zip(caps, registers))
    assert any(c == limits["max_thread_registers"] for c, (*_, limits) in zip(caps, registers))
    assert len({tuple(sorted(limits.items())) for *_, limits in registers}) > 5


def test_q2_prediction_is_the_tiled_model_and_the_solution_loads_it():
    q2 = _q2()
    measure, predict, kernel = q2["measure_load_bytes"], q2["predicted_load_bytes"], q2["minibatch_gemm_kernel"]
    for n_channels in (1, 17, 40):
        batch = questions.MEASURE_BATCH
        assert measure(kernel, n_channels) == predict(n_channels, batch) == \
            questions.predicted_load_bytes(n_channels, batch)
        # A kernel gathering the permutation entry for every element it stages requests 4 B per value more.
        extra = 4 * batch * n_channels * questions.tiles(n_channels) - 4 * batch * questions.tiles(n_channels)
        assert measure(subs.solution, n_channels) == predict(n_channels, batch) + extra


def test_q2_the_decoys_load_other_amounts_than_the_model():
    measure, n_channels = _q2()["measure_load_bytes"], 23
    model = questions.predicted_load_bytes(n_channels, questions.MEASURE_BATCH)
    loads = [measure(decoy, n_channels) for decoy in questions.MEASURE_DECOYS.values()]
    assert all(abs(x - model) > 0.1 * model for x in loads) and abs(loads[0] - loads[1]) > 0.1 * model


def test_q2_channel_counts_are_drawn_at_grading_time_with_partial_tiles():
    drawn = [questions._measure_configs(np.random.default_rng(seed), {}) for seed in range(10)]
    assert len({tuple(d) for d in drawn}) > 5
    assert all(n % questions.TILE for d in drawn for (n,) in d) and questions.MEASURE_BATCH % questions.TILE


@pytest.mark.parametrize("measure", [
    lambda kernel, c: 1.1 * questions.predicted_load_bytes(c, questions.MEASURE_BATCH),  # a guess
    lambda kernel, c: questions.predicted_load_bytes(c, questions.MEASURE_BATCH),  # the model's prediction
    lambda kernel, c: {23: 39_560, 47: 117_624}.get(c, 40_000),  # numbers pasted from a run
    lambda kernel, c: _q2()["measure_load_bytes"](kernel, 23),  # always the same problem, whatever C is given
], ids=["guess", "prediction", "pasted", "always_the_same_problem"])
def test_q2_a_measurement_that_does_not_run_the_kernel_it_is_given_scores_nothing_and_caps_the_question(measure):
    result = grade("ps6.q2", _answers(measure_load_bytes=measure))
    said = failures(result)  # a function reaching the course's questions or model is refused before it runs
    assert result.points == 2 and result.capped and (
        "the course's profiler measures" in said or "not a measurement" in said), str(result)


def test_q2_a_measurement_of_another_kernel_than_the_one_given_fails():
    q2 = _q2()
    own, fixed = q2["measure_load_bytes"], q2["minibatch_gemm_kernel"]
    result = grade("ps6.q2", _answers(measure_load_bytes=lambda kernel, c: own(fixed, c)))
    assert result.points == 2 and "one of its own kernels" in failures(result), str(result)


def test_q2_a_permutation_entry_per_staged_element_is_not_the_model():
    """The model gathers each sample's permutation entry once per block: 4 B C ceil(C / 16) bytes more fail."""
    def per_element(c, b):
        return 8 * c * c * -(-b // 16) + 12 * b * c * -(-c // 16)
    result = grade("ps6.q2", _answers(predicted_load_bytes=per_element))
    assert result.points == 3.25, str(result)


def test_q2_one_tile_per_sample_is_not_the_model():
    result = grade("ps6.q2", _answers(predicted_load_bytes=lambda c, b: 8 * c * c * b + 12 * b * c))
    assert result.points == 3.25, str(result)


def test_q2_an_honest_measurement_of_a_wasteful_kernel_keeps_its_points():
    assert grade("ps6.q2", _answers(minibatch_gemm_kernel=subs.naive)).points == 4


def test_q2_wrong_form():
    result = grade("ps6.q2", _answers(smallest_batch=3))
    assert result.points == 0 or not result.passed
