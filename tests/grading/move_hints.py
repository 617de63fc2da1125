"""Move a unit's hints out of its questions modules into ``grading_resources/hints/psN_<unit>.json``.

    python tests/grading/move_hints.py <unit> [<unit> ...]

For every ``question("psN.qM", ...)`` of ``course_lib/<unit>/*questions*.py``: its ``hints={...}`` go to the
question's entry, and each of its tests' literal ``hint=``, ``hints=`` and constant ``explain=lambda ...: "..."``
to the test's entry (by the test's name); the keywords are removed from the module (``explain=STORED`` stays,
imported from the harness). What it cannot move (a test whose name is not a literal, hints given through a
helper's dict) is printed with its line, to move by hand. Check with ``tests/grading/test_resources.py`` (remove
the unit from its ``PENDING``) and compare ``Test.hint_for`` for every test and cause before and after.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KEYWORDS = ("hint", "hints", "explain")


def _offset(text: str):
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return lambda line, col: starts[line - 1] + len(text[starts[line - 1]:].encode()[:col].decode())


def _collect(tree, store: dict, report) -> list:
    """``(kind, keyword)`` edits, filling ``store`` with the texts they carry."""
    edits, moved = [], set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "question" and node.args
                and isinstance(node.args[0], ast.Constant)):
            continue
        entry = store.setdefault(node.args[0].value, {})
        for keyword in node.keywords:
            if keyword.arg == "hints":
                entry["hints"] = ast.literal_eval(keyword.value)
                edits.append(("drop", keyword))
                moved.add(id(keyword))
        for call in ast.walk(node):
            keywords = [k for k in getattr(call, "keywords", ()) if k.arg in KEYWORDS] if call is not node else []
            if not keywords:
                continue
            if not (call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)):
                continue  # reported below
            test = entry.setdefault("tests", {}).setdefault(call.args[0].value, {})
            for keyword in keywords:
                value = keyword.value
                if keyword.arg == "explain":
                    if isinstance(value, ast.Lambda) and isinstance(value.body, ast.Constant):
                        test["explain"] = value.body.value
                        edits.append(("stored", keyword))
                        moved.add(id(keyword))
                    continue
                try:
                    text = ast.literal_eval(value)
                except ValueError:
                    continue
                if text:
                    test[keyword.arg] = text
                edits.append(("drop", keyword))
                moved.add(id(keyword))
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in KEYWORDS and id(node) not in moved \
                and not (isinstance(node.value, ast.Constant) and not node.value.value) \
                and not (isinstance(node.value, ast.Name) and node.value.id == "STORED"):
            report(f"line {node.lineno}: {node.arg}= not moved (move it by hand)")
    return edits


def _apply(text: str, edits: list) -> str:
    at = _offset(text)
    spans = []
    for kind, keyword in edits:
        start = at(keyword.lineno, keyword.col_offset)
        end = at(keyword.value.end_lineno, keyword.value.end_col_offset)
        if kind == "stored":
            spans.append((at(keyword.value.lineno, keyword.value.col_offset), end, "STORED"))
            continue
        after = re.match(r",[ \t]*(\n[ \t]*)?", text[end:])
        if after and text[end + after.end():][:1] not in ")]}":
            spans.append((start, end + after.end(), ""))  # "kw=..., next" -> "next"
        else:
            spans.append((re.search(r",\s*$", text[:start]).start(), end, ""))  # "prev, kw=...)" -> "prev)"
    for start, end, replacement in sorted(spans, reverse=True):
        text = text[:start] + replacement + text[end:]
    if any(kind == "stored" for kind, _ in edits):
        text = re.sub(r"from \.\.grading\.authoring\.harness import (\(?)", r"from ..grading.authoring.harness import \1STORED, ",
                      text, count=1)
    return text


def move(unit: str) -> Path:
    store = {}
    for path in sorted((ROOT / "course_lib" / unit).glob("*questions*.py")):
        text = path.read_text(encoding="utf-8")
        edits = _collect(ast.parse(text), store, lambda line: print(f"{path.relative_to(ROOT)}: {line}"))
        path.write_text(_apply(text, edits), encoding="utf-8")
    questions = {q: entry for q, entry in store.items() if entry}
    problem_set = next(iter(store)).split(".")[0]
    target = ROOT / "grading_resources" / "hints" / f"{problem_set}_{unit}.json"
    target.write_text(json.dumps({"problem_set": problem_set, "questions": questions}, indent=1, ensure_ascii=False)
                      + "\n", encoding="utf-8")
    return target


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print("wrote", move(name).relative_to(ROOT))
