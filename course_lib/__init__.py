"""Companion library of the GPU computing course.

Importing this package chooses where kernels run (a CUDA GPU, or Numba's CUDA
simulator when there is none) *before* ``numba.cuda`` is imported; see
:mod:`course_lib.device`. Import it first in every notebook::

    import course_lib
    from course_lib import nbody

Every unit (one subpackage per entry of :data:`UNITS`) has the same modules under the
same names (``api``, ``kernels``, ``reference``, ``cpu``, ``data``, ``model``,
``profiling``, ``plots``, ``widgets``, ``quiz``, ``questions``, ``bench``), one name for
its default launch configuration (``default_block()``), and validates its inputs with
:mod:`course_lib._validate`; ``course_lib/README.md`` describes the shape.
"""

from . import device

device.configure()

if device.backend() == "sim":
    # Warp primitives and the block scheduler of course_lib.sim, for every launch.
    from . import sim as _sim

    _sim.install()

from .device import backend, info, pick  # noqa: E402  (must follow configure())
from ._units import UNITS  # noqa: E402
from .show import kernel_source, show_kernel  # noqa: E402

__version__ = "0.1.0"

__all__ = ["UNITS", "backend", "device", "info", "kernel_source", "pick", "show_kernel"]
