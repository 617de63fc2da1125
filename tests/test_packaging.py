"""pyproject.toml and environment.yml describe the same environment."""

import re
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _name(requirement):
    return re.split(r"[\s<>=!~\[;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _environment_yml_names():
    names, section = set(), None
    for line in (ROOT / "environment.yml").read_text().splitlines():
        heading = re.match(r"^(\w+):", line)
        if heading:
            section = heading.group(1)
        item = re.match(r"^\s*-\s+(?!-)([^#]+)", line)
        if section == "dependencies" and item and not item.group(1).strip().endswith(":"):
            names.add(_name(item.group(1)))
    return names


def test_every_runtime_dependency_is_in_environment_yml():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = {_name(r) for r in project["dependencies"]}
    missing = runtime - _environment_yml_names()
    assert not missing, f"in pyproject.toml but not in environment.yml: {sorted(missing)}"


def test_environment_yml_has_no_runtime_dependency_pyproject_lacks():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {_name(r) for r in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        declared |= {_name(r) for r in extra}
    extra_names = _environment_yml_names() - declared - {"python", "pip"}
    assert not extra_names, f"in environment.yml but not in pyproject.toml: {sorted(extra_names)}"


def test_numba_cuda_is_pinned_exactly():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = [r for r in project["dependencies"] if _name(r) == "numba-cuda"]
    assert pins and "==" in pins[0]


# --------------------------------------------------------------------------- the install without the CUDA wheels
#: What needs the toolkit wheels of the [cu13]/[cu12] extra on a machine without a GPU: compiling to PTX.
_COMPILES = re.compile(r"\b(compile_kernel|compile_resources|compile_ptx|compile_all|compile_check)\s*\(")


def _code(path):
    import nbformat

    return "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")


def test_the_readme_names_every_lesson_the_lighter_install_cannot_run():
    """The Quickstart's list of lessons that stop without the CUDA wheels is the list of lessons that compile."""
    compiling = [p.name[:2] for p in sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb")) if _COMPILES.search(_code(p))]
    readme = (ROOT / "docs" / "students.md").read_text()  # the manual's page for students
    (paragraph,) = [b for b in readme.split("\n\n") if b.startswith("**What the `[cu13]` extra is for.**")]
    said = re.search(r"lessons ([\d, and]+) then stop", " ".join(paragraph.split())).group(1)
    assert re.findall(r"\d\d", said) == compiling, (said, compiling)


def test_problem_sets_and_grading_need_no_compiler():
    """The lighter install runs every problem set: no solution, problem set or grader compiles to PTX."""
    notebooks = sorted((ROOT / "solutions").glob("*.ipynb")) + sorted((ROOT / "problem_sets").glob("*.ipynb"))
    assert notebooks and not [p.name for p in notebooks if _COMPILES.search(_code(p))]
    graders = sorted((ROOT / "course_lib" / "grading").rglob("*.py")) + sorted((ROOT / "course_lib").glob("*/questions.py"))
    assert (ROOT / "course_lib" / "grading" / "running" / "grader.py") in graders  # the parts' folders too
    assert not [p.name for p in graders if _COMPILES.search(p.read_text())]


def test_the_toolkit_wheels_come_only_from_the_extra():
    """numba-cuda needs cuda-bindings to import (a plain dependency); NVVM and the rest come with the extra only."""
    from importlib.metadata import requires

    plain = [r for r in requires("numba-cuda") if "extra ==" not in r]
    assert any(_name(r) == "cuda-bindings" for r in plain)
    assert not any(_name(r).startswith(("cuda-toolkit", "nvidia-")) for r in plain)
