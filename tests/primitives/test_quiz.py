"""The quiz and the predictions agree with the model and the profiler."""

from course_lib import primitives
from course_lib.primitives import model
from course_lib.primitives.profiling import measure_scan
from course_lib.primitives.quiz import PREDICTIONS


def test_quiz_has_the_lesson_questions():
    assert {"work_efficient", "padding", "segmented", "compaction_order", "privatisation"} <= set(primitives.QUIZ)


def test_predictions_are_what_is_measured():
    assert PREDICTIONS["hillis_steele_adds"].expected == measure_scan("hillis_steele", 64, block=64)["adds"]
    assert PREDICTIONS["blelloch_adds"].expected == measure_scan("blelloch", 64, block=32)["adds"]
    assert PREDICTIONS["blelloch_barriers"].expected == model.scan_barriers("blelloch", 64)
    assert PREDICTIONS["worst_conflict"].expected == model.sweep_wavefronts(64, False)["worst"]
