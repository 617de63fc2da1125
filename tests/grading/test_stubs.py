"""Does the student version keep the student's work?

Every ``# YOUR CODE HERE`` region of every released problem set is followed by nothing that
rebinds the names the solution defines there (read with ``ast``, not by pattern), and a student
version with the solution's lines pasted below each marker (``tests.grading.fixtures.pasted``) gets full
marks from the instructor grader (``tests/grading/test_problem_sets.py``, in the run of the problem set's
fixtures: one grading run a problem set).
"""

import nbformat
import pytest

from course_lib.grading.core import _problem_set_modules
from course_lib.grading.reporting.release import (_regions, check_no_shadowing, rebound_after, region_names,
                                                  release_notebook, strip_solutions)
from tests.grading.fixtures.pasted import MARKER, answer_cells

PROBLEM_SETS = sorted(m.PROBLEM_SET for m in _problem_set_modules())


def _marker_lines(source):
    return [number for number, line in enumerate(source.splitlines(), 1) if line.strip() == MARKER]


@pytest.mark.parametrize("problem_set", PROBLEM_SETS)
def test_nothing_after_your_code_here_rebinds_the_students_names(problem_set):
    pairs, student = answer_cells(problem_set)
    code = [c for c in student.cells if c.cell_type == "code"]
    problems, regions_seen = [], 0
    for solution_cell, student_cell in pairs:
        if student_cell.cell_type != "code":
            continue
        regions = _regions(solution_cell.source)
        markers = _marker_lines(student_cell.source)
        assert len(regions) == len(markers), f"{problem_set}: one marker per solution region"
        later = code[code.index(student_cell) + 1:]
        for (indent, _, region), line in zip(regions, markers):
            regions_seen += 1
            names = region_names(region)
            where = student_cell.metadata["nbgrader"]["grade_id"]
            problems += [f"{where} line {n} rebinds {name}"
                         for name, n in rebound_after(student_cell.source, line, names)]
            if not indent:  # a top-level answer: later cells must not rebind it either
                for cell in later:
                    problems += [f"a later cell, line {n}, rebinds {name}" for name, n in rebound_after(cell.source, 0, names)]
    assert regions_seen, f"{problem_set} has no answer region"
    assert not problems, problems


def test_a_stub_line_never_follows_the_marker():
    """The cause of a wiped answer: a stub line after the marker resets what the student writes there."""
    source = "### BEGIN SOLUTION\n# STUB: simt = {}\nsimt = {}\nsimt[1] = 0.5\n### END SOLUTION\nprint(simt)"
    stubbed = strip_solutions(source)
    assert stubbed == "simt = {}\n# YOUR CODE HERE\nprint(simt)"
    assert rebound_after(stubbed, _marker_lines(stubbed)[0], {"simt"}) == []


def _solution_cell(source, grade_id="q_answer"):
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"solution": True, "grade": False, "grade_id": grade_id}
    return cell


@pytest.mark.parametrize("cells,rebinds", [
    # ps6's former shape: the answer reset after its region, in the same cell
    (["simt = {}\n### BEGIN SOLUTION\n# STUB: simt = {}\nsimt[20] = 0.6\n### END SOLUTION\nsimt = {}\nprint(simt)"], "'simt'"),
    # ... or in a later cell
    (["### BEGIN SOLUTION\nbest = 4\n### END SOLUTION", "best = None"], "'best'"),
    # ... or by a loop variable after the region inside a function
    (["def f(n):\n    ### BEGIN SOLUTION\n    total = n\n    ### END SOLUTION\n    for total in range(2):\n"
      "        pass\n    return total"], "'total'"),
])
def test_release_refuses_a_solution_that_would_discard_the_answer(cells, rebinds):
    nb = nbformat.v4.new_notebook(cells=[_solution_cell(cells[0])] +
                                  [nbformat.v4.new_code_cell(c) for c in cells[1:]])
    with pytest.raises(ValueError, match=f"q_answer.*discard the student's answer.*{rebinds}"):
        release_notebook(nb)


def test_reading_a_name_after_the_region_is_fine():
    nb = nbformat.v4.new_notebook(cells=[_solution_cell(
        "### BEGIN SOLUTION\n# STUB: simt = {}\nsimt = {20: 0.6}\n### END SOLUTION\nsimt[32] = simt.get(20)\nprint(simt)")])
    check_no_shadowing(nb)


def test_a_region_at_the_end_of_a_function_is_checked_against_that_function_only():
    """The END marker after a function's last statement lies outside the function in the syntax tree:
    a name local to the function, bound again by later module code, discards nothing."""
    source = ("def measure(n):\n    ### BEGIN SOLUTION\n    flags = n + 1\n    return flags\n    ### END SOLUTION\n"
              "\n\nfor n in (1, 2):\n    flags = measure(n)\n")
    check_no_shadowing(nbformat.v4.new_notebook(cells=[_solution_cell(source)]))
    leaking = "### BEGIN SOLUTION\nflags = 1\n### END SOLUTION\nflags = 2\n"
    with pytest.raises(ValueError, match="rebinds 'flags'"):
        check_no_shadowing(nbformat.v4.new_notebook(cells=[_solution_cell(leaking)]))


def test_fixtures_leave_out_explorations_and_keep_answers():
    """The fixtures' notebooks drop the solution's top-level explorations (their stub is only a comment), as the
    released problem set does, and keep every answer region and its stub-initialised names."""
    from tests.grading.fixtures import without_exploration

    source = ("def f(n):\n    ### BEGIN SOLUTION\n    return n\n    ### END SOLUTION\n\n"
              "### BEGIN SOLUTION\n# STUB: best = None  # your pick\nbest = 3\n### END SOLUTION\n"
              "### BEGIN SOLUTION\n# STUB: # f(3) against f(4): the same?\nfor n in (3, 4):\n    print(f(n))\n"
              "### END SOLUTION\nprint('after')\n")
    assert without_exploration(source) == (
        "def f(n):\n    ### BEGIN SOLUTION\n    return n\n    ### END SOLUTION\n\n"
        "### BEGIN SOLUTION\n# STUB: best = None  # your pick\nbest = 3\n### END SOLUTION\n"
        "# f(3) against f(4): the same?\nprint('after')\n")
    assert without_exploration("x = 1") == "x = 1"
