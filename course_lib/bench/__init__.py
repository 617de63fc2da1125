"""Shared benchmark layer: ``python -m course_lib.bench <unit> [--quick] [--gpu] [--out DIR]``.

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
- :func:`paired` times the course's version and its peers in interleaved rounds (warmed
  up, median and spread of every one, the peer / course ratio of each round) and
  :func:`timed_once` the preparation a peer needs; :func:`paired_rows` turns them into
  rows, :func:`ratio_lines` into the lines a summary prints, :func:`growth_exponent`
  fits time ~ N^k; :func:`time_call` (CPU wall clock), :func:`gpu_time` (device time per launch,
  launches queued ahead of the GPU) and :func:`cupy_time` (the GPU library peer) measure one thing;
  :mod:`course_lib.bench.measure` states the timing rules (device time, host cost per launch, end to
  end, DRAM bandwidth, TEPS, one scope per row, speed-ups against the fastest CPU path) and applies them;
- :mod:`course_lib.bench.probe` is the GPU probe of all eight units (``python -m course_lib.bench probe``),
  :mod:`course_lib.bench.split` splits a host-driven call's wall time into device time, launches, copies
  and allocations, :mod:`course_lib.bench.costs` reads the host costs of a launch and a copy from the
  committed runs, and :mod:`course_lib.bench.model` predicts every committed GPU row from issue slots, DRAM
  bytes, launches and copies (``python -m course_lib.bench model`` prints its error per row);
- :mod:`course_lib.bench.runs` is the one reader of the GPU runs committed under
  ``benchmarks/results/`` (full benchmarks and probe runs, newest first, labelled with device and
  date); :func:`committed_results` lists a unit's full benchmark runs through it and
  :func:`gpu_figures` is what a lesson prints of them: the newest, labelled with its device and
  date, the probe's runs when only those are committed, or how to make one when none is;
- :mod:`course_lib.bench.cases` is what a unit declares in its ``bench.py`` for the probe
  (``PROBE``), the cost model (``COST_MODEL``) and the committed host costs (``HOST_COSTS``);
  the layer finds the declarations through :func:`course_lib.registry.declared` and names no unit.

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
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from .. import device
from .runs import PROBE_PREFIX, RESULTS_DIR, committed_runs, runs_text

__all__ = ["LOADED_NOTE", "NO_GPU_NOTE", "RESULTS_DIR", "committed_results", "committed_runs", "runs_text", "cpu_name", "cupy_time", "figure",
           "driver_versions", "gpu_figures", "gpu_time", "growth_exponent", "load_note", "paired", "paired_rows", "plot_series", "ratio_lines",
           "results", "series", "stamp", "summary_text", "time_call", "timed_once", "timing_suffix",
           "versions", "write_results"]

#: The note of a run without a GPU (the benchmark measured its CPU part only).
NO_GPU_NOTE = "no GPU: only the CPU variants were measured"
#: Progress lines on standard error as each paired measurement and each part ends. Off by default (lessons
#: call :func:`paired` in cells); ``python -m course_lib.bench`` turns it on, so that a run stopped at a time
#: limit still says how far it got.
PROGRESS = False


def progress(message: str) -> None:
    """Write ``message`` to standard error with the wall-clock time, when :data:`PROGRESS` is on."""
    if PROGRESS:
        print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


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


#: The note every paired measurement carries: what its ratios are and are not.
LOADED_NOTE = ("course and peers were timed in interleaved rounds of one run (medians, spread = (max - min) / "
               "median); compare ratios within a run, and absolute seconds only between runs on the same idle machine")


def _timing(samples) -> dict:
    """Median, extremes, relative spread and count of a list of seconds."""
    arr = np.asarray(samples, dtype=float)
    median = float(np.median(arr))
    return {"seconds": median, "seconds_min": float(arr.min()), "seconds_max": float(arr.max()),
            "spread": float((arr.max() - arr.min()) / median) if median > 0 else 0.0,
            "repetitions": int(arr.size), "round_seconds": [float(x) for x in arr]}


def paired(calls: dict, *, course: str | None = None, repeat: int = 5, warmup: int = 1, number: int = 1) -> dict:
    """Time the course's version and its peers in interleaved rounds.

    Every callable runs ``warmup`` times first (compilation, imports, caches: off the
    clock); then ``repeat`` rounds each call every one once, in an order that
    alternates between rounds (forwards, backwards) so that none always runs first or
    right after another. A burst of load on a shared machine then hits a round, not a
    variant: the per-round ratio against ``course`` is the robust figure.

    Parameters
    ----------
    calls : dict of str to callable
        ``{name: fn}``; ``fn()`` is the bare call timed (its input prepared beforehand).
    course : str, optional
        The key of the course's version: each entry then also gets ``ratio_to_course``
        (its median / the course's median: > 1 means the course is faster) and the
        median, min and max of the per-round ratios.
    repeat : int
        Timed rounds, at least 1 (a skeptic wants >= 3).
    warmup : int
        Untimed calls of each before the rounds, at least 0.
    number : int
        Calls per timed sample, at least 1 (the sample is their mean): for calls of a
        millisecond or less, where one call is below the clock's and the scheduler's noise.

    Returns
    -------
    dict of str to dict
        Per name: ``seconds`` (median), ``seconds_min``, ``seconds_max``, ``spread``
        (``(max - min) / median``), ``repetitions``, ``round_seconds`` (every round's); with ``course``, the ratios.

    >>> t = paired({"a": lambda: sum(range(100)), "b": lambda: sum(range(1000))}, course="a", repeat=3)
    >>> t["b"]["repetitions"], t["a"]["ratio_to_course"]
    (3, 1.0)
    """
    if not calls:
        raise ValueError("paired needs at least one callable")
    if course is not None and course not in calls:
        raise ValueError(f"course {course!r} is not one of the timed calls {sorted(calls)}")
    if int(repeat) < 1 or int(warmup) < 0 or int(number) < 1:
        raise ValueError(f"repeat must be >= 1, warmup >= 0 and number >= 1, got repeat={repeat}, warmup={warmup}, "
                         f"number={number}")
    names = list(calls)
    for _ in range(int(warmup)):
        for name in names:
            calls[name]()
    samples = {name: [] for name in names}
    for round_ in range(int(repeat)):
        for name in (names if round_ % 2 == 0 else names[::-1]):
            fn = calls[name]
            start = time.perf_counter()
            for _ in range(int(number)):
                fn()
            samples[name].append((time.perf_counter() - start) / int(number))
    out = {name: _timing(samples[name]) for name in names}
    if course is not None:
        base = out[course]["seconds"]
        for name in names:
            per_round = np.asarray(samples[name]) / np.asarray(samples[course])
            out[name].update(ratio_to_course=out[name]["seconds"] / base if base > 0 else float("inf"),
                             round_ratio_median=float(np.median(per_round)), round_ratio_min=float(per_round.min()),
                             round_ratio_max=float(per_round.max()))
    progress("paired: " + ", ".join(f"{name} {out[name]['seconds']:.4g} s" for name in names))
    return out


def timed_once(fn):
    """``(seconds, result)`` of one call of ``fn()``: the preparation a peer needs, timed apart."""
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def paired_rows(timings: dict, common: dict, *, variants: dict | None = None, extra: dict | None = None) -> list:
    """Rows of a :func:`paired` measurement: ``common`` fields + ``variant`` + the timing.

    ``variants`` renames keys of ``timings`` (default: the key is the variant);
    ``extra[name]`` adds fields to that row (e.g. the preparation's seconds, settings).
    """
    rows = []
    for name, timing in timings.items():
        row = dict(common, variant=(variants or {}).get(name, name))
        row.update(timing)
        row.update((extra or {}).get(name, {}))
        rows.append(row)
    return rows


def ratio_lines(rows: Iterable[dict], *, size: Callable[[dict], str], course: Callable[[dict], bool],
                label: Callable[[dict], str] | None = None) -> list:
    """One line per paired row (rows without a spread are skipped): median, spread, repetitions, peer / course.

    ``size(row)`` labels the input, ``label(row)`` the variant (default ``row["variant"]``);
    ``course(row)`` says which rows are the course's (no ratio printed for them).
    """
    lines = []
    for r in rows:
        if "spread" not in r:
            continue
        line = (f"{size(r):<24} {(label or (lambda x: x['variant']))(r):<34} {r['seconds']:10.4g} s median of {r['repetitions']} "
                f"(spread {100 * r['spread']:.0f} %)")
        if "ratio_to_course" in r and not course(r):
            line += (f"  peer/course {r['ratio_to_course']:.2f}x (rounds {r['round_ratio_min']:.2f}-"
                     f"{r['round_ratio_max']:.2f})")
        if r.get("prepare_seconds") is not None:
            line += f"  + preparation {r['prepare_seconds']:.3g} s"
        lines.append(line)
    return lines


def timing_suffix(row: dict) -> str:
    """What a summary line adds for a paired row: repetitions, spread and the peer / course ratio.

    >>> timing_suffix({"repetitions": 5, "spread": 0.12, "ratio_to_course": 3.0, "round_ratio_min": 2.5,
    ...                "round_ratio_max": 3.5})
    '  [median of 5, spread 12 %, peer/course 3.00x (rounds 2.50-3.50)]'
    >>> timing_suffix({"ratio_to_course": 1.0, "repetitions": 5, "spread": 0.0}), timing_suffix({})
    ('  [median of 5, spread 0 %]', '')
    """
    if "spread" not in row:
        return ""
    text = f"median of {row['repetitions']}, spread {100 * row['spread']:.0f} %"
    if row.get("ratio_to_course", 1.0) != 1.0:
        text += (f", peer/course {row['ratio_to_course']:.2f}x (rounds {row['round_ratio_min']:.2f}-"
                 f"{row['round_ratio_max']:.2f})")
    return f"  [{text}]"


def growth_exponent(sizes, seconds) -> float | None:
    """The exponent k of a least-squares fit seconds ~ c * size^k on log-log axes (None below 2 sizes).

    >>> round(growth_exponent([10, 100, 1000], [1.0, 100.0, 1e4]), 6)
    2.0
    """
    sizes, seconds = np.asarray(sizes, float), np.asarray(seconds, float)
    if sizes.size < 2 or np.unique(sizes).size < 2:
        return None
    return float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0])


def gpu_time(launch, *, repeat=10, warmup=2):
    """Median device seconds per launch of ``launch()`` (GPU only): :func:`course_lib.bench.measure.device_time`.

    ``launch`` must only enqueue work (kernel launches, no copies back, no synchronisation). The
    launches are queued behind a spin kernel and timed K at a time, so the figure is the GPU's time
    per launch, not the host's cost of issuing it (events around one launch on an idle GPU time the
    host). Use :func:`course_lib.bench.measure.device_time` to keep the host cost per launch too.
    """
    from . import measure

    if not device.is_gpu():
        raise RuntimeError("gpu_time needs a GPU; the simulator has no meaningful timings")
    return measure.device_time(launch, repeat=repeat, warmup=warmup).device_seconds


def cpu_name() -> str:
    """The CPU model, for the results' header."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


#: Distributions whose versions a results file records (the course's stack and every peer), where installed.
VERSIONED = ("numpy", "scipy", "numba", "numba-cuda", "cuda-bindings", "cupy-cuda13x", "cupy-cuda12x", "cupy",
             "fastcluster", "mne", "python-picard", "scikit-learn", "networkx", "opencv-python-headless",
             "opencv-python")


def versions() -> dict:
    """``{distribution: version}`` of :data:`VERSIONED` that are installed (read from metadata, nothing imported)."""
    from importlib import metadata

    out = {}
    for name in VERSIONED:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def driver_versions() -> dict:
    """The CUDA driver's and runtime's versions, e.g. ``{"driver": "13.0", "runtime": "13.0"}`` (GPU only).

    Empty without a GPU; a version the installed bindings cannot report is left out.
    """
    if not device.is_gpu():
        return {}
    from numba import cuda

    out = {}
    for key, get in (("driver", lambda: cuda.cudadrv.driver.driver.get_version()),
                     ("runtime", lambda: cuda.runtime.get_version())):
        try:
            out[key] = ".".join(map(str, get()))
        except Exception:  # bindings without that query: the file says less, the run goes on
            continue
    return out


def stamp(unit: str) -> dict:
    """Header of a results file: unit, device, CUDA driver and runtime, CPU, date, versions."""
    import numba

    info = device.info()
    return {
        "unit": unit,
        "backend": info.backend,
        "device": info.as_dict(),
        "cuda": driver_versions(),
        "cpu": cpu_name(),
        "cpu_cores": __import__("os").cpu_count(),
        "load_average_start": list(__import__("os").getloadavg()),  # 1, 5, 15 min: a busy machine shows here
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "numba": numba.__version__,
        "python": platform.python_version(),
        "versions": versions(),
    }


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()


def load_note(results: dict) -> str:
    """A sentence on the machine's load during the run (from ``load_average_start`` and ``_end``).

    Whether other work loaded the machine is judged from the load at the start: the one-minute average at
    the end counts the benchmark's own threads and processes (its ``prange`` loops, BLAS threads, the
    grader's workers), which would mark every run on all cores as loaded.
    """
    start, end = results["load_average_start"][0], results["load_average_end"][0]
    cores = results["cpu_cores"]
    busy = start > 0.5 * cores
    return (f"load average (1 min) {start:.2f} at the start and {end:.2f} at the end (the run's own work "
            f"included) on {cores} cores: "
            + ("the machine was LOADED by other work; ratios of one run are the figures to read" if busy
               else "the machine was quiet"))


def write_results(results: dict, out_dir, plot=None) -> tuple[Path, Path | None]:
    """Write ``results`` as JSON (and a PNG via ``plot(results, path)``) into ``out_dir``.

    The file name carries the unit, the device and the date, e.g.
    ``nbody_nvidia-h100-80gb-hbm3_2026-11-22.json``; a run without a GPU is named
    ``<unit>_cpu-only_<date>`` (``cpu-only-quick`` for ``--quick`` sizes, so that a quick run
    never overwrites a full one of the same day), which no GPU's name can be, and
    :func:`committed_results` leaves it out by its ``backend`` whatever its name.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    name = (results["device"]["name"] if results["backend"] == "gpu"
            else "cpu-only-quick" if results.get("quick") else "cpu-only")
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
    """The GPU runs of ``unit``'s full benchmark in ``folder`` (default :data:`RESULTS_DIR`), newest first.

    Read by :func:`course_lib.bench.runs.committed_runs`, the one reader of committed runs (which also
    lists the probe's runs and labels each with its device and date); ``"probe-<unit>"`` gives the
    probe's runs of the unit instead.

    Parameters
    ----------
    unit : str
        A unit name (one of :data:`course_lib.UNITS`): files ``<unit>_*.json`` written by :func:`write_results`.
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
    if unit.startswith(PROBE_PREFIX):
        return [run.data for run in committed_runs(unit[len(PROBE_PREFIX):], kinds=("probe",), folder=folder)]
    return [run.data for run in committed_runs(unit, kinds=("benchmark",), folder=folder)]


def gpu_figures(unit: str, folder=None) -> str:
    """What a lesson shows of its unit's GPU benchmark.

    The newest committed GPU run of the unit's benchmark (:func:`committed_results`), headed by its
    device and date and summarised by the unit's ``bench.summary``; without one, the committed probe
    runs (:func:`course_lib.bench.runs.runs_text`); when neither is committed, a sentence saying so
    and which command makes one.
    """
    folder = Path(RESULTS_DIR if folder is None else folder)
    runs = committed_results(unit, folder)
    if not runs:
        if committed_runs(unit, kinds=("probe",), folder=folder):
            return (f"No GPU run of the {unit} benchmark itself is committed; the probe's runs are:\n"
                    + runs_text(unit, kinds=("probe",), folder=folder))
        return (f"No GPU run of the {unit} benchmark is committed yet, nor a probe run (none in "
                f"{folder.parent.name}/{folder.name}/): the figures quoted here are published ones and goals. On a "
                f"machine with an NVIDIA GPU, `python -m course_lib.bench {unit} --gpu` measures them and writes JSON "
                f"(device, driver, versions, date) and a plot to benchmarks/results/.")
    newest = runs[0]
    summary = importlib.import_module(f"course_lib.{unit}.bench").summary(newest)
    return (f"Measured on {newest['device']['name']}, {newest['date'][:10]} (committed run, "
            f"{len(runs)} in benchmarks/results):\n{summary}")


def cupy_time(fn, *, repeat=10, warmup=2):
    """Median device seconds per call of ``fn()`` (CuPy work, e.g. cuSPARSE through ``cupyx``; GPU only).

    Timed like :func:`gpu_time` (calls queued behind a spin kernel, K at a time) on CuPy's current
    stream with CuPy's events, so the library peer and the course's kernels are measured alike.
    """
    from . import measure

    return measure.device_time(fn, repeat=repeat, warmup=warmup, gpu=measure.CupyGPU()).device_seconds


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
        progress(f"CPU part done ({len(rows)} rows); GPU part starts")
        gpu_rows, summary, gpu_notes = gpu_part()
        progress(f"GPU part done ({len(gpu_rows)} rows)")
        rows += gpu_rows
        notes += list(gpu_notes)
    else:
        notes.append(NO_GPU_NOTE)
    return {"rows": rows, "summary": summary, "notes": list(dict.fromkeys(notes))}  # each note once (several sizes may say the same)


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
