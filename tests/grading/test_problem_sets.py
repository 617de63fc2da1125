"""Every problem set, run as a student would: untouched it runs to the end and scores 0;
the solution scores full marks (checked by nbval in the simulator, and here on a GPU)."""

import pytest

from course_lib import device
from course_lib.grading import questions_of
from course_lib.grading.core import _problem_set_modules
from course_lib.grading.release import solution_path, student_path

PROBLEM_SETS = sorted(m.PROBLEM_SET for m in _problem_set_modules())
#: Further text an untouched problem set must print (a friendly message instead of a traceback).
UNTOUCHED_SAYS = {"ps3": "frontier_kernel is not written yet"}


def _total(problem_set):
    return f"{sum(q.points for q in questions_of(problem_set)):g}"


@pytest.mark.parametrize("problem_set", PROBLEM_SETS)
def test_untouched_problem_set_runs_to_the_end_and_scores_zero(problem_set, notebooks):
    nb, errors = notebooks.execute(student_path(problem_set))
    assert not errors, [e["ename"] + ": " + e["evalue"] for e in errors]
    assert f"{problem_set} total: 0/{_total(problem_set)}" in notebooks.score(nb)
    if problem_set in UNTOUCHED_SAYS:
        assert any(UNTOUCHED_SAYS[problem_set] in o.get("text", "")
                   for c in nb.cells if c.cell_type == "code" for o in c.outputs)


@pytest.mark.skipif(device.is_simulator(), reason="nbval runs the solution notebooks in the simulator already")
@pytest.mark.parametrize("problem_set", PROBLEM_SETS)
def test_solution_scores_full_marks_on_gpu(problem_set, notebooks):
    nb, errors = notebooks.execute(solution_path(problem_set))
    total = _total(problem_set)
    assert not errors and f"{problem_set} total: {total}/{total}" in notebooks.score(nb)
