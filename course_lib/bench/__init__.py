"""Shared benchmark layer: ``python -m course_lib.bench <unit> [--quick] [--out DIR]``.

Each unit provides ``course_lib/<unit>/bench.py`` with a function
``run(*, quick: bool) -> dict`` returning the unit's results (a ``"rows"`` list of
dicts plus whatever summary the unit reports) and ``plot(results, path)`` drawing
them. This module times things, stamps results with the device and date, writes the
JSON and the plot. GPU figures come only from runs on a GPU; without one a unit runs
its CPU part and says so in ``results["notes"]``.
"""

from __future__ import annotations

import datetime as _dt
import json
import platform
import re
import time
from pathlib import Path

import numpy as np

from .. import device

__all__ = ["cpu_name", "gpu_time", "stamp", "time_call", "write_results"]


def time_call(fn, *, repeat=5, warmup=1, min_time=0.2):
    """Median wall-clock seconds of ``fn()`` (after ``warmup`` calls).

    Repeats at least ``repeat`` times and until ``min_time`` seconds have passed.
    """
    for _ in range(warmup):
        fn()
    samples, start = [], time.perf_counter()
    while len(samples) < repeat or (time.perf_counter() - start < min_time and len(samples) < 1000):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return float(np.median(samples))


def gpu_time(launch, *, repeat=10, warmup=2):
    """Median seconds of ``launch()`` measured with CUDA events (GPU only).

    ``launch`` must only enqueue work (kernel launches on the default stream, no copies
    back), so the events time the device and not the host.
    """
    from numba import cuda

    if not device.is_gpu():
        raise RuntimeError("gpu_time needs a GPU; the simulator has no meaningful timings")
    for _ in range(warmup):
        launch()
    cuda.synchronize()
    samples = []
    for _ in range(repeat):
        start, stop = cuda.event(), cuda.event()
        start.record()
        launch()
        stop.record()
        stop.synchronize()
        samples.append(cuda.event_elapsed_time(start, stop) / 1e3)
    return float(np.median(samples))


def cpu_name() -> str:
    """The CPU model, for the results' header."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def stamp(unit: str) -> dict:
    """Header of a results file: unit, device, CPU, date, versions."""
    import numba

    info = device.info()
    return {
        "unit": unit,
        "backend": info.backend,
        "device": info.as_dict(),
        "cpu": cpu_name(),
        "cpu_cores": __import__("os").cpu_count(),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "numba": numba.__version__,
        "python": platform.python_version(),
    }


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()


def write_results(results: dict, out_dir, plot=None) -> tuple[Path, Path | None]:
    """Write ``results`` as JSON (and a PNG via ``plot(results, path)``) into ``out_dir``.

    The file name carries the unit, the device and the date, e.g.
    ``nbody_nvidia-h100-80gb-hbm3_2026-11-22.json``.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    name = results["device"]["name"] if results["backend"] == "gpu" else "cpu-only"
    base = f"{results['unit']}_{_slug(name)}_{results['date'][:10]}"
    json_path = out_dir / f"{base}.json"
    tmp = json_path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(results, indent=1, default=float) + "\n")
    tmp.replace(json_path)
    png_path = None
    if plot is not None:
        import matplotlib

        matplotlib.use("Agg")
        png_path = out_dir / f"{base}.png"
        plot(results, png_path)
    return json_path, png_path
