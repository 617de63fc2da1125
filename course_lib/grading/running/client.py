"""The grader's side of a worker: starting it (in the run's sandbox), talking to it, ending it.

A :class:`Worker` is one child process (:mod:`course_lib.grading.running.worker`) running one
submission's code. Every request has a wall-clock limit; the resident memory of the worker
and everything it started is watched; a worker that hangs, crashes, exceeds its memory or
breaks the protocol is killed with all its descendants and raises :class:`WorkerFault`.
When a worker ends, its whole process tree is killed, along with any process this grader
adopted as a child subreaper (a double-forked daemon), and its private folder is deleted.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..protocol import ProtocolError, dumps, loads
from .sandbox import INSIDE_WORK, Sandbox, become_subreaper, kill_tree, not_dumpable, orphans, tree_rss_kb

__all__ = ["GradeOptions", "MachineTrouble", "Worker", "WorkerFault", "kill_all", "stopping"]

ROOT = Path(__file__).resolve().parents[3]
#: :data:`course_lib.sim._typing.SEED_ENV`: where a worker reads the grader's trusted typing cache (named here so
#: that a grader on a GPU need not import the simulator).
SEED_ENV = "COURSE_SIM_TYPING_SEED"


@dataclass(frozen=True)
class GradeOptions:
    """Limits of one submission's grading.

    Attributes
    ----------
    timeout : float
        Wall-clock seconds for each step: running the notebook's cells, and each test.
    memory_mb : int
        Address-space limit of the worker (``RLIMIT_AS``) in the simulator, and resident-memory
        limit of the worker and its descendants watched by the grader everywhere (a GPU driver
        maps far more address space than it uses, so on a GPU only the resident memory is
        limited). 0: no limit.
    max_file_mb : float
        Larger submission files are refused unread.
    max_reply_mb : float
        Largest reply accepted from the worker (a huge output is refused, not buffered).
    startup : float
        Seconds a worker may take to start (import the libraries) before the notebook runs;
        not counted in ``timeout``, so a loaded machine does not fail quick notebooks.
    """

    timeout: float = 60.0
    memory_mb: int = 4096
    max_file_mb: float = 20.0
    max_reply_mb: float = 64.0
    startup: float = 180.0


class WorkerFault(Exception):
    """The worker timed out, crashed, used too much memory or broke the protocol."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class MachineTrouble(RuntimeError):
    """The grading machine's trouble, not the student's (a worker cannot start): the run stops."""


_LIVE: set = set()  # running workers, killed on an interrupt
_LIVE_LOCK = threading.Lock()
_STOPPING = threading.Event()  # set on an interrupt: no new worker starts

#: Environment variables a worker keeps (by name or prefix): what Python, Numba and CUDA need,
#: and nothing else of the grader's environment (tokens, credentials).
_ENV_KEPT = ("PATH", "LANG", "LC_", "TZ", "LD_LIBRARY_PATH", "NUMBA_", "CUDA_", "NVIDIA_", "COURSE_",
             "CONDA_PREFIX", "VIRTUAL_ENV", "OMP_NUM_THREADS", "PYTHONHASHSEED")


def _environment(workdir: str) -> dict:
    from ... import device

    env = {k: v for k, v in os.environ.items() if k.startswith(_ENV_KEPT)}
    env.pop("COURSE_GRADING_MANIFEST", None)
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in paths if p != str(ROOT)])
    env["COURSE_BACKEND"] = device.backend()  # the same backend as the grader's references
    env["HOME"] = workdir
    env["TMPDIR"] = os.path.join(workdir, "tmp")
    # Bytecode: none written (-B), and none read from the course's __pycache__ folders, which
    # a submission might have forged: Python looks for .pyc files only under this empty folder.
    env["PYTHONPYCACHEPREFIX"] = os.path.join(workdir, "pycache")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["NUMBA_CACHE_DIR"] = os.path.join(workdir, "numba")  # nor Numba's caches (they hold pickles)
    return env


def stopping() -> threading.Event:
    """Set while a run is being interrupted (no new worker starts)."""
    return _STOPPING


class Worker:
    """One child process running one submission's code (see the module docstring).

    Parameters
    ----------
    problem_set : str
    options : GradeOptions
    sandbox : Sandbox
    sim_seed : int, optional
        The simulator's block and warp order.
    bytecode : Bytecode, optional
        The run's trusted bytecode (:mod:`course_lib.grading.running.bytecode`): mounted read-only under
        bubblewrap, copied (the files whose digest matches) into the worker's folder without it.
    """

    def __init__(self, problem_set: str, options: GradeOptions, sandbox: Sandbox, sim_seed: int | None = None,
                 bytecode=None):
        from ... import device

        if _STOPPING.is_set():
            raise WorkerFault("grading was interrupted")
        # Whoever starts workers (the command, grade() or grade_submission() in Python) is out of their reach,
        # and adopts what they leave behind (a double-forked daemon), to kill it with them.
        not_dumpable()
        become_subreaper()
        self.options, self.sandbox = options, sandbox
        self.cell, self.notes = None, []
        self.workdir = tempfile.mkdtemp(prefix="course-grading-")
        for sub in ("tmp", "pycache"):
            os.mkdir(os.path.join(self.workdir, sub), 0o700)
        if bytecode is not None and sandbox.kind == "none":
            # Without namespaces a submission could write into a shared folder: each worker gets a copy.
            bytecode.install(os.path.join(self.workdir, "pycache"))
        address_limit = options.memory_mb if device.is_simulator() else 0
        python_args = ["-B", "-m", "course_lib.grading.running.worker", problem_set, str(address_limit)]
        env = _environment(self.workdir)
        if sim_seed is not None:  # the simulator's block and warp order (course_lib.sim._engine.set_seed)
            env["COURSE_SIM_SEED"] = str(sim_seed)
        shared = bytecode.folder if bytecode is not None and sandbox.kind == "bwrap" else None
        # The course's kernels typed by the grader (read-only); the worker's own typing stays in its HOME.
        env.pop(SEED_ENV, None)
        if bytecode is not None:
            env[SEED_ENV] = bytecode.typing_seed(f"{INSIDE_WORK}/pycache" if shared else os.path.join(self.workdir,
                                                                                                    "pycache"))
        argv, env, cwd = sandbox.command(python_args, env, self.workdir, bytecode=shared)
        debug = bool(os.environ.get("COURSE_GRADING_DEBUG"))
        self.buffer = b""
        self._memory_checked = 0.0
        # Started and registered under the lock: until it is in _LIVE, another worker's kill() would take
        # this new child of the grader for an orphan a submission left and kill it.
        with _LIVE_LOCK:
            try:
                self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=None if debug else subprocess.DEVNULL, cwd=cwd, env=env,
                                             start_new_session=True)
            except OSError as exc:
                shutil.rmtree(self.workdir, ignore_errors=True)
                raise MachineTrouble(f"a grading worker could not start ({exc})") from None
            _LIVE.add(self)

    def wait_ready(self) -> None:
        """Wait until the worker has imported what it needs; raises :class:`WorkerFault`."""
        reply = self.request(None, self.options.startup)
        if reply.get("event") != "ready":
            self.kill()
            raise WorkerFault("the submission's process broke the grading protocol")
        self.notes = [str(n)[:200] for n in reply.get("notes", []) if isinstance(n, str)][:10]

    def request(self, message: dict | None, timeout: float) -> dict:
        """Send one request (None: only read) and return the reply; raises :class:`WorkerFault`."""
        if message is not None:
            try:
                self.proc.stdin.write(dumps(message))
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError):
                raise self._died() from None
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        limit = self.options.max_reply_mb * 1024 * 1024
        while True:
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                try:
                    reply = loads(line)
                except ProtocolError as exc:
                    self.kill()
                    raise WorkerFault(f"the submission's process broke the grading protocol ({exc})") from None
                if reply.get("event") == "cell":
                    self.cell = reply.get("index")
                    continue
                return reply
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                raise WorkerFault(f"timed out after {timeout:g} s (an infinite loop or a deadlock?)")
            ready, _, _ = select.select([fd], [], [], min(remaining, 0.25))
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise self._died()
                self.buffer += chunk
                if len(self.buffer) > limit:
                    self.kill()
                    raise WorkerFault(f"output too large (more than {self.options.max_reply_mb:g} MB)")
            self._watch_memory()

    def _watch_memory(self) -> None:
        now = time.monotonic()
        if self.options.memory_mb <= 0 or now - self._memory_checked < 0.25:
            return
        self._memory_checked = now
        if tree_rss_kb(self.proc.pid) > self.options.memory_mb * 1024:
            self.kill()
            raise WorkerFault(f"used more than {self.options.memory_mb} MB of memory")

    def _died(self) -> WorkerFault:
        code = self.proc.wait()
        self.kill()
        if self.sandbox.kind == "bwrap" and code > 128:
            code = -(code - 128)  # bwrap reports its child's death by signal N as exit 128 + N
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            hint = " (memory limit?)" if name == "SIGKILL" else ""
            return WorkerFault(f"the submission's process crashed ({name}){hint}")
        return WorkerFault(f"the submission's process exited (exit code {code}): os._exit, sys.exit or a crash")

    def kill(self) -> None:
        """Kill the worker, every process below it, and every orphan this grader adopted."""
        with _LIVE_LOCK:  # no worker starts while the orphans are listed (see __init__)
            adopted = orphans([w.proc.pid for w in _LIVE] + [self.proc.pid])
        kill_tree([self.proc.pid], adopted=adopted)
        self.proc.wait()

    def close(self) -> None:
        """End the worker: killed with its whole tree, as after a fault. Its replies are all here and its
        state is the submission's, of no further use; a polite exit would cost about a second per submission
        in the interpreter's teardown (numba, the simulator's typing process)."""
        self.kill()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        _remove_tree(self.workdir)
        with _LIVE_LOCK:
            _LIVE.discard(self)


def _remove_tree(path: str) -> None:
    """Delete a worker's folder, whatever permissions its content was given."""
    def unlock(function, name, _exc):
        try:
            os.chmod(os.path.dirname(name), 0o700)
            os.chmod(name, 0o700)
            function(name)
        except OSError:
            pass

    shutil.rmtree(path, onerror=unlock)
    if os.path.exists(path):
        shutil.rmtree(path, ignore_errors=True)


def kill_all() -> None:
    """Stop every running worker (an interrupt); no new one starts until the run ends."""
    _STOPPING.set()
    with _LIVE_LOCK:
        workers = list(_LIVE)
    for worker in workers:
        worker.kill()

