"""No answer of a problem set is a renamed copy of code the course prints.

Exact-line matching (``test_problem_sets.py``) is defeated by renaming a variable. Here every statement is
compared by its *shape*: its syntax tree with the names the author chose erased (variables, arguments,
functions) and each constant replaced by its kind (``int``, ``float``, ``str``...); attribute names (``cuda.grid``,
``np.maximum``) stay, since they name the library's operations. A compound statement (``if``, ``for``, ``def``...)
is one statement by its header; its body's statements count on their own.

For each question of each problem set, the answer is the sequence of non-trivial statements of the solution
regions (``### BEGIN SOLUTION`` ... ``### END SOLUTION``) of its answer cells, in source order. Its longest
common subsequence with the statement sequence of any one function of ``course_lib`` (the grading modules and
every unit's ``questions.py`` included: a student can read them) or any one code cell of a lesson must cover at
most :data:`MAX_ALIGNED` of it.
"""

from __future__ import annotations

import ast
import copy
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

import nbformat
import pytest

from course_lib.grading.core import _problem_set_modules
from course_lib.grading.reporting.release import is_solution, solution_path

ROOT = Path(__file__).resolve().parents[2]
#: The largest share of a question's answer statements that may align with one function or cell.
MAX_ALIGNED = 0.40
#: ...and at least this many statements: two generic one-liners in common (``x = a // b``, ``if x == 0:``) are
#: chance in an answer of four statements, not a copy.
MIN_ALIGNED = 3
#: Statements with fewer syntax nodes than this (``s = 0``, ``return total``) are trivial and not counted.
MIN_NODES = 5
#: Statements that carry no technique of their own.
TRIVIAL = (ast.Pass, ast.Break, ast.Continue, ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal)
#: The fields of a compound statement holding its body (left out of its header's shape).
BODIES = ("body", "orelse", "finalbody", "handlers", "cases")
PROBLEM_SETS = sorted(m.PROBLEM_SET for m in _problem_set_modules())


class _EraseNames(ast.NodeTransformer):
    """Names the author chose become ``_``; constants become their kind."""

    def visit_Name(self, node):
        return ast.copy_location(ast.Name(id="_", ctx=ast.Load()), node)

    def visit_arg(self, node):
        return ast.copy_location(ast.arg(arg="_"), node)

    def visit_keyword(self, node):
        self.generic_visit(node)
        return node  # a keyword's name is the callee's API (blockdim=..., axis=...), kept

    def visit_Constant(self, node):
        value = node.value
        kind = value if value is None or isinstance(value, bool) else type(value).__name__
        return ast.copy_location(ast.Constant(value=str(kind)), node)

    def _erase_def(self, node):
        node.name = "_"
        self.generic_visit(node)
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _erase_def


def _node_count(node) -> int:
    return sum(1 for n in ast.walk(node) if not isinstance(n, ast.expr_context))


def statement_shape(statement: ast.stmt) -> str | None:
    """The shape of one statement (its header for a compound one), or None if it is trivial.

    Parameters
    ----------
    statement : ast.stmt
        A statement of a parsed source.

    Returns
    -------
    str or None
        ``ast.dump`` of the statement with names erased, constants by kind and bodies left out.
    """
    if isinstance(statement, TRIVIAL):
        return None
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
        return None  # a docstring
    node = _copy_header(statement)
    if _node_count(node) < MIN_NODES and not any(getattr(statement, f, None) for f in BODIES):
        return None
    return ast.dump(_EraseNames().visit(node), annotate_fields=False, include_attributes=False)


def _copy_header(statement):
    """A copy of the statement without its bodies."""
    node = copy.deepcopy(statement)
    for field in BODIES:
        if hasattr(node, field):
            setattr(node, field, [])
    return node


def statement_shapes(tree: ast.AST, lines: set[int] | None = None) -> list[str]:
    """The shapes of the non-trivial statements under ``tree``, in source order.

    Parameters
    ----------
    tree : ast.AST
        A module, function or any node holding statements.
    lines : set of int, optional
        Keep only statements starting on these lines (the solution regions of a cell).

    Returns
    -------
    list of str
        One shape per non-trivial statement (the root itself excluded when it is a function).
    """
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node is not tree and (lines is None or node.lineno in lines):
            shape = statement_shape(node)
            if shape is not None:
                found.append((node.lineno, node.col_offset, shape))
    return [shape for _, _, shape in sorted(found)]


def aligned(answer: list[str], other: list[str]) -> int:
    """Length of the longest common subsequence of two statement sequences."""
    if not answer or not other:
        return 0
    previous = [0] * (len(other) + 1)
    for a in answer:
        current = [0]
        for j, b in enumerate(other, 1):
            current.append(previous[j - 1] + 1 if a == b else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def _parse(source: str) -> ast.AST | None:
    # IPython magics and shell lines are blanked, keeping the line numbers.
    source = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


@lru_cache(maxsize=1)
def printed_code() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``(where, shapes)`` of every function of course_lib (at any depth) and every code cell of the lessons."""
    units = []
    for path in sorted((ROOT / "course_lib").rglob("*.py")):
        tree = _parse(path.read_text())
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                units.append((f"{path.relative_to(ROOT)}::{node.name} (line {node.lineno})",
                              tuple(statement_shapes(node))))
    for path in sorted((ROOT / "lessons").glob("*.ipynb")):
        for number, cell in enumerate(nbformat.read(path, as_version=4).cells):
            tree = _parse(cell.source) if cell.cell_type == "code" else None
            if tree is not None:
                units.append((f"{path.relative_to(ROOT)} cell {number}", tuple(statement_shapes(tree))))
    return tuple((where, shapes) for where, shapes in units if shapes)


def _solution_lines(source: str) -> set[int]:
    """1-based line numbers inside the solution regions of a cell."""
    lines, inside = set(), False
    for number, line in enumerate(source.splitlines(), 1):
        if re.match(r"^\s*### BEGIN SOLUTION", line):
            inside = True
        elif re.match(r"^\s*### END SOLUTION", line):
            inside = False
        elif inside:
            lines.add(number)
    return lines


def answers(problem_set: str) -> dict[str, list[str]]:
    """Question id (``ps2.q1``) -> the shapes of its answer statements, from the solution notebook."""
    found: dict[str, list[str]] = {}
    for cell in nbformat.read(solution_path(problem_set), as_version=4).cells:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
        match = re.match(r"^(ps\w*?)_(q\d+)_", grade_id)
        if cell.cell_type != "code" or not is_solution(cell) or not match:
            continue
        tree = _parse(cell.source)
        assert tree is not None, f"{grade_id} does not parse"
        found.setdefault(f"{match[1]}.{match[2]}", []).extend(statement_shapes(tree, _solution_lines(cell.source)))
    return found


def best_alignment(answer: list[str]) -> tuple[float, str]:
    """The largest share of ``answer`` aligned with one printed function or cell, and where it is."""
    wanted = Counter(answer)
    # The shared multiset is an upper bound of the alignment: the exact one is computed best bound first.
    bounds = sorted(((sum((wanted & Counter(shapes)).values()), where, shapes) for where, shapes in printed_code()),
                    key=lambda item: -item[0])
    best, best_where = 0, "nothing"
    for bound, where, shapes in bounds:
        if bound <= best:
            break
        score = aligned(answer, list(shapes))
        if score > best:
            best, best_where = score, where
    return best / max(len(answer), 1), best_where


@pytest.mark.parametrize("problem_set", PROBLEM_SETS)
def test_no_answer_is_a_renamed_copy(problem_set):
    questions = answers(problem_set)
    assert questions, f"{problem_set} has no answer cells"
    copied = []
    for question, answer in sorted(questions.items()):
        assert answer, f"{question}: no non-trivial statement in its solution regions"
        share, where = best_alignment(answer)
        if share > MAX_ALIGNED and round(share * len(answer)) >= MIN_ALIGNED:
            copied.append(f"{question}: {share:.0%} of its {len(answer)} statements align with {where}")
    assert not copied, "answers that are a renamed copy of printed code:\n" + "\n".join(copied)


# --------------------------------------------------------------------------- the measure itself
def _shapes(source):
    return statement_shapes(ast.parse(source))


def test_renaming_and_new_constants_do_not_hide_a_copy():
    printed = "def f(x, out):\n    i = cuda.grid(1)\n    if i < x.size:\n        out[i] = 2.0 * x[i] + 1\n"
    renamed = "def g(a, b):\n    k = cuda.grid(1)\n    if k < a.size:\n        b[k] = 3.5 * a[k] + 7\n"
    # The def line (its arguments), the assignment, the if header and the store.
    assert _shapes(printed) == _shapes(renamed) and len(_shapes(printed)) == 4
    assert aligned(_shapes(renamed), _shapes(printed)) == 4


def test_other_operations_and_other_kinds_differ():
    assert _shapes("y = np.maximum(a, b)") != _shapes("y = np.minimum(a, b)")
    assert _shapes("y = a + 1") != _shapes("y = a + 1.0")
    assert _shapes("y = a + 1") != _shapes("y = a - 1")


def test_trivial_statements_are_not_counted():
    assert _shapes("total = 0\nreturn_value = x\npass\nimport numpy\n'''doc'''\n") == []
    assert len(_shapes("for i in range(n):\n    pass\n")) == 1


def test_alignment_is_in_order_and_counts_each_statement_once():
    a, b, c = "a", "b", "c"
    assert aligned([a, b, c], [c, b, a]) == 1
    assert aligned([a, a, b], [a, b]) == 2
    assert aligned([], [a]) == 0


def test_an_answer_copied_from_the_library_is_caught():
    """A renamed copy of a printed function aligns fully with it (so the test above can fail)."""
    where, shapes = max(printed_code(), key=lambda item: len(item[1]))
    share, found = best_alignment(list(shapes))
    assert share == 1.0, (where, found)


def test_solution_regions_are_read_from_the_markers():
    source = "def f(n):\n    ### BEGIN SOLUTION\n    total = n * 2 + 1\n    ### END SOLUTION\n    return n\n"
    assert _solution_lines(source) == {3}
    assert statement_shapes(ast.parse(source), _solution_lines(source)) == _shapes("t = n * 2 + 1")
