"""A cost model of every committed GPU row: ``python -m course_lib.bench model [units...]``.

Each row's time is predicted from four things, none of them fitted to the row:

- **issue slots**: the SASS of a kernel's inner loop (:mod:`course_lib.sass`), one slot per
  instruction, at 4 warp instructions per SM per clock (:func:`issue_rate`, the clock from the run's
  FP32 peak), scaled down when the grid has fewer warps than the GPU has schedulers;
- **DRAM bytes**: each array counted as it moves, by the unit's byte model, at the run's datasheet
  bandwidth;
- **launches and copies**, counted by :func:`course_lib.sim.record` on a small instance in the
  simulator (per call, per level or per iteration, as the unit's loop goes), at the committed host
  costs of :func:`course_lib.bench.costs.committed_costs` (one launch, one small blocking copy, the
  pageable copy bandwidth);
- host work and device work overlap when launches are asynchronous: a call costs the larger of its
  launches' host time and its kernels' device time, plus its blocking copies.

The layer names no unit: each unit's ``bench.py`` declares its model (``COST_MODEL``, a
:class:`course_lib.bench.cases.CostModel`, found through :func:`course_lib.registry.declared`): which
of its rows it predicts, from which counts, and which rows calibrated the committed host costs.

The error printed is (predicted - measured) / measured. The model leaves out what it does not know
(allocations, Python work between launches, the GPU's latency when a kernel has little parallelism,
one thread walking a hub vertex), so a large error names what the row is bound by, not a bug.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from ..registry import declared
from . import RESULTS_DIR, committed_results
from .costs import committed_costs

__all__ = ["CPU_PREFIXES", "errors", "format_errors", "issue_rate", "main", "modelled_units", "predict"]

#: Rows of these variants are CPU paths and peers: the model predicts GPU rows only.
CPU_PREFIXES = ("cpu", "scipy", "numpy", "networkx", "opencv", "reference", "python")


def modelled_units() -> tuple:
    """The units that declare a cost model, in teaching order."""
    return tuple(declared("COST_MODEL"))


def issue_rate(device) -> float:
    """Warp-lane instructions per second: SMs x 4 schedulers x 32 lanes x clock (clock from the FP32 peak).

    >>> issue_rate({"fp32_peak_flops": 100 * 128 * 2 * 2e9, "sm_count": 100}) == 100 * 4 * 32 * 2e9
    True
    """
    clock = device["fp32_peak_flops"] / (device["sm_count"] * 128 * 2)
    return device["sm_count"] * 4 * 32 * clock


def predict(unit: str, row: dict, run: dict, costs) -> tuple:
    """Predicted seconds of one committed GPU row and the terms it adds, or (None, reason).

    Returns
    -------
    (float or None, dict or str)
    """
    model = declared("COST_MODEL").get(unit)
    if model is None:
        return None, f"no model for {unit}"
    return model.predict(row, run, costs)


def errors(units=None, folder=None) -> list:
    """One entry per committed GPU row of the newest run of each unit: measured, predicted, error.

    Returns
    -------
    list of dict
        ``unit``, ``variant``, ``label``, ``measured``, ``predicted`` (None: not modelled, ``why``),
        ``error`` ((predicted - measured) / measured), ``terms``.
    """
    models = declared("COST_MODEL")
    costs = committed_costs(folder)
    out = []
    for unit in (models if units is None else units):
        runs = committed_results(unit, RESULTS_DIR if folder is None else folder)
        if not runs:
            continue
        run, model = runs[0], models[unit]
        for row in run["rows"]:
            if row["variant"].startswith(CPU_PREFIXES):
                continue
            predicted, terms = model.predict(row, run, costs)
            entry = {"unit": unit, "variant": row["variant"], "label": model.label(row), "measured": row["seconds"],
                     "predicted": predicted, "terms": terms if predicted is not None else {},
                     "why": None if predicted is not None else terms, "device": run["device"]["name"],
                     "date": run["date"][:10]}
            entry["error"] = (predicted - row["seconds"]) / row["seconds"] if predicted is not None else None
            # The rows the committed host costs were read from (costs.py): agreement there is by construction.
            entry["calibration"] = bool(model.calibration(row))
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
    modelled = modelled_units()
    parser.add_argument("units", nargs="*", default=[], metavar="unit", help=f"default: {', '.join(modelled)}")
    parser.add_argument("--summary", action="store_true", help="only each unit's median error")
    ns = parser.parse_args(argv)
    unknown = sorted(set(ns.units) - set(modelled))
    if unknown:
        parser.error(f"no model for {', '.join(unknown)}; modelled: {', '.join(modelled)}")
    entries = errors(tuple(ns.units) or modelled)
    if not entries:
        print("no committed GPU run to compare with", file=sys.stderr)
        return 1
    print(format_errors(entries, per_row=not ns.summary))
    return 0
