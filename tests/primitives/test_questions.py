"""Problem set 9 in one process: the solution's answers get full marks, typical wrong ones are capped with
what was measured. The instructor grader's verdict on every fixture is asserted in
tests/grading/test_problem_sets.py."""

import sys
from pathlib import Path

import numpy as np
from numba import cuda, float32, int32

from course_lib import primitives
from course_lib.grading import get_question, run_tests
from course_lib.primitives.model import wavefronts
from course_lib.primitives.questions import up_sweep_wavefronts

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grading"))
import make_fixtures  # noqa: E402


def _answer(fixture, grade_id, name):
    from course_lib.sim import profile

    namespace = {"cuda": cuda, "float32": float32, "int32": int32, "np": np, "primitives": primitives,
                 "profile": profile}
    make_fixtures.run_cell(make_fixtures.answer_cell("ps9", fixture, grade_id), namespace)
    return namespace[name]


def grade(question_id, answer):
    return run_tests(get_question(question_id), answer, hidden=True, seed=7)


def test_right_answers_get_full_marks():
    assert grade("ps9.q1", _answer("right", "ps9_q1_answer", "make_coarse_scan_kernel")).points == 6
    assert grade("ps9.q2", _answer("right", "ps9_q2_answer", "make_compact_kernel")).points == 3


def test_unpadded_coarse_scan_is_capped_by_its_bank_conflicts():
    result = grade("ps9.q1", _answer("unpadded", "ps9_q1_answer", "make_coarse_scan_kernel"))
    said = " ".join(str(result).split())
    assert result.points == 3 and "shared-memory wavefronts / ideal: measured" in said


def test_serial_tile_scan_is_capped_by_its_span():
    result = grade("ps9.q1", _answer("serial", "ps9_q1_answer", "make_coarse_scan_kernel"))
    assert result.points == 3 and "thread span" in " ".join(str(result).split())


def test_block_scan_compaction_is_capped_by_its_barriers():
    result = grade("ps9.q2", _answer("block_scan", "ps9_q2_answer", "make_compact_kernel"))
    assert result.points == 1.5 and "barriers per block: measured" in " ".join(str(result).split())


def test_the_library_kernels_are_refused():
    result = grade("ps9.q1", lambda block: primitives.kernels.blelloch_scan_kernel(block))
    assert result.points == 0 and "course's own" in result.error


def test_up_sweep_wavefronts():
    assert up_sweep_wavefronts(1, 32) == 2 and up_sweep_wavefronts(16, 32) == 32
    assert up_sweep_wavefronts(1, 1) == 1 and up_sweep_wavefronts(32, 32) == wavefronts(32 * (2 * np.arange(32) + 2) - 1)


def test_only_a_measure_that_runs_the_kernel_it_is_given_passes():
    """measure(make_kernel, n, block) is called on the lesson's Blelloch kernels and on sizes drawn at grading
    time: a pasted ratio, or the student's own kernel whatever is given, fails, and caps q3."""
    make = _answer("right", "ps9_q1_answer", "make_coarse_scan_kernel")
    ways = _answer("right", "ps9_q3_answer", "worst_ways")
    measure = _answer("right", "ps9_q3_answer", "measure")
    answer = {"kernel": make, "worst_ways": ways}
    assert grade("ps9.q3", {**answer, "measure": measure}).points == 2
    cheats = {"pasted": lambda make_kernel, n, block: 1.0,
              "always its own kernel": lambda make_kernel, n, block: measure(make, n, block)}
    for what, cheat in cheats.items():
        result = grade("ps9.q3", {**answer, "measure": cheat})
        said = " ".join(str(result).split())
        assert result.points == 1 and any(o.technique and not o.passed for o in result.outcomes), (what, said)
