"""Shared benchmark layer: ``python -m course_lib.bench <unit> [--quick] [--out DIR]``.

Each unit provides ``course_lib/<unit>/bench.py`` with a function
``run(*, quick: bool) -> dict`` returning the unit's results (a ``"rows"`` list of
dicts plus whatever summary the unit reports) and ``plot(results, path)`` drawing
them, and ``summary(results) -> str``. This module times things, stamps results with
the device and date, writes the JSON and the plot. GPU figures come only from runs on a
GPU; without one a unit runs its CPU part and says so in ``results["notes"]``
(:data:`NO_GPU_NOTE`).

A unit's ``bench.py`` only says what it measures; the skeleton is shared:

- :func:`results` assembles ``{"rows", "summary", "notes"}``, running the GPU part
  only on a GPU;
- :func:`summary_text` turns rows into lines (one format function per unit);
- :func:`series` groups rows into one curve per variant, :func:`plot_series` draws
  them on log-log axes with reference lines, and :func:`figure` is the
  create-draw-save-close frame every plot shares;
- :func:`time_call` (CPU wall clock), :func:`gpu_time` (CUDA events) and
  :func:`cupy_time` (the GPU library peer) measure;
- :func:`committed_results` reads the GPU runs committed under ``benchmarks/results/``
  and :func:`gpu_figures` is what a lesson prints of them: the newest, labelled with
  its device and date, or how to make one when none is committed.

>>> rows = [{"variant": "tiled", "n": 2048, "rate": 4.0}, {"variant": "tiled", "n": 1024, "rate": 1.0},
...         {"variant": "naive", "n": 1024, "rate": 0.5}]
>>> series(rows, "n", "rate")
{'naive': ([1024], [0.5]), 'tiled': ([1024, 2048], [1.0, 4.0])}
"""

from __future__ import annotations

import datetime as _dt
import importlib
import json
import platform
import re
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from .. import device

__all__ = ["NO_GPU_NOTE", "RESULTS_DIR", "committed_results", "cpu_name", "cupy_time", "figure", "gpu_figures",
           "gpu_time", "plot_series", "results", "series", "stamp", "summary_text", "time_call", "write_results"]

#: The note of a run without a GPU (the benchmark measured its CPU part only).
NO_GPU_NOTE = "no GPU: only the CPU variants were measured"
#: Where the course's committed GPU runs live: ``benchmarks/results/`` of the checkout holding this package
#: (absent from an installed wheel: a lesson then says that no run is committed).
RESULTS_DIR = Path(__file__).resolve().parents[2] / "benchmarks" / "results"


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


def committed_results(unit: str, folder=None) -> list:
    """The GPU runs of ``unit`` in ``folder`` (default :data:`RESULTS_DIR`), newest first.

    Parameters
    ----------
    unit : str
        A unit name (``"nbody"``, ...): files ``<unit>_*.json`` written by :func:`write_results`.
    folder : path-like, optional

    Returns
    -------
    list of dict
        The results of runs on a GPU (``backend == "gpu"``); CPU-only runs are left out
        (they carry no GPU figure).

    Raises
    ------
    ValueError
        A file of the unit that is not a results file (not JSON, or without device and date).
    """
    folder = Path(RESULTS_DIR if folder is None else folder)
    runs = []
    for path in sorted(folder.glob(f"{unit}_*.json")) if folder.is_dir() else ():
        try:
            data = json.loads(path.read_text())
            complete = data["unit"] == unit and "name" in data["device"] and bool(data["date"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}: not a benchmark results file ({type(exc).__name__}: {exc})") from None
        if not complete:
            raise ValueError(f"{path}: not a results file of the {unit} benchmark (unit {data['unit']!r})")
        if data.get("backend") == "gpu":
            runs.append(data)
    return sorted(runs, key=lambda r: r["date"], reverse=True)


def gpu_figures(unit: str, folder=None) -> str:
    """What a lesson shows of its unit's GPU benchmark.

    The newest committed GPU run (:func:`committed_results`), headed by its device and
    date and summarised by the unit's ``bench.summary``; or, when none is committed,
    a sentence saying so and which command makes one.
    """
    folder = Path(RESULTS_DIR if folder is None else folder)
    runs = committed_results(unit, folder)
    if not runs:
        return (f"No GPU run of the {unit} benchmark is committed yet (none in {folder.parent.name}/{folder.name}/): the figures quoted "
                f"here are published ones and goals. On a machine with an NVIDIA GPU, `python -m course_lib.bench "
                f"{unit}` measures them and writes JSON (device name and date) and a plot to benchmarks/results/.")
    newest = runs[0]
    summary = importlib.import_module(f"course_lib.{unit}.bench").summary(newest)
    return (f"Measured on {newest['device']['name']}, {newest['date'][:10]} (committed run, "
            f"{len(runs)} in benchmarks/results):\n{summary}")


def cupy_time(fn, *, repeat=10, warmup=2):
    """Median seconds of ``fn()`` (CuPy work) measured with CuPy's CUDA events (GPU only).

    The GPU library peer of a benchmark (CuPy, cuSPARSE through ``cupyx``) runs on
    CuPy's current stream; its own events time it there.
    """
    import cupy as cp

    for _ in range(warmup):
        fn()
    cp.cuda.Device().synchronize()
    samples = []
    for _ in range(repeat):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        samples.append(cp.cuda.get_elapsed_time(start, stop) / 1e3)
    return float(np.median(samples))


def results(cpu_rows: list, gpu_part: Callable[[], tuple] | None = None) -> dict:
    """The ``run()`` result of a unit: ``{"rows", "summary", "notes"}``.

    Parameters
    ----------
    cpu_rows : list of dict
        Rows measured on the CPU (run anywhere).
    gpu_part : callable, optional
        ``gpu_part() -> (rows, summary, notes)``, called only on a GPU; without one
        the notes say so (:data:`NO_GPU_NOTE`) and the summary is empty.

    >>> results([{"variant": "cpu"}])["notes"] == [NO_GPU_NOTE] or device.is_gpu()
    True
    """
    rows, summary, notes = list(cpu_rows), {}, []
    if gpu_part is not None and device.is_gpu():
        gpu_rows, summary, gpu_notes = gpu_part()
        rows += gpu_rows
        notes += list(gpu_notes)
    else:
        notes.append(NO_GPU_NOTE)
    return {"rows": rows, "summary": summary, "notes": notes}


def summary_text(results: dict, format_row: Callable[[dict], str], extra: Iterable[str] = (),
                 goal: Callable[[dict], str] | None = None) -> str:
    """One line per row (``format_row(row)``), then ``extra`` lines, the goal line, then the notes.

    ``goal(results["summary"]) -> str`` is called only when the summary is not empty
    (a run on a GPU: without one there is no goal to compare with).

    >>> summary_text({"rows": [{"n": 1}], "notes": ["no GPU"]}, lambda r: f"N={r['n']}", ["goal: met"])
    'N=1\\ngoal: met\\nno GPU'
    """
    lines = [format_row(r) for r in results["rows"]]
    goal_lines = [goal(results["summary"])] if goal is not None and results.get("summary") else []
    return "\n".join([*lines, *extra, *goal_lines, *results.get("notes", [])])


def series(rows: Iterable[dict], x: str, y: str, *, label: str | Callable[[dict], str] = "variant",
           keep: Callable[[dict], bool] | None = None) -> dict:
    """Rows grouped into curves: ``{label: (xs, ys)}``, sorted by label then by x.

    Parameters
    ----------
    rows : iterable of dict
    x, y : str
        Keys of the row holding the abscissa and the ordinate.
    label : str or callable
        The key naming the curve, or ``label(row) -> str``.
    keep : callable, optional
        ``keep(row) -> bool``: only these rows (e.g. one family of inputs); rows
        whose ``y`` is None are always left out.
    """
    name = label if callable(label) else (lambda r: str(r[label]))
    curves: dict = {}
    for r in rows:
        if (keep is None or keep(r)) and r.get(y) is not None:
            curves.setdefault(name(r), []).append((r[x], r[y]))
    out = {}
    for key in sorted(curves):
        points = sorted(curves[key])
        out[key] = ([p[0] for p in points], [p[1] for p in points])
    return out


@contextmanager
def figure(path, *, figsize=(7, 4.5)):
    """``with figure(path) as ax:`` draw on ``ax``; the figure is laid out, saved and closed.

    matplotlib is imported here, not at import time of the benchmark modules.
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=figsize)
    try:
        yield ax
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(path, dpi=120)
    finally:
        plt.close(fig)


def plot_series(curves: dict, path, *, xlabel: str, ylabel: str, title: str, references=(),
                xscale="log", yscale="log", figsize=(7, 4.5)):
    """The benchmarks' usual figure: one line per curve on log-log axes, saved to ``path``.

    Parameters
    ----------
    curves : dict
        ``{label: (xs, ys)}``, as :func:`series` returns.
    path : str or Path
        Where the PNG goes.
    xlabel, ylabel, title : str
    references : iterable of (float, str)
        Horizontal reference lines (a peak, a goal) and their labels.
    """
    with figure(path, figsize=figsize) as ax:
        for label, (xs, ys) in curves.items():
            ax.plot(xs, ys, marker="o", label=label)
        for value, label in references:
            ax.axhline(value, color="k", ls="--", lw=1, label=label)
        ax.set(xscale=xscale, yscale=yscale, xlabel=xlabel, ylabel=ylabel, title=title)
