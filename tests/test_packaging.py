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
