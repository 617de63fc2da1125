"""Every unit of course_lib.UNITS has the documented shape (course_lib/README.md)."""

import ast
import importlib
import importlib.util
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

import course_lib

ROOT = Path(__file__).resolve().parents[1]
#: The modules every unit has (course_lib/README.md).
MODULES = ("api", "kernels", "reference", "cpu", "data", "model", "profiling", "plots", "widgets", "quiz",
           "questions", "bench")
#: Units of UNITS that are not a unit of this shape, and why.
NOT_UNITS = {"sim": "lesson 0's tools (profiler, checker, recorder): a shared layer, not a unit"}
UNITS = [u for u in course_lib.UNITS if u not in NOT_UNITS]


@pytest.mark.parametrize("unit", UNITS)
def test_unit_has_every_module(unit):
    missing = [m for m in MODULES if importlib.util.find_spec(f"course_lib.{unit}.{m}") is None]
    assert not missing, f"course_lib/{unit} lacks {missing} (see course_lib/README.md)"
    extra = sorted(p.stem for p in (ROOT / "course_lib" / unit).glob("*.py")
                   if p.stem not in MODULES and p.stem != "__init__" and not p.stem.startswith("_"))
    assert not extra, f"course_lib/{unit} has modules outside the shape {extra}: fold them in or make them _private"


@pytest.mark.parametrize("unit", UNITS)
def test_unit_api(unit):
    package = importlib.import_module(f"course_lib.{unit}")
    assert package.__doc__ and course_lib.UNITS[unit] in package.__doc__, "the docstring names the lesson"
    assert isinstance(package.__all__, list) and package.__all__ == sorted(set(package.__all__), key=package.__all__.index)
    for name in package.__all__:
        assert hasattr(package, name), f"course_lib.{unit}.__all__ lists {name!r}, which does not exist"
    api = importlib.import_module(f"course_lib.{unit}.api")
    assert "default_block" in package.__all__ and package.default_block is api.default_block
    block = api.default_block()
    assert isinstance(block, int) and 1 <= block <= 1024
    for name in ("default_tile", "threads_per_block", "scan_block", "step_block"):
        assert not hasattr(api, name), f"{unit}.api.{name}: the default launch configuration is default_block()"


def test_importing_the_units_loads_no_plotting_or_widgets():
    code = ("import sys, json, course_lib\n"
            f"for unit in {UNITS!r}: __import__('course_lib.' + unit)\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'ipywidgets'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.splitlines()[-1]) == []
    # ... and plots load on first use.
    code = ("import sys, course_lib\n"
            f"import course_lib.{UNITS[0]} as unit\n"
            f"assert 'course_lib.{UNITS[0]}.plots' not in sys.modules\n"
            "unit.plots, unit.widgets\n"
            f"assert 'course_lib.{UNITS[0]}.widgets' in sys.modules and 'plots' in dir(unit)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]


def _course_imports(source):
    """(module, name) of every ``from course_lib... import name`` and ``import course_lib...`` in code."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython magics
        tree = ast.parse("\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("course_lib"):
            for alias in node.names:
                yield node.module, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("course_lib"):
                    yield alias.name, ""


@pytest.mark.parametrize("lesson", sorted(p.name for p in (ROOT / "lessons").glob("*.ipynb")))
def test_lessons_import_only_public_names(lesson):
    nb = json.loads((ROOT / "lessons" / lesson).read_text())
    private = []
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            for module, name in _course_imports("".join(cell["source"])):
                parts = module.split(".") + ([name] if name else [])
                if any(p.startswith("_") for p in parts):
                    private.append(f"{module} import {name}" if name else module)
    assert not private, f"{lesson} imports private names: {private}"


@pytest.mark.parametrize("unit", UNITS)
def test_test_files_are_named_after_modules(unit):
    folder = ROOT / "tests" / unit
    names = sorted(p.stem[len("test_"):] for p in folder.glob("test_*.py"))
    assert names, f"tests/{unit} has no tests"
    # test_<module>.py, or test_<module>_<aspect>.py for a second file on one module (test_questions_variants.py)
    unnamed = [n for n in names if not any(n == m or n.startswith(f"{m}_") for m in MODULES)]
    assert not unnamed, f"tests/{unit}: {unnamed} name no module"


def test_quiz_modules_hold_quiz_objects():
    from course_lib.quiz import Quiz

    for unit in UNITS:
        quiz = importlib.import_module(f"course_lib.{unit}.quiz").QUIZ
        assert quiz and all(isinstance(k, str) and k.isidentifier() for k in quiz)
        assert all(isinstance(q, Quiz) for q in quiz.values())
        assert inspect.ismodule(importlib.import_module(f"course_lib.{unit}.questions"))
