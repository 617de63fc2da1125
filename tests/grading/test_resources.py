"""The grader's hints and answer keys: out of every importable module, out of the sandboxed worker's sight, and still
read when a submission is judged."""

import ast
import json
import os
import re
import subprocess
import textwrap
from pathlib import Path

import pytest

from course_lib.grading import resources
from course_lib.grading.catalog import manifest
from course_lib.grading.core import get_question, run_tests
from course_lib.grading.reporting._job import hide_hints
from course_lib.grading.running import sandbox

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "course_lib"
#: Units whose questions modules still carry their hints (``hint=``, ``hints=``, ``explain=`` in the module): moving
#: them is ``python tests/grading/move_hints.py <unit>`` (plus what it prints as left to move by hand), then
#: removing them here.
PENDING: set = set()
#: The end of a string literal, a line break and the start of the next literal (implicit concatenation).
_JOINS = re.compile(r"\"[ \t]*\n[ \t]*f?\"")


def _stored_texts():
    texts = []
    for path in resources.hint_files():
        for question in json.loads(path.read_text(encoding="utf-8"))["questions"].values():
            texts += list((question.get("hints") or {}).values())
            for test in (question.get("tests") or {}).values():
                texts += [test.get("hint", ""), test.get("explain", ""), *(test.get("hints") or {}).values()]
    return [t for t in texts if t]


def test_no_hint_is_left_in_an_importable_module():
    files = {path.stem.split("_", 1)[1] for path in resources.hint_files()}
    assert files == set(manifest().values()) - PENDING  # one file per moved unit
    texts = _stored_texts()
    assert len(texts) > 60
    sources, pending = [], []
    for path in PACKAGE.rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        sources.append(source)
        if "questions" not in path.name:
            continue
        for node in ast.walk(ast.parse(source)):
            if not (isinstance(node, ast.keyword) and node.arg in ("hint", "hints", "explain")):
                continue
            if path.relative_to(PACKAGE).parts[0] in PENDING:
                if isinstance(node.value, (ast.Constant, ast.Dict)):
                    value = ast.literal_eval(node.value)
                    pending += [v for v in (value.values() if isinstance(value, dict) else [value]) if v]
                continue
            # No hint written in a moved unit's questions module (a new one goes to its hints file).
            assert isinstance(node.value, ast.Name) and node.value.id == "STORED", \
                f"{path.name}:{node.lineno}: {node.arg}= belongs in grading_resources/hints"
    # The sources with each string literal split over lines joined again, so that a hint is found whole.
    joined = _JOINS.sub("", "\n".join(sources))
    assert all(text in joined for text in pending)  # the scan finds the hints still in modules
    # ...and a hint split over lines, as the modules wrote them, is found whole.
    assert "a hint split over lines" in _JOINS.sub("", 'x = ("a hint split "\n     "over lines")')
    leaked = [text for text in texts if text in joined]
    assert not leaked, leaked[:3]


def test_a_failing_answer_gets_the_hint_and_explanation_stored_for_it(monkeypatch):
    question = get_question("ps3.q3")
    wrong = {"quadratic_on_chain": lambda n: 0, "frontier_on_chain": lambda n: n, "complexity": "O(V + E)"}
    stored = json.loads((ROOT / "grading_resources" / "hints" / "ps3_bfs.json").read_text())["questions"]["ps3.q3"]
    tests = stored["tests"]
    messages = {o.name: o.message.replace("\n", " ") for o in run_tests(question, wrong).outcomes}
    frontier = "frontier BFS on a one-way chain from its middle"
    assert messages[frontier].endswith("Hint: " + tests[frontier]["hint"])
    complexity = "worst-case work of a search made of bottom-up steps only"
    explain = tests[complexity]["explain"]
    assert messages[complexity].startswith(f"complexity = 'O(V + E)': {explain[:40]}")
    # Without the grader's resources (a student's install), the same failures, with no hint and no explanation.
    monkeypatch.setattr(resources, "folders", lambda: [])
    monkeypatch.setattr(resources, "_loaded", {})
    bare = {o.name: o.message for o in run_tests(question, wrong).outcomes}
    assert "Hint: " not in bare[frontier] and bare[complexity] == "complexity = 'O(V + E)'"
    assert bare[frontier] == messages[frontier].split(" Hint: ")[0]


_INSIDE = textwrap.dedent('''
    import json, sys
    seen = {}
    for path in sys.argv[1:]:
        try:
            with open(path, encoding="utf-8") as f:
                seen[path] = f.read(20)
        except OSError as exc:
            seen[path] = exc.strerror
    print(json.dumps(seen))
''')


def test_the_sandboxed_worker_cannot_read_the_hints():
    files = resources.hint_files() + resources.key_files()
    assert resources.key_files()
    assert files and resources.stored_hints("ps3.q1", "x")[0]  # the grader reads them
    box = sandbox.resolve("auto")
    if box.kind != "bwrap":
        pytest.skip(box.note)
    # The worker's command line (its Python without site, for speed: what it can open does not depend on it).
    argv, env, cwd = box.command(["-I", "-S", "-c", _INSIDE, *map(str, files)], {"PATH": os.environ["PATH"]}, "/")
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert sorted(seen) == sorted(map(str, files))
    assert all(text == "No such file or directory" for text in seen.values()), seen


def test_resources_under_a_folder_the_worker_sees_are_covered(tmp_path, monkeypatch):
    site = tmp_path / "site-packages"
    (site / "grading_resources" / "hints").mkdir(parents=True)
    monkeypatch.setenv(resources.ENV, str(site / "grading_resources"))
    options = sandbox._hidden_resources([str(site), "/usr"], hidden=str(tmp_path / "course_lib" / "_shipped"))
    assert options == ["--tmpfs", os.path.realpath(site / "grading_resources")]


def test_without_bubblewrap_the_hints_and_keys_are_read_then_deleted(tmp_path, monkeypatch):
    copy = tmp_path / "source" / "course" / "grading_resources"
    for kind, name in (("hints", "ps3_bfs.json"), ("keys", "ps3_bfs.py")):
        (copy / kind).mkdir(parents=True)
        (copy / kind / name).write_bytes((ROOT / "grading_resources" / kind / name).read_bytes())
    monkeypatch.setenv(resources.ENV, str(copy))
    monkeypatch.setattr(resources, "_loaded", {})
    monkeypatch.setattr(resources, "_keys", {})
    line = hide_hints("ps3", tmp_path, sandbox.Sandbox("none", ""))
    assert line == "hints: read for 3 question(s), then 2 file(s) deleted before grading"
    assert not list((copy / "hints").iterdir()) and not list((copy / "keys").iterdir())  # gone before any submission
    assert "race" in resources.stored_hints("ps3.q1", "x")[0]  # kept in the grader's memory
    assert resources.answer_key("ps3", "frontier_on_chain")(11) == 5  # the key too


def _defined_functions(source: str) -> set:
    return {node.name for node in ast.walk(ast.parse(source)) if isinstance(node, ast.FunctionDef)}


def test_the_answer_keys_are_the_graders_and_the_library_holds_none():
    files = resources.key_files()
    assert {path.stem for path in files} >= {"ps1_nbody", "ps3_bfs", "ps6_ica", "ps7_cellsim", "ps9_primitives"}
    keys = {path.stem.split("_")[0]: _defined_functions(path.read_text(encoding="utf-8")) for path in files}
    library = set()
    for path in PACKAGE.rglob("*.py"):
        library |= _defined_functions(path.read_text(encoding="utf-8"))
    for problem_set, names in keys.items():
        assert names and not names & library, (problem_set, names & library)  # each key lives in one place
        for name in names:  # ...and is read from there, whatever the questions module calls it
            assert resources.answer_key(problem_set, name).key_name == name
    from course_lib.nbody import questions

    assert questions.split_rule(32768, 256, 132, 2048, 32) == 8  # a stored key, called through its proxy
    assert repr(questions.split_rule) == "<answer key ps1:split_rule>"


def test_an_answer_reaching_a_key_is_refused_and_a_course_without_keys_says_so(monkeypatch):
    from course_lib.grading.authoring.ownwork import library_uses

    key = resources.answer_key("ps1", "predicted_bytes")
    assert library_uses(lambda n, tile, q: key(n, tile, q))  # the proxy is the course's code
    module_key = resources._key_module("ps1").predicted_bytes
    assert module_key.__module__.startswith("course_lib.")
    assert library_uses(lambda n, tile, q: module_key(n, tile, q))  # and so is the key's own function
    question = get_question("ps3.q3")
    right = {"quadratic_on_chain": lambda n: (n - 1) * (n - n // 2), "frontier_on_chain": lambda n: n - 1 - n // 2,
             "complexity": "O(V * E)"}
    assert run_tests(question, right).points == question.points
    monkeypatch.setattr(resources, "folders", lambda: [])
    monkeypatch.setattr(resources, "_keys", {})
    monkeypatch.setattr(resources, "_loaded", {})
    bare = run_tests(question, right)
    assert bare.points < question.points
    assert "answer keys of ps3" in str(bare), str(bare)


def test_the_keys_are_read_before_a_submission_runs(tmp_path, monkeypatch):
    """Without a sandbox a worker can write the course's folders: the grader reads the keys when the run starts
    (:func:`course_lib.grading.running.grader._grade_into` calls preload), and a key file written later changes
    nothing."""
    copy = tmp_path / "grading_resources"
    (copy / "keys").mkdir(parents=True)
    key = copy / "keys" / "ps3_bfs.py"
    key.write_bytes((ROOT / "grading_resources" / "keys" / "ps3_bfs.py").read_bytes())
    monkeypatch.setenv(resources.ENV, str(copy))
    monkeypatch.setattr(resources, "_keys", {})
    monkeypatch.setattr(resources, "_loaded", {})
    resources.preload("ps3")
    key.write_text("def frontier_on_chain(n):\n    return 'rigged'\n")
    assert resources.answer_key("ps3", "frontier_on_chain")(11) == 5

