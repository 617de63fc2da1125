"""Where the simulator's typing answers are cached on disk, and under which key.

A kernel's answer (:class:`course_lib.sim._typing.KernelTyping`) is pickled under a key made of its
source, the globals it reads, its argument types and numba-cuda's version, in this process's cache
(``$XDG_CACHE_HOME/course_lib/sim-typing``) and, read-only, in the folder :data:`SEED_ENV` names (a
grading worker's, filled by the grader's trusted priming run).
"""

from __future__ import annotations

import hashlib
import inspect
import os

from ._kernel_refs import _globals_fingerprint

__all__ = ["SEED_ENV"]


def _cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "course_lib", "sim-typing")


#: Environment variable naming a read-only folder of cached answers, read when this process's own cache lacks
#: one and never written: a grading worker's, filled by the grader's trusted priming run.
SEED_ENV = "COURSE_SIM_TYPING_SEED"


def _cached_path(disk_key):
    """The file holding the cached answer for ``disk_key``: this process's cache, else the read-only seed
    folder (:data:`SEED_ENV`); None when neither has it."""
    for folder in (_cache_dir(), os.environ.get(SEED_ENV)):
        if folder:
            path = os.path.join(folder, disk_key + ".pickle")
            if os.path.exists(path):
                return path
    return None


#: Changes when KernelTyping gains a field, so that older cached answers are not read as complete.
_CACHE_FORMAT = 4


def _key(fn, argtypes, debug):
    from importlib.metadata import version

    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        return None
    text = repr((_CACHE_FORMAT, version("numba-cuda"), fn.__qualname__, fn.__code__.co_filename, fn.__code__.co_firstlineno,
                 source, _globals_fingerprint(fn), tuple(str(t) for t in argtypes), bool(debug), _nrt()))
    return hashlib.sha256(text.encode()).hexdigest()


def _nrt():
    """numba-cuda's ``CUDA_ENABLE_NRT`` in this process: with it, kernels may allocate (``np.empty``,
    ``array.copy()``), and the typing process compiles them so."""
    try:
        from numba.cuda import config

        return bool(getattr(config, "CUDA_ENABLE_NRT", False))
    except Exception:
        return False
