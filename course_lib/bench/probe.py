"""One GPU probe, minutes long: ``python -m course_lib.bench probe [units...] [--dry-run] [--out DIR]``.

The probe names no unit. Every unit declares its cases in its own ``bench.py`` (``PROBE``, a
:class:`course_lib.bench.cases.Probe`, found through :func:`course_lib.registry.declared`): the
inputs it builds once, and one case per row. Among them, one case per GPU method of the unit's API,
the unit's default GPU method marked (both read from the API, so a method added there is probed
without a change here), the older methods kept as teaching rows, library peers and CPU paths.

How a case is measured (:data:`course_lib.bench.cases.KINDS`):

- a public call (``"call"``), as a user makes it: one warm-up call (compilation), then ``repeat``
  plain calls, each timed on the wall clock with the device synchronised before and after
  (``seconds`` is their median, ``seconds_best`` the best, ``round_seconds`` all of them), then one
  call inside the split (:mod:`course_lib.bench.split`: device time, launches, copies, allocations;
  its two CUDA events per launch cost host time, so the split's ``wall_seconds`` is longer, and
  ``split_overhead_seconds`` says by how much). What the call's result counts (steps kept,
  restarts, levels, merges) is written as the method counts it, with seconds per counted thing;
- a CPU path (``"cpu"``): the same plain timing, no split;
- a case that measures itself (``"rows"``): device time of queued launches, library peers, SASS.

The JSON (``benchmarks/results/probe-<unit>_<device>_<date>.json``) has the device, the SM clock
sampled during the unit's run, the driver, the versions and the date, the declared cases
(``cases``), and names the default row twice: ``default_variant`` and the row's ``default: true``.
The plan of all units is held to :data:`BUDGET_SECONDS`, so that a ten-minute device window also
holds the GPU tests; ``--dry-run`` prints it on any machine and measures nothing. Expected seconds
are estimates from the committed H200 runs, input building on the host and compilation included.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

import numpy as np

from .. import device
from ..registry import declared
from . import RESULTS_DIR, load_note, stamp, write_results

__all__ = ["BUDGET_SECONDS", "ClockSampler", "call_row", "cpu_row", "format_plan", "main", "measure_case",
           "plan_seconds", "probe_unit", "probes", "run_probe"]

#: The probe's budget on an H100/H200, all units: 5 minutes, half of a ten-minute device window.
BUDGET_SECONDS = 300


def probes() -> dict:
    """``{unit: Probe}`` of every unit that declares one, in teaching order."""
    return declared("PROBE")


def _chosen(units):
    found = probes()
    return {unit: found[unit] for unit in (found if units is None else units)}


def plan_seconds(units=None) -> float:
    """Expected seconds of the probe of ``units`` (default: every unit that declares a probe)."""
    return float(sum(probe.expected_seconds() for probe in _chosen(units).values()))


def format_plan(units=None) -> str:
    """The plan as text: per unit its inputs and cases (what each measures, size, expected seconds), the total."""
    chosen = _chosen(units)
    lines = [f"GPU probe plan ({len(chosen)} units; budget {BUDGET_SECONDS} s on an H100/H200)"]
    for unit, probe in chosen.items():
        lines.append(f"{unit}  ({probe.expected_seconds():.0f} s; default GPU method {probe.default.method!r})")
        if probe.inputs is not None:
            lines.append(f"  {probe.inputs.expected_seconds:5.0f} s  build the inputs on the host  "
                         f"[{probe.inputs.label}]")
        for case in probe.cases:
            mark = "  DEFAULT" if case.default else ""
            how = {"call": f"plain x{case.repeat}" + (" + split" if case.split else ""),
                   "cpu": f"CPU x{case.repeat}", "rows": "own rows"}[case.kind]
            lines.append(f"  {case.expected_seconds:5.0f} s  {case.variant}{mark}: {case.measures}  [{case.size}; "
                         f"{how}]")
    total = plan_seconds(tuple(chosen))
    lines.append(f"total {total:.0f} s of {BUDGET_SECONDS} s" + ("" if total <= BUDGET_SECONDS else "  OVER BUDGET"))
    return "\n".join(lines)


class ClockSampler:
    """The SM clock (MHz) sampled in a background thread while a unit runs.

    Parameters
    ----------
    query : callable, optional
        Returns the current SM clock in MHz, or None; default: ``nvidia-smi --query-gpu=clocks.sm``.
    interval : float
        Seconds between samples.
    """

    def __init__(self, query=None, interval=0.5):
        self.query = query or _nvidia_smi_clock
        self.interval = interval
        self.samples: list = []
        self._stop = threading.Event()
        self._thread = None

    def __enter__(self):
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self):
        while True:
            value = self.query()
            if value is not None:
                self.samples.append(float(value))
            if self._stop.wait(self.interval):
                return

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        return False

    def summary(self) -> dict:
        """``{"median_mhz", "min_mhz", "max_mhz", "samples"}``; empty where nothing could be read."""
        if not self.samples:
            return {}
        arr = np.asarray(self.samples)
        return {"median_mhz": float(np.median(arr)), "min_mhz": float(arr.min()), "max_mhz": float(arr.max()),
                "samples": int(arr.size)}


def _nvidia_smi_clock():
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, "--query-gpu=clocks.sm", "--format=csv,noheader,nounits"], capture_output=True,
                             text=True, timeout=5).stdout.split()
        return float(out[0]) if out else None
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


def _synchronize():
    from numba import cuda

    cuda.synchronize()


def _plain(call, repeat, synchronize):
    """``(samples, result)``: ``repeat`` calls of ``call()``, each timed with ``synchronize()`` around it."""
    samples, result = [], None
    for _ in range(repeat):
        synchronize()
        t0 = time.perf_counter()
        result = call()
        synchronize()
        samples.append(time.perf_counter() - t0)
    return samples, result


def _timing_fields(samples) -> dict:
    arr = np.asarray(samples, dtype=float)
    median = float(np.median(arr))
    return {"seconds": median, "seconds_best": float(arr.min()), "seconds_median": median,
            "plain_wall_seconds": median, "repetitions": int(arr.size), "round_seconds": [float(x) for x in arr]}


def _described(case, **fields) -> dict:
    row = {"variant": case.variant, "method": case.method, "default": case.default, "measures": case.measures,
           "size": case.size, **fields}
    row.update(case.fields)
    return row


def _counted(row, case, result):
    """The counts of the call's result into the row, and the seconds per counted thing (``case.per``)."""
    if case.counts is not None:
        row.update(case.counts(result))
    if case.per is not None:
        count, name = case.per
        if row.get(count):
            row[f"seconds_per_{name}"] = row["seconds"] / row[count]
            row[f"seconds_best_per_{name}"] = row["seconds_best"] / row[count]
            row[f"{count}_per_s"] = row[count] / row["seconds"]
    if case.derive is not None:
        row.update(case.derive(row))
    return row


def call_row(case, call, *, synchronize=None, splitter=None) -> dict:
    """The row of a public call on the GPU (see the module docstring).

    ``synchronize`` (default ``cuda.synchronize``) and ``splitter`` (default
    :func:`course_lib.bench.split.split`; None with ``case.split`` false) are parameters so that the
    measurement itself can be checked without a GPU.
    """
    synchronize = synchronize or _synchronize
    if splitter is None and case.split:
        from .split import split as splitter
    result = call()  # warm up: compilation, first allocations
    synchronize()
    samples, result = _plain(call, case.repeat, synchronize)
    row = _described(case, scope="end_to_end")
    if case.split:
        with splitter() as s:
            synchronize()
            t0 = time.perf_counter()
            call()
            synchronize()
            wall = time.perf_counter() - t0
        row.update(s.report(wall, 1))
        row["scope"] = "end_to_end"
    row.update(_timing_fields(samples))
    if case.split:
        row["split_overhead_seconds"] = row["wall_seconds"] - row["seconds"]
    return _counted(row, case, result)


def cpu_row(case, call) -> dict:
    """The row of a CPU path: warmed up, timed plainly ``repeat`` times."""
    result = call()
    samples, result = _plain(call, case.repeat, lambda: None)
    row = _described(case, scope="end_to_end", device="cpu")
    row.update(_timing_fields(samples))
    return _counted(row, case, result)


def measure_case(case, inputs, *, synchronize=None, splitter=None) -> list:
    """The rows of one case on the inputs its unit built."""
    if case.kind == "call":
        return [call_row(case, case.run(inputs), synchronize=synchronize, splitter=splitter)]
    if case.kind == "cpu":
        return [cpu_row(case, case.run(inputs))]
    rows = []
    for row in case.run(inputs):
        described = _described(case, **row)
        described["variant"] = row.get("variant", case.variant)
        rows.append(described)
    return rows


def run_probe(probe, *, synchronize=None, splitter=None) -> tuple:
    """``(rows, notes)`` of one unit's probe: its inputs built once, then every case.

    A case that fails costs only its own rows: its traceback goes to the log (standard error) and
    its message to the notes; the others still run.
    """
    inputs = probe.inputs.build() if probe.inputs is not None else {}
    rows, notes = [], []
    for case in probe.cases:
        try:
            rows += measure_case(case, inputs, synchronize=synchronize, splitter=splitter)
        except Exception as exc:
            traceback.print_exc()
            notes.append(f"case {case.variant} failed: {type(exc).__name__}: {exc}")
    if probe.notes is not None and rows:
        try:
            notes += list(probe.notes(rows))
        except Exception as exc:  # a note is no reason to lose the rows
            notes.append(f"the notes failed: {type(exc).__name__}: {exc}")
    return rows, notes


def _declared_cases(probe) -> list:
    return [{"variant": c.variant, "kind": c.kind, "method": c.method, "default": c.default, "measures": c.measures,
             "size": c.size, "expected_seconds": c.expected_seconds} for c in probe.cases]


def probe_unit(unit: str, out_dir=None, probe=None) -> Path:
    """Run the probe of one unit on the GPU and write its JSON; returns the file's path.

    ``probe`` defaults to the unit's declaration (:func:`probes`).
    """
    probe = probes()[unit] if probe is None else probe
    results = stamp(f"probe-{unit}")
    results.update(probe_plan_seconds=probe.expected_seconds(), default_variant=probe.default.variant,
                   default_method=probe.default.method, cases=_declared_cases(probe))
    start = time.perf_counter()
    with ClockSampler() as clock:
        try:
            rows, notes = run_probe(probe)
        except Exception as exc:  # one unit's failure must not cost the others their measurement
            traceback.print_exc()  # the log keeps where it failed; the JSON keeps what failed
            rows, notes = [], [f"the probe of {unit} failed: {type(exc).__name__}: {exc}"]
    results.update(rows=rows, notes=notes, sm_clock=clock.summary(), seconds=time.perf_counter() - start, quick=False)
    results["load_average_end"] = list(os.getloadavg())
    results["notes"].append(load_note(results))
    return write_results(results, RESULTS_DIR if out_dir is None else out_dir)[0]


def main(argv=None) -> int:
    found = probes()
    parser = argparse.ArgumentParser(prog="python -m course_lib.bench probe",
                                     description="The GPU probe: every unit's default GPU method, as a user calls "
                                                 "it, in minutes.")
    parser.add_argument("units", nargs="*", default=[], metavar="unit",
                        help=f"units to probe (default: all {len(found)}: {', '.join(found)})")
    parser.add_argument("--dry-run", action="store_true", help="print the plan (any machine); measure nothing")
    parser.add_argument("--out", default=None, help="output folder (default: the checkout's benchmarks/results)")
    ns = parser.parse_args(argv)
    unknown = sorted(set(ns.units) - set(found))
    if unknown:
        parser.error(f"unknown unit(s) {', '.join(unknown)}; choose from {', '.join(found)}")
    units = tuple(dict.fromkeys(ns.units)) or tuple(found)
    print(format_plan(units))
    if ns.dry_run:
        return 0 if plan_seconds(units) <= BUDGET_SECONDS else 1
    if not device.is_gpu():
        print("the probe needs an NVIDIA GPU (nothing was measured); --dry-run prints the plan anywhere",
              file=sys.stderr)
        return 2
    for unit in units:
        t0 = time.perf_counter()
        path = probe_unit(unit, ns.out, found[unit])
        print(f"{unit}: {time.perf_counter() - t0:.0f} s (planned {found[unit].expected_seconds():.0f} s) -> {path}",
              flush=True)
    return 0
