"""Host costs of a launch and of a copy, read from the committed GPU runs (``benchmarks/results/``).

Every figure here comes from a committed run on a real GPU and names its source: the file, the rows
and how the figure follows from them. Which rows give which figure is each unit's to say: its
``bench.py`` declares ``HOST_COSTS``, ``{figure: reader}`` (:data:`FIGURES`), read through
:mod:`course_lib.bench.runs`; a probe run, which measures the host cost per launch directly, is
preferred by the unit that reads it to the runs it replaces. Without any committed run the costs are
None, and what uses them says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from . import RESULTS_DIR

__all__ = ["FIGURES", "HostCosts", "committed_costs"]


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


#: The figures, in the order they are read (a reader may use the figures read before it), and the
#: :class:`HostCosts` fields each one fills.
FIGURES = {"launch_seconds": ("launch_seconds",), "alloc_seconds": ("alloc_seconds",),
           "copy_seconds": ("copy_seconds",), "copy_bandwidth": ("pageable_bytes_per_s", "pinned_bytes_per_s")}


def _from_folder(folder) -> HostCosts:
    """Each figure from the first unit that declares a reader for it and finds its rows (``HOST_COSTS``).

    A reader is ``reader(folder, known) -> (value, source, device)`` or None, where ``known`` holds the
    figures read so far; ``copy_bandwidth``'s value is ``(pageable, pinned)`` bytes per second.
    """
    from ..registry import declared

    readers = declared("HOST_COSTS")
    known, sources, device = {}, {}, ""
    for figure in FIGURES:
        for table in readers.values():
            found = table[figure](folder, dict(known)) if figure in table else None
            if found is not None:
                value, sources[figure], where = found
                known[figure] = value
                device = device or where
                break
    if "alloc_seconds" not in known:
        sources["alloc_seconds"] = "not measured by any committed run: allocations are counted, not costed"
    pageable, pinned = known.get("copy_bandwidth", (None, None))
    return HostCosts(known.get("launch_seconds"), known.get("copy_seconds"), pageable, pinned,
                     known.get("alloc_seconds"), device, sources)


@lru_cache(maxsize=4)
def _cached(folder: str) -> HostCosts:
    return _from_folder(folder)


def committed_costs(folder=None) -> HostCosts:
    """The host costs read from the committed runs in ``folder`` (default :data:`RESULTS_DIR`)."""
    return _cached(str(RESULTS_DIR if folder is None else folder))
