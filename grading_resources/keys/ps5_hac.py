"""The grader's answer keys of ps5 (``course_lib/hac/questions.py`` judges with them): read by
``course_lib.grading.resources.answer_key`` in the grader's process, never importable from the library."""

def _amdahl_expected(stage_seconds, accelerated, speedup):
    """Expected overall speed-up, from the fraction f of the time accelerated: 1 / ((1 - f) + f / s)."""
    fraction = sum(t for s, t in stage_seconds.items() if s in accelerated) / sum(stage_seconds.values())
    return 1.0 / ((1.0 - fraction) + fraction / speedup)
