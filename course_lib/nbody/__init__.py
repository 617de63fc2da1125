"""Unit 1: all-pairs N-body with shared-memory tiling (``lessons/01_nbody.ipynb``).

Public entry points: :func:`accelerations` (``method=`` picks the kernel), the
leapfrog integrator, initial conditions, the float64 reference and the fast CPU
version. Kernels live in :mod:`course_lib.nbody.kernels`, the profiler's measurements
in :mod:`course_lib.nbody.profiling`, plots in :mod:`course_lib.nbody.plots` and the
explorer widget in :mod:`course_lib.nbody.widgets` (both loaded on first use).
"""

from .._lazy import lazy_submodules
from . import kernels, profiling
from .api import METHODS, accelerations, default_block, leapfrog, pack_bodies
from .cpu import accelerations_cpu
from .data import colliding_clusters, initial_conditions, plummer_sphere, uniform_cube
from .model import FLOPS_PER_INTERACTION, global_fetches, tile_report
from .quiz import QUIZ
from .reference import accelerations_reference, total_energy

__all__ = [
    "FLOPS_PER_INTERACTION",
    "METHODS",
    "QUIZ",
    "accelerations",
    "accelerations_cpu",
    "accelerations_reference",
    "colliding_clusters",
    "default_block",
    "global_fetches",
    "initial_conditions",
    "kernels",
    "leapfrog",
    "pack_bodies",
    "plots",
    "plummer_sphere",
    "profiling",
    "tile_report",
    "total_energy",
    "uniform_cube",
    "widgets",
]

__getattr__, __dir__ = lazy_submodules(__name__, ("plots", "widgets"), globals())
