"""The course files the judge uses: a manifest of their hashes, and their state during a run.

The grader judges with the course package (questions, references, this grading package),
the solution notebooks (which say how each answer is passed), a checkout's grading resources
(the answer keys and hints, :mod:`course_lib.grading.resources`) and the Python path files of
site-packages (``*.pth``, editable-install hooks, which run at every interpreter start).

- ``python -m course_lib.grading manifest`` (after installing or updating the course; ``release``
  updates an existing one) records their SHA-256 hashes in a manifest file, by default
  ``~/.local/share/course_lib/grading-manifest-<checkout>.json``. ``grade`` verifies the files
  against it before grading and refuses, naming what changed, if they differ.
- During a run, :class:`CourseState` holds their contents in memory (read when the run
  starts) and, after each submission, puts back any that changed and removes any added:
  that submission is refused for tampering, and the next one is judged with the course as
  it was. Bytecode and Numba cache files written in the course's folders during the run are
  removed too (workers neither write nor read them).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

from ..results.report import write_atomic

__all__ = ["CourseState", "ManifestError", "build", "default_path", "verify"]

PACKAGE = Path(__file__).resolve().parents[2]
ROOT = PACKAGE.parent
_CACHE_SUFFIXES = (".pyc", ".pyo", ".nbi", ".nbc")


class ManifestError(RuntimeError):
    """The course files differ from the manifest."""


def default_path() -> Path:
    """``$COURSE_GRADING_MANIFEST``, else a file per checkout under ``$XDG_DATA_HOME/course_lib``."""
    if os.environ.get("COURSE_GRADING_MANIFEST"):
        return Path(os.environ["COURSE_GRADING_MANIFEST"])
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    checkout = hashlib.sha256(str(PACKAGE).encode()).hexdigest()[:12]
    return base / "course_lib" / f"grading-manifest-{checkout}.json"


def _site_dirs() -> list:
    return sorted({os.path.realpath(p) for p in sys.path
                   if p and ("site-packages" in p or "dist-packages" in p) and os.path.isdir(p)})


def _is_cache(path: Path) -> bool:
    return "__pycache__" in path.parts or path.suffix in _CACHE_SUFFIXES


def watched_files() -> dict:
    """``label -> path`` of every file the judge relies on (see the module docstring)."""
    files = {}
    for path in sorted(PACKAGE.rglob("*")):
        if path.is_file() and not _is_cache(path.relative_to(PACKAGE)):
            files[f"course_lib/{path.relative_to(PACKAGE).as_posix()}"] = path
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        files[f"solutions/{path.name}"] = path
    # A checkout's answer keys and hints (an installed course ships them under course_lib/_shipped/, read above).
    for path in sorted((ROOT / "grading_resources").glob("*/ps*_*.*")):
        files[f"grading_resources/{path.relative_to(ROOT / 'grading_resources').as_posix()}"] = path
    for folder in _site_dirs():
        for path in sorted(Path(folder).iterdir()):
            if path.is_file() and (path.suffix == ".pth" or path.name.startswith("__editable__")):
                files[f"site-packages/{path.name}"] = path
    return files


def _cache_files() -> dict:
    return {path: _hash_file(path) for path in PACKAGE.rglob("*")
            if path.is_file() and _is_cache(path.relative_to(PACKAGE))}


def _hash_file(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


def _hashes() -> dict:
    return {label: _hash_file(path) for label, path in watched_files().items()}


def build(path=None) -> Path:
    """Record the hashes of the watched files in the manifest (written atomically); returns its path."""
    path = Path(path) if path else default_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps({"course": str(PACKAGE), "python": sys.version.split()[0], "files": _hashes()},
                                  indent=1, sort_keys=True))
    return path


def _differences(recorded: dict, current: dict, limit: int = 8) -> list:
    changed = sorted(k for k in recorded.keys() & current.keys() if recorded[k] != current[k])
    missing = sorted(recorded.keys() - current.keys())
    added = sorted(current.keys() - recorded.keys())
    return ([f"changed {k}" for k in changed] + [f"missing {k}" for k in missing]
            + [f"added {k}" for k in added])[:limit]


def verify(path=None, *, absent_ok=()) -> None:
    """Check the watched files against the manifest at ``path``.

    ``absent_ok``: label prefixes (``"solutions/"``) of files that may be missing (deleted on purpose,
    as Gradescope's run deletes the solutions); changed or added ones are still refused.

    Raises
    ------
    ManifestError
        The manifest cannot be read, or files changed, disappeared or appeared (named, with what to do).
    """
    path = Path(path) if path else default_path()
    try:
        recorded = json.loads(path.read_text())["files"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ManifestError(f"cannot read the course manifest {path} ({exc})") from None
    current = _hashes()
    recorded = {k: v for k, v in recorded.items() if k in current or not k.startswith(tuple(absent_ok))}
    problems = _differences(recorded, current)
    if problems:
        raise ManifestError(
            f"the course files differ from the manifest {path}: {'; '.join(problems)}. A submission graded "
            "without a sandbox may have changed them: restore them (git checkout / reinstall the course). If you "
            "changed them yourself, record them again with `python -m course_lib.grading manifest`.")


class CourseState:
    """The watched files' contents at the start of a run, to put back after each submission."""

    def __init__(self):
        self.files = {}
        for label, path in watched_files().items():
            try:
                self.files[label] = (path, path.read_bytes())
            except OSError:
                continue
        self.caches = _cache_files()
        self.removed_caches = 0

    def restore(self) -> list:
        """Put back changed files and remove added ones; returns what had changed (labels)."""
        changed = []
        current = watched_files()
        for label, path in current.items():
            if label not in self.files:
                changed.append(f"added {label}")
                try:
                    path.unlink()
                except OSError:
                    pass
        for label, (path, content) in self.files.items():
            try:
                same = not path.is_symlink() and path.read_bytes() == content
            except OSError:
                same = False
            if not same:
                changed.append(f"changed {label}")
                _write_back(path, content)
        for path, digest in _cache_files().items():
            if self.caches.get(path) != digest:
                try:
                    path.unlink()
                    self.removed_caches += 1
                except OSError:
                    pass
        return changed


def _write_back(path: Path, content: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, content)  # the rename replaces a link or a named pipe left at the path too
    except OSError:
        pass
