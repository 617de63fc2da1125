"""Benchmark of Unit 7: ``python -m course_lib.bench cellsim``.

Every row simulates the thesis's type table on a log-normal initial histogram
(median fluorescence 1000) to tau_max = 720 h with phi_min = 11 and reports cells
simulated per second (every cell whose fate was decided) and divisions per second.

CPU part (runs anywhere): the straightforward Python event loop (the reference with
NumPy's generator, the faster of its two streams) against the compiled CPU simulator
(Numba, serial and ``parallel=True``) on the same population. Goal: the compiled version
simulates cells >= 50x faster than the Python loop. The published version of the thesis's
simulator (cuProCell) reports 237x for its GPU version over the sequential Python simulator;
the thesis's own text names 8x for its first GPU version.

GPU part (where a GPU is present): the compacting simulator (``method="compact"``) at
L = 1e5 and 1e6 initial cells and the fixed-slot tree where it fits, timed end to end
(the host waits for each batch's total, so wall-clock time with the final copies is what
counts), each checked to equal the CPU version's result for the same
seed; the compiled CPU version at the same L is the strong baseline. Goal on an H100:
>= 1e9 divisions/s at L = 1e6 and tau_max = 720 h. No GPU library implements this model,
so there is no library peer.
"""

from __future__ import annotations

import functools

from .. import device
from ..bench import LOADED_NOTE, paired, summary_text, time_call, timing_suffix
from ..bench.cases import Case, CostModel, Inputs, Probe, default_gpu_method, method_cases
from .api import DEVICE_METHODS, prepare_problem, simulate
from .cpu import simulate_cpu
from .data import THESIS_TYPES, lognormal_histogram
from .reference import simulate_reference

TAU_MAX = 720.0
PHI_MIN = 11.0
GOAL_CPU_OVER_PYTHON = 50.0
GOAL_GPU_DIVISIONS_PER_S = 1e9
#: Paired rounds of the CPU part.
REPEAT = 3
#: Initial populations L of the CPU part; the Python event loop runs at the first.
QUICK_SIZES, FULL_SIZES = (100, 10_000), (1000, 100_000)


def _row(variant, n, seconds, result):
    return {"variant": variant, "n_initial": n, "tau_max": TAU_MAX, "phi_min": PHI_MIN, "seconds": seconds,
            "cells": result.cells_simulated, "divisions": result.divisions, "recorded": result.recorded,
            "cells_per_s": result.cells_simulated / seconds, "divisions_per_s": result.divisions / seconds}


def _timed(fn, repeat):
    """(median seconds, last result) of ``fn()`` after one warm-up call (compilation)."""
    box = {}

    def call():
        box["result"] = fn()

    seconds = time_call(call, repeat=repeat, warmup=1, min_time=0.0)
    return seconds, box["result"]


def _cpu_rows(quick):
    """The compiled simulator paired with the Python event loop (same population), then alone at a larger L."""
    rows = []
    sizes = QUICK_SIZES if quick else FULL_SIZES
    n_python = sizes[0]
    for n in sizes:
        h0 = lognormal_histogram(n, seed=1)
        problem = prepare_problem(h0, THESIS_TYPES, tau_max=TAU_MAX, phi_min=PHI_MIN, seed=1)
        outcome = {}

        def keep(name, fn):
            def call():
                outcome[name] = fn()
            return call

        calls = {"cpu_numba_parallel": keep("cpu_numba_parallel", lambda: simulate_cpu(problem, parallel=True)),
                 "cpu_numba_serial": keep("cpu_numba_serial", lambda: simulate_cpu(problem, parallel=False))}
        if n == n_python:
            calls["python_event_loop"] = keep("python_event_loop", lambda: simulate_reference(
                h0, THESIS_TYPES, tau_max=TAU_MAX, phi_min=PHI_MIN, seed=1, streams="numpy"))
        timings = paired(calls, course="cpu_numba_parallel", repeat=REPEAT, warmup=1)
        for variant, timing in timings.items():
            rows.append({**_row(variant, n, timing["seconds"], outcome[variant]), **timing})
    return rows


def _gpu_rows(quick):
    from numba import cuda

    rows, notes = [], []
    sizes = [100_000] if quick else [100_000, 1_000_000]
    for n in sizes:
        h0 = lognormal_histogram(n, seed=1)
        problem = prepare_problem(h0, THESIS_TYPES, tau_max=TAU_MAX, phi_min=PHI_MIN, seed=1)
        cpu_seconds, cpu_result = _timed(lambda: simulate_cpu(problem, parallel=True), repeat=3)
        rows.append(_row("cpu_numba_parallel", n, cpu_seconds, cpu_result))

        def run(method):
            result = simulate(h0, THESIS_TYPES, tau_max=TAU_MAX, phi_min=PHI_MIN, seed=1, method=method)
            cuda.synchronize()
            return result

        for method in ("compact", "tree"):
            try:
                seconds, result = _timed(lambda: run(method), repeat=3)
            except ValueError as exc:  # the tree's memory wall
                notes.append(f"L = {n} {method}: {exc}")
                continue
            row = _row(method, n, seconds, result)
            row["correct"] = bool(result.same_as(cpu_result))
            row["peak_device_bytes"] = result.stats.get("peak_device_bytes")
            row["speedup_over_cpu"] = row["cells_per_s"] / (cpu_result.cells_simulated / cpu_seconds)
            if not row["correct"]:
                notes.append(f"L = {n} {method}: result differs from the CPU version (left out of the goals)")
            if method == "compact":  # where the time goes: device work per phase against host costs
                from .profiling import phase_breakdown

                phases = phase_breakdown(h0, THESIS_TYPES, tau_max=TAU_MAX, phi_min=PHI_MIN, seed=1)
                row["phases"] = {k: v for k, v in phases.items() if k != "result"}
            rows.append(row)
    return rows, notes


def run(*, quick=False):
    """Run the benchmark; see the module docstring."""
    rows = _cpu_rows(quick)
    notes = []
    python = next(r for r in rows if r["variant"] == "python_event_loop")
    same_n = [r for r in rows if r["n_initial"] == python["n_initial"] and r["variant"].startswith("cpu_numba")]
    best_cpu = max(same_n, key=lambda r: r["cells_per_s"])
    summary = {"cpu_over_python": best_cpu["cells_per_s"] / python["cells_per_s"],
               "cpu_variant": best_cpu["variant"], "goal_cpu_over_python": GOAL_CPU_OVER_PYTHON}
    summary["cpu_goal_met"] = summary["cpu_over_python"] >= GOAL_CPU_OVER_PYTHON
    if device.is_gpu():
        gpu, gpu_notes = _gpu_rows(quick)
        rows += gpu
        notes += gpu_notes
        good = [r for r in gpu if r["variant"] == "compact" and r.get("correct")]
        if good:
            largest = max(good, key=lambda r: r["n_initial"])
            summary.update(gpu_divisions_per_s=largest["divisions_per_s"], gpu_n_initial=largest["n_initial"],
                           gpu_over_cpu=largest["speedup_over_cpu"], goal_gpu_divisions_per_s=GOAL_GPU_DIVISIONS_PER_S,
                           gpu_goal_met=largest["n_initial"] >= 1_000_000
                           and largest["divisions_per_s"] >= GOAL_GPU_DIVISIONS_PER_S)
    else:
        notes.append("no GPU: only the CPU variants were measured")
    notes.append(LOADED_NOTE)
    return {"rows": rows, "summary": summary, "notes": notes}


def _format_row(r):
    return (f"{r['variant']:<20} L={r['n_initial']:<9} {r['seconds']:9.4f} s {r['cells_per_s']:10.3g} cells/s "
            f"{r['divisions_per_s']:10.3g} divisions/s" + ("" if r.get("correct", True) else "  WRONG")
            + timing_suffix(r))


def summary(results):
    """A few human-readable lines."""
    s = results["summary"]
    extra = [f"compiled CPU ({s['cpu_variant']}) / Python event loop: {s['cpu_over_python']:.0f}x "
             f"(goal >= {s['goal_cpu_over_python']:.0f}x)"]
    if "gpu_divisions_per_s" in s:
        extra.append(f"GPU compact at L = {s['gpu_n_initial']:,}: {s['gpu_divisions_per_s']:.3g} divisions/s "
                     f"(goal >= {s['goal_gpu_divisions_per_s']:.0e}), {s['gpu_over_cpu']:.1f}x the compiled CPU")
    return summary_text(results, _format_row, extra)


def plot(results, path):
    """Cells simulated per second of each variant, per population size (log scale)."""
    import matplotlib.pyplot as plt
    import numpy as np

    rows = results["rows"]
    variants = sorted({r["variant"] for r in rows})
    sizes = sorted({r["n_initial"] for r in rows})
    fig, ax = plt.subplots(figsize=(7, 4.5))
    width = 0.8 / max(len(variants), 1)
    for i, variant in enumerate(variants):
        values = [next((r["cells_per_s"] for r in rows if r["variant"] == variant and r["n_initial"] == n), 0.0)
                  for n in sizes]
        ax.bar(np.arange(len(sizes)) + i * width, values, width, label=variant)
    ax.set_xticks(np.arange(len(sizes)) + 0.4 - width / 2, [f"L = {n:,}" for n in sizes])
    where = results["device"]["name"] if results["backend"] == "gpu" else results["cpu"]
    ax.set(yscale="log", ylabel="cells simulated per second",
           title=f"Cell proliferation, tau_max = {TAU_MAX:g} h, on {where}")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# --- The GPU probe and the cost model (declared for course_lib.bench.cases) -----------------------

#: The probe's size, and the teaching rows' (the fixed-slot tree took 6.2 s at L = 1e5 on the H200, 2026-11-26).
PROBE_L, TEACHING_L = 1_000_000, 10_000
#: The cost model's bytes per decided cell (fate read and written, scan, scatter of the daughters).
MODEL_BYTES_PER_CELL = 130


def _probe_inputs():
    return {n: lognormal_histogram(n, seed=1) for n in (PROBE_L, TEACHING_L)}


def _generation_counts(result):
    """What the simulation counts: cells decided, divisions, generations recorded."""
    return {"cells": int(result.cells_simulated), "divisions": int(result.divisions),
            "generations": int(len(result.level_counts)), "recorded": int(result.recorded)}


#: Methods that may replace the default once measured: timed at full size beside it, not as teaching rows.
CANDIDATE_METHODS = ("compact_pooled",)


def _simulate_case(method):
    n = PROBE_L if method == default_gpu_method(simulate, DEVICE_METHODS) or method in CANDIDATE_METHODS else TEACHING_L

    def run(inputs):
        h0 = inputs[n]
        return lambda: simulate(h0, THESIS_TYPES, tau_max=TAU_MAX, phi_min=PHI_MIN, seed=1, method=method)

    return Case(method, "simulate() end to end: upload, every generation's launches, the histograms downloaded",
                f"L = {n:,} initial cells, tau_max {TAU_MAX:g} h", 4.0, "call", run, counts=_generation_counts,
                per=("divisions", "division"), fields={"n_initial": n})


def _cpu_simulation(inputs):
    problem = prepare_problem(inputs[PROBE_L], THESIS_TYPES, tau_max=TAU_MAX, phi_min=PHI_MIN, seed=1)
    return lambda: simulate_cpu(problem, parallel=True)


PROBE = Probe(
    Inputs(f"lognormal histograms of {PROBE_L:,} and {TEACHING_L:,} cells", _probe_inputs, 0.5),
    method_cases(DEVICE_METHODS, default_gpu_method(simulate, DEVICE_METHODS), _simulate_case,
                 # the tree at L = 1e4: a tenth of the 0.6 s per call measured at 1e5 on the H200 (2026-11-26), twice
                 teaching={m: dict(expected_seconds=2.5, repeat=1) for m in DEVICE_METHODS
                           if m not in CANDIDATE_METHODS}) + (
        Case("cpu_numba_parallel", "the compiled CPU simulation on all cores", f"L = {PROBE_L:,}", 5.0, "cpu",
             _cpu_simulation, counts=_generation_counts, per=("divisions", "division"), repeat=2,
             fields={"n_initial": PROBE_L}),
    ))


@functools.lru_cache(maxsize=None)
def _record_counts(method: str) -> tuple:
    """(launches, copies) of one small ``simulate`` in the simulator."""
    from ..sim import record

    with record() as log:
        simulate(lognormal_histogram(20, seed=1), THESIS_TYPES, tau_max=72.0, phi_min=PHI_MIN, seed=1, method=method)
    return len(log.launches), len(log.transfers)


def _predict(row, run, costs):
    """The larger of launch host time and the decided cells' bytes, plus the blocking copies."""
    if row["variant"] not in DEVICE_METHODS:
        return None, "a CPU row"
    launches, copies = _record_counts(row["variant"])
    device_seconds = row["cells"] * MODEL_BYTES_PER_CELL / run["device"]["memory_bandwidth"]
    return (max(launches * costs.launch_seconds, device_seconds) + copies * (costs.copy_seconds or 0.0),
            {"launches": launches, "copies": copies, "device": device_seconds})


COST_MODEL = CostModel(_predict, lambda row: str(row.get("n_initial", "")))
