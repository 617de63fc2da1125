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
from course_lib.primitives.questions import least_staged_words, staged_words

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


def test_the_least_staged_words_are_those_of_an_exhaustive_search():
    """The grader's reference against every layout of the family (gaps up to 3), on a few (C, B)."""
    def conflict_free(C, B, period, gap):
        lanes = np.arange(B).reshape(-1, 32)
        accesses = [k * B + lanes for k in range(C)] + [C * lanes + k for k in range(C)]
        return all(wavefronts(w + gap * (w // period)) == 1 for access in accesses for w in access)

    for C, B in [(3, 32), (4, 32), (6, 32)]:
        tile = C * B
        least = min(staged_words(C, B, period, gap) for gap in range(4) for period in range(1, tile + 1)
                    if conflict_free(C, B, period, gap))
        assert least_staged_words(C, B) == least, (C, B)
    assert least_staged_words(6, 32) == 193 and least_staged_words(4, 64) == 256 + 7


def test_the_staging_layouts_are_graded_in_the_grader_s_kernel():
    """The solution's layouts get full marks; the lesson's gap every 32 words, for every C, is capped."""
    layout = _answer("right", "ps9_q3_answer", "staging_layout")
    assert grade("ps9.q3", layout).points == 2
    result = grade("ps9.q3", lambda per_thread, block: (32, 1))
    said = " ".join(str(result).split())
    assert result.points <= 1 and "shared wavefronts per warp-wide access" in said, said
    assert grade("ps9.q3", lambda per_thread, block: (0, 1)).points == 0


def test_a_forged_profile_of_the_layout_does_not_pass_the_judge():
    """The worker reports what it profiled; a submission could send one wavefront per access for any layout. The
    judge decides the conflicts from the layout itself (plain data), so no padding at C = 4 stays capped."""
    from course_lib.grading import TestFailure

    test = get_question("ps9.q3").tests[0]
    data = {"configs": [[4, 64]]}
    forged = [{"layout": [1, 0], "sums_right": True, "wavefronts_per_access": 1.0}]
    try:
        test.judge(data, forged, {})
    except TestFailure as failure:
        assert "same bank" in str(failure), failure
    else:
        raise AssertionError("a forged profile of a conflicting layout passed the judge")
