"""The primitives (``lessons/09_primitives.ipynb``): reduce, scan, segmented scan, compaction, histogram.

Taught before the units that lean on them (SpMV's segmented reduction, BFS's frontier compaction,
the cell simulator's level-by-level compaction and histograms): the tree reduction, the
step-efficient (Hillis-Steele) and work-efficient (Blelloch) scans with their work, span and
barriers, the shared-memory bank conflicts of the Blelloch sweeps and the padding that removes
them, the segmented scan, stream compaction (flags, scan, scatter) and histograms with global
atomics against privatised shared-memory counts.

Public entry points: :func:`reduce`, :func:`scan`, :func:`segmented_scan`, :func:`compact`,
:func:`histogram` (``method=`` picks the variant), the float64 references and the NumPy CPU peers.
Kernels live in :mod:`course_lib.primitives.kernels` (the warp-level ones, shuffles and votes,
among them), counting models in
:mod:`course_lib.primitives.model` (checked against the profiler by
:mod:`course_lib.primitives.profiling`), plots in :mod:`course_lib.primitives.plots`, the
explorer in :mod:`course_lib.primitives.widgets`, problem set 9 in :mod:`course_lib.primitives.questions`.
"""

from .api import (HISTOGRAM_METHODS, REDUCE_METHODS, SCAN_METHODS, compact, default_block, histogram, reduce, scan,
                  segmented_scan)
from .cpu import compact_cpu, histogram_cpu, reduce_cpu, scan_cpu, segmented_scan_cpu
from .data import random_values, segment_heads, skewed_keys, uniform_keys
from .model import scan_adds, scan_barriers, scan_steps, sweep_wavefronts, wavefronts
from .._lazy import lazy_submodules
from . import kernels, profiling
from .quiz import QUIZ
from .reference import (compact_reference, histogram_reference, reduce_reference, scan_reference,
                        segmented_scan_reference)

__all__ = [
    "HISTOGRAM_METHODS",
    "QUIZ",
    "REDUCE_METHODS",
    "SCAN_METHODS",
    "compact",
    "compact_cpu",
    "compact_reference",
    "default_block",
    "histogram",
    "histogram_cpu",
    "histogram_reference",
    "kernels",
    "plots",
    "profiling",
    "random_values",
    "reduce",
    "reduce_cpu",
    "reduce_reference",
    "scan",
    "scan_adds",
    "scan_barriers",
    "scan_cpu",
    "scan_reference",
    "scan_steps",
    "segment_heads",
    "segmented_scan",
    "segmented_scan_cpu",
    "segmented_scan_reference",
    "skewed_keys",
    "sweep_wavefronts",
    "uniform_keys",
    "wavefronts",
    "widgets",
]

__getattr__, __dir__ = lazy_submodules(__name__, ("plots", "widgets"), globals())
