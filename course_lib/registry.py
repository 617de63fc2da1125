"""The list of the course's reference kernels.

Every reference kernel is declared with :func:`course_kernel` (or
:func:`register_kernel` for kernels built by a factory), with the Numba signature it
is compiled for. The compile check (:mod:`course_lib.compile_check`) compiles all of
them to PTX, the simulator tools check them for races, and the grader recognises a
submission that merely calls one of them.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

__all__ = ["KernelSpec", "all_kernels", "course_kernel", "register_kernel"]

_REGISTRY: dict[str, "KernelSpec"] = {}


@dataclass(frozen=True)
class KernelSpec:
    """A reference kernel of the course.

    Attributes
    ----------
    name : str
        Qualified name, e.g. ``"nbody.nbody_tiled_kernel[tile=256]"``.
    signature : str
        Numba signature used to compile it ahead of time, e.g.
        ``"void(float32[:, ::1], float32, float32[:, ::1])"``.
    get_pyfunc : callable
        Returns the plain Python function of the kernel.
    lesson : str
        The lesson where it is taught.
    """

    name: str
    signature: str
    get_pyfunc: Callable[[], Callable]
    lesson: str = ""


def register_kernel(name: str, signature: str, get_pyfunc: Callable[[], Callable], lesson: str = ""):
    """Add a kernel (for example one made by a factory) to the registry."""
    _REGISTRY[name] = KernelSpec(name, signature, get_pyfunc, lesson)


def course_kernel(signature: str, *, lesson: str = "", **jit_options):
    """Decorator: ``cuda.jit`` a reference kernel and register it.

    Parameters
    ----------
    signature : str
        The Numba signature the compile check uses. The kernel itself stays lazily
        compiled, so it also accepts other argument types at launch.
    lesson : str
        The lesson notebook that teaches it.
    **jit_options
        Passed to ``numba.cuda.jit`` (e.g. ``fastmath=True``).
    """
    from numba import cuda

    def decorate(pyfunc):
        unit = pyfunc.__module__.split(".")[1] if pyfunc.__module__.startswith("course_lib.") else pyfunc.__module__
        register_kernel(f"{unit}.{pyfunc.__name__}", signature, lambda: pyfunc, lesson)
        return cuda.jit(**jit_options)(pyfunc)

    return decorate


def all_kernels() -> list[KernelSpec]:
    """Every registered kernel, after importing every unit's kernels module."""
    from . import UNITS

    for unit in UNITS:
        importlib.import_module(f"course_lib.{unit}.kernels")
    return sorted(_REGISTRY.values(), key=lambda spec: spec.name)
