"""Host costs of a launch and of a copy, read from the committed GPU runs (``benchmarks/results/``).

Every figure here comes from a committed run on a real GPU and names its source: the file, the rows
and how the figure follows from them. A newer probe run (``probe-poisson_*.json``,
:mod:`course_lib.bench.probe`), which measures the host cost per launch directly, is preferred to
the unit runs it replaces. Without any committed run the costs are None, and what uses them says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from . import RESULTS_DIR, committed_results

__all__ = ["HostCosts", "committed_costs"]


@dataclass(frozen=True)
class HostCosts:
    """Host seconds of one numba launch and of one small blocking copy, with where they come from.

    Attributes
    ----------
    launch_seconds : float or None
        Host cost of one kernel launch (array arguments marshalled, the driver called).
    copy_seconds : float or None
        One small blocking copy (a counter, a flag) between host and device.
    pageable_bytes_per_s, pinned_bytes_per_s : float or None
        Host-to-device copy bandwidth of large copies.
    alloc_seconds : float or None
        One device allocation (only a probe run measures it).
    device : str
        The GPU (and so the host) of the runs.
    sources : dict
        Figure name -> how it was read (file, rows).
    """

    launch_seconds: float | None
    copy_seconds: float | None
    pageable_bytes_per_s: float | None
    pinned_bytes_per_s: float | None
    alloc_seconds: float | None
    device: str
    sources: dict

    def modelled_host_seconds(self, launches=0, copies=0, copy_bytes=0, allocations=0) -> float | None:
        """Host time of that many launches, small copies (plus ``copy_bytes`` at the pageable rate)
        and allocations, at these costs; None without a committed launch cost. Allocations without a
        measured cost count zero (see ``sources``)."""
        if self.launch_seconds is None:
            return None
        seconds = launches * self.launch_seconds + copies * (self.copy_seconds or 0.0)
        if copy_bytes and self.pageable_bytes_per_s:
            seconds += copy_bytes / self.pageable_bytes_per_s
        return seconds + allocations * (self.alloc_seconds or 0.0)


def _newest_probe(unit, folder):
    runs = []
    for path in sorted(Path(folder).glob(f"probe-{unit}_*.json")):
        data = json.loads(path.read_text())
        if data.get("backend") == "gpu" and data.get("rows"):
            runs.append((data["date"], path.name, data))
    return max(runs)[1:] if runs else (None, None)


def _from_folder(folder) -> HostCosts:
    sources, launch, copy, pageable, pinned, alloc, device = {}, None, None, None, None, None, ""
    name, probe = _newest_probe("poisson", folder)
    if probe is not None:
        per_launch = [r["host_seconds_per_launch"] for r in probe["rows"]
                      if r.get("variant") == "jacobi" and r.get("scope") == "device"]
        if per_launch:
            launch, device = float(per_launch[0]), probe["device"]["name"]
            sources["launch_seconds"] = f"{name}: host_seconds_per_launch of the jacobi row (measured apart)"
        allocs = [(r["alloc_host_seconds"], r["allocations"]) for r in probe["rows"] if r.get("allocations")]
        if allocs:
            alloc = float(sum(a for a, _ in allocs) / sum(n for _, n in allocs))
            sources["alloc_seconds"] = f"{name}: alloc_host_seconds / allocations of the end-to-end splits"
    poisson = committed_results("poisson", folder)
    if launch is None and poisson:
        run = poisson[0]
        # One launch per iteration, the same time at every image size: the launch's host cost bounds it.
        per = [r["seconds"] / r["iterations"] for r in run["rows"]
               if r["variant"] == "jacobi" and r["scope"] in ("iterations", "device") and r["iterations"]]
        if per:
            launch, device = float(np.median(per)), run["device"]["name"]
            sources["launch_seconds"] = (f"poisson run {run['date'][:10]} ({device}): median over image sizes of "
                                         "seconds / iterations of the jacobi rows (one launch per iteration)")
    bfs = committed_results("bfs", folder)
    if bfs and launch is not None:
        run = bfs[0]
        rows = [r for r in run["rows"] if r["graph"].startswith("grid") and r["variant"] == "frontier_atomic"
                and r.get("iterations")]
        if rows:
            # A grid level of frontier_atomic is one launch, one small upload and one small download.
            per_level = rows[0]["seconds"] / rows[0]["iterations"]
            copy = max(0.0, (per_level - launch) / 2)
            sources["copy_seconds"] = (f"bfs run {run['date'][:10]}: (seconds / levels of frontier_atomic on "
                                       f"{rows[0]['graph']} - launch) / 2 copies per level")
    colocation = committed_results("colocation", folder)
    if colocation:
        run = colocation[0]
        table = (run.get("summary") or {}).get("bandwidth") or []
        largest = {row["memory"]: row for row in sorted(table, key=lambda r: r["mib"])}
        if "pageable" in largest:
            pageable = largest["pageable"]["gb_per_s"] * 1e9
            pinned = largest.get("pinned", {}).get("gb_per_s", 0) * 1e9 or None
            sources["copy_bandwidth"] = (f"colocation run {run['date'][:10]}: host-to-device GB/s at "
                                         f"{largest['pageable']['mib']} MiB")
    if alloc is None:
        sources["alloc_seconds"] = "not measured by any committed run: allocations are counted, not costed"
    return HostCosts(launch, copy, pageable, pinned, alloc, device, sources)


@lru_cache(maxsize=4)
def _cached(folder: str) -> HostCosts:
    return _from_folder(folder)


def committed_costs(folder=None) -> HostCosts:
    """The host costs read from the committed runs in ``folder`` (default :data:`RESULTS_DIR`)."""
    return _cached(str(RESULTS_DIR if folder is None else folder))
