"""Make the student version of a problem set from its solution notebook.

The solution notebooks (``solutions/psN_<unit>.ipynb``) carry nbgrader cell metadata
(``metadata.nbgrader``: ``grade_id``, ``solution``, ``grade``, ``points``, ``locked``,
``schema_version``) so a course using nbgrader can run ``nbgrader generate_assignment``
on them. This module does the same job without nbgrader, as a pipeline of small steps:

- in a solution cell, each ``### BEGIN SOLUTION`` ... ``### END SOLUTION`` region is
  replaced by its stub: the region's ``# STUB: <code>`` lines uncommented (for
  top-level answers, so that the notebook still runs to the end) *before* ``# YOUR CODE HERE``,
  so that what the student writes below the marker is never reset by a stub line,
  or else nbgrader's own stub, ``# YOUR CODE HERE`` then ``raise NotImplementedError()``
  (so ``nbgrader generate_assignment`` writes the same cells); Markdown answer cells get
  ``YOUR ANSWER HERE``;
- a solution in which code after a region rebinds a name the region defines is refused
  (:func:`check_no_shadowing`): in the student version that code would discard the student's
  answer (``simt = {}`` after the region resets the student's ``simt``);
- ``### BEGIN HIDDEN TESTS`` ... ``### END HIDDEN TESTS`` regions are removed;
- outputs and execution counts are cleared, the score cell's too (the student runs it);
  cell metadata is kept, so the score cell keeps its ``nbval-check-output`` tag (nbval's
  cell tag, not a comment in the code students read), which makes nbval check the
  solution's committed score.
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import nbformat

from .. import catalog

__all__ = ["bound_names", "check_no_shadowing", "is_grade", "is_solution", "rebound_after", "region_names", "release", "release_notebook", "strip_solutions", "solution_path",
           "student_path"]

ROOT = Path(__file__).resolve().parents[3]
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
                # Stub lines first: a line after the marker would reset whatever the student writes there.
                out.extend(indent + s for s in stubs)
                out.append(indent + "# YOUR CODE HERE")
                if not stubs:
                    out.append(indent + "raise NotImplementedError()")
            region = None
            continue
        region.append(line)
    if region is not None:
        raise ValueError("### BEGIN SOLUTION without ### END SOLUTION")
    return "\n".join(out)


def _scope_statements(body):
    """The statements of one scope: ``body`` and the bodies of its compound statements, but not
    of nested functions, classes or lambdas (whose names are their own)."""
    for node in body:
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _scope_statements(getattr(node, field, []))
        for handler in getattr(node, "handlers", []):
            yield from _scope_statements(handler.body)
        for case in getattr(node, "cases", []):
            yield from _scope_statements(case.body)


def _names_bound_by(node) -> set:
    """Names one statement binds in its own scope (assignment targets, ``for``/``with`` targets,
    ``def``/``class``/``import`` names, walrus targets; not names inside nested scopes)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    targets = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target] if not isinstance(node, ast.AnnAssign) or node.value is not None else []
    elif isinstance(node, (ast.For, ast.AsyncFor)):
        targets = [node.target]
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        targets = [item.optional_vars for item in node.items if item.optional_vars is not None]
    names = set()
    for target in targets:
        names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    # Walrus targets in this statement's own expressions (not in its nested statements' bodies).
    for field, value in ast.iter_fields(node):
        if field in ("body", "orelse", "finalbody", "handlers", "cases"):
            continue
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, ast.AST):
                names |= {n.target.id for n in ast.walk(child) if isinstance(n, ast.NamedExpr)}
    return names


def bound_names(source: str) -> set:
    """Names a piece of code binds at its own top level (a solution region, dedented).

    >>> sorted(bound_names("simt = {}\\nfor c in (1, 2):\\n    simt[c] = c\\ndef f():\\n    x = 1"))
    ['c', 'f', 'simt']
    """
    return set().union(*map(_names_bound_by, _scope_statements(ast.parse(textwrap.dedent(source)).body)))


def region_names(region: str) -> set:
    """The names a student defines in a solution region: those its code binds and those its
    ``# STUB:`` lines bind (a stub names the answer even where the solution only fills it in)."""
    stubs = "\n".join(m.group(1) for m in map(_STUB.match, textwrap.dedent(region).splitlines()) if m)
    return bound_names(region) | bound_names(stubs)


def _innermost_scope(tree, line: int):
    """The body of the innermost function containing ``line`` (1-based), or the module's."""
    functions = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and node.lineno <= line <= node.end_lineno]
    return max(functions, key=lambda node: node.lineno).body if functions else tree.body


def rebound_after(source: str, line: int, names, scope_line: int | None = None) -> list:
    """``[(name, line)]``: statements of the scope holding ``scope_line`` (default ``line``; 1-based)
    that start after ``line`` and rebind one of ``names``. An empty list means nothing after ``line``
    can discard them. (A region's end marker is a comment after a function's last statement, outside
    the function as the syntax tree sees it: pass a line inside the region as ``scope_line``.)"""
    tree = ast.parse(source)
    found = []
    for node in _scope_statements(_innermost_scope(tree, line if scope_line is None else scope_line)):
        if node.lineno > line:
            found += [(name, node.lineno) for name in sorted(_names_bound_by(node) & set(names))]
    return found


def _regions(source: str) -> list:
    """``[(indent, end_line, region_source)]`` of a cell's solution regions (end_line 1-based)."""
    regions, start, indent = [], None, ""
    lines = source.splitlines()
    for number, line in enumerate(lines, 1):
        begin = _BEGIN.match(line)
        if begin and start is None:
            start, indent = number, begin.group(1)
        elif _END.match(line) and start is not None:
            regions.append((indent, number, "\n".join(lines[start:number - 1])))
            start = None
    return regions


def check_no_shadowing(nb) -> None:
    """Refuse a solution notebook in which code after a solution region rebinds a name the region
    defines: in the student version, that code would discard the student's answer.

    A top-level region is checked against the rest of its cell and every later code cell; a region
    inside a function against the rest of that function.

    Raises
    ------
    ValueError
        Naming the cell (its nbgrader ``grade_id``), the name and where it is rebound.
    """
    cells = [c for c in nb.cells if c.cell_type == "code"]
    for index, cell in enumerate(cells):
        if not is_solution(cell):
            continue
        where = cell.metadata.get("nbgrader", {}).get("grade_id", f"code cell {index}")
        for indent, end, region in _regions(cell.source):
            names = region_names(region)
            if not names:
                continue
            begin = end - len(region.splitlines()) - 1  # the region's BEGIN marker, inside its scope
            problems = [f"line {n} of {where} rebinds {name!r}"
                        for name, n in rebound_after(cell.source, end, names, scope_line=begin)]
            if not indent:
                for later in cells[index + 1:]:
                    later_id = later.metadata.get("nbgrader", {}).get("grade_id", "a later cell")
                    problems += [f"line {n} of {later_id} rebinds {name!r}"
                                 for name, n in rebound_after(strip_solutions(later.source), 0, names)]
            if problems:
                raise ValueError(f"{where}: code after a solution region would discard the student's answer: "
                                 + "; ".join(problems) + " (initialise names in the region, with a # STUB: line)")


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
    check_no_shadowing(nb)
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
