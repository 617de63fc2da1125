"""Grading: questions with visible and hidden tests, in-notebook checks, problem-set release.

In a notebook::

    from course_lib.grading import check
    check("ps1.q1", tiled_kernel, tile=TILE)

Instructors: ``python -m course_lib.grading release PS`` writes the student version of a
problem set; ``python -m course_lib.grading grade PS SUBMISSIONS... --out grades.csv`` grades
students' notebooks, each in its own process (:mod:`course_lib.grading.running.grader`).

The package by part (each part's ``__init__`` says what it holds and may import); an arrow
points at what a part may import:

- the shared core, at the top: :mod:`.model` (questions, tests, results), :mod:`.core` (the
  question registry and the in-notebook check), :mod:`.protocol` (the plain data that crosses
  processes) and :mod:`.catalog` (where a problem set's files are); it imports no part;
- ``authoring`` -> core: how questions and their tests are written (the harness);
- ``results`` -> core: the grades CSV, the tests CSV and the feedback files;
- ``running`` -> results, core: the grader, its sandboxed workers and their guards;
- ``reporting`` -> running, results, authoring, core: gradebook, class report, Gradescope,
  release, throughput.

This module and ``__main__`` (the ``course grading`` commands) are the front doors: they may
import any part, and no part imports them. ``tests/test_import_graph.py`` checks the arrows.
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

from .authoring.ownwork import as_student_function

__all__ = [*core.__all__, "as_student_function"]
