"""A cost model of every committed GPU row: ``python -m course_lib.bench model [units...]``.

Each row's time is predicted from four things, none of them fitted to the row:

- **issue slots**: the SASS of the kernel's inner loop (:mod:`course_lib.sass`), one slot per
  instruction, at 4 warp instructions per SM per clock (the clock from the run's FP32 peak), scaled
  down when the grid has fewer warps than the GPU has schedulers (nbody);
- **DRAM bytes**: each array counted as it moves (SpMV: x once; BFS: column index and depth per
  examined arc; the quadratic BFS: every arc per level; Poisson: its byte model per pixel-iteration;
  cellsim: bytes per decided cell), at the run's datasheet bandwidth;
- **launches and copies**, counted by :func:`course_lib.sim.record` on a small instance in the
  simulator (per call, per level or per iteration, as the unit's loop goes), at the committed host
  costs of :func:`course_lib.bench.costs.committed_costs` (one launch, one small blocking copy, the
  pageable copy bandwidth);
- host work and device work overlap when launches are asynchronous: a call costs the larger of its
  launches' host time and its kernels' device time, plus its blocking copies.

The error printed is (predicted - measured) / measured. The model leaves out what it does not know
(allocations, Python work between launches, the GPU's latency when a kernel has little parallelism,
one thread walking a hub vertex), so a large error names what the row is bound by, not a bug.
"""

from __future__ import annotations

import argparse
import math
import sys
from functools import lru_cache

import numpy as np

from . import RESULTS_DIR, committed_results
from .costs import committed_costs

__all__ = ["MODELLED_UNITS", "errors", "format_errors", "main", "predict"]

MODELLED_UNITS = ("nbody", "spmv", "bfs", "poisson", "cellsim", "colocation")
#: Bytes one SpMV row model needs beyond the model: none; BFS bytes per examined arc (column index + depth).
BFS_BYTES_PER_ARC = 8
#: Bytes the quadratic BFS reads per arc per level (both endpoints and a depth).
QUADRATIC_BYTES_PER_ARC = 12
#: cellsim: bytes per decided cell (fate read and written, scan, scatter of the daughters).
CELLSIM_BYTES_PER_CELL = 130


def _issue_rate(device) -> float:
    """Warp-lane instructions per second: SMs x 4 schedulers x 32 lanes x clock (clock from the FP32 peak)."""
    clock = device["fp32_peak_flops"] / (device["sm_count"] * 128 * 2)
    return device["sm_count"] * 4 * 32 * clock


@lru_cache(maxsize=None)
def _nbody_slots(kernel: str) -> float:
    """Issue slots per interaction of the inner loop (one MUFU.RSQ per interaction sets the unroll)."""
    from ..nbody.kernels import BODY_SIG, nbody_naive_kernel, nbody_tiled_kernel
    from ..sass import instruction_mix

    mix = instruction_mix(nbody_tiled_kernel(256) if kernel == "tiled" else nbody_naive_kernel, BODY_SIG, "sm_90")
    return mix.slots / max(1, mix.counts["MUFU"])


@lru_cache(maxsize=None)
def _spmv_launches(matrix: str, method: str) -> int:
    from numba import cuda

    from ..sim import record
    from ..spmv.api import prepare
    from ..spmv.data import make_matrix

    A = make_matrix(matrix, "sim", seed=1, dtype=np.float32)
    op = prepare(A, method)
    d_x, d_y = cuda.to_device(np.ones(A.shape[1], np.float32)), cuda.device_array(A.shape[0], np.float32)
    with record() as log:
        op.launch(d_x, d_y)
    return len(log.launches)


@lru_cache(maxsize=None)
def _bfs_counts(method: str) -> dict:
    """Launches and copies per level, and per search outside the levels, of ``traverse`` (simulator)."""
    from ..bfs.api import DeviceGraph, traverse
    from ..bfs.data import as_graph, grid_2d
    from ..sim import record

    per = {}
    for side in (3, 5):  # two sizes: the difference per level is the per-level cost
        g = as_graph(grid_2d(side, side), directed=False)
        on_device = DeviceGraph(g)
        with record() as log:
            run = traverse(g, 0, method, on_device=on_device)
        per[side] = (run.iterations, len(log.launches), len(log.transfers))
    (l1, a1, c1), (l2, a2, c2) = per[3], per[5]
    launches_per_level, copies_per_level = (a2 - a1) / (l2 - l1), (c2 - c1) / (l2 - l1)
    return {"launches_per_level": launches_per_level, "copies_per_level": copies_per_level,
            "launches_fixed": max(0.0, a1 - launches_per_level * l1), "copies_fixed": max(0.0, c1 - copies_per_level * l1)}


@lru_cache(maxsize=None)
def _poisson_setup_counts(method: str) -> tuple:
    """Launches and copies of ``seamless_clone`` outside its iterations (simulator, a tiny clone)."""
    from ..poisson.api import seamless_clone
    from ..poisson.data import cat_in_coffee
    from ..sim import record

    with record() as log:
        seamless_clone(*cat_in_coffee((12, 16)), iterations=0, method=method)
    return len(log.launches), len(log.transfers)


@lru_cache(maxsize=None)
def _record_counts(unit: str, variant: str) -> tuple:
    """(launches, copies) of one small public call of cellsim or colocation in the simulator."""
    from ..sim import record

    if unit == "cellsim":
        from ..cellsim.api import simulate
        from ..cellsim.data import THESIS_TYPES, lognormal_histogram

        h0 = lognormal_histogram(20, seed=1)
        with record() as log:
            simulate(h0, THESIS_TYPES, tau_max=72.0, phi_min=11.0, seed=1, method=variant)
    else:
        from ..colocation.api import VERSIONS, mine
        from ..colocation.data import planted_colocations

        opts = next(v for k, v in VERSIONS.items() if k.startswith(variant.split()[-1] + ":"))
        d = planted_colocations(60, 4, groups=((0, 1),), r=1.0, seed=1)
        with record() as log:
            mine(d.points, d.features, 1.0, 0.3, method="gpu", **opts)
    return len(log.launches), len(log.transfers)


def predict(unit: str, row: dict, run: dict, costs) -> tuple:
    """Predicted seconds of one committed GPU row and the terms it adds, or (None, reason).

    Returns
    -------
    (float or None, dict or str)
    """
    device = run["device"]
    bw = device["memory_bandwidth"]
    launch, copy = costs.launch_seconds, costs.copy_seconds or 0.0
    v = row["variant"]
    if unit == "nbody":
        if v not in ("naive", "tiled"):
            return None, "no model of CuPy's broadcasting peer"
        n = row["n"]
        warps = n / 32
        schedulers = device["sm_count"] * 4
        rate = _issue_rate(device) * min(1.0, warps / schedulers)
        from ..sass import SassToolsMissing

        try:
            slots = _nbody_slots(v)
        except SassToolsMissing as exc:
            return None, f"no SASS: {exc}"
        issue = n * n * slots / rate
        return launch + issue, {"launch": launch, "issue": issue}
    if unit == "spmv":
        value = np.dtype(row["dtype"]).itemsize
        dram = row["bytes"] - value * row["nnz"] + value * row["rows"]
        family = row["matrix"]
        launches = 1 if v == "cusparse" else _spmv_launches(family, v)
        return launches * launch + dram / bw, {"launches": launches, "dram_bytes": dram}
    if unit == "bfs":
        if "iterations" not in row:
            return None, "a CPU row"
        c = _bfs_counts(v)
        levels = row["iterations"]
        host = (c["launches_fixed"] + c["launches_per_level"] * levels) * launch
        copies = (c["copies_fixed"] + c["copies_per_level"] * levels) * copy
        download = 8 * row["vertices"] / (costs.pageable_bytes_per_s or math.inf)  # depth and parent
        arcs = 2 * row["edges"]
        traffic = (levels * arcs * QUADRATIC_BYTES_PER_ARC if v == "edge_quadratic"
                   else row["edges_examined"] * BFS_BYTES_PER_ARC)
        device_seconds = traffic / bw
        return max(host, device_seconds) + copies + download, {"launch_host": host, "copies": copies,
                                                               "device": device_seconds, "download": download}
    if unit == "poisson":
        from ..poisson.model import BYTES_PER_PIXEL_ITERATION

        halo = int(row["config"].split("halo=")[1].split()[0]) if v == "jacobi_fused" else 1
        launches = math.ceil(row["iterations"] / halo)
        pixels = (row["height"] * row["width"] if row["scope"] == "iterations"
                  else row.get("solved_pixels") or row["interior_pixels"])
        device_seconds = pixels * row["iterations"] * BYTES_PER_PIXEL_ITERATION / bw / (halo if halo > 1 else 1)
        seconds = max(launches * launch, device_seconds)
        terms = {"launches": launches, "device": device_seconds}
        if row["scope"] == "end_to_end":
            setup_launches, setup_copies = _poisson_setup_counts(v)
            seconds += setup_launches * launch + setup_copies * copy
            terms.update(setup_launches=setup_launches, setup_copies=setup_copies)
        return seconds, terms
    if unit == "cellsim":
        if v not in ("compact", "tree"):
            return None, "a CPU row"
        launches, copies = _record_counts("cellsim", v)
        device_seconds = row["cells"] * CELLSIM_BYTES_PER_CELL / bw
        return max(launches * launch, device_seconds) + copies * copy, {"launches": launches, "copies": copies,
                                                                        "device": device_seconds}
    if unit == "colocation":
        if not v.startswith("gpu"):
            return None, "a CPU row"
        launches, copies = _record_counts("colocation", v)
        upload = 24 * row["instances"] / (costs.pageable_bytes_per_s or math.inf)  # x, y, feature per instance
        return launches * launch + copies * copy + upload, {"launches": launches, "copies": copies, "upload": upload}
    return None, f"no model for {unit}"


def _label(unit, row):
    keys = {"nbody": ("n", "tile"), "spmv": ("matrix", "dtype"), "bfs": ("graph",), "poisson": ("height", "scope", "config"),
            "cellsim": ("n_initial",), "colocation": ("instances",)}[unit]
    return " ".join(str(row.get(k)) for k in keys if row.get(k) is not None)


def errors(units=MODELLED_UNITS, folder=None) -> list:
    """One entry per committed GPU row of the newest run of each unit: measured, predicted, error.

    Returns
    -------
    list of dict
        ``unit``, ``variant``, ``label``, ``measured``, ``predicted`` (None: not modelled, ``why``),
        ``error`` ((predicted - measured) / measured), ``terms``.
    """
    costs = committed_costs(folder)
    out = []
    for unit in units:
        runs = committed_results(unit, RESULTS_DIR if folder is None else folder)
        if not runs:
            continue
        run = runs[0]
        for row in run["rows"]:
            if row["variant"].startswith(("cpu", "scipy", "numpy", "networkx", "opencv", "reference", "python")):
                continue
            predicted, terms = predict(unit, row, run, costs)
            entry = {"unit": unit, "variant": row["variant"], "label": _label(unit, row), "measured": row["seconds"],
                     "predicted": predicted, "terms": terms if predicted is not None else {},
                     "why": None if predicted is not None else terms, "device": run["device"]["name"],
                     "date": run["date"][:10]}
            entry["error"] = (predicted - row["seconds"]) / row["seconds"] if predicted is not None else None
            # The rows the committed host costs were read from (costs.py): agreement there is by construction.
            entry["calibration"] = ((unit == "poisson" and row["variant"] == "jacobi" and row["scope"] == "iterations")
                                    or (unit == "bfs" and row["variant"] == "frontier_atomic"
                                        and row["graph"].startswith("grid")))
            out.append(entry)
    return out


def format_errors(entries, *, per_row=True) -> str:
    """The table the command prints: a line per row (with ``per_row``), then each unit's median |error|."""
    lines = []
    if per_row:
        lines.append(f"{'unit':<11}{'variant':<22}{'row':<34}{'measured':>12}{'model':>12}{'error':>9}")
        for e in entries:
            model = f"{e['predicted']:.4g}" if e["predicted"] is not None else "-"
            error = f"{100 * e['error']:+.0f} %" if e["error"] is not None else e["why"]
            lines.append(f"{e['unit']:<11}{e['variant'][:21]:<22}{e['label'][:33]:<34}{e['measured']:>12.4g}"
                         f"{model:>12}{error:>9}" + ("  (calibration row)" if e.get("calibration") else ""))
    lines.append("median |error| per unit (rows modelled / rows, calibration rows left out):")
    for unit in dict.fromkeys(e["unit"] for e in entries):
        rows = [e for e in entries if e["unit"] == unit]
        modelled = [abs(e["error"]) for e in rows if e["error"] is not None and not e.get("calibration")]
        median = f"{100 * float(np.median(modelled)):.0f} %" if modelled else "-"
        worst = f", worst {100 * max(modelled):.0f} %" if modelled else ""
        lines.append(f"  {unit:<11} {median:>6}{worst}  ({len(modelled)}/{len(rows)}, {rows[0]['device']} "
                     f"{rows[0]['date']})")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_lib.bench model",
                                     description="The cost model's error against every committed GPU row.")
    parser.add_argument("units", nargs="*", default=[], metavar="unit", help=f"default: {', '.join(MODELLED_UNITS)}")
    parser.add_argument("--summary", action="store_true", help="only each unit's median error")
    ns = parser.parse_args(argv)
    unknown = sorted(set(ns.units) - set(MODELLED_UNITS))
    if unknown:
        parser.error(f"no model for {', '.join(unknown)}; modelled: {', '.join(MODELLED_UNITS)}")
    entries = errors(tuple(ns.units) or MODELLED_UNITS)
    if not entries:
        print("no committed GPU run to compare with", file=sys.stderr)
        return 1
    print(format_errors(entries, per_row=not ns.summary))
    return 0
