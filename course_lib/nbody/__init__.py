"""Unit 1: all-pairs N-body with shared-memory tiling (``lessons/01_nbody.ipynb``).

Public entry points: :func:`accelerations` (``method=`` picks the kernel), the
leapfrog integrator, initial conditions, the float64 reference and the fast CPU
version. Kernels live in :mod:`course_lib.nbody.kernels`, plots in
:mod:`course_lib.nbody.plots`, the explorer widget in :mod:`course_lib.nbody.widgets`.
"""

from . import kernels, plots, widgets
from .api import METHODS, accelerations, default_tile, leapfrog, pack_bodies
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
    "default_tile",
    "global_fetches",
    "initial_conditions",
    "leapfrog",
    "pack_bodies",
    "plummer_sphere",
    "tile_report",
    "total_energy",
    "uniform_cube",
]
