"""Benchmark of Unit 5: ``python -m course_lib.bench hac``.

Planted affinity graphs (:func:`~course_lib.hac.planted_graph`) up to the thesis's size
(N = 12,119, M = 705,352). Every row is one complete clustering, end to end (the graph
given on the host, ``parent`` and ``height`` returned on the host).

CPU part (runs anywhere): the compiled version (``cpu``, the strong baseline: per-cluster
pair lists, the best pairs scanned up to :data:`~course_lib.hac.cpu.SCAN_UP_TO` elements,
a heap above) in float32 and float64 against its peers called as their users call them: SciPy's
``linkage(y, method="average")`` and ``fastcluster.average(y)`` on a ready condensed
distance matrix ``y`` of D = c - S (one per connected component). Building ``y`` from the
graph is timed once and reported beside them (``prepare_seconds``), not inside the calls.
All of them are warmed up and timed in interleaved rounds of one run
(:func:`course_lib.bench.paired`): median, spread and the peer / course ratio of every
round. Each size also checks that the course's merge heights equal SciPy's. The
compiled full-scan version (``cpu_scan``, the thesis's C design) runs on the smaller
graphs, and the NumPy reference (the "Python original") is timed over its first
iterations and extrapolated to all N - nC, marked ``estimated``: its iterations all cost
the same (full passes over the M entries). The summary fits each variant's growth
exponent (seconds ~ N^k) over the sizes.

GPU part (where a GPU is present): the whole loop in one cooperative kernel
(``gpu_persistent``) and the rounds of reciprocal pairs in one cooperative kernel
(``gpu_rac``, with the unit model's prediction beside it, ``predicted_seconds``), timed end
to end with CUDA events; the host-driven device-resident loop with each fusion and layout, and the thesis's host round trip, timed over their first
:data:`GPU_SAMPLE_MERGES` merges and extrapolated (``estimated``); plus the time per stage
(events around each stage) and a roofline bound from the bytes each iteration streams
(:func:`~course_lib.hac.bytes_per_iteration`) and the device's memory bandwidth.

Goals (reported, never asserted in tests): the ``cpu`` version at least as fast as
fastcluster at every size from N = 1,000 up (the median of the paired rounds); the GPU end
to end under 1 s (the thesis: 24.77 s on a GeForce 9600GT; its Python original 1274 s).
"""

from __future__ import annotations

import time

import numpy as np

from .. import device
from ..bench import LOADED_NOTE, growth_exponent, paired, paired_rows, ratio_lines, timed_once
from ..bench.cases import Case, Inputs, Probe, default_gpu_method, method_cases
from .api import GPU_METHODS, ONE_KERNEL_METHODS, cluster
from .data import THESIS_M, THESIS_N, planted_graph
from .model import THESIS, bytes_per_iteration
from .reference import average_link_reference

#: The CPU goal holds from this many elements up: the course at least as fast as fastcluster.
GOAL_FROM_N = 1_000
GOAL_GPU_SECONDS = 1.0
#: Iterations of the NumPy reference timed for its estimate.
REFERENCE_SAMPLE = 200
#: Timed rounds of the paired measurement (each after one warm-up call of every variant).
REPEAT = 5
#: The peers whose user-facing call is timed, on a ready condensed distance matrix.
PEERS = ("scipy_linkage", "fastcluster_average")
GPU_VARIANTS = (("gpu_persistent", None, "soa"), ("gpu_rac", None, "soa"), ("gpu", "segmented", "soa"),
                ("gpu", "atomic", "soa"),
                ("gpu", "segmented", "aos"), ("gpu_roundtrip", "cpu_sort", "soa"), ("gpu_roundtrip", "cpu_sort", "aos"))
#: Merges the host-driven GPU loops run per timing (their merges all cost the same full passes, so the
#: time of all N - nC is extrapolated, marked ``estimated``); the persistent kernel always runs them all.
GPU_SAMPLE_MERGES = 500
QUICK_N = (400, 1_000)
FULL_N = (1_000, 1_500, 3_000, 6_000, THESIS_N)


def _graphs(quick):
    """Planted graphs at the thesis's density (M / N = 58), up to the thesis size."""
    out = []
    for n in QUICK_N if quick else FULL_N:
        m = THESIS_M if n == THESIS_N else 2 * round(n * THESIS_M / THESIS_N / 2)
        g, _ = planted_graph(n, m, n_groups=max(2, n // 300), n_subgroups=8, seed=n)
        out.append((f"planted_{n}", g))
    return out


def _row(variant, name, g, seconds, *, estimated=False, dtype="float64", **extra):
    row = {"variant": variant, "graph": name, "n_elements": g.n_elements, "n_entries": g.n_entries,
           "merges": g.n_elements - g.n_components, "dtype": dtype, "seconds": float(seconds), "estimated": estimated}
    row.update(extra)
    return row


def condensed_distances(g):
    """The peers' input: per connected component of >= 2 elements, ``(offset, y)``.

    ``y`` is the condensed (``scipy.spatial.distance.squareform``) form of D = c - S with
    c the largest affinity of the graph, float64 of length n (n - 1) / 2; absent pairs have
    affinity 0, i.e. distance c, exactly as :func:`~course_lib.hac.scipy_average_linkage`
    builds it.
    """
    from scipy.spatial.distance import squareform

    dense = g.to_sparse().toarray()
    offset = float(g.weight.max()) if g.weight.size else 0.0
    out = []
    for c in range(g.n_components):
        members = np.flatnonzero(g.component == c)
        if members.size >= 2:
            distances = offset - dense[np.ix_(members, members)]
            np.fill_diagonal(distances, 0.0)
            out.append((offset, squareform(distances, checks=False)))
    return out


def _same_heights(tree, condensed, linkage_matrices):
    """The course's merge affinities equal the peer's c - d (sorted, to 1e-9 relative)."""
    ours = np.sort(np.asarray(tree.merge_heights, dtype=np.float64))
    theirs = np.sort(np.concatenate([offset - z[:, 2] for (offset, _), z in zip(condensed, linkage_matrices)]))
    return bool(ours.shape == theirs.shape and np.allclose(ours, theirs, rtol=1e-9, atol=1e-12))


def _cpu_rows(graphs, quick):
    import fastcluster
    from scipy.cluster.hierarchy import linkage

    rows = []
    cluster(graphs[0][1], "cpu_scan", dtype=np.float32)  # compile (or load from the cache) off the clock
    for name, g in graphs:
        prepare_seconds, condensed = timed_once(lambda: condensed_distances(g))
        calls = {
            "cpu float32": lambda: cluster(g, "cpu", dtype=np.float32),
            "cpu float64": lambda: cluster(g, "cpu", dtype=np.float64),
            "scipy_linkage": lambda: [linkage(y, method="average") for _, y in condensed],
            "fastcluster_average": lambda: [fastcluster.average(y) for _, y in condensed],
        }
        timings = paired(calls, course="cpu float64", repeat=REPEAT, warmup=1)
        agrees = _same_heights(cluster(g, "cpu", dtype=np.float64), condensed,
                               [linkage(y, method="average") for _, y in condensed])
        common = {"graph": name, "n_elements": g.n_elements, "n_entries": g.n_entries,
                  "merges": g.n_elements - g.n_components, "estimated": False}
        extra = {"cpu float32": {"variant": "cpu", "dtype": "float32"},
                 "cpu float64": {"variant": "cpu", "dtype": "float64", "same_heights_as_scipy": agrees}}
        for peer in PEERS:
            extra[peer] = {"dtype": "float64", "prepare_seconds": prepare_seconds, "input": "condensed distances"}
        rows += paired_rows(timings, common, extra=extra)
        if g.n_entries <= 300_000:
            seconds, _ = timed_once(lambda: cluster(g, "cpu_scan", dtype=np.float32))
            rows.append(_row("cpu_scan", name, g, seconds, dtype="float32", repetitions=1))
        merges = g.n_elements - g.n_components
        sample = min(merges, 40 if quick else REFERENCE_SAMPLE)
        start = time.perf_counter()
        average_link_reference(g, max_merges=sample)
        per_iteration = (time.perf_counter() - start) / max(sample, 1)
        rows.append(_row("python_original", name, g, per_iteration * merges, estimated=sample < merges,
                         iterations_timed=sample, repetitions=1))
    return rows


def _gpu_rows(graphs, bandwidth):
    from numba import cuda

    rows = []
    cluster(graphs[0][1], "gpu")  # compile the kernels
    for name, g in graphs:
        for method, fusion, layout in GPU_VARIANTS:
            merges = g.n_elements - g.n_components
            sample = merges if method in ONE_KERNEL_METHODS else min(merges, GPU_SAMPLE_MERGES)
            # "gpu_rac" merges in rounds, not in order: it always makes every merge.
            limit = (lambda q: {}) if method == "gpu_rac" else (lambda q: {"max_merges": q})
            cluster(g, method, fusion=fusion, layout=layout, **limit(2))  # compile this variant
            samples = []
            for _ in range(3):
                start, stop = cuda.event(), cuda.event()
                start.record()
                cluster(g, method, fusion=fusion, layout=layout, **limit(sample))  # ends with copies: synchronous
                stop.record()
                stop.synchronize()
                samples.append(cuda.event_elapsed_time(start, stop) / 1e3 * merges / max(sample, 1))
            traffic = bytes_per_iteration(g.n_entries, dtype=np.float32, layout=layout,
                                          fusion=fusion or "atomic")["total"]
            extra = {"bytes_streamed": traffic * merges, "estimated": sample < merges, "iterations_timed": sample}
            if method == "gpu_rac":  # the model's prediction beside the measurement it is checked against
                from .model import predict_rac
                from ._rounds import average_link_rounds

                extra["predicted_seconds"] = predict_rac(average_link_rounds(g, np.float32, stats=True)[1],
                                                         g.n_elements, g.n_entries)["seconds"]
            if method not in ONE_KERNEL_METHODS:  # one kernel has no stages to time apart
                extra["stage_seconds"] = cluster(g, method, fusion=fusion, layout=layout, measure_stages=True,
                                                 max_merges=sample).stage_seconds
            if bandwidth:
                extra["roofline_seconds"] = traffic * merges / bandwidth
            label = f"{method}[{fusion or 'atomic'},{layout}]"
            rows.append(_row(label, name, g, float(np.median(samples)), dtype="float32", **extra))
    return rows


def run(*, quick=False):
    """Run the benchmark; see the module docstring."""
    graphs = _graphs(quick)
    rows = _cpu_rows(graphs, quick)
    notes = [LOADED_NOTE]
    if device.is_gpu():
        rows += _gpu_rows(graphs, device.info().memory_bandwidth)
    else:
        notes.append("no GPU: only the CPU variants were measured")
    return {"rows": rows, "summary": _goal(rows), "notes": notes, "thesis": THESIS}


def _label(r):
    return r["variant"] + (f" {r['dtype']}" if r["variant"] == "cpu" else "")


def _goal(rows):
    """Ratios per size, growth exponents, the CPU goal (and the GPU one on a GPU)."""
    sizes = sorted({r["n_elements"] for r in rows})
    course = {r["n_elements"]: r for r in rows if r["variant"] == "cpu" and r["dtype"] == "float64"}
    per_size = []
    for n in sizes:
        at = {r["variant"]: r for r in rows if r["n_elements"] == n and r["variant"] in PEERS}
        per_size.append({"n_elements": n, "cpu_seconds": course[n]["seconds"],
                         **{f"{p}_over_cpu": at[p]["ratio_to_course"] for p in PEERS if p in at}})
    growth = {}
    for label in sorted({_label(r) for r in rows if not r["estimated"]}):
        pts = sorted((r["n_elements"], r["seconds"]) for r in rows if _label(r) == label and not r["estimated"])
        k = growth_exponent(*zip(*pts)) if len(pts) >= 2 else None
        if k is not None:
            growth[label] = k
    goal_sizes = [p for p in per_size if p["n_elements"] >= GOAL_FROM_N]
    largest = sizes[-1]
    python = next(r for r in rows if r["variant"] == "python_original" and r["n_elements"] == largest)
    out = {"per_size": per_size, "growth_exponents": growth, "goal_from_n": GOAL_FROM_N,
           "cpu_goal_met": bool(goal_sizes) and all(p.get("fastcluster_average_over_cpu", 0) >= 1.0 for p in goal_sizes),
           "n_elements": largest, "cpu_seconds": course[largest]["seconds"],
           "python_original_seconds": python["seconds"], "python_original_estimated": python["estimated"],
           "cpu_speedup_over_python": python["seconds"] / course[largest]["seconds"]}
    gpu = [r for r in rows if r["variant"].startswith("gpu") and r["n_elements"] == largest]
    if gpu:
        best = min(gpu, key=lambda r: r["seconds"])
        out.update(best_gpu=best["variant"], gpu_seconds=best["seconds"], goal_gpu_seconds=GOAL_GPU_SECONDS,
                   gpu_speedup_over_cpu=course[largest]["seconds"] / best["seconds"],
                   gpu_goal_met=best["seconds"] < GOAL_GPU_SECONDS and largest == THESIS_N)
    return out


def summary(results):
    """A few human-readable lines: paired medians with spread and ratios, growth exponents, goals."""
    rows = results["rows"]
    lines = ratio_lines(rows, size=lambda r: f"N={r['n_elements']} M={r['n_entries']}",
                        course=lambda r: r["variant"] == "cpu", label=_label)
    for r in rows:
        if "ratio_to_course" not in r:
            mark = " (estimated)" if r["estimated"] else ""
            lines.append(f"{'N=%d M=%d' % (r['n_elements'], r['n_entries']):<24} {_label(r):<34} "
                         f"{r['seconds']:10.4g} s{mark}")
    s = results["summary"]
    if s.get("growth_exponents"):
        lines.append("growth exponents (seconds ~ N^k): "
                     + ", ".join(f"{k} {v:.2f}" for k, v in s["growth_exponents"].items()))
    if "per_size" in s:
        lines.append(f"CPU goal (cpu float64 at least as fast as fastcluster from N = {s['goal_from_n']:,}): "
                     + ("met" if s["cpu_goal_met"] else "not met") + "; fastcluster / cpu: "
                     + ", ".join(f"N={p['n_elements']} {p.get('fastcluster_average_over_cpu', float('nan')):.2f}x"
                                 for p in s["per_size"]))
        lines.append(f"at N={s['n_elements']}: {s['cpu_speedup_over_python']:.0f}x the Python original "
                     f"({s['python_original_seconds']:.3g} s{', estimated' if s['python_original_estimated'] else ''})")
    if "gpu_seconds" in s:
        lines.append(f"GPU end to end: {s['best_gpu']} {s['gpu_seconds']:.3f} s (goal < {GOAL_GPU_SECONDS} s): "
                     + ("met" if s["gpu_goal_met"] else "not met"))
    return "\n".join(lines + results["notes"])


def plot(results, path):
    """Seconds against N for every variant (log scale); per-stage bars of the GPU variants if any."""
    import matplotlib.pyplot as plt

    from .plots import plot_stage_times

    gpu_rows = [r for r in results["rows"] if "stage_seconds" in r]
    fig, axes = plt.subplots(1, 2 if gpu_rows else 1, figsize=(12 if gpu_rows else 7, 4.5), squeeze=False)
    ax = axes[0, 0]
    series = {}
    for r in results["rows"]:
        if r["estimated"]:
            continue
        key = (r["variant"], r["dtype"])
        series.setdefault(key, []).append((r["n_elements"], r["seconds"]))
    for (variant, dtype), pts in sorted(series.items()):
        pts.sort()
        ax.plot(*zip(*pts), marker="o", label=f"{variant} {dtype}")
    ax.set(xscale="log", yscale="log", xlabel="N (planted graphs)", ylabel="seconds (median of the paired rounds)",
           title=f"average linkage on {results['device']['name']}")
    ax.legend(fontsize=7)
    if gpu_rows:
        largest = max(r["n_elements"] for r in gpu_rows)
        plot_stage_times({r["variant"]: r["stage_seconds"] for r in gpu_rows if r["n_elements"] == largest},
                         axes[0, 1], title=f"GPU time per stage, N={largest}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# --- The GPU probe (declared for course_lib.bench.cases) ------------------------------------------

#: Merges the older host-driven methods run in the probe (teaching rows): their merges all cost the same
#: full passes, so the row also extrapolates to every merge (``extrapolated_seconds``, labelled so).
PROBE_SAMPLE_MERGES = {"gpu": 300, "gpu_roundtrip": 100}


def _probe_inputs():
    g, _ = planted_graph(THESIS_N, THESIS_M, n_groups=THESIS_N // 300, n_subgroups=8, seed=THESIS_N)
    return {"graph": g, "merges": g.n_elements - g.n_components}


def _cluster_case(method):
    sample = PROBE_SAMPLE_MERGES.get(method)

    def run(inputs):
        g = inputs["graph"]
        return lambda: (cluster(g, method, max_merges=sample), g)

    def counts(result):
        _, g = result
        merges = g.n_elements - g.n_components
        timed = merges if sample is None else min(sample, merges)
        return {"merges": merges, "merges_timed": timed, "n_elements": g.n_elements, "n_entries": g.n_entries}

    def derive(row):
        if row["merges_timed"] >= row["merges"]:
            return {}
        return {"extrapolated_seconds": row["seconds_per_merge"] * row["merges"], "estimated": True}

    what = "every merge" if sample is None else f"its first {sample:,} merges (teaching row, extrapolated)"
    return Case(method, f"cluster() end to end, {what}: upload, the merge loop, parent and height downloaded",
                f"planted graph at the thesis's size (N = {THESIS_N:,}, M = {THESIS_M:,})", 5.0, "call", run,
                counts=counts, per=("merges_timed", "merge"), derive=derive, repeat=3)


def _cpu_heap(inputs):
    g = inputs["graph"]
    return lambda: cluster(g, "cpu")


def _hac_notes(rows):
    default = next(r for r in rows if r.get("default"))
    cpu = next((r for r in rows if r["variant"] == "cpu"), None)
    if cpu is None:
        return []
    return [f"default {default['variant']}: {default['seconds']:.3f} s (median; best {default['seconds_best']:.3f} s) "
            f"against the CPU heap's {cpu['seconds']:.3f} s: {cpu['seconds'] / default['seconds']:.2f}x"]


PROBE = Probe(
    Inputs(f"planted graph N = {THESIS_N:,}, M = {THESIS_M:,}", _probe_inputs, 10.0),
    method_cases(GPU_METHODS, default_gpu_method(cluster, GPU_METHODS), _cluster_case,
                 teaching={"gpu": dict(expected_seconds=3.0, repeat=1), "gpu_roundtrip": dict(expected_seconds=2.5,
                                                                                                repeat=1)}) + (
        Case("cpu", "cluster(method='cpu'), the course's heap on all cores", f"N = {THESIS_N:,}", 1.0, "cpu",
             _cpu_heap, repeat=3),
    ), _hac_notes)
