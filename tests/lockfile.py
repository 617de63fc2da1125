"""The lock of exact versions (``requirements/lock.txt``) read as data, for the tests and the drift check.

``python -m tests.lockfile --compare`` prints the installed distributions whose version is not the
lock's (what ``.ci/drift`` installed beyond it); ``python -m tests.lockfile --lower-bound NAME`` prints
the lowest version that ``pyproject.toml`` allows for NAME (what ``.ci/run`` installs to test the
oldest release the project claims to support).
"""

from __future__ import annotations

import argparse
import re
import sys
from importlib import metadata
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "lock.txt"
_PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._\-]*)==(?P<version>[^\s;]+)\s*(?:;\s*(?P<marker>.+))?$")


def read_lock(path=LOCK):
    """Pins of the lock.

    Returns
    -------
    dict
        Canonical name -> list of ``(version, marker or None)``; a name has several entries where
        the universal lock forks on the Python version or the platform.
    """
    pins = {}
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        match = _PIN.match(text)
        if match is None:
            raise ValueError(f"{path}:{number}: not an exact pin 'name==version [; marker]': {text!r}")
        marker = Marker(match["marker"]) if match["marker"] else None
        pins.setdefault(canonicalize_name(match["name"]), []).append((match["version"], marker))
    return pins


def pinned_here(pins, name):
    """The lock's version of ``name`` for this interpreter and platform, or None."""
    for version, marker in pins.get(canonicalize_name(name), []):
        if marker is None or marker.evaluate():
            return version
    return None


def project_requirements(extras=("cu13", "gpu-cu13", "test", "site", "nbgrader")):
    """The requirements of ``pyproject.toml``: runtime ones and those of ``extras`` (list of Requirement)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    texts = list(project["dependencies"])
    for extra in extras:
        texts += project["optional-dependencies"][extra]
    return [Requirement(text) for text in texts]


def lower_bound(name):
    """The lowest version ``pyproject.toml`` allows for ``name`` (its ``>=`` or ``==`` bound)."""
    for requirement in project_requirements():
        if canonicalize_name(requirement.name) == canonicalize_name(name):
            for spec in requirement.specifier:
                if spec.operator in (">=", "=="):
                    return spec.version
            raise ValueError(f"pyproject.toml gives {name} no lower bound ({requirement})")
    raise ValueError(f"{name} is not a dependency in pyproject.toml")


def differences(pins):
    """Installed distributions whose version differs from the lock's (list of ``(name, locked, installed)``)."""
    found = []
    for dist in metadata.distributions():
        name = canonicalize_name(dist.metadata["Name"] or "")
        locked = pinned_here(pins, name)
        if name in pins and locked != dist.version:
            found.append((name, locked, dist.version))
    return sorted(found)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tests.lockfile", description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--compare", action="store_true", help="print installed versions that are not the lock's")
    group.add_argument("--lower-bound", metavar="NAME", help="print the lowest version pyproject.toml allows")
    args = parser.parse_args(argv)
    if args.lower_bound:
        print(lower_bound(args.lower_bound))
        return 0
    found = differences(read_lock())
    if not found:
        print("every locked distribution is installed at the lock's version")
    for name, locked, installed in found:
        print(f"{name}: lock {locked or '(not for this platform)'}, installed {installed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
