"""Where a submission's process runs: a bubblewrap sandbox when there is one, and process control.

Two modes (``--sandbox=auto|require|off``):

``bwrap``
    Each worker runs under bubblewrap (``bwrap``, the sandbox Flatpak uses) in new user, PID,
    IPC, network, UTS and mount namespaces, with ``--die-with-parent`` and ``--new-session``:
    it sees only the system's ``/usr`` (and ``/lib*``), the Python installation and the course
    package, all read-only, a private ``/proc`` in which the grader's processes do not exist,
    a minimal ``/dev``, and a private, size-limited tmpfs for ``/tmp`` (its working folder,
    HOME and TMPDIR). No network. Not the grader's hints (:mod:`course_lib.grading.resources`): a
    checkout's ``grading_resources/`` is outside the package, and a copy inside a folder it sees
    (``_shipped/``, or where ``$COURSE_GRADING_RESOURCES`` points) is covered by an empty tmpfs. When the worker ends, every process it started dies with
    its PID namespace.

``none``
    No namespaces (bubblewrap missing, or ``--sandbox=off``). The protections that need none
    still apply (see :mod:`course_lib.grading.running.grader` and :mod:`course_lib.grading.running.confine`):
    the grader is a child subreaper and kills every descendant of a worker when it ends,
    workers get a private working folder, HOME and TMPDIR (deleted afterwards), cannot signal
    or trace other processes (seccomp, via libseccomp), write no bytecode and read none from
    the course's ``__pycache__``; the course files are verified before and after each submission.

The process-tree helpers here read ``/proc`` (Linux).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import site
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Sandbox", "become_subreaper", "descendants", "kill_tree", "not_dumpable", "orphans", "resolve",
           "tree_rss_kb"]

#: Size of a bubblewrap worker's /tmp (its working folder, HOME and TMPDIR).
TMPFS_MB = 512
#: Mount point of the worker's folder inside the sandbox.
INSIDE_WORK = "/tmp/work"


@dataclass(frozen=True)
class Sandbox:
    """How this run's workers are started.

    Attributes
    ----------
    kind : str
        ``"bwrap"`` or ``"none"``.
    note : str
        One line for the instructor saying which mode runs and, without bubblewrap, why.
    bwrap : str
        Path of the bwrap executable (``""`` in mode none).
    """

    kind: str
    note: str
    bwrap: str = ""

    def command(self, python_args: list, env: dict, workdir: str, bytecode: str | None = None) -> tuple:
        """``(argv, env, cwd)`` to start ``python python_args...`` as a worker in this mode.

        ``bytecode``: under bubblewrap, a folder of the grader's trusted bytecode
        (:mod:`course_lib.grading.running.bytecode`), mounted read-only as the worker's bytecode prefix.
        """
        if self.kind == "none":
            return [sys.executable, *python_args], env, workdir
        args = [self.bwrap, *_bwrap_options(bytecode), "--chdir", INSIDE_WORK, "--clearenv"]
        inside = dict(env, HOME=INSIDE_WORK, TMPDIR=f"{INSIDE_WORK}/tmp", PYTHONPYCACHEPREFIX=f"{INSIDE_WORK}/pycache",
                      NUMBA_CACHE_DIR=f"{INSIDE_WORK}/numba")
        for key, value in sorted(inside.items()):
            args += ["--setenv", key, value]
        return [*args, "--", sys.executable, *python_args], {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, "/"


def _course_dir() -> Path:
    return Path(__file__).resolve().parents[2]


def _python_dirs() -> list:
    """Folders the interpreter and its packages live in (read-only in the sandbox)."""
    dirs = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
            os.path.dirname(os.path.realpath(sys.executable)), os.path.dirname(os.path.abspath(sys.executable))}
    try:
        dirs.update(site.getsitepackages())
    except AttributeError:  # some virtualenv versions
        pass
    for entry in sys.path:
        if entry and os.path.isdir(entry) and ("site-packages" in entry or "dist-packages" in entry):
            dirs.add(entry)
    keep = sorted({os.path.realpath(d) for d in dirs if d and os.path.isdir(d)})
    # Drop folders inside another kept one, and those already under /usr.
    out = []
    for d in keep:
        if d == "/" or d.startswith("/usr/") or any(d.startswith(o + os.sep) for o in out):
            continue
        out.append(d)
    return out


def _bwrap_options(bytecode: str | None = None) -> list:
    options = ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts",
               "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
               "--uid", "65534", "--gid", "65534",
               # The private /tmp first: what is bound below stays visible when it lies under /tmp.
               "--proc", "/proc", "--dev", "/dev",
               "--size", str(TMPFS_MB * 2**20), "--tmpfs", "/tmp",
               "--dir", INSIDE_WORK, "--dir", f"{INSIDE_WORK}/tmp",
               *(["--ro-bind", bytecode, f"{INSIDE_WORK}/pycache"] if bytecode else ["--dir", f"{INSIDE_WORK}/pycache"]),
               "--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = f"/{name}"
        if os.path.islink(path):
            options += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            options += ["--ro-bind", path, path]
    for path in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime", "/etc/alternatives"):
        options += ["--ro-bind-try", path, path]
    for path in _python_dirs():
        options += ["--ro-bind", path, path]
    course = str(_course_dir())
    options += ["--ro-bind", course, course]
    shipped = os.path.join(course, "_shipped")
    if os.path.isdir(shipped):  # an installed package's copy of the solutions and hints: not for submissions to read
        options += ["--tmpfs", shipped]
    options += _hidden_resources([*_python_dirs(), course, "/usr"], hidden=shipped)
    # A GPU: its device files and what the driver reads about it.
    gpu = sorted(str(p) for p in Path("/dev").glob("nvidia*"))
    if gpu:
        for dev in gpu:
            options += ["--dev-bind", dev, dev]
        options += ["--ro-bind-try", "/sys", "/sys", "--ro-bind-try", "/proc/driver/nvidia", "/proc/driver/nvidia"]
    return options


def _hidden_resources(bound, hidden: str) -> list:
    """``--tmpfs`` over each folder of the grader's hints (:mod:`course_lib.grading.resources`) that lies inside a
    folder the worker sees (``hidden``, already under a tmpfs, aside): a checkout's ``grading_resources/`` is
    outside the package and never bound, but ``$COURSE_GRADING_RESOURCES`` may name one under site-packages."""
    from ..resources import folders

    def inside(path, folder):
        return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)

    options = []
    for folder in folders():
        path = os.path.realpath(folder)
        if os.path.isdir(path) and not inside(path, os.path.realpath(hidden)) \
                and any(inside(path, os.path.realpath(b)) for b in bound):
            options += ["--tmpfs", path]
    return options


def _probe(bwrap: str) -> str:
    """Empty if a bwrap sandbox with every namespace starts here, else why not (one line)."""
    sandbox = Sandbox("bwrap", "", bwrap)
    argv, env, cwd = sandbox.command(["-S", "-c", "pass"], {}, "/")
    try:
        done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not run ({exc})"
    if done.returncode != 0:
        lines = [line for line in (done.stderr or "").splitlines() if line.strip()]
        return f"bwrap could not create its namespaces here ({lines[-1] if lines else f'exit {done.returncode}'})"
    return ""


MODES = ("auto", "require", "off")


def resolve(mode: str = "auto") -> Sandbox:
    """The sandbox of this run.

    Parameters
    ----------
    mode : {"auto", "require", "off"}
        ``auto``: bubblewrap when it is installed and works here, else mode none (the note says
        why); ``require``: bubblewrap or a RuntimeError; ``off``: mode none.

    Raises
    ------
    ValueError
        An unknown mode.
    RuntimeError
        ``require`` without a working bubblewrap.
    """
    if mode not in MODES:
        raise ValueError(f"sandbox must be one of {', '.join(MODES)}, got {mode!r}")
    if mode == "off":
        return Sandbox("none", "sandbox: off (--sandbox=off): workers run without namespaces; "
                               f"the protections that need none still apply{_seccomp_note()}")
    bwrap = shutil.which("bwrap")
    problem = "bubblewrap (bwrap) is not installed" if not bwrap else _probe(bwrap)
    if not problem:
        return Sandbox("bwrap", f"sandbox: bubblewrap ({bwrap}): each submission in its own namespaces", bwrap)
    if mode == "require":
        raise RuntimeError(f"--sandbox=require: {problem}; install it (Debian/Ubuntu: apt-get install bubblewrap)")
    return Sandbox("none", f"sandbox: none, {problem} (Debian/Ubuntu: apt-get install bubblewrap); workers run "
                           f"without namespaces, with the protections that need none{_seccomp_note()}")


def _seccomp_note() -> str:
    import ctypes.util

    if ctypes.util.find_library("seccomp"):
        return ""
    return " (but libseccomp is missing: a submission can signal the grader; apt-get install libseccomp2)"


# --------------------------------------------------------------------------- processes
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36


def _prctl(option: int, value: int) -> bool:
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def become_subreaper() -> bool:
    """Make this process adopt its orphaned descendants (a double-forked daemon stays ours to kill)."""
    return _prctl(PR_SET_CHILD_SUBREAPER, 1)


def not_dumpable() -> bool:
    """Put this process out of reach of other processes of its user that have no capabilities: they can
    no longer open its ``/proc/<pid>/mem``, ``fd/``, ``environ`` or ``cwd`` (the grader, and every worker
    against the others when all run as one user without namespaces)."""
    return _prctl(PR_SET_DUMPABLE, 0)


def _parents() -> dict:
    """pid -> parent pid of every process visible in /proc."""
    parents = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # The command name (field 2) may hold spaces and parentheses: fields follow the last ')'.
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 2:
            parents[int(entry)] = int(fields[1])
    return parents


def descendants(roots, parents: dict | None = None) -> set:
    """Every live process below the given pids (not the roots themselves)."""
    parents = _parents() if parents is None else parents
    children: dict = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    found, stack = set(), list(roots)
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def orphans(known_children) -> set:
    """This process's children that are not in ``known_children`` (adopted as subreaper)."""
    me = os.getpid()
    return {pid for pid, ppid in _parents().items() if ppid == me and pid not in set(known_children)}


def kill_tree(roots, *, adopted=()) -> None:
    """SIGKILL the given processes and all their descendants, again until none is left.

    ``adopted``: orphans of this (subreaper) process to kill with them; they are reaped too.
    """
    roots, adopted = set(roots), set(adopted)
    for _ in range(100):
        parents = _parents()
        alive = {p for p in roots | adopted if p in parents}
        victims = alive | descendants(alive, parents)
        # Zombies are dead already: only count those still running.
        running = {p for p in victims if _state(p) not in ("Z", "X", "")}
        if not running:
            break
        for pid in running:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.01)
    me = os.getpid()
    for pid in adopted:  # our adopted children: reap them (the worker's own child is reaped by Popen)
        try:
            if _parents().get(pid) == me:
                os.waitpid(pid, 0)
        except ChildProcessError:
            pass


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return ""
    return stat[stat.rfind(b")") + 2:stat.rfind(b")") + 3].decode()


def tree_rss_kb(root: int) -> int:
    """Resident memory of a process and all its descendants, in kB."""
    total = 0
    for pid in {root} | descendants([root]):
        try:
            with open(f"/proc/{pid}/status") as status:
                total += next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
        except (OSError, StopIteration, ValueError):
            continue
    return total
