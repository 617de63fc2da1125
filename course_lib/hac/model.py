"""Models the lesson predicts with: the thesis's numbers, Amdahl's law, memory traffic per iteration."""

from __future__ import annotations

import numpy as np

__all__ = ["THESIS", "amdahl_limit", "amdahl_speedup", "bytes_per_iteration", "stage_fractions"]

#: Figures of the thesis (Valenzuela, 2010): seconds per stage (its Cuadros 1 and 9) and totals.
THESIS = {
    "n_elements": 12_119,
    "n_entries": 705_352,
    "python_seconds": 1274.37,
    "c_seconds": 293.5,
    "cuda_seconds": 24.77,
    "gpu": "GeForce 9600GT (64 cores, compute capability 1.1)",
    "cpu_stage_seconds": {"matching": 42.92, "suppression": 63.17, "weighting": 116.21, "collection": 70.24,
                          "integration": 0.10, "fusion": 0.15},
    "gpu_stage_seconds": {"matching": 12.76, "suppression": 1.84, "weighting": 2.50, "collection": 4.21,
                          "integration": 0.11, "fusion": 0.61},
    "kernel_fraction": 0.776,
    "amdahl_limit": 4.471,
    "max_relative_height_error_gpu": 0.015,
    "max_relative_height_error_float32": 1.5e-4,
    "parents_differing_gpu": 0.10,
}


def amdahl_speedup(fraction, speedup):
    """Amdahl's law: overall speedup when a ``fraction`` of the time runs ``speedup`` times faster.

    ``1 / ((1 - f) + f / s)``; works on arrays.
    """
    f = np.asarray(fraction, dtype=np.float64)
    s = np.asarray(speedup, dtype=np.float64)
    if np.any((f < 0) | (f > 1)):
        raise ValueError(f"fraction must be between 0 and 1, got {fraction!r}")
    if np.any(s <= 0):
        raise ValueError(f"speedup must be positive, got {speedup!r}")
    out = 1.0 / ((1.0 - f) + f / s)
    return float(out) if out.ndim == 0 else out


def amdahl_limit(fraction):
    """The largest overall speedup when only ``fraction`` of the time can be accelerated: 1 / (1 - f)."""
    f = float(fraction)
    if not 0 <= f <= 1:
        raise ValueError(f"fraction must be between 0 and 1, got {fraction!r}")
    return float("inf") if f == 1 else 1.0 / (1.0 - f)


def stage_fractions(stage_seconds: dict) -> dict:
    """Each stage's share of the total time."""
    total = float(sum(stage_seconds.values()))
    if total <= 0:
        raise ValueError("stage_seconds must contain some positive time")
    return {name: float(t) / total for name, t in stage_seconds.items()}


def bytes_per_iteration(n_entries, *, dtype=np.float32, layout="soa", fusion="segmented") -> dict:
    """Global memory bytes one iteration of the GPU loop reads over the M entries, per stage.

    Every full pass reads ``src`` and ``dst`` (8 bytes per entry); the argmax reads the
    weights (4 or 8 bytes) or, with structs, whole {value, index} structs (twice that).
    Entries that a stage writes (those of i, j and k) are few and not counted, nor are
    the fusion's own lists (k's entries only).

    Returns
    -------
    dict
        Bytes per stage and ``"total"``.
    """
    m = int(n_entries)
    value = np.dtype(dtype).itemsize
    read_weight = 2 * value if layout == "aos" else value
    out = {"matching": m * read_weight, "suppression": 8 * m, "weighting": 8 * m, "collection": 8 * m,
           "integration": 0, "fusion": 16 * m if fusion == "atomic" else 0}
    out["total"] = sum(out.values())
    return out
