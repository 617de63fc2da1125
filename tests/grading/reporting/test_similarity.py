"""Similar submissions on a synthetic class of problem set 1: planted copies (renamed, reordered, recommented,
other constants of the same kind) are found and ranked first; independently written answers, the starter code
and code pasted from the lesson are not flagged."""

import ast
import html
import inspect
import re
import sys
from pathlib import Path

import nbformat
import pytest

from course_lib.cli import main as course_main
from course_lib.grading.reporting import similarity

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import make_fixtures  # noqa: E402
from tests.grading.fixtures import ps1  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
Q1 = "ps1_q1_answer"

#: A fourth answer, written independently of the others: the tile staged as four float32 rows, a while loop
#: over tiles, one accumulator tuple, a (bodies, q, 3) array of partial sums added in a row by the first thread.
OWN = '''interaction = nbody.kernels.interaction


def make_split_kernel(tile, q):
    per = tile // q

    @cuda.jit
    def k(b, eps2, out):
        rows = cuda.shared.array((4, tile), float32)
        sums = cuda.shared.array((tile // q, q, 3), float32)
        n = b.shape[0]
        me = cuda.threadIdx.x
        slot, piece = me // q, me % q
        d = cuda.blockIdx.x * (tile // q) + slot
        a = (float32(0), float32(0), float32(0))
        p = (b[d, 0], b[d, 1], b[d, 2]) if d < n else (float32(0), float32(0), float32(0))
        start = 0
        while start < n:
            if start + me < n:
                for c in range(4):
                    rows[c, me] = b[start + me, c]
            else:
                rows[3, me] = float32(0)
            cuda.syncthreads()
            j = piece * per
            while j < (piece + 1) * per:
                f = interaction(p[0], p[1], p[2], rows[0, j], rows[1, j], rows[2, j], rows[3, j], eps2)
                a = (a[0] + f[0], a[1] + f[1], a[2] + f[2])
                j += 1
            cuda.syncthreads()
            start += tile
        sums[slot, piece, 0], sums[slot, piece, 1], sums[slot, piece, 2] = a
        cuda.syncthreads()
        if piece == 0 and d < n:
            for c in range(3):
                total = float32(0)
                for r in range(q):
                    total += sums[slot, r, c]
                out[d, c] = total
    return k
'''


class _Rename(ast.NodeTransformer):
    def __init__(self, names):
        self.names = names

    def visit_Name(self, node):
        node.id = self.names.get(node.id, node.id)
        return node

    def visit_arg(self, node):
        node.arg = self.names.get(node.arg, node.arg)
        return node

    def visit_FunctionDef(self, node):
        node.name = self.names.get(node.name, node.name)
        self.generic_visit(node)
        return node


def disguised(source: str) -> str:
    """A copier's work: every name renamed, the layout rewritten, comments added, two independent
    statements swapped, the helper moved below the function, float constants written otherwise."""
    tree = ast.parse(source)
    names = {name: f"my_{name[::-1]}_{i}" for i, name in enumerate(sorted(similarity._bound_names(tree)))}
    lines = ast.unparse(_Rename(names).visit(tree)).splitlines()
    first, rest = lines[0], lines[1:]  # the helper's line goes to the end
    lines = rest + ["", first]
    # swap the first two statements of the kernel that read cuda's indices (independent of each other)
    idx = [i for i, line in enumerate(lines) if "cuda.threadIdx.x" in line or "shape[0]" in line][:2]
    if len(idx) == 2:
        lines[idx[0]], lines[idx[1]] = lines[idx[1]], lines[idx[0]]
    text = "\n".join(f"{line}  # step {i}" if line.strip().endswith(")") else line for i, line in enumerate(lines))
    return re.sub(r"\b0\.0\b", "0.000", text)


def _notebook(answer: str | None):
    nb = nbformat.read(ROOT / "problem_sets" / "ps1_nbody.ipynb", as_version=4)
    if answer is not None:
        (cell,) = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == Q1]
        cell.source = answer
    return nb


def _class(folder: Path, answers: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for student, answer in answers.items():
        nbformat.write(_notebook(answer), folder / f"{student}.ipynb")
    return folder


RIGHT = make_fixtures.answer_cell("ps1", "right", Q1)
INDEPENDENT = {"ana": RIGHT, "ben": ps1.PS1_DIFFERENT, "cho": ps1.PS1_NAIVE, "dev": OWN}
PLANTED = {"eli": disguised(RIGHT), "fay": disguised(ps1.PS1_DIFFERENT)}


def test_names_and_constants_do_not_matter():
    a = similarity.canonical_tokens("def f(x, n):\n    return x * 2.5 + n  # twice\n")
    b = similarity.canonical_tokens("def g(yy, count):\n    '''Doc.'''\n    return (yy * 7.0) + count\n")
    c = similarity.canonical_tokens("def f(x, n):\n    return x * 2 + n\n")
    assert [t for t, _ in a] == [t for t, _ in b]
    assert [t for t, _ in a] != [t for t, _ in c]  # an int is not a float
    # names the answer does not bind (cuda's API, builtins, attributes) stay: they are the structure
    tokens = [t for t, _ in similarity.normalized_tokens("i = cuda.threadIdx.x + len(a)\n")]
    assert tokens == ["V", "=", "cuda", ".", "threadIdx", ".", "x", "+", "len", "(", "a", ")", ";"]


def test_planted_copies_found_and_independent_answers_not_flagged(tmp_path):
    folder = _class(tmp_path / "submitted", {**INDEPENDENT, **PLANTED})
    out = tmp_path / "similarity.html"
    assert course_main(["grading", "similarity", str(folder), "--out", str(out)]) == 0
    code, problem_set = similarity.load_class([folder])
    assert problem_set == "ps1" and len(code) == 6
    discount, names = similarity.discounted_fingerprints("ps1")
    assert names == ["ps1_nbody.ipynb", "01_nbody.ipynb", "course_lib/nbody/kernels.py"]
    pairs = similarity.compare(code, discount)
    flagged = {(p.a, p.b) for p in pairs if p.flagged}
    assert flagged == {("ana", "eli"), ("ben", "fay")}, [(p.a, p.b, round(p.score, 2), p.shared) for p in pairs]
    assert {(p.a, p.b) for p in pairs[:2]} == flagged
    assert all(p.score > 0.8 for p in pairs[:2]), [(p.a, p.b, p.score) for p in pairs[:2]]
    assert all(p.score < 0.4 for p in pairs[2:]), [(p.a, p.b, p.score) for p in pairs[2:]]
    # the report: self-contained, the flagged pairs side by side, students' code escaped
    text = out.read_text(encoding="utf-8")
    assert "<script" not in text and "http" not in text.replace("http-equiv", "")
    assert text.count("class='flag'>flagged") >= 4  # in the ranking and in each pair's heading
    assert html.escape("cuda.shared.array((tile, 4), float32)", quote=True) in text
    assert "my_elit_" in text  # the copier's renamed code, beside the original
    # the aligned rows: most of the copy's lines match the original's once normalised, despite the reordering
    rows = similarity.align(RIGHT, PLANTED["eli"])
    matched = sum(1 for r in rows if r[4])
    assert matched >= 0.85 * len([r for r in rows if r[0] is not None])


def test_starter_and_lesson_code_are_discounted(tmp_path):
    """Two students who answer with the lesson's printed kernel, and two who left the starter code, are
    not copies; without the discount they would be."""
    from course_lib.nbody import kernels

    lesson = "interaction = nbody.kernels.interaction\n\n\n" + inspect.getsource(kernels.nbody_tiled_kernel)
    folder = _class(tmp_path / "submitted", {"gus": lesson, "hal": lesson, "ivy": None, "jo": None,
                                             "kim": RIGHT, "lea": OWN, "max": ps1.PS1_NAIVE})
    code, _ = similarity.load_class([folder])
    discount, _ = similarity.discounted_fingerprints("ps1")
    assert not [p for p in similarity.compare(code, discount) if p.flagged]
    undiscounted = {(p.a, p.b) for p in similarity.compare(code) if p.flagged}
    assert ("gus", "hal") in undiscounted


def test_grades_csv_names_the_class(tmp_path, capsys):
    folder = _class(tmp_path / "submitted", {**INDEPENDENT, **PLANTED})
    grades = tmp_path / "grading" / "grades.csv"
    grades.parent.mkdir()
    rows = ["student,question,points,max_points,status,reason"]
    rows += [f"{s},ps1.q1,6,6,passed," for s in ("ana", "ben", "eli")]  # only these were graded
    grades.write_text("\n".join(rows) + "\n")
    out = tmp_path / "similarity.html"
    assert course_main(["grading", "similarity", str(grades), "--submissions", str(folder), "--out", str(out)]) == 0
    assert "1 flagged pair(s)" in capsys.readouterr().out
    code, problem_set = similarity.load_class([grades], submissions=folder)
    assert sorted(c.student for c in code) == ["ana", "ben", "eli"] and problem_set == "ps1"
    # the notebooks are looked for under the CSV's folder by default: none there
    assert course_main(["grading", "similarity", str(grades), "--out", str(out)]) == 2
    assert "no notebook found for 3 student(s)" in capsys.readouterr().err


@pytest.mark.parametrize("source", ["%timeit f()\ndef f(:\n", "x = 'unterminated\n", ""])
def test_unparsable_answers_do_not_stop_the_report(source):
    similarity.canonical_tokens(source)  # no exception
    assert similarity.align(source, source) is not None
