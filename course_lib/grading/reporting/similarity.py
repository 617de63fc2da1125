"""Similar submissions: pairs of students whose answers share unusual structure, side by side.

``python -m course_lib.grading similarity GRADES.csv --out similarity.html`` (the notebooks are looked
for under ``--submissions DIR``, by default the grades CSV's folder, and named as ``grade`` names them)
or ``python -m course_lib.grading similarity SUBMISSIONS_DIR --out similarity.html`` compares every
pair of submissions of one problem set and writes a self-contained HTML report: the pairs ranked by
score, and for each flagged pair its answers aligned side by side.

How answers are compared (the approach of MOSS, Schleimer, Wilkerson and Aiken, "Winnowing", 2003,
without its sampling: kernels are short, so every k-gram is kept):

1. **Answers**: the nbgrader answer cells of each notebook (``psN_qM_answer``), one text per question.
2. **Normalised tokens** (Python's :mod:`ast` and :mod:`tokenize`): the answer written back by
   :func:`ast.unparse` (one layout, no optional parentheses), comments and docstrings dropped; every
   name the answer itself binds (its functions, parameters, variables) becomes ``V`` while the names
   it uses from elsewhere (``cuda.syncthreads``, ``range``, ``np``) stay, so renaming changes nothing;
   numbers become ``INT`` / ``FLOAT`` and strings ``STR`` (constants by kind: new tile sizes change
   nothing); indentation stays as block markers.
3. **Fingerprints**: the hashes of every run of ``k`` consecutive tokens (``k`` = 12 by default), so
   moving whole functions or statements around keeps most of them.
4. **Discounted**: fingerprints of the problem set's released notebook (the starter code every
   student has), of the unit's lesson notebook and of the unit's kernels module (the code the lesson
   prints) are removed; so are fingerprints more than half of the class shares (the common idiom
   of the technique). The rest are weighted by rarity, ``log((N + 1) / df)`` for one shared by
   ``df`` of ``N`` students.
5. **Score** of a pair: the weight of the fingerprints both share over the smaller of the two
   students' total weights (1: everything unusual in the shorter answer is in the other one). A pair
   is flagged when its score reaches ``threshold`` and it shares at least ``min_shared``
   fingerprints (a few shared lines of a short answer are not a copy).

The report aligns each flagged pair's answers with :mod:`difflib`: the top-level statements of the
second student are first put in the order of their best match in the first (so reordered functions
line up), then lines are matched on their normalised tokens; lines equal after normalisation are
highlighted. A high score is a reason to look, not a verdict: students may have worked together as
allowed, or started from the same published code. All students' text is escaped.
"""

from __future__ import annotations

import ast
import datetime as _dt
import difflib
import html
import io
import itertools
import keyword
import math
import re
import tokenize
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

__all__ = ["Pair", "SubmissionCode", "align", "answer_cells", "build_report", "canonical_tokens", "compare",
           "discounted_fingerprints", "fingerprints", "load_class", "normalized_tokens", "write_report"]

#: Tokens per fingerprint.
K = 12
#: A pair is flagged from this score (shared unusual weight over the smaller side's) ...
THRESHOLD = 0.6
#: ... and this many shared fingerprints.
MIN_SHARED = 15
#: Fingerprints shared by more than this share of the class are the technique's idiom, not a copy.
MAX_SHARE = 0.5
_ANSWER_CELL = re.compile(r"^(ps\d+)_(q\d+)_answer$")
_MAGIC = re.compile(r"^\s*[%!]")


# --------------------------------------------------------------------------- tokens
def _bound_names(tree: ast.AST) -> set:
    """Names the code binds itself (functions, classes, parameters, assignment and loop targets)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def _docstring_starts(tree: ast.AST) -> set:
    """``(line, column)`` where each docstring starts (docstrings are left out like comments)."""
    starts = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                starts.add((first.value.lineno, first.value.col_offset))
    return starts


def _number_kind(text: str) -> str:
    lowered = text.lower().replace("_", "")
    if lowered.endswith("j"):
        return "COMPLEX"
    if lowered.startswith(("0x", "0o", "0b")) or not any(c in lowered for c in ".e"):
        return "INT"
    return "FLOAT"


def normalized_tokens(source: str) -> list:
    """The answer's tokens with names erased and constants by kind (see the module docstring).

    Parameters
    ----------
    source : str
        Python source of one cell (IPython ``%`` and ``!`` lines are left out).

    Returns
    -------
    list of (str, int)
        ``(token, line)``: the normalised token and its line in ``source`` (from 1). Empty for a cell
        Python cannot tokenize.
    """
    lines = ["" if _MAGIC.match(line) else line for line in source.splitlines()]
    text = "\n".join(lines) + "\n"
    try:
        tree = ast.parse(text)
        bound, docstrings = _bound_names(tree), _docstring_starts(tree)
    except (SyntaxError, ValueError):  # still tokenized: every name but attributes erased
        tree, bound, docstrings = None, None, set()
    out = []
    previous = ""
    fstring_depth = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            kind, string, (row, col) = token.type, token.string, token.start
            name = tokenize.tok_name[kind]
            if name == "FSTRING_START":  # Python 3.12 splits f-strings; one STR for all of it
                if fstring_depth == 0:
                    out.append(("STR", row))
                fstring_depth += 1
                continue
            if name == "FSTRING_END":
                fstring_depth -= 1
                continue
            if fstring_depth:
                continue
            if kind == tokenize.NAME:
                if keyword.iskeyword(string) or previous == ".":
                    shown = string
                elif bound is None or string in bound:
                    shown = "V"
                else:
                    shown = string
            elif kind == tokenize.NUMBER:
                shown = _number_kind(string)
            elif kind == tokenize.STRING:
                if (row, col) in docstrings:
                    previous = ""
                    continue
                shown = "STR"
            elif kind == tokenize.OP:
                shown = ";" if string == ";" else string
            elif kind == tokenize.NEWLINE:
                shown = ";"
            elif kind == tokenize.INDENT:
                shown = "{"
            elif kind == tokenize.DEDENT:
                shown = "}"
            else:  # comments, NL, ENDMARKER
                continue
            if shown == ";" and (not out or out[-1][0] in (";", "{", "}")):
                continue  # a docstring's or a bare line's end
            out.append((shown, row))
            previous = string
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []
    return out


def canonical_tokens(source: str) -> list:
    """:func:`normalized_tokens` of the source as :func:`ast.unparse` writes it back (one layout, the
    parentheses Python needs and no others, one quoting), or of the source itself where it does not parse."""
    text = "\n".join("" if _MAGIC.match(line) else line for line in source.splitlines())
    try:
        text = ast.unparse(ast.parse(text))
    except (SyntaxError, ValueError, RecursionError):
        pass
    return normalized_tokens(text)


def fingerprints(tokens, k: int = K) -> dict:
    """``hash -> first token index`` of every run of ``k`` consecutive tokens (none for fewer)."""
    texts = [t for t, _ in tokens]
    found = {}
    for i in range(len(texts) - k + 1):
        found.setdefault(hash(tuple(texts[i:i + k])), i)
    return found


# --------------------------------------------------------------------------- submissions
def answer_cells(nb) -> dict:
    """``question id -> source`` of a notebook's answer cells (nbgrader ``psN_qM_answer`` cells; several
    cells of one question are joined). A notebook without nbgrader metadata gives its code cells as one
    answer, ``"notebook"``."""
    answers = defaultdict(list)
    plain = []
    for cell in nb.get("cells", []):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code" or not isinstance(cell.get("source"), str):
            continue
        plain.append(cell["source"])
        nbgrader = (cell.get("metadata") or {}).get("nbgrader") or {}
        match = _ANSWER_CELL.match(str(nbgrader.get("grade_id", ""))) if isinstance(nbgrader, dict) else None
        if match and nbgrader.get("solution"):
            answers[f"{match.group(1)}.{match.group(2)}"].append(cell["source"])
    if not answers:
        return {"notebook": "\n\n".join(plain)} if plain else {}
    return {q: "\n\n".join(sources) for q, sources in answers.items()}


@dataclass
class SubmissionCode:
    """One student's answers, normalised.

    Attributes
    ----------
    student : str
    path : Path
    answers : dict
        ``question -> source``.
    tokens : dict
        ``question -> [(token, line)]``.
    grams : dict
        ``question -> set of fingerprint hashes`` (after the discount).
    problem : str
        Why the notebook could not be read ("" when it was).
    """

    student: str
    path: Path
    answers: dict = field(default_factory=dict)
    tokens: dict = field(default_factory=dict)
    grams: dict = field(default_factory=dict)
    problem: str = ""


def _read(path: Path, student: str) -> SubmissionCode:
    from ..running.notebooks import parse_notebook

    code = SubmissionCode(student, path)
    try:
        nb = parse_notebook(path.read_bytes())
    except (OSError, ValueError) as exc:
        code.problem = str(exc)
        return code
    code.answers = answer_cells(nb)
    code.tokens = {q: canonical_tokens(source) for q, source in code.answers.items()}
    return code


def discounted_fingerprints(problem_set: str, k: int = K) -> tuple:
    """Fingerprints of the code every student was given: the released problem set, the unit's lesson
    notebook and its kernels module. Returns ``(hashes, [names of the sources found])``."""
    from ..catalog import _CHECKOUT, manifest

    unit = manifest()[problem_set]
    sources = []
    for path in sorted((_CHECKOUT / "problem_sets").glob(f"{problem_set}_*.ipynb")) + \
            sorted((_CHECKOUT / "lessons").glob(f"*_{unit}.ipynb")):
        nb = nbformat.read(path, as_version=4)
        sources.append((path.name, [c.source for c in nb.cells if c.cell_type == "code"]
                        + [block for c in nb.cells if c.cell_type == "markdown"
                           for block in re.findall(r"```(?:python)?\n(.*?)```", c.source, re.S)]))
    kernels = Path(__file__).resolve().parents[2] / unit / "kernels.py"
    if kernels.is_file():
        sources.append((f"course_lib/{unit}/kernels.py", [kernels.read_text(encoding="utf-8")]))
    hashes = set()
    for _, texts in sources:
        for text in texts:
            hashes.update(fingerprints(canonical_tokens(text), k))
    return hashes, [name for name, _ in sources]


# --------------------------------------------------------------------------- comparing
@dataclass
class Pair:
    """Two students' similarity.

    Attributes
    ----------
    a, b : str
        The students (``a`` before ``b`` in the class's order).
    score : float
        Shared unusual weight over the smaller side's, in [0, 1].
    shared : int
        Fingerprints both have (after the discount).
    questions : dict
        ``question -> (score, shared)`` for each question both answered.
    flagged : bool
    """

    a: str
    b: str
    score: float
    shared: int
    questions: dict
    flagged: bool


def _score(grams_a: set, grams_b: set, weight: dict) -> tuple:
    common = grams_a & grams_b
    smaller = min(sum(weight.get(h, 0.0) for h in grams_a), sum(weight.get(h, 0.0) for h in grams_b))
    if smaller <= 0:
        return 0.0, len(common)
    return min(1.0, sum(weight.get(h, 0.0) for h in common) / smaller), len(common)


def compare(submissions, discount=frozenset(), *, k: int = K, threshold: float = THRESHOLD,
            min_shared: int = MIN_SHARED, max_share: float = MAX_SHARE) -> list:
    """Score every pair of submissions; returns the pairs sharing any unusual fingerprint, best first.

    Parameters
    ----------
    submissions : list of SubmissionCode
        Their ``tokens`` filled; their ``grams`` are set here.
    discount : set
        Fingerprints to leave out (:func:`discounted_fingerprints`).
    k, threshold, min_shared, max_share
        See the module docstring.

    Returns
    -------
    list of Pair
    """
    n = len(submissions)
    frequency = defaultdict(int)
    for s in submissions:
        s.grams = {q: set(fingerprints(tokens, k)) - discount for q, tokens in s.tokens.items()}
        for h in set().union(*s.grams.values()) if s.grams else ():
            frequency[h] += 1
    common_limit = max(2, max_share * n)
    weight = {h: math.log((n + 1) / df) for h, df in frequency.items() if df <= common_limit}
    for s in submissions:
        s.grams = {q: {h for h in grams if h in weight} for q, grams in s.grams.items()}
    # Only pairs with a fingerprint in common can score: found through an index rather than all n^2 pairs.
    holders = defaultdict(set)
    for i, s in enumerate(submissions):
        for grams in s.grams.values():
            for h in grams:
                holders[h].add(i)
    candidates = set()
    for owners in holders.values():
        if len(owners) > 1:
            candidates.update(itertools.combinations(sorted(owners), 2))
    pairs = []
    for i, j in candidates:
        a, b = submissions[i], submissions[j]
        whole_a, whole_b = set().union(*a.grams.values()), set().union(*b.grams.values())
        score, shared = _score(whole_a, whole_b, weight)
        per_question = {q: _score(a.grams[q], b.grams[q], weight) for q in a.grams if q in b.grams}
        pairs.append(Pair(a.student, b.student, score, shared, per_question,
                          score >= threshold and shared >= min_shared))
    pairs.sort(key=lambda p: (-p.score, -p.shared, p.a, p.b))
    return pairs


# --------------------------------------------------------------------------- alignment
def _blocks(source: str) -> list:
    """``(first line, last line)`` of each top-level statement (decorators included), in order."""
    text = "\n".join("" if _MAGIC.match(line) else line for line in source.splitlines())
    try:
        body = ast.parse(text).body
    except (SyntaxError, ValueError):
        return [(1, max(1, len(source.splitlines())))]
    blocks = []
    for node in body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        blocks.append((first, node.end_lineno or node.lineno))
    return blocks


def _code_lines(source: str, tokens) -> list:
    """``(line number, original text, normalised text)`` of each line holding a kept token."""
    by_line = defaultdict(list)
    for token, row in tokens:
        if token not in (";", "{", "}", "(", ")"):  # parentheses: as optional as layout
            by_line[row].append(token)
    lines = source.splitlines()
    return [(row, lines[row - 1] if row - 1 < len(lines) else "", " ".join(by_line[row])) for row in sorted(by_line)]


def align(source_a: str, source_b: str) -> list:
    """The two answers' code lines side by side.

    ``source_b``'s top-level statements are reordered to follow their best match in ``source_a``,
    then lines are matched by :class:`difflib.SequenceMatcher` on their normalised tokens.

    Returns
    -------
    list of tuple
        ``(line_a, text_a, line_b, text_b, same)``: line numbers (None on a side with no line there),
        original texts, and whether the two lines are equal once normalised.
    """
    tokens_a, tokens_b = normalized_tokens(source_a), normalized_tokens(source_b)
    lines_a, lines_b = _code_lines(source_a, tokens_a), _code_lines(source_b, tokens_b)

    def in_block(lines, block):
        return [line for line in lines if block[0] <= line[0] <= block[1]]

    blocks_a = [in_block(lines_a, b) for b in _blocks(source_a)]
    blocks_b = [in_block(lines_b, b) for b in _blocks(source_b)]
    order, left = [], list(range(len(blocks_b)))
    for block in blocks_a:
        if not left:
            break
        text = [n for _, _, n in block]
        best = max(left, key=lambda j: difflib.SequenceMatcher(None, text, [n for _, _, n in blocks_b[j]],
                                                               autojunk=False).ratio())
        order.append(best)
        left.remove(best)
    ordered_b = [line for j in order + left for line in blocks_b[j]]
    norm_a, norm_b = [n for _, _, n in lines_a], [n for _, _, n in ordered_b]
    rows = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, norm_a, norm_b, autojunk=False).get_opcodes():
        for offset in range(max(i2 - i1, j2 - j1)):
            a = lines_a[i1 + offset] if i1 + offset < i2 else None
            b = ordered_b[j1 + offset] if j1 + offset < j2 else None
            rows.append((a[0] if a else None, a[1] if a else "", b[0] if b else None, b[1] if b else "",
                         tag == "equal"))
    return rows


# --------------------------------------------------------------------------- the class and the report
def load_class(inputs, *, problem_set: str | None = None, submissions=None) -> tuple:
    """The submissions to compare and their problem set.

    Parameters
    ----------
    inputs : list of path
        A grades CSV (its students are compared; their notebooks are found under ``submissions``,
        default the CSV's folder, named as ``grade`` names them), or notebooks and folders of them.
    problem_set : str, optional
        Default: the grades CSV's, else read from the notebooks' answer cells or file names.
    submissions : path, optional
        Where a grades CSV's notebooks are.

    Returns
    -------
    (list of SubmissionCode, str)

    Raises
    ------
    ValueError
        No notebooks, several problem sets, or a grades CSV's students without a notebook.
    """
    from ..catalog import problem_set_id
    from .gradebook import read_class
    from ..running.notebooks import expand, student_ids

    inputs = [Path(p) for p in inputs]
    csvs = [p for p in inputs if p.suffix == ".csv"]
    wanted = None
    if csvs:
        book = read_class(csvs)
        if len(book.problem_sets) != 1:
            raise ValueError(f"the grades CSVs hold {book.problem_sets}: compare one problem set at a time")
        problem_set = problem_set or book.problem_sets[0]
        wanted = set(book.students)
        folders = [Path(submissions)] if submissions else sorted({p.parent for p in csvs})
        paths = expand(folders)
    else:
        paths = expand(inputs)
    if not paths and wanted is None:
        raise ValueError(f"no notebooks (.ipynb) in {', '.join(map(str, inputs))}")
    ids = student_ids(paths)
    if wanted is not None:
        ids = {p: s for p, s in ids.items() if s in wanted}
        missing = sorted(wanted - set(ids.values()))
        if missing:
            raise ValueError(f"no notebook found for {len(missing)} student(s) of the grades CSV "
                             f"({', '.join(missing[:5])}); pass --submissions DIR, the folder graded")
    code = [_read(path, student) for path, student in ids.items()]
    if problem_set is None:
        found = {q.split(".")[0] for c in code for q in c.answers if q != "notebook"}
        found |= {m.group(1) for p in ids for m in [re.match(r"(ps\d+)_", p.name)] if m}
        if len(found) != 1:
            raise ValueError(f"cannot tell the problem set from the notebooks (found {sorted(found) or 'none'}): "
                             "pass --problem-set")
        (problem_set,) = found
    return code, problem_set_id(problem_set)


_STYLE = """body{font-family:system-ui,sans-serif;max-width:1300px;margin:2em auto;padding:0 1em;color:#1f2328}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #d0d7de;padding:3px 6px;text-align:left;
vertical-align:top}th{background:#f6f8fa}.num{text-align:right}.muted{color:#57606a}
table.code td{font-family:ui-monospace,monospace;font-size:12px;white-space:pre;border:none;padding:0 6px}
table.code td.n{color:#8c959f;text-align:right}tr.same td.c{background:#fff1b8}.flag{color:#cf222e;font-weight:600}"""


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def build_report(code, pairs, problem_set: str, *, discounted=(), top: int = 20, threshold: float = THRESHOLD) -> str:
    """The report's HTML: the ranked pairs, then each flagged pair (and the best ones, up to ``top``)
    side by side."""
    by_student = {c.student: c for c in code}
    unread = [c for c in code if c.problem]
    flagged = [p for p in pairs if p.flagged]
    shown = pairs[:max(top, len(flagged))]
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{_e(problem_set)}: similar "
             f"submissions</title><style>{_STYLE}</style></head><body>",
             f"<h1>{_e(problem_set)}: similar submissions</h1>",
             f"<p class='muted'>{len(code)} submissions, {len(pairs)} pairs sharing unusual code, {len(flagged)} "
             f"flagged (score &ge; {threshold:g} and &ge; {MIN_SHARED} shared fingerprints of {K} tokens). Names "
             "erased, constants by kind; discounted: " + (_e(", ".join(discounted)) or "nothing found")
             + f". Written {_dt.datetime.now().strftime('%Y-%m-%d %H:%M')}. A high score is a reason to look, "
               "not a verdict.</p>"]
    if unread:
        parts.append("<p>Not compared (unreadable): " + ", ".join(f"{_e(c.student)} ({_e(c.problem)})"
                                                                 for c in unread) + "</p>")
    if not shown:
        parts.append("<p>No two submissions share unusual code.</p>")
    else:
        parts.append("<table><tr><th>rank</th><th>students</th><th>score</th><th>shared</th><th>per question</th>"
                     "</tr>")
        for rank, p in enumerate(shown, 1):
            per = ", ".join(f"{_e(q)} {s:.2f}" for q, (s, _) in sorted(p.questions.items()))
            flag = " <span class='flag'>flagged</span>" if p.flagged else ""
            parts.append(f"<tr><td class='num'>{rank}</td><td><a href='#pair{rank}'>{_e(p.a)} &amp; {_e(p.b)}</a>"
                         f"{flag}</td><td class='num'>{p.score:.2f}</td><td class='num'>{p.shared}</td>"
                         f"<td>{per}</td></tr>")
        parts.append("</table>")
    for rank, p in enumerate(shown, 1):
        a, b = by_student[p.a], by_student[p.b]
        parts.append(f"<h2 id='pair{rank}'>{rank}. {_e(p.a)} &amp; {_e(p.b)}: score {p.score:.2f}"
                     + (" <span class='flag'>flagged</span>" if p.flagged else "") + "</h2>")
        for question, (score, shared) in sorted(p.questions.items(), key=lambda x: -x[1][0]):
            rows = align(a.answers[question], b.answers[question])
            same = sum(1 for r in rows if r[4])
            parts.append(f"<h3>{_e(question)}: score {score:.2f}, {shared} shared fingerprints, {same} of "
                         f"{len(rows)} lines alike once normalised</h3>")
            parts.append(f"<table class='code'><tr><th></th><th>{_e(p.a)}</th><th></th><th>{_e(p.b)}</th></tr>")
            for line_a, text_a, line_b, text_b, alike in rows:
                parts.append(f"<tr class='{'same' if alike else 'diff'}'><td class='n'>{line_a or ''}</td>"
                             f"<td class='c'>{_e(text_a)}</td><td class='n'>{line_b or ''}</td>"
                             f"<td class='c'>{_e(text_b)}</td></tr>")
            parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(inputs, out, *, problem_set: str | None = None, submissions=None, top: int = 20,
                 threshold: float = THRESHOLD) -> tuple:
    """Compare a class (:func:`load_class`, :func:`compare`) and write the HTML report atomically.

    Returns
    -------
    (list of Pair, str)
        All pairs, best first, and the problem set.
    """
    from ..results.report import write_atomic

    code, problem_set = load_class(inputs, problem_set=problem_set, submissions=submissions)
    discount, discounted = discounted_fingerprints(problem_set)
    pairs = compare([c for c in code if not c.problem], discount, threshold=threshold)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, build_report(code, pairs, problem_set, discounted=discounted, top=top,
                                       threshold=threshold))
    return pairs, problem_set
