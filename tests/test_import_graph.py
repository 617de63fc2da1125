"""No import circle inside ``course_lib``.

The graph is read from the source (every ``import`` and ``from ... import``, including those
inside functions), not from a running interpreter, so an import that only runs on some path
counts as well. A circle means neither module can be read, tested or changed alone: shared
types, constants and checks belong in a module below both.

Inside ``course_lib.grading`` the parts are folders, and each may import only the parts below it
(:data:`GRADING_MAY_IMPORT`; the package's docstring draws the same arrows).
"""

from __future__ import annotations

import ast
from pathlib import Path

import course_lib


def module_files(root: Path, package: str) -> dict[str, Path]:
    """``{dotted module name: file}`` for every module of the package at ``root``.

    A package's ``__init__.py`` is the module named after the package.
    """
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join([package, *parts])] = path
    return modules


def _resolve(current: str, is_package: bool, module: str | None, level: int) -> str:
    """The absolute name of ``from <level dots><module> import ...`` written in ``current``."""
    if level == 0:
        return module or ""
    base = current.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """``{module: modules of the package it imports}``, read from the AST of each file.

    ``import a.b`` is an arrow to ``a.b``; ``from a import b`` is an arrow to the submodule
    ``a.b`` when there is one, otherwise to ``a``. Imports of other packages are left out.
    """
    modules = module_files(root, package)
    graph = {name: set() for name in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, is_package, node.module, node.level)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in modules else base)
            for target in targets:
                # ``import a.b.c`` where ``c`` is not a module (or a typo): the nearest module above.
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def components(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module, each sorted (Tarjan, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for start in sorted(graph):
        if start in index:
            continue
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        work = [(start, iter(sorted(graph[start])))]
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Circles of the graph, each a closed path ``[a, b, ..., a]``.

    For every module of a strongly connected component, the shortest circle through it
    (so a component made of several circles names each of them), without repeats.
    """
    found = []
    for component in components(graph):
        members = set(component)
        seen = set()
        for first in component:
            path = _shortest_circle(graph, members, first)
            key = frozenset(zip(path, path[1:]))
            if key not in seen:
                seen.add(key)
                found.append(path)
    return found


def _shortest_circle(graph: dict[str, set[str]], members: set[str], first: str) -> list[str]:
    """A shortest closed path from ``first`` back to itself through ``members`` (breadth first)."""
    came_from = {first: None}
    frontier = [first]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == first:
                    path = [first]
                    while node != first:
                        path.append(node)
                        node = came_from[node]
                    return [first, *reversed(path[1:]), first]
                if child not in came_from:
                    came_from[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError(f"{first} is in a strongly connected component but on no circle")


def describe(found: list[list[str]]) -> str:
    return "\n".join(" -> ".join(path) for path in found)


def test_course_lib_has_no_import_circle():
    root = Path(course_lib.__file__).parent
    found = circles(import_graph(root, "course_lib"))
    assert not found, f"import circles in course_lib:\n{describe(found)}"


def test_graph_sees_the_modules_and_arrows_of_course_lib():
    root = Path(course_lib.__file__).parent
    graph = import_graph(root, "course_lib")
    assert "course_lib" in graph and "course_lib.sim" in graph and "course_lib.nbody.api" in graph
    # Imports of other packages are not arrows; arrows only point at modules of the package.
    assert all(target in graph for targets in graph.values() for target in targets)


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "fake"
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_a_circle_is_reported_by_name(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "unit/__init__.py": "from .api import run\n",
        # Arrows inside a function count; a relative import two levels up resolves.
        "unit/api.py": "def run():\n    from .cpu import step\n    return step()\n",
        "unit/cpu.py": "from ..unit import model\n",
        "unit/model.py": "import numpy\nfrom fake.unit.api import run\n",
        "tools.py": "from .unit import model\n",
    })
    graph = import_graph(root, "fake")
    assert graph["fake.unit.api"] == {"fake.unit.cpu"}
    assert graph["fake.unit.cpu"] == {"fake.unit.model"}  # ``from pkg import submodule`` is an arrow to it
    assert graph["fake.unit.model"] == {"fake.unit.api"}
    assert graph["fake.unit"] == {"fake.unit.api"}  # the package __init__ is a module
    found = circles(graph)
    assert found == [["fake.unit.api", "fake.unit.cpu", "fake.unit.model", "fake.unit.api"]]
    assert "fake.unit.api -> fake.unit.cpu -> fake.unit.model -> fake.unit.api" in describe(found)


def test_a_circle_through_a_package_init_and_a_plain_name_is_reported(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "from .a import helper\n",
        "a.py": "from . import VERSION\nhelper = 1\n",  # a name, not a submodule: an arrow to the package
        "b.py": "from fake.a import helper\n",
    })
    graph = import_graph(root, "fake")
    assert graph["fake.a"] == {"fake"}
    assert circles(graph) == [["fake", "fake.a", "fake"]]


def test_one_way_arrows_are_no_circle(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "from . import api\n",
        "api.py": "from . import cpu, model\nfrom .cpu import *\n",
        "cpu.py": "from .model import Params\nimport fake.model\n",
        "model.py": "import os\n",
    })
    assert circles(import_graph(root, "fake")) == []


# --- The parts of course_lib.grading and the directions they may import in ---------------------

GRADING = "course_lib.grading"
#: The shared core: the top-level modules of the grading package that every part may import.
GRADING_CORE = {f"{GRADING}.{name}" for name in ("model", "core", "protocol", "catalog", "resources")}
#: The front doors: the package itself (``from course_lib.grading import check``) and its
#: ``__main__`` (the ``course grading`` commands). They may import any part; no part imports them.
GRADING_FRONT = {GRADING, f"{GRADING}.__main__"}
#: Which parts each part may import (itself included): a layering, so no circle between parts.
GRADING_MAY_IMPORT = {
    "core": {"core"},
    "authoring": {"authoring", "core"},
    "results": {"results", "core"},
    "running": {"running", "results", "core"},
    "reporting": {"reporting", "running", "results", "authoring", "core"},
}
#: What the rest of course_lib may import of grading: the front door, the core, and authoring
#: (each unit's questions are written with the harness).
OUTSIDE_MAY_IMPORT = {"front", "core", "authoring"}


def grading_part(module: str, package: str = GRADING, core: set | None = None) -> str | None:
    """The part of the grading package ``module`` belongs to: ``"front"``, ``"core"``, a subpackage's
    name, or None for a module outside the package (or at its top but in no part)."""
    core = GRADING_CORE if core is None else core
    if module in (package, f"{package}.__main__"):
        return "front"
    if module in core:
        return "core"
    if not module.startswith(package + "."):
        return None
    parts = module[len(package) + 1:].split(".")
    return parts[0] if len(parts) > 1 or parts[0] in GRADING_MAY_IMPORT else None


def wrong_arrows(graph: dict[str, set[str]], package: str = GRADING, core: set | None = None) -> list[str]:
    """Every import that goes against the allowed directions, as ``"a -> b (part -> part)"``.

    A module at the package's top that is in no part, a part not in :data:`GRADING_MAY_IMPORT`,
    an arrow up (or across) the layering, an arrow into a front door from inside the package and
    an arrow from the rest of the course into the package's internals are all named.
    """
    found = []
    for module in sorted(graph):
        inside = module == package or module.startswith(package + ".")
        source = grading_part(module, package, core)
        if inside and (source is None or (source != "front" and source not in GRADING_MAY_IMPORT)):
            found.append(f"{module} (in no part: a top-level module must be in a part's folder or the core)")
            continue
        for target in sorted(graph[module]):
            if not (target == package or target.startswith(package + ".")):
                continue
            goal = grading_part(target, package, core)
            if not inside:
                allowed = goal in OUTSIDE_MAY_IMPORT
            elif source == "front":
                allowed = True
            else:
                allowed = goal in GRADING_MAY_IMPORT.get(source, set())
            if not allowed:
                found.append(f"{module} -> {target} ({source or 'outside'} -> {goal})")
    return found


def part_graph(graph: dict[str, set[str]], package: str = GRADING, core: set | None = None) -> dict[str, set[str]]:
    """The arrows between the parts of the package (front doors left out), from the module graph."""
    parts = {}
    for module, targets in graph.items():
        source = grading_part(module, package, core)
        if source in (None, "front"):
            continue
        parts.setdefault(source, set())
        for target in targets:
            goal = grading_part(target, package, core)
            if goal not in (None, "front", source):
                parts[source].add(goal)
    for targets in list(parts.values()):
        for goal in targets:
            parts.setdefault(goal, set())
    return parts


def test_grading_parts_import_only_downwards():
    root = Path(course_lib.__file__).parent
    found = wrong_arrows(import_graph(root, "course_lib"))
    assert not found, "imports against the grading package's directions:\n" + "\n".join(found)


def test_grading_parts_are_folders_with_no_circle_between_them():
    root = Path(course_lib.__file__).parent
    graph = import_graph(root, "course_lib")
    parts = part_graph(graph)
    # Each part is a folder of the package (the core excepted), seen with its modules and its arrows.
    assert set(parts) == set(GRADING_MAY_IMPORT)
    for part in set(GRADING_MAY_IMPORT) - {"core"}:
        assert (root / "grading" / part / "__init__.py").is_file()
        assert sum(grading_part(m) == part for m in graph) > 2, part
    assert parts["reporting"] >= {"running", "results", "core"} and parts["running"] >= {"results", "core"}
    assert circles(parts) == []
    # The allowed directions themselves are a layering: no circle even if every allowed arrow were used.
    allowed = {part: may - {part} for part, may in GRADING_MAY_IMPORT.items()}
    assert circles(allowed) == []


def test_each_grading_part_says_what_it_may_import():
    root = Path(course_lib.__file__).parent / "grading"
    for part in set(GRADING_MAY_IMPORT) - {"core"}:
        doc = ast.get_docstring(ast.parse((root / part / "__init__.py").read_text(encoding="utf-8")))
        assert doc and "May import:" in doc, part


def _grading_fake(tmp_path: Path, files: dict[str, str]) -> dict[str, set[str]]:
    tree = {"__init__.py": "", "g/__init__.py": "from .core import check\n", "g/__main__.py": "",
            "g/core.py": "", "g/authoring/__init__.py": "", "g/running/__init__.py": "",
            "g/results/__init__.py": "", "g/reporting/__init__.py": "", **files}
    return import_graph(_package(tmp_path, tree), "fake")


def test_an_arrow_up_the_layering_is_named(tmp_path):
    graph = _grading_fake(tmp_path, {
        "g/running/grader.py": "from ..reporting.gradebook import write\n",  # running may not import reporting
        "g/reporting/gradebook.py": "from ..running import grader\nwrite = 1\n",
        "g/authoring/harness.py": "def f():\n    from ..results import report\n",  # nor authoring results, lazily
        "g/results/report.py": "from .. import core\n",
    })
    found = wrong_arrows(graph, "fake.g", {"fake.g.core"})
    assert found == [
        "fake.g.authoring.harness -> fake.g.results.report (authoring -> results)",
        "fake.g.running.grader -> fake.g.reporting.gradebook (running -> reporting)",
    ]
    assert circles(part_graph(graph, "fake.g", {"fake.g.core"})) == [["reporting", "running", "reporting"]]


def test_a_part_importing_the_front_door_or_a_stray_module_is_named(tmp_path):
    graph = _grading_fake(tmp_path, {
        "g/running/worker.py": "from fake.g import check\n",  # the front door, from inside
        "g/loose.py": "",  # a top-level module in no part
        "unit/questions.py": "from ..g.running import worker\nfrom ..g.authoring import harness\n",
        "g/authoring/harness.py": "",
    })
    found = wrong_arrows(graph, "fake.g", {"fake.g.core"})
    assert found == [
        "fake.g.loose (in no part: a top-level module must be in a part's folder or the core)",
        "fake.g.running.worker -> fake.g (running -> front)",
        "fake.unit.questions -> fake.g.running.worker (outside -> running)",
    ]


# --- The shared benchmark layer names no unit ---------------------------------------------------


def _strings(tree) -> list:
    """String constants of a module that are not docstrings."""
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def test_the_shared_benchmark_layer_imports_and_names_no_unit():
    """``course_lib.bench`` finds what each unit declares (probe cases, cost model, host costs) through the
    registry: none of its modules imports a unit or names one in its code, so a unit is added without editing it."""
    root = Path(course_lib.__file__).parent
    graph = import_graph(root, "course_lib")
    units = {f"course_lib.{unit}" for unit in course_lib.UNITS}
    layer = [m for m in graph if m == "course_lib.bench" or m.startswith("course_lib.bench.")]
    assert len(layer) > 5
    found = [f"{m} -> {t}" for m in layer for t in sorted(graph[m]) if t in units or t.rpartition(".")[0] in units
             or any(t.startswith(u + ".") for u in units)]
    assert not found, "the benchmark layer imports units:\n" + "\n".join(found)
    named = []
    for path in sorted((root / "bench").glob("*.py")):
        for text in _strings(ast.parse(path.read_text(encoding="utf-8"))):
            words = set(text.replace("-", " ").replace("_", " ").replace(".", " ").split())
            named += [f"{path.name}: {text!r}" for unit in course_lib.UNITS if unit in words]
    assert not named, "the benchmark layer names units:\n" + "\n".join(named)
