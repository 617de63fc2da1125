"""Benchmark of Unit 8: ``python -m course_lib.bench colocation [--quick]``.

CPU part (anywhere): the compiled grid-based miner against the reference (SciPy k-d tree and
Python sets) on the planted data with 20 features. GPU part (on a GPU only): every version of
the source's optimisation sequence end to end (upload included), pinned vs pageable copy
bandwidth, and the goal: the batched GPU version >= 50x the compiled CPU miner at 1e6 instances.
"""

from __future__ import annotations

import functools

import numpy as np

from .. import device
from ..bench import LOADED_NOTE, paired, plot_series, results as bench_results, series, summary_text
from ..bench import time_call, timing_suffix
from ..bench.measure import event_time
from ..bench.cases import Case, CostModel, Inputs, Probe, method_cases
from .api import VERSIONS, mine
from .data import planted_colocations

__all__ = ["GOAL_SPEEDUP", "copy_bandwidth", "plot", "run", "summary"]

#: The issue's goal: GPU end to end >= 50x the strong CPU version at 1e6 instances, 20 features.
GOAL_SPEEDUP = 50.0
N_FEATURES = 20
GROUPS = ((0, 1), (2, 3, 4), (5, 6, 7, 8))
R, THRESHOLD = 1.0, 0.3
#: Instances measured by ``run(quick=True)`` and ``run()``; the reference runs up to REFERENCE_UP_TO.
QUICK_SIZES, FULL_SIZES = (5_000, 20_000), (100_000, 1_000_000)
REFERENCE_UP_TO = 5_000
#: Paired rounds of the CPU part.
REPEAT = 3


def _data(n):
    return planted_colocations(n, N_FEATURES, groups=GROUPS, r=R, seed=n)


def _cpu_rows(sizes, reference_up_to):
    """The compiled miner, paired with the reference (k-d tree + Python sets) up to ``reference_up_to``."""
    rows = []
    cpu, reference = "cpu (numba, all cores)", "reference (cKDTree + sets)"
    for n in sizes:
        d = _data(n)
        outcome = {}

        def keep(name, method):
            def call():
                outcome[name] = mine(d.points, d.features, R, THRESHOLD, method=method)
            return call

        calls = {cpu: keep(cpu, "cpu")}
        if n <= reference_up_to:
            calls[reference] = keep(reference, "reference")
        timings = paired(calls, course=cpu, repeat=REPEAT, warmup=1)
        for variant, timing in timings.items():
            row = dict(variant=variant, instances=n, patterns=len(outcome[variant].patterns), **timing)
            if variant == reference:
                row["agrees"] = outcome[variant].patterns == outcome[cpu].patterns
            rows.append(row)
    return rows


def _gpu_rows(sizes):
    from numba import cuda

    rows = []
    for n in sizes:
        d = _data(n)
        for name, opts in VERSIONS.items():
            def run_version():
                out = mine(d.points, d.features, R, THRESHOLD, method="gpu", **opts)
                cuda.synchronize()
                return out

            result = run_version()  # compile and warm up
            # End to end (upload, preprocessing, every level, copies back): wall clock after a sync.
            seconds = time_call(run_version, repeat=3, warmup=0)
            rows.append(dict(variant=f"gpu {name.split(':')[0]}", version=name, instances=n, seconds=seconds,
                             patterns=len(result.patterns)))
    return rows


def copy_bandwidth(sizes_mib=(16,), *, repeat=9) -> list:
    """Host-to-device copy bandwidth from pageable and from pinned host memory (GPU only).

    Parameters
    ----------
    sizes_mib : sequence of int
        Sizes of the copied float64 arrays, in MiB.
    repeat : int
        Copies of each kind timed with CUDA events around each copy (one long operation:
        :func:`course_lib.bench.measure.event_time`; the median is kept). The two
        kinds take turns, so a change of clock or load during the measurement affects both alike.

    Returns
    -------
    list of dict
        ``{"memory": "pageable" | "pinned", "mib": int, "gb_per_s": float}`` per size and memory.
    """
    from numba import cuda

    from .._validate import check_positive_int

    if not device.is_gpu():
        raise RuntimeError("copy_bandwidth needs a GPU: the simulator's copies take no meaningful time")
    sizes_mib = [check_positive_int(m, "sizes_mib") for m in sizes_mib]
    repeat = check_positive_int(repeat, "repeat")
    rows = []
    for mib in sizes_mib:
        n = mib * 2**20 // 8
        pageable = np.ones(n)
        pinned = cuda.pinned_array(n, np.float64)
        pinned[:] = 1.0
        d = cuda.device_array(n)
        copies = {"pageable": lambda: d.copy_to_device(pageable), "pinned": lambda: d.copy_to_device(pinned)}
        samples = {kind: [] for kind in copies}
        for turn in range(repeat + 1):  # the first turn warms up
            for kind, copy in copies.items():
                seconds = event_time(copy, repeat=1, warmup=0)["seconds"]
                if turn:
                    samples[kind].append(seconds)
        for kind, seconds in samples.items():
            rows.append(dict(memory=kind, mib=mib, gb_per_s=n * 8 / float(np.median(seconds)) / 1e9))
    return rows


def run(*, quick: bool = False) -> dict:
    """Measure; returns ``{"rows", "summary", "notes", "parameters"}`` (``summary`` on a GPU only:
    the copy bandwidth and the goal)."""
    sizes = list(QUICK_SIZES if quick else FULL_SIZES)
    cpu_rows = _cpu_rows(sizes, reference_up_to=REFERENCE_UP_TO)

    def gpu_part():
        rows = _gpu_rows(sizes)
        n = sizes[-1]
        cpu = next(r["seconds"] for r in cpu_rows if r["variant"].startswith("cpu") and r["instances"] == n)
        final = f"gpu {list(VERSIONS)[-1].split(':')[0]}"  # the source's last version
        gpu = next(r["seconds"] for r in rows if r["variant"] == final and r["instances"] == n)
        goal = dict(instances=n, speedup=cpu / gpu, goal=GOAL_SPEEDUP, met=cpu / gpu >= GOAL_SPEEDUP)
        bandwidth = copy_bandwidth([16] if quick else [1, 16, 256])
        from .profiling import phase_breakdown  # where the final version's time goes, at the largest size

        d = _data(n)
        phases = phase_breakdown(d.points, d.features, R, THRESHOLD, **VERSIONS[list(VERSIONS)[-1]])
        phases = {k: v for k, v in phases.items() if k != "result"}
        return rows, {"goal": goal, "bandwidth": bandwidth, "phases": phases}, []

    out = bench_results(cpu_rows, gpu_part)
    out["notes"].append(LOADED_NOTE)
    out["parameters"] = dict(n_features=N_FEATURES, groups=GROUPS, r=R, threshold=THRESHOLD)
    return out


def _format_row(r):
    return (f"{r['variant']:<32} N = {r['instances']:>9,}: {r['seconds'] * 1e3:10.1f} ms, "
            f"{r['patterns']} prevalent patterns" + timing_suffix(r))


def _goal_line(s):
    g = s["goal"]
    return (f"goal: GPU >= {g['goal']:.0f}x the CPU miner at N = {g['instances']:,}: "
            f"{g['speedup']:.1f}x ({'met' if g['met'] else 'not met'})")


def summary(results) -> str:
    """A few human-readable lines: one per measurement, the copy bandwidth and the goal (GPU only)."""
    bandwidth = results.get("summary", {}).get("bandwidth", [])
    extra = [f"copy from {b['memory']:<8} memory, {b['mib']:>4} MiB: {b['gb_per_s']:.1f} GB/s" for b in bandwidth]
    return summary_text(results, _format_row, extra, goal=_goal_line)


def plot(results, path):
    """Seconds end to end of each variant against the number of instances (log-log)."""
    plot_series(series(results["rows"], "instances", "seconds"), path, xlabel="instances",
                ylabel="seconds (end to end)", title=f"co-location mining, {N_FEATURES} features")


# --- The GPU probe, the cost model and a committed host cost (declared for course_lib.bench.cases) -----

PROBE_N, TEACHING_N = 1_000_000, 100_000
#: The GPU versions of :func:`~course_lib.colocation.api.mine` by short name (``"v4"``), as the API names them.
GPU_VERSIONS = {name.split(":")[0]: options for name, options in VERSIONS.items()}


def default_version() -> str:
    """The version :func:`mine` runs when called with its defaults (its keyword defaults, read from the API)."""
    import inspect

    parameters = inspect.signature(mine).parameters
    return next(short for short, options in GPU_VERSIONS.items()
                if all(parameters[key].default == value for key, value in options.items()))


def _probe_inputs():
    return {n: _data(n) for n in (PROBE_N, TEACHING_N)}


def _mine_case(short):
    n = PROBE_N if short == default_version() else TEACHING_N

    def run(inputs):
        d = inputs[n]
        return lambda: mine(d.points, d.features, R, THRESHOLD, method="gpu", **GPU_VERSIONS[short])

    def counts(result):
        return {"levels": len(result.levels), "patterns": len(result.patterns)}

    return Case(f"gpu {short}", "mine() end to end: upload, preprocessing, every level's filter and refine, copies "
                "back", f"{n:,} instances, {N_FEATURES} features", 3.0, "call", run, counts=counts,
                per=("levels", "level"), repeat=3, fields={"instances": n, "options": GPU_VERSIONS[short]})


#: The options a later version may ship with once measured, timed at full size on top of the default version's:
#: the fused filter with the neighbour search once per level, and one copy each way per level.
CANDIDATE_OPTIONS = {"fused once": {"filter": "fused", "search": "once"}, "per level": {"copies": "per_level"}}
#: What each candidate row changes, for its description.
_CANDIDATE_TEXT = {"fused once": "with the fused filter and the neighbour search once per level",
                   "per level": "with one copy each way per level (the filter applied on the device)"}


def _candidate_case(label, expected_seconds):
    default = default_version()
    options = {**GPU_VERSIONS[default], **CANDIDATE_OPTIONS[label]}

    def run(inputs):
        d = inputs[PROBE_N]
        return lambda: mine(d.points, d.features, R, THRESHOLD, method="gpu", **options)

    def counts(result):
        return {"levels": len(result.levels), "patterns": len(result.patterns)}

    return Case(f"gpu {default} {label}", f"mine() end to end as the default version, {_CANDIDATE_TEXT[label]}",
                f"{PROBE_N:,} instances, {N_FEATURES} features", expected_seconds, "call", run, counts=counts,
                per=("levels", "level"), repeat=3, fields={"instances": PROBE_N, "options": options})


def _cpu_miner(inputs):
    d = inputs[PROBE_N]
    return lambda: mine(d.points, d.features, R, THRESHOLD, method="cpu")


PROBE = Probe(
    Inputs(f"planted co-locations, {PROBE_N:,} and {TEACHING_N:,} instances", _probe_inputs, 4.0),
    # v0 and v1 (a launch and a copy per candidate) took 0.8 s a call at 1e5 instances on the H200 (2026-11-26),
    # v2 and v3 0.03 s (five calls each, their kernels compiled by v0's), v4 0.17 s at 1e6 (five calls).
    method_cases(GPU_VERSIONS, default_version(), _mine_case,
                 teaching={"v0": dict(expected_seconds=3.0, repeat=1), "v1": dict(expected_seconds=3.0, repeat=1),
                           "v2": dict(expected_seconds=1.0), "v3": dict(expected_seconds=1.0)}) + (
        _candidate_case("fused once", 3.0), _candidate_case("per level", 1.5),
        Case("cpu", "mine(method='cpu'), the compiled miner on all cores", f"{PROBE_N:,} instances", 4.0, "cpu",
             _cpu_miner, repeat=2, fields={"instances": PROBE_N}),
    ))


@functools.lru_cache(maxsize=None)
def _record_counts(variant: str) -> tuple:
    """(launches, copies) of one small ``mine`` of that version in the simulator."""
    from ..sim import record

    d = planted_colocations(60, 4, groups=((0, 1),), r=1.0, seed=1)
    with record() as log:
        mine(d.points, d.features, 1.0, 0.3, method="gpu", **GPU_VERSIONS[variant.split()[-1]])
    return len(log.launches), len(log.transfers)


def _predict(row, run, costs):
    """Launches and blocking copies at the committed host costs, plus the upload at the pageable rate."""
    import math

    if not row["variant"].startswith("gpu"):
        return None, "a CPU row"
    launches, copies = _record_counts(row["variant"])
    upload = 24 * row["instances"] / (costs.pageable_bytes_per_s or math.inf)  # x, y, feature per instance
    return (launches * costs.launch_seconds + copies * (costs.copy_seconds or 0.0) + upload,
            {"launches": launches, "copies": copies, "upload": upload})


COST_MODEL = CostModel(_predict, lambda row: str(row.get("instances", "")))


def _copy_bandwidth(folder, known):
    """Host-to-device bytes per second, pageable and pinned, at the largest size the benchmark copied."""
    from ..bench.runs import committed_runs

    runs = committed_runs("colocation", kinds=("benchmark",), folder=folder)
    if not runs:
        return None
    run = runs[0]
    table = (run.data.get("summary") or {}).get("bandwidth") or []
    largest = {row["memory"]: row for row in sorted(table, key=lambda r: r["mib"])}
    if "pageable" not in largest:
        return None
    pinned = largest.get("pinned", {}).get("gb_per_s", 0) * 1e9 or None
    return ((largest["pageable"]["gb_per_s"] * 1e9, pinned),
            f"colocation run {run.date}: host-to-device GB/s at {largest['pageable']['mib']} MiB", run.device)


HOST_COSTS = {"copy_bandwidth": _copy_bandwidth}
