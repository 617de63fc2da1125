"""Grading: questions with visible and hidden tests, in-notebook checks, problem-set release.

In a notebook::

    from course_lib.grading import check
    check("ps1.q1", tiled_kernel, tile=TILE)
"""

from . import core
from .core import (
    Question,
    QuestionResult,
    Test,
    TestFailure,
    TestOutcome,
    as_student_kernel,
    check,
    compare_arrays,
    get_question,
    questions_of,
    run_tests,
    summary,
)

__all__ = list(core.__all__)
