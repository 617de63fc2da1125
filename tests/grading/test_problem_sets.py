"""Every problem set, run as a student would: untouched it runs to the end and scores 0;
the solution scores full marks (checked by nbval in the simulator, and here on a GPU)."""

import pytest

from course_lib import device
from course_lib.grading import questions_of
from course_lib.grading.core import _problem_set_modules
from course_lib.grading.reporting.release import solution_path, student_path

PROBLEM_SETS = sorted(m.PROBLEM_SET for m in _problem_set_modules())
#: Further text an untouched problem set must print (a friendly message instead of a traceback).
UNTOUCHED_SAYS = {}


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


# --------------------------------------------------------------------------- graded fixtures
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_fixtures  # noqa: E402

from tests.grading.fixtures import pasted  # noqa: E402

#: The grader's options for the fixtures' run (the seed is ``graded_once``'s, 11).
GRADE_OPTIONS = ("--jobs", "2", "--timeout", "120", "--quiet")


def _graded(problem_set, graded_once):
    """One run of the instructor grader on all fixtures of a problem set and on the solution pasted into
    its student version (``tests/grading/test_stubs.py``): both tests below read this run."""
    submissions = {name: make_fixtures.notebook(problem_set, fixture)
                   for name, fixture in make_fixtures.fixtures(problem_set).items()}
    assert pasted.NAME not in submissions
    submissions[pasted.NAME] = pasted.paste_solution(problem_set)
    return graded_once(problem_set, submissions, *GRADE_OPTIONS)


@pytest.mark.parametrize("problem_set", sorted(make_fixtures.FIXTURES))
def test_every_fixture_is_graded_as_declared(problem_set, graded_once):
    """Every row of the fixtures' run is asserted."""
    fixtures = make_fixtures.fixtures(problem_set)
    run = _graded(problem_set, graded_once)
    assert run.done.returncode == 0, run.done.stdout + run.done.stderr
    assert "not split" not in run.done.stdout + run.done.stderr
    rows, feedback = run.rows, run.feedback
    ids = [q.id for q in questions_of(problem_set)]
    assert len(rows) == len(ids) * (len(fixtures) + 1)  # and the pasted solution's rows
    problems = []
    for name, fixture in fixtures.items():
        got = [float(rows[name, q]["points"]) for q in ids]
        reasons = {q: rows[name, q]["reason"] for q in ids}
        if got != [float(p) for p in fixture.points]:
            problems.append(f"{name}: points {got}, declared {list(fixture.points)}; reasons {reasons}")
        for q, text in fixture.says.items():
            if text not in reasons[q]:
                problems.append(f"{name} {q}: reason {reasons[q]!r} lacks {text!r}")
        text = (feedback / f"{name}.md").read_text()
        problems += [f"{name}: feedback lacks {t!r}" for t in fixture.feedback if t not in text]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("problem_set", PROBLEM_SETS)
def test_solution_pasted_into_the_student_version_gets_full_marks(problem_set, graded_once):
    """The student version with the solution typed below each marker: full marks on every question."""
    run = _graded(problem_set, graded_once)
    assert run.done.returncode == 0, run.done.stdout + run.done.stderr
    for question in questions_of(problem_set):
        row = run.rows[pasted.NAME, question.id]
        assert float(row["points"]) == question.points, (question.id, row["reason"])


def test_the_fixtures_and_the_pasted_solution_are_graded_in_one_run_a_problem_set(graded_once):
    """The two tests above read one grading run: asking again starts none."""
    from tests.grading.conftest import RUNS_STARTED

    problem_set = PROBLEM_SETS[0]
    first = _graded(problem_set, graded_once)
    started = len(RUNS_STARTED)
    assert _graded(problem_set, graded_once) is first and len(RUNS_STARTED) == started


# --------------------------------------------------------------------------- answers not printed elsewhere
#: Most of a solution's answer lines must be the student's to write: at most this fraction may appear
#: verbatim in a lesson or in course_lib (short lines like ``cuda.syncthreads()`` are not counted).
MAX_VERBATIM = 0.2
SHORT = 24


def _answer_lines(problem_set):
    import re

    import nbformat

    from course_lib.grading.reporting.release import is_solution

    lines = []
    for cell in nbformat.read(solution_path(problem_set), as_version=4).cells:
        if cell.cell_type != "code" or not is_solution(cell):
            continue
        inside = False
        for line in cell.source.splitlines():
            if re.match(r"^\s*### BEGIN SOLUTION", line):
                inside = True
            elif re.match(r"^\s*### END SOLUTION", line):
                inside = False
            elif inside:
                code = line.split("#", 1)[0].strip()
                if len(code) >= SHORT:
                    lines.append(code)
    return lines


def _printed_elsewhere():
    import nbformat

    root = Path(__file__).resolve().parents[2]
    known = set()
    texts = [p.read_text() for p in (root / "course_lib").rglob("*.py")]
    for path in (root / "lessons").glob("*.ipynb"):
        texts += [c.source for c in nbformat.read(path, as_version=4).cells]
    for text in texts:
        known.update(line.split("#", 1)[0].strip() for line in text.splitlines())
    return known


#: Problem sets whose kernel questions still ask for a kernel the lesson prints (being reworked on the harness).
NOT_YET_REWORKED = set()


@pytest.mark.parametrize("problem_set", [
    pytest.param(ps, marks=pytest.mark.xfail(strict=True, reason="the kernel question is the lesson's kernel"))
    if ps in NOT_YET_REWORKED else ps for ps in PROBLEM_SETS])
def test_answers_are_not_printed_in_a_lesson_or_the_library(problem_set):
    lines = _answer_lines(problem_set)
    assert lines, f"{problem_set} has no answer lines"
    known = _printed_elsewhere()
    copied = [line for line in lines if line in known]
    assert len(copied) <= MAX_VERBATIM * len(lines), (
        f"{len(copied)} of {len(lines)} answer lines of {problem_set} appear verbatim in a lesson or course_lib: "
        f"{copied}")
