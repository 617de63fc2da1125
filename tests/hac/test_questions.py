"""Problem set 5 in one process: the solution gets full marks, the wrong technique at most half, typical bugs
partial with a hint naming the cause.

The instructor grader's verdict on every fixture (the same answers, in notebooks) is asserted in
tests/grading/test_problem_sets.py.
"""

import sys
from pathlib import Path

import numpy as np
from numba import cuda

from course_lib import hac
from course_lib.grading import get_question, run_tests
from course_lib.grading.authoring.harness import Answer, run_launch, unguard
from course_lib.hac.questions import (QUESTIONS, _amdahl_expected, case, compare_fusion, expected_fusion,
                                      launch_fusion)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grading"))
import make_fixtures  # noqa: E402


def _answers(source):
    """The functions an answer cell defines, run as the notebook runs them."""
    namespace = {"cuda": cuda, "np": np, "hac": hac}
    make_fixtures.run_cell("from numba import float32, int64\n" + source, namespace)
    return namespace


def _course_own():
    """Both answer cells of the ps5 fixture that hands in the course's own kernel and functions."""
    return "\n\n".join(make_fixtures.answer_cell("ps5", "course_own", g) for g in ("ps5_q1_answer", "ps5_q2_answer"))


def _solution_cell(grade_id):
    return make_fixtures.answer_cell("ps5", "right", grade_id)


def grade(question_id, answer, **options):
    return run_tests(get_question(question_id), answer, hidden=True, seed=7, options=options)


def text(result):
    """The feedback on one line (it is wrapped for the notebook)."""
    return " ".join(str(result).split())


def test_every_test_is_judged_in_the_grader():
    assert [f"{q.id} {t.name}" for q in QUESTIONS for t in q.tests
            if not (callable(t.inputs) and callable(t.produce) and callable(t.judge))] == []
    assert sum(q.points for q in QUESTIONS) == 14  # q3, the host loop, adds 4


def test_solution_gets_full_marks():
    q1 = _answers(_solution_cell("ps5_q1_answer"))
    assert grade("ps5.q1", q1["fusion_warp"]).points == 6
    different = _answers(make_fixtures.answer_cell("ps5", "right_but_different", "ps5_q1_answer"))["fusion_warp"]
    assert grade("ps5.q1", different).points == 6
    q2 = _answers(_solution_cell("ps5_q2_answer").replace("from course_lib", "#"))
    q2["record"] = __import__("course_lib.sim", fromlist=["record"]).record
    result = grade("ps5.q2", {"amdahl": q2["amdahl"], "copies": q2["copies"]})
    assert result.points == 4, str(result)


def test_atomics_give_right_sums_but_at_most_half():
    result = grade("ps5.q1", _answers(make_fixtures.answer_cell("ps5", "atomics_only", "ps5_q1_answer"))["fusion_warp"])
    assert result.points == 3, str(result)
    assert "atomic operations: measured" in text(result) and "no atomics" in text(result)


def test_the_lessons_shared_memory_scan_is_the_wrong_technique():
    result = grade("ps5.q1", _answers(make_fixtures.answer_cell("ps5", "shared_scan", "ps5_q1_answer"))["fusion_warp"])
    assert result.points == 3, str(result)
    assert "warp shuffles per warp chunk: measured 0," in text(result)
    assert "memory requests per warp chunk: measured" in text(result)
    assert "block-wide barriers per warp chunk: measured" in text(result)


def test_serial_loop_in_one_thread_is_the_wrong_technique():
    source = '''@cuda.jit
def fusion_warp(keys, weights, src, dst):
    if cuda.threadIdx.x != 0:
        return
    n = keys.shape[0]
    p = 0
    while p < n:
        head = keys[p] & 0xFFFFFFFF
        total = weights[head]
        q = p + 1
        while q < n and (keys[q] >> 32) == (keys[p] >> 32):
            e = keys[q] & 0xFFFFFFFF
            total += weights[e]
            weights[e] = -np.inf
            src[e] = -1
            dst[e] = -1
            q += 1
        weights[head] = total
        p = q
'''
    result = grade("ps5.q1", _answers(source)["fusion_warp"])
    assert result.points == 3 and "memory requests per warp chunk" in text(result), str(result)


def test_serial_loop_dressed_up_with_shuffles_is_still_the_wrong_technique():
    """Shuffles that do nothing useful do not hide one lane walking every key: the memory requests show it."""
    source = make_fixtures.answer_cell("ps5", "right", "ps5_q1_answer")
    serial = '''@cuda.jit
def fusion_warp(keys, weights, src, dst):
    lane = cuda.threadIdx.x
    n = keys.shape[0]
    for base in range(0, n, 32):
        for step in range(5):
            cuda.shfl_up_sync(0xFFFFFFFF, lane, 1 << step)
    if lane == 0:
        p = 0
        while p < n:
            head = keys[p] & 0xFFFFFFFF
            q = p + 1
            while q < n and (keys[q] >> 32) == (keys[p] >> 32):
                e = keys[q] & 0xFFFFFFFF
                weights[head] += weights[e]
                weights[e] = -np.inf
                src[e] = -1
                dst[e] = -1
                q += 1
            p = q
'''
    assert "FULL_MASK" in source
    result = grade("ps5.q1", _answers(serial)["fusion_warp"])
    assert result.points == 3 and "memory requests per warp chunk" in text(result), str(result)


def test_missing_carry_loses_points_with_the_chunk_hint():
    result = grade("ps5.q1", _answers(make_fixtures.answer_cell("ps5", "no_carry", "ps5_q1_answer"))["fusion_warp"])
    assert 0 < result.points < 3, str(result)
    assert "Likely cause: chunk" in text(result) and "lane 31 hands them on through shared memory" in text(result)


def test_a_missing_syncwarp_is_a_shared_memory_race_with_its_hint():
    """Lane 31 replacing the carry while its warp's other lanes still read it: the checker names the barrier."""
    source = make_fixtures.answer_cell("ps5", "right", "ps5_q1_answer")
    assert source.count("                cuda.syncwarp()") == 1
    result = grade("ps5.q1", _answers(source.replace("                cuda.syncwarp()", "                pass"))
                   ["fusion_warp"])
    assert result.points <= 3 and any(o.technique and not o.passed for o in result.outcomes), str(result)
    assert "Likely cause: barrier" in text(result) and "a cuda.syncwarp() between those reads" in text(result)


def test_one_warp_is_a_block_too():
    """The statement allows any number of warps, one included: the solution fuses right with [1, 32]."""
    fusion = _answers(_solution_cell("ps5_q1_answer"))["fusion_warp"]
    rng = np.random.default_rng(3)
    for block in (32, 64, 128):
        data = case(9, lambda r: r.integers(1, 80), 0, block)(rng, {})
        got = run_launch(launch_fusion(Answer(fusion, {}), data))
        want = expected_fusion(data)
        for name in want:
            compare_fusion(unguard(got[name], want[name].shape, name=name), want[name], name)


def test_forgetting_the_tombstones_is_named():
    source = make_fixtures.answer_cell("ps5", "no_carry", "ps5_q1_answer").replace("weights[entry] = -np.inf", "pass")
    result = grade("ps5.q1", _answers(source)["fusion_warp"])
    assert result.points < 3 and "tombstone" in text(result), str(result)


def test_the_course_kernel_and_functions_are_rejected():
    result = grade("ps5.q1", hac.kernels.fusion_segmented_kernel(32))
    assert result.points == 0 and "course's own" in result.error
    lib = _answers(_course_own())
    result = grade("ps5.q2", {"amdahl": lib["amdahl"], "copies": lib["copies"]})
    # Each part is refused on its own (both are the course's here): every test fails, naming its part.
    assert result.points == 0 and all("course's own" in o.message and "the part `" in o.message
                                      for o in result.outcomes if not o.hidden), str(result)
    assert all("a part of your answer this test uses is missing" in o.message for o in result.outcomes if o.hidden)


def test_amdahl_with_the_limit_formula_instead_of_the_speedup_fails():
    solution = _answers(_solution_cell("ps5_q2_answer").replace("from course_lib", "#"))

    def limit_only(stage_seconds, accelerated, speedup):
        f = sum(stage_seconds[s] for s in accelerated) / sum(stage_seconds.values())
        return 1 / (1 - f) if f < 1 else float("inf")

    result = grade("ps5.q2", {"amdahl": limit_only, "copies": solution["copies"]})
    assert result.points < 4 and "take time / speedup" in text(result), str(result)
    assert abs(_amdahl_expected({"a": 1.0, "b": 1.0}, ["a"], 2.0) - 2 / 1.5) < 1e-12
