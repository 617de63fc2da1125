"""The lock (requirements/lock.txt) pins exact versions that satisfy pyproject.toml and environment.yml.

CI and the README's test command install with ``-c requirements/lock.txt``, so a release published
tomorrow cannot change what they test; ``.ci/refresh-lock`` regenerates it and ``.ci/drift`` tries
the newest releases instead.
"""

import os
import re

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from tests.lockfile import LOCK, ROOT, project_requirements, read_lock

pytestmark = pytest.mark.drift


@pytest.fixture(scope="module")
def pins():
    return read_lock()


def _environment_yml_specs():
    """(name, specifier) of every package environment.yml asks for, conda and pip sections alike."""
    specs, section = [], None
    for line in (ROOT / "environment.yml").read_text().splitlines():
        heading = re.match(r"^(\w+):", line)
        if heading:
            section = heading.group(1)
        item = re.match(r"^\s*-\s+(?!-)([^#]+?)\s*$", line)
        if section != "dependencies" or not item or item.group(1).endswith(":") or item.group(1).startswith("-e"):
            continue
        text = item.group(1)
        if re.match(r"^(python|pip)\b(?![-_])", text):
            continue
        requirement = Requirement(text.replace("_", "-"))
        specs.append((canonicalize_name(requirement.name), requirement.specifier))
    return specs


def _violations(pins, name, specifier):
    versions = [version for version, _ in pins.get(name, [])]
    if not versions:
        return [f"{name}: not in the lock"]
    return [f"{name}=={v} does not satisfy {specifier}" for v in versions if not SpecifierSet(str(specifier)).contains(v, prereleases=True)]


def test_every_line_of_the_lock_is_an_exact_pin(pins):
    assert len(pins) > 50  # the whole tree, not only the direct dependencies
    assert all(version for entries in pins.values() for version, _ in entries)


def test_the_lock_satisfies_pyproject(pins):
    problems = []
    for requirement in project_requirements():
        problems += _violations(pins, canonicalize_name(requirement.name), requirement.specifier)
        for extra in requirement.extras:  # e.g. numba-cuda[cu13]: its own dependencies are locked too
            assert extra in {"cu12", "cu13"}, f"unexpected extra {requirement}"
    assert not problems, "requirements/lock.txt is stale; run .ci/refresh-lock:\n" + "\n".join(problems)


def test_the_lock_satisfies_environment_yml(pins):
    specs = _environment_yml_specs()
    assert {"numpy", "numba-cuda", "cloudpickle", "ml-dtypes"} <= {name for name, _ in specs}
    problems = [p for name, spec in specs for p in _violations(pins, name, spec)]
    assert not problems, "environment.yml and requirements/lock.txt disagree:\n" + "\n".join(problems)


def test_the_lock_says_how_to_refresh_it():
    head = LOCK.read_text().splitlines()[:3]
    assert any(".ci/refresh-lock" in line for line in head), head
    script = ROOT / ".ci" / "refresh-lock"
    assert os.access(script, os.X_OK) and "uv pip compile" in script.read_text()


def test_ci_and_the_readme_install_from_the_lock():
    readme = (ROOT / "README.md").read_text()
    command = readme.split("<!-- test-command", 1)[1].splitlines()[2]
    assert "-c requirements/lock.txt" in command
    testing = (ROOT / "docs" / "testing.md").read_text()  # the manual says how maintainers keep the lock
    assert ".ci/refresh-lock" in testing and ".ci/drift" in testing

