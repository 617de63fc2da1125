"""Grading: questions with visible and hidden tests, in-notebook checks, problem-set release.

In a notebook::

    from course_lib.grading import check
    check("ps1.q1", tiled_kernel, tile=TILE)

Instructors: ``python -m course_lib.grading release PS`` writes the student version of a
problem set; ``python -m course_lib.grading grade PS SUBMISSIONS... --out grades.csv`` grades
students' notebooks, each in its own process (:mod:`course_lib.grading.grader`).
"""

from . import core
from .core import (
    Question,
    QuestionResult,
    Test,
    TestFailure,
    TestOutcome,
    as_student_function,
    as_student_kernel,
    check,
    compare_arrays,
    get_question,
    questions_of,
    run_tests,
    summary,
)

__all__ = list(core.__all__)
