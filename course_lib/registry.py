"""The list of the course's reference kernels.

Every reference kernel is declared with :func:`course_kernel` (or
:func:`register_kernel` for kernels built by a factory), with the Numba signature it
is compiled for. The compile check (:mod:`course_lib.compile_check`) compiles all of
them to PTX, the simulator tools check them for races, and the grader recognises a
submission that merely calls one of them.

Giving a kernel an *example launch* puts it under the race and barrier checker
(``tests/sim/test_reference_kernels.py`` runs :func:`course_lib.sim.check` on every
kernel that has one and requires a clean report). An example is a function with no
arguments returning ``(griddim, blockdim, args)`` for a small launch (a few blocks, a
few dozen threads each: it runs in the simulator), with sizes that are awkward on
purpose (not a multiple of the block)::

    def _example():
        x = np.arange(37, dtype=np.float32)
        return 2, 32, (x, np.zeros_like(x))

    @course_kernel("void(float32[::1], float32[::1])", lesson=LESSON, example=_example)
    def double_kernel(x, out):
        ...

For factory-made kernels, pass ``example=`` to :func:`register_kernel`.

The shared benchmark layer finds what each unit declares for it the same way, without naming a
unit: :func:`declared` reads one name (``PROBE``, ``COST_MODEL``, ``HOST_COSTS``) from every
unit's ``bench`` module that defines it (see :mod:`course_lib.bench.cases`).
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from typing import Callable

__all__ = ["KernelSpec", "all_kernels", "course_kernel", "declared", "register_kernel"]

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
    example : callable or None
        ``example() -> (griddim, blockdim, args)``: a small launch of the kernel, run by
        the race and barrier checker in the tests. None if the kernel has none yet.
    fastmath : bool
        Whether the kernel is jitted with ``fastmath=True``; the compile check compiles it
        the same way, so its PTX and register counts are those of the kernel that runs.
    """

    name: str
    signature: str
    get_pyfunc: Callable[[], Callable]
    lesson: str = ""
    example: Callable[[], tuple] | None = None
    fastmath: bool = False

    def example_launch(self) -> tuple:
        """``(griddim, blockdim, args)`` of the example launch, validated.

        Raises
        ------
        ValueError
            If the kernel has no example, or the example does not return a
            ``(griddim, blockdim, args)`` triple.
        """
        if self.example is None:
            raise ValueError(f"{self.name} has no example launch (pass example= when registering it)")
        launch = self.example()
        if not (isinstance(launch, tuple) and len(launch) == 3 and isinstance(launch[2], (tuple, list))):
            raise ValueError(f"the example of {self.name} must return (griddim, blockdim, args), got {launch!r}")
        return launch


def register_kernel(name: str, signature: str, get_pyfunc: Callable[[], Callable], lesson: str = "",
                    example: Callable[[], tuple] | None = None, *, fastmath: bool = False):
    """Add a kernel (for example one made by a factory) to the registry.

    Parameters
    ----------
    name, signature, get_pyfunc, lesson
        See :class:`KernelSpec`.
    example : callable, optional
        ``example() -> (griddim, blockdim, args)``, a small launch for the checker.
    fastmath : bool
        As the kernel is jitted (see :class:`KernelSpec`).
    """
    _REGISTRY[name] = KernelSpec(name, signature, get_pyfunc, lesson, example, fastmath)


def course_kernel(signature: str, *, lesson: str = "", example: Callable[[], tuple] | None = None, **jit_options):
    """Decorator: ``cuda.jit`` a reference kernel and register it.

    Parameters
    ----------
    signature : str
        The Numba signature the compile check uses. The kernel itself stays lazily
        compiled, so it also accepts other argument types at launch.
    lesson : str
        The lesson notebook that teaches it.
    example : callable, optional
        ``example() -> (griddim, blockdim, args)``: a small launch that the race and
        barrier checker runs in the tests (see the module docstring).
    **jit_options
        Passed to ``numba.cuda.jit`` (e.g. ``fastmath=True``).
    """
    from numba import cuda

    def decorate(pyfunc):
        unit = pyfunc.__module__.split(".")[1] if pyfunc.__module__.startswith("course_lib.") else pyfunc.__module__
        register_kernel(f"{unit}.{pyfunc.__name__}", signature, lambda: pyfunc, lesson, example,
                        fastmath=bool(jit_options.get("fastmath", False)))
        return cuda.jit(**jit_options)(pyfunc)

    return decorate


def all_kernels() -> list[KernelSpec]:
    """Every registered kernel, after importing every unit's kernels module."""
    from ._units import UNITS

    for unit in UNITS:
        importlib.import_module(f"course_lib.{unit}.kernels")
    return sorted(_REGISTRY.values(), key=lambda spec: spec.name)


def declared(name: str, module: str = "bench") -> dict:
    """``{unit: course_lib.<unit>.<module>.<name>}`` for every unit whose module defines ``name``.

    In teaching order (:data:`course_lib.UNITS`); a unit without that module, or whose module
    does not define ``name``, is left out.

    >>> sorted(declared("PROBE")) == sorted(set(declared("PROBE")))
    True
    """
    from ._units import UNITS

    found = {}
    for unit in UNITS:
        try:
            spec = importlib.util.find_spec(f"course_lib.{unit}.{module}")
        except ModuleNotFoundError:  # the unit's package itself is missing
            continue
        if spec is None:
            continue
        value = getattr(importlib.import_module(f"course_lib.{unit}.{module}"), name, None)
        if value is not None:
            found[unit] = value
    return found
