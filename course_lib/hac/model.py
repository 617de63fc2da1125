"""Models the lesson predicts with: the thesis's numbers, Amdahl's law, memory traffic per iteration."""

from __future__ import annotations

import numpy as np

from .._validate import check_array, check_choice, check_dtype, check_float, check_int

__all__ = ["THESIS", "amdahl_limit", "amdahl_speedup", "bytes_per_iteration", "stage_fractions"]

#: Figures of the thesis (Valenzuela, 2010): seconds per stage (its Cuadros 1 and 9) and totals.
THESIS = {
    "n_elements": 12_119,
    "n_entries": 705_352,
    "python_seconds": 1274.37,
    "c_seconds": 293.5,
    "cuda_seconds": 24.77,
    "gpu": "GeForce 9600GT (64 cores, compute capability 1.1)",
    "cores": 64,
    # Its scaling test (section 7.4): a GeForce 9800GTX, 128 cores by NVIDIA's specification (the thesis
    # writes 256 and "quadrupling", a slip: twice the 9600GT's 64), ran the same program in 19.85 s.
    "cuda_seconds_9800gtx": 19.85,
    "cores_9800gtx": 128,
    "cpu_stage_seconds": {"matching": 42.92, "suppression": 63.17, "weighting": 116.21, "collection": 70.24,
                          "integration": 0.10, "fusion": 0.15},
    "gpu_stage_seconds": {"matching": 12.76, "suppression": 1.84, "weighting": 2.50, "collection": 4.21,
                          "integration": 0.11, "fusion": 0.61},
    "kernel_fraction": 0.776,
    # 1 / (1 - 0.776): the most that faster kernels could speed up the CUDA run itself (24.77 s), which
    # already ran 11.85x faster than the C version.
    "amdahl_limit": 4.471,
    "max_relative_height_error_gpu": 0.015,
    "max_relative_height_error_float32": 1.5e-4,
    "parents_differing_gpu": 0.10,
}


def amdahl_speedup(fraction, speedup):
    """Amdahl's law: overall speedup when a ``fraction`` of the time runs ``speedup`` times faster.

    ``1 / ((1 - f) + f / s)``; works on arrays.
    """
    f = check_array(fraction, "fraction", dtype="fiu", finite=True, allow_empty=False).astype(np.float64)
    s = check_array(speedup, "speedup", dtype="fiu", finite=True, allow_empty=False).astype(np.float64)
    if np.any((f < 0) | (f > 1)):
        raise ValueError(f"fraction must be between 0 and 1, got {fraction!r}")
    if np.any(s <= 0):
        raise ValueError(f"speedup must be positive, got {speedup!r}")
    out = 1.0 / ((1.0 - f) + f / s)
    return float(out) if out.ndim == 0 else out


def amdahl_limit(fraction):
    """The largest overall speedup when only ``fraction`` of the time can be accelerated: 1 / (1 - f)."""
    f = check_float(fraction, "fraction", minimum=0, maximum=1)
    return float("inf") if f == 1 else 1.0 / (1.0 - f)


def stage_fractions(stage_seconds: dict) -> dict:
    """Each stage's share of the total time."""
    if not isinstance(stage_seconds, dict):
        raise ValueError(f"stage_seconds must be a dict of stage -> seconds, got {type(stage_seconds).__name__}")
    stage_seconds = {name: check_float(t, f"stage_seconds[{name!r}]", minimum=0) for name, t in stage_seconds.items()}
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
    m = check_int(n_entries, "n_entries", minimum=0)
    value = check_dtype(dtype, "dtype").itemsize
    layout = check_choice(layout, "layout", ("soa", "aos"))
    fusion = check_choice(fusion, "fusion", ("segmented", "atomic", "cpu_sort"))
    read_weight = 2 * value if layout == "aos" else value
    out = {"matching": m * read_weight, "suppression": 8 * m, "weighting": 8 * m, "collection": 8 * m,
           "integration": 0, "fusion": 16 * m if fusion == "atomic" else 0}
    out["total"] = sum(out.values())
    return out
