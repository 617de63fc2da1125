"""Limits a worker puts on itself before any student code runs (they need no namespaces).

- resource limits: address space (in the simulator), file size (a submission cannot fill the
  disk), no core files;
- no capabilities: a worker started as root keeps uid 0 but loses every capability, for
  itself and anything it executes (the bounding set is emptied), so it cannot read the
  grader's memory (the grader is not dumpable), mount, load modules or override permissions
  on files it does not own;
- not dumpable: another worker of the same user (without namespaces) cannot open its
  ``/proc/<pid>/mem``, file descriptors (its pipes to the grader) or environment;
- a seccomp filter (through libseccomp, when installed) refusing with EPERM every signal sent
  to another process (``kill``, ``tgkill``, ``tkill``, ``rt_sigqueueinfo``, ``pidfd_send_signal``),
  ``ptrace``, ``process_vm_readv``/``writev`` and changing another process's limits. With it, a
  submission cannot stop, freeze or interrupt the grader or another student's worker.

Each step reports what it could not do; :func:`apply` returns those notes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import resource
import threading

__all__ = ["FILE_SIZE_MB", "THREAD_STACK", "apply"]

#: Largest file a worker may write.
FILE_SIZE_MB = 256
#: Stack of each new thread. The simulator runs a thread per CUDA thread: with the default 8 MB of
#: address space each, a block of 1024 threads alone would exceed the address-space limit.
THREAD_STACK = 1 << 20

_PR_CAPBSET_DROP = 24
_LAST_CAP = 63


def _limits(memory_mb: int) -> list:
    notes = []
    threading.stack_size(THREAD_STACK)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a segfault must not leave a core file
    size = FILE_SIZE_MB * 2**20
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    if memory_mb > 0:
        limit = memory_mb * 2**20
        try:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ValueError, OSError):  # not every system limits address space; the grader watches RSS
            notes.append("no address-space limit")
    return notes


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _drop_capabilities() -> list:
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in range(_LAST_CAP + 1):
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)  # EINVAL past the last cap, EPERM without CAP_SETPCAP
    header, data = _CapHeader(0x20080522, 0), (_CapData * 2)()  # _LINUX_CAPABILITY_VERSION_3
    if libc.capset(ctypes.byref(header), data) != 0:
        return [f"capabilities not dropped ({os.strerror(ctypes.get_errno())})"]
    return []


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


_SCMP_ACT_ALLOW = 0x7FFF0000
_SCMP_ACT_EPERM = 0x00050000 | errno.EPERM
_SCMP_CMP_NE = 1


def _seccomp() -> list:
    name = ctypes.util.find_library("seccomp")
    if not name:
        return ["libseccomp is not installed: signals to other processes are not refused"]
    lib = ctypes.CDLL(name, use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_ArgCmp)]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    ctx = lib.seccomp_init(_SCMP_ACT_ALLOW)
    if not ctx:
        return ["seccomp filter not created"]
    me = os.getpid()
    # (syscall, argument that must be this process (or None: always refused), the value it must have)
    rules = [("kill", 0, me), ("tgkill", 0, me), ("rt_sigqueueinfo", 0, me), ("rt_tgsigqueueinfo", 0, me),
             ("prlimit64", 0, 0), ("tkill", None, 0), ("pidfd_send_signal", None, 0), ("ptrace", None, 0),
             ("process_vm_readv", None, 0), ("process_vm_writev", None, 0)]
    try:
        for syscall, arg, value in rules:
            number = lib.seccomp_syscall_resolve_name(syscall.encode())
            if number < 0:
                continue
            if arg is None:
                result = lib.seccomp_rule_add_array(ctx, _SCMP_ACT_EPERM, number, 0, None)
            else:
                cmp = (_ArgCmp * 1)(_ArgCmp(arg, _SCMP_CMP_NE, value, 0))
                result = lib.seccomp_rule_add_array(ctx, _SCMP_ACT_EPERM, number, 1, cmp)
            if result != 0:
                return [f"seccomp rule for {syscall} not added ({os.strerror(-result)})"]
        result = lib.seccomp_load(ctx)
        if result != 0:
            return [f"seccomp filter not loaded ({os.strerror(-result)})"]
    finally:
        lib.seccomp_release(ctx)
    return []


def _not_dumpable() -> list:
    from .sandbox import not_dumpable

    return [] if not_dumpable() else ["still dumpable: other workers of this user can read its memory"]


def apply(memory_mb: int) -> list:
    """Apply every limit above to this process; returns notes on those that could not be applied."""
    return _limits(memory_mb) + _drop_capabilities() + _not_dumpable() + _seccomp()
