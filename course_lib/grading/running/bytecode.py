"""Trusted bytecode for a grading run's workers, compiled once per run instead of once per worker.

A worker reads no bytecode from the course's ``__pycache__`` folders (a submission might have
forged it): Python looks for ``.pyc`` files only under ``PYTHONPYCACHEPREFIX``, which used to
be an empty folder per worker, so every worker and its typing process compiled some thousand
modules (numba, numba-cuda's compiler, NumPy, the course) from source: seconds of CPU per
submission. :meth:`Bytecode.build` instead runs one trusted process per grading run, before
any student code, which imports what a worker imports (and starts the simulator's typing
process, which imports numba-cuda's compiler) with that prefix pointing at a folder of the
grader's, writing the bytecode there; the grader then records the digest of every file.

Each worker gets that bytecode read-only: under bubblewrap the folder is mounted read-only as
the worker's prefix (:meth:`course_lib.grading.running.sandbox.Sandbox.command`); without namespaces,
where a submission could write into any folder of the grader's user, each worker gets its own
copy, made by :meth:`Bytecode.install` from files whose digest still matches (a changed file
is left out, and that module is compiled from source as before). Python checks every ``.pyc``
against its source's modification time and size, so a course file changed since is compiled
from source too. Bytecode is the compiled form of the same source: grades do not change.

Several runs may share one folder (a test suite's runs, an instructor grading every problem set
in turn): :meth:`Bytecode.build` for several problem sets, then :meth:`Bytecode.share` writes its
digests beside it and returns ``FOLDER#SHA256``, the digest of that index. A run started with
that value in :data:`SHARED_ENV` uses the folder when the index still has that digest and every
file still has its digest (:meth:`Bytecode.shared`), and compiles its own otherwise: a file changed
between runs is never used, since the value the run trusts came from its caller, not from the disk.

The same priming run fills a read-only cache of the simulator's static typing (:mod:`course_lib.sim._typing`)
in that folder (:data:`TYPING_SEED`): the course's own kernels that workers launch (the decoys of
measurement tests, :func:`prime_typing`), typed once by the grader instead of once per worker (a second or
so each). Only the trusted priming run writes it, before any student's code runs; workers read it through
:data:`course_lib.sim._typing.SEED_ENV` (under bubblewrap in the read-only mount, without namespaces in
their own verified copy) and keep what they type themselves, their own kernels, in their private cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

from .client import SEED_ENV, _environment

__all__ = ["Bytecode", "LazyBytecode", "PRIMED_MODULES", "SEED_ENV", "SHARED_ENV", "TYPING_SEED"]

#: Environment variable of a grading run: ``FOLDER#SHA256`` from :meth:`Bytecode.share`, a folder built
#: beforehand that the run uses instead of compiling its own.
SHARED_ENV = "COURSE_GRADING_BYTECODE"

#: The simulator's typing cache inside the folder (``$XDG_CACHE_HOME`` of the priming run, then
#: ``course_lib/sim-typing``): a relative path no source's absolute path mirrors.
TYPING_SEED = os.path.join("course-sim-typing", "course_lib", "sim-typing")


#: Modules a worker imports while it grades (beyond those its start imports), compiled by the priming run too.
PRIMED_MODULES = ("course_lib.grading.running.worker", "course_lib.grading.authoring.harness",
                  "course_lib.grading.authoring.measuring", "course_lib.grading.authoring.signature",
                  "course_lib.sim._check", "course_lib.sim._profile",
                  "course_lib.sim._record", "course_lib.sim._instrument", "course_lib.sim.remote",
                  "IPython.core.inputtransformer2")


def _digest(path: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


class Bytecode:
    """A folder of bytecode compiled by the grader, with the digest of every file.

    Attributes
    ----------
    folder : str
        The bytecode prefix (a tree of ``.pyc`` files mirroring the sources' absolute paths).
    digests : dict
        ``relative path -> sha256`` of every file, recorded right after the priming run.
    """

    def __init__(self, folder: str, digests: dict, owned: bool = True):
        self.folder, self.digests, self.owned = folder, dict(digests), owned

    @classmethod
    def build(cls, problem_set, timeout: float = 300.0) -> "Bytecode | None":
        """Compile what a worker of ``problem_set`` imports; None when the priming run fails (workers then
        compile from source, as without this).

        Parameters
        ----------
        problem_set : str or sequence of str
            e.g. ``"ps1"``: its questions module and its solution's imports are compiled too (for each
            problem set, given several).
        timeout : float
            Seconds the priming run may take.
        """
        problem_sets = [problem_set] if isinstance(problem_set, str) else list(problem_set)
        folder = tempfile.mkdtemp(prefix="course-grading-bytecode-")
        work = tempfile.mkdtemp(prefix="course-grading-prime-")
        try:
            os.mkdir(os.path.join(work, "tmp"), 0o700)
            env = _environment(work)
            env["PYTHONPYCACHEPREFIX"] = folder
            env["XDG_CACHE_HOME"] = os.path.join(folder, TYPING_SEED.split(os.sep)[0])  # the typing it does
            env.pop("PYTHONDONTWRITEBYTECODE", None)  # this run is the one that writes it
            done = subprocess.run([sys.executable, "-m", "course_lib.grading.running.bytecode", *problem_sets], env=env,
                                  cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, timeout=timeout)
            if done.returncode != 0:
                raise RuntimeError(f"exit {done.returncode}")
        except (OSError, RuntimeError, subprocess.TimeoutExpired):
            shutil.rmtree(folder, ignore_errors=True)
            return None
        finally:
            shutil.rmtree(work, ignore_errors=True)
        digests = {}
        for root, _, files in os.walk(folder):
            for name in files:
                path = os.path.join(root, name)
                kept = name.endswith(".pickle") if _in_typing_seed(path, folder) else name.endswith(".pyc")
                if kept and not os.path.islink(path):
                    digests[os.path.relpath(path, folder)] = _digest(path)
        return cls(folder, digests)

    def typing_seed(self, root: str) -> str:
        """Where a worker finds the trusted typing cache when this folder is at ``root`` (its read-only mount,
        or the folder :meth:`install` copied into)."""
        return os.path.join(root, TYPING_SEED)

    def install(self, target: str) -> int:
        """Copy every file whose digest still matches into the folder ``target``; returns how many.

        A file changed since :meth:`build` (only a process of the grader's user could) is left out:
        the worker compiles that module from source.
        """
        copied = 0
        for relative, digest in self.digests.items():
            source = os.path.join(self.folder, relative)
            try:
                with open(source, "rb") as fh:
                    data = fh.read()
            except OSError:
                continue
            if hashlib.sha256(data).hexdigest() != digest:
                continue
            path = os.path.join(target, relative)
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            with open(path, "wb") as fh:
                fh.write(data)
            copied += 1
        return copied

    def intact(self) -> bool:
        """True when every file still has its recorded digest (and no file was added)."""
        seen = 0
        for root, _, files in os.walk(self.folder):
            for name in files:
                path = os.path.join(root, name)
                relative = os.path.relpath(path, self.folder)
                if relative not in self.digests or os.path.islink(path) or _digest(path) != self.digests[relative]:
                    return False
                seen += 1
        return seen == len(self.digests)

    def share(self) -> str:
        """Write the digests beside the folder (``FOLDER.json``) and return ``FOLDER#SHA256`` (that file's
        digest), the value of :data:`SHARED_ENV` for the runs that are to use this folder."""
        index = json.dumps(sorted(self.digests.items())).encode()
        tmp = f"{self.folder}.json.{os.getpid()}.tmp"
        with open(tmp, "wb") as fh:
            fh.write(index)
        os.replace(tmp, self.folder + ".json")
        return f"{self.folder}#{hashlib.sha256(index).hexdigest()}"

    @classmethod
    def shared(cls, value: str) -> "Bytecode | None":
        """The folder that :meth:`share` named by ``value``, when its index still has the digest in ``value``
        and every file its recorded digest (:meth:`intact`); None otherwise. The run does not delete it."""
        folder, _, digest = value.rpartition("#")
        if not folder or not os.path.isdir(folder) or os.path.islink(folder):
            return None
        try:
            with open(folder + ".json", "rb") as fh:
                index = fh.read()
            if hashlib.sha256(index).hexdigest() != digest:
                return None
            digests = dict(json.loads(index))
        except (OSError, ValueError, TypeError):
            return None
        found = cls(folder, digests, owned=False)
        return found if found.intact() else None

    def close(self) -> None:
        """Delete the folder (and the index :meth:`share` wrote), unless it was given by :meth:`shared`."""
        if self.owned:
            shutil.rmtree(self.folder, ignore_errors=True)
            with contextlib.suppress(OSError):
                os.unlink(self.folder + ".json")


class LazyBytecode:
    """A run's :class:`Bytecode`, built when the first worker asks for it (a run that starts no worker pays
    nothing), once for all threads; :meth:`get` returns None when it could not be built. With
    :data:`SHARED_ENV` set, the folder it names is used instead, if it is intact (:meth:`Bytecode.shared`)."""

    def __init__(self, problem_set: str, log=None):
        import threading

        self.problem_set, self.log = problem_set, log or (lambda line: None)
        self._lock, self._built, self._bytecode = threading.Lock(), False, None

    def get(self) -> "Bytecode | None":
        with self._lock:
            if not self._built:
                self._built = True
                given = os.environ.get(SHARED_ENV)
                if given:
                    self._bytecode = Bytecode.shared(given)
                    if self._bytecode is None:
                        self.log(f"the bytecode named by {SHARED_ENV} is missing or changed since it was built: "
                                 "this run compiles its own")
                if self._bytecode is None:
                    self._bytecode = Bytecode.build(self.problem_set)
                if self._bytecode is None:
                    self.log("the workers' bytecode could not be compiled beforehand: each worker compiles its "
                             "modules itself")
            return self._bytecode

    def close(self) -> None:
        """Delete the folder, if it was built."""
        with self._lock:
            if self._bytecode is not None:
                self._bytecode.close()
                self._bytecode = None


def solution_imports(problem_set: str) -> list:
    """The modules the problem set's solution notebook imports (``import x``, ``from x import y``), read with
    :mod:`ast`: a submission imports much the same, so the priming run compiles them too."""
    import ast

    import nbformat

    from ..catalog import solution_path

    names = []
    for cell in nbformat.read(solution_path(problem_set), as_version=4).cells:
        if cell.cell_type != "code":
            continue
        # IPython lines (magics, shell commands) are not Python: left out of the parse.
        source = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.append(node.module)
    return sorted(set(names))


def _in_typing_seed(path: str, folder: str) -> bool:
    return os.path.relpath(path, folder).startswith(TYPING_SEED.split(os.sep)[0] + os.sep)


def prime_typing(problem_set: str) -> int:
    """Type the course's own kernels that the workers of ``problem_set`` launch (the decoys of its measurement
    tests: ``produce.typing_launches`` of :func:`~course_lib.grading.authoring.measuring.kernel_measurement_test`),
    each under the names a worker types it by, into this process's typing cache; returns how many launches ran.

    Run by the trusted priming run only, before any student's code: its cache becomes the workers' read-only seed.
    A launch that fails is left out (its kernel is then typed in each worker, as without this).
    """
    from ...sim import _typing
    from ..core import questions_of

    ran = 0
    for question in questions_of(problem_set):
        for test in question.tests:
            launches = getattr(test.produce, "typing_launches", None)
            for run in (launches() if launches else ()):
                # The memory cache knows a copy's code as the original's: each name is typed to disk on its own.
                _typing._memory.clear()
                try:
                    run()
                    ran += 1
                except Exception:  # noqa: BLE001  (a worker types it itself)
                    pass
    return ran


def _prime(*problem_sets: str) -> int:
    """The priming run: import what a worker of each problem set imports, and start the typing process
    (it compiles its own)."""
    import importlib

    import course_lib  # noqa: F401  (chooses the backend, as in a worker)

    from ..core import questions_of

    for problem_set in problem_sets:
        for name in (*PRIMED_MODULES, *solution_imports(problem_set)):
            try:
                importlib.import_module(name)
            except ImportError:  # an optional one (IPython): a worker without it does not import it either
                pass
        questions_of(problem_set)
    from ... import device

    if device.is_simulator():
        from ...sim import _typing

        _typing.wait_ready()
        if _typing.enabled():
            for problem_set in problem_sets:
                prime_typing(problem_set)
        _typing._shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(_prime(*sys.argv[1:]))
