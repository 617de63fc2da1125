"""The student version is generated from the solution, and committed problem sets are not stale."""

import nbformat
import pytest

from course_lib.grading import questions_of
from course_lib.grading.reporting.release import release, release_notebook, strip_solutions, student_path
from course_lib.grading.core import _problem_set_modules

PROBLEM_SETS = sorted(m.PROBLEM_SET for m in _problem_set_modules())


def test_solution_region_becomes_not_implemented():
    source = "def f(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION\n"
    assert strip_solutions(source) == "def f(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()"


def test_stub_lines_replace_a_top_level_region():
    source = "### BEGIN SOLUTION\n# STUB: answer = None\nanswer = 42\n### END SOLUTION\nprint(answer)"
    assert strip_solutions(source) == "answer = None\n# YOUR CODE HERE\nprint(answer)"


def test_markdown_answer():
    assert strip_solutions("Why?\n### BEGIN SOLUTION\nBecause.\n### END SOLUTION", markdown=True) == \
        "Why?\nYOUR ANSWER HERE"


@pytest.mark.parametrize("source,message", [
    ("### BEGIN SOLUTION\nx = 1\n", "without ### END SOLUTION"),
    ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION\n", "nested"),
])
def test_malformed_regions_are_errors(source, message):
    with pytest.raises(ValueError, match=message):
        strip_solutions(source)


def test_hidden_tests_and_outputs_are_removed():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("check()\n### BEGIN HIDDEN TESTS\nsecret()\n### END HIDDEN TESTS\ndone()"),
    ])
    nb.cells[0].outputs = [nbformat.v4.new_output("stream", text="10/10")]
    student = release_notebook(nb)
    assert student.cells[0].source == "check()\ndone()"
    assert student.cells[0].outputs == []


@pytest.mark.parametrize("problem_set", PROBLEM_SETS)
def test_committed_problem_set_is_generated_from_its_solution(problem_set, tmp_path):
    fresh = nbformat.read(release(problem_set, tmp_path), as_version=4)
    committed = nbformat.read(student_path(problem_set), as_version=4)
    assert [(c.cell_type, c.source, c.metadata) for c in fresh.cells] == \
        [(c.cell_type, c.source, c.metadata) for c in committed.cells], (
        f"problem_sets/ is stale: run `python -m course_lib.grading release {problem_set}`")


@pytest.mark.parametrize("problem_set", PROBLEM_SETS)
def test_student_version_has_no_solution_left(problem_set):
    committed = nbformat.read(student_path(problem_set), as_version=4)
    text = "\n".join(c.source for c in committed.cells)
    assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text
    graded = [c.metadata["nbgrader"]["points"] for c in committed.cells
              if c.metadata.get("nbgrader", {}).get("grade")]
    assert sum(graded) == sum(q.points for q in questions_of(problem_set))


@pytest.mark.parametrize("problem_set", PROBLEM_SETS)
def test_score_cell_is_checked_by_its_nbval_tag_not_a_comment(problem_set):
    """The solution's score output is checked by nbval through the cell tag, which the student version keeps."""
    from course_lib.grading.reporting.release import solution_path

    for path in (solution_path(problem_set), student_path(problem_set)):
        nb = nbformat.read(path, as_version=4)
        tagged = [c for c in nb.cells if "nbval-check-output" in c.metadata.get("tags", [])]
        assert [c.metadata["nbgrader"]["grade_id"] for c in tagged] == [f"{problem_set}_score"], path.name
        assert f'summary("{problem_set}")' in tagged[0].source
        assert not any("NBVAL_" in c.source for c in nb.cells), f"{path.name}: nbval markers belong in cell tags"
    solution = nbformat.read(solution_path(problem_set), as_version=4)
    (score,) = [c for c in solution.cells if "nbval-check-output" in c.metadata.get("tags", [])]
    assert f"{problem_set} total:" in "".join(o.get("text", "") for o in score.outputs)  # what nbval compares
