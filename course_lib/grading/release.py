"""Make the student version of a problem set from its solution notebook.

The solution notebooks (``solutions/psN_<unit>.ipynb``) carry nbgrader cell metadata
(``metadata.nbgrader``: ``grade_id``, ``solution``, ``grade``, ``points``, ``locked``,
``schema_version``) so a course using nbgrader can run ``nbgrader generate_assignment``
on them. This module does the same job without nbgrader, as a pipeline of small steps:

- in a solution cell, each ``### BEGIN SOLUTION`` ... ``### END SOLUTION`` region is
  replaced by its stub: the region's ``# STUB: <code>`` lines uncommented (for
  top-level answers, so that the notebook still runs to the end) after ``# YOUR CODE HERE``,
  or else nbgrader's own stub, ``# YOUR CODE HERE`` then ``raise NotImplementedError()``
  (so ``nbgrader generate_assignment`` writes the same cells); Markdown answer cells get
  ``YOUR ANSWER HERE``;
- ``### BEGIN HIDDEN TESTS`` ... ``### END HIDDEN TESTS`` regions are removed;
- outputs and execution counts are cleared, the score cell's too (the student runs it);
  cell metadata is kept, so the score cell keeps its ``nbval-check-output`` tag (nbval's
  cell tag, not a comment in the code students read), which makes nbval check the
  solution's committed score.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

from . import catalog

__all__ = ["is_grade", "is_solution", "release", "release_notebook", "strip_solutions", "solution_path",
           "student_path"]

ROOT = Path(__file__).resolve().parents[2]
_BEGIN = re.compile(r"^(\s*)### BEGIN SOLUTION\s*$")
_END = re.compile(r"^\s*### END SOLUTION\s*$")
_STUB = re.compile(r"^\s*# STUB: ?(.*)$")
_BEGIN_HIDDEN = re.compile(r"^\s*### BEGIN HIDDEN TESTS\s*$")
_END_HIDDEN = re.compile(r"^\s*### END HIDDEN TESTS\s*$")


def is_solution(cell) -> bool:
    return bool(cell.get("metadata", {}).get("nbgrader", {}).get("solution", False))


def is_grade(cell) -> bool:
    return bool(cell.get("metadata", {}).get("nbgrader", {}).get("grade", False))


def strip_solutions(source: str, *, markdown: bool = False) -> str:
    """Replace every solution region of a cell's source by its stub.

    Raises
    ------
    ValueError
        An unterminated or nested region.
    """
    out, region, indent = [], None, ""
    for line in source.splitlines():
        if region is None:
            begin = _BEGIN.match(line)
            if begin:
                region, indent = [], begin.group(1)
            else:
                out.append(line)
            continue
        if _BEGIN.match(line):
            raise ValueError("nested ### BEGIN SOLUTION")
        if _END.match(line):
            stubs = [m.group(1) for m in map(_STUB.match, region) if m]
            if markdown:
                out.append("YOUR ANSWER HERE")
            else:
                out.append(indent + "# YOUR CODE HERE")
                out.extend(indent + s for s in stubs) if stubs else out.append(indent + "raise NotImplementedError()")
            region = None
            continue
        region.append(line)
    if region is not None:
        raise ValueError("### BEGIN SOLUTION without ### END SOLUTION")
    return "\n".join(out)


def _drop_hidden_tests(source: str) -> str:
    out, hidden = [], False
    for line in source.splitlines():
        if _BEGIN_HIDDEN.match(line):
            hidden = True
        elif _END_HIDDEN.match(line):
            hidden = False
        elif not hidden:
            out.append(line)
    if hidden:
        raise ValueError("### BEGIN HIDDEN TESTS without ### END HIDDEN TESTS")
    return "\n".join(out)


def release_notebook(nb):
    """Return the student version of a solution notebook (a new NotebookNode)."""
    student = nbformat.from_dict(nb)
    for cell in student.cells:
        source = cell.source
        if is_solution(cell):
            source = strip_solutions(source, markdown=cell.cell_type == "markdown")
        source = _drop_hidden_tests(source)
        cell.source = source
        cell.metadata.pop("execution", None)  # timestamps written by notebook runners
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    student.metadata.pop("widgets", None)
    return student


def solution_path(problem_set: str) -> Path:
    """``solutions/<problem_set>_*.ipynb`` (by id or unit name; see :mod:`course_lib.grading.catalog`)."""
    return catalog.solution_path(problem_set)


def student_path(problem_set: str) -> Path:
    """Where the released student version of a problem set lives."""
    return ROOT / "problem_sets" / solution_path(problem_set).name


def release(problem_set: str, out_dir=None) -> Path:
    """Write the student version of ``problem_set`` (``"ps1"``) and return its path.

    Written to a temporary file first and renamed, so a failure leaves the old file intact.
    """
    source = solution_path(problem_set)
    if out_dir is None and not (ROOT / "problem_sets").is_dir():
        raise ValueError("not in a checkout of the course: give the output folder (--out DIR)")
    target = Path(out_dir) / source.name if out_dir else student_path(problem_set)
    target.parent.mkdir(parents=True, exist_ok=True)
    student = release_notebook(nbformat.read(source, as_version=4))
    tmp = target.with_suffix(".ipynb.tmp")
    nbformat.write(student, tmp)
    tmp.replace(target)
    return target
