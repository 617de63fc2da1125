"""Device seconds per phase of a host loop: CUDA events on a GPU, the wall clock in the simulator.

The units whose host program runs several kinds of launch per step (hac's merge stages, cellsim's
compaction phases, co-location's filter and refine) time them with one :class:`PhaseClock`.
"""

from __future__ import annotations

import time

from . import device

__all__ = ["PhaseClock"]


class PhaseClock:
    """Seconds per phase, summed over a run.

    On a GPU each ``start``/``stop`` pair records two CUDA events and nothing waits until
    :meth:`finish` (one synchronisation for the whole run); in the simulator the wall clock is read.
    Disabled, it costs nothing and :meth:`finish` returns ``{}``.

    Parameters
    ----------
    phases : sequence of str
        The phases' names.
    enabled : bool
    """

    def __init__(self, phases, enabled: bool = True):
        self.enabled = enabled
        self.seconds = dict.fromkeys(phases, 0.0)
        self._gpu = device.is_gpu()
        self._events = []

    def start(self):
        """A mark to pass to :meth:`stop` (None when disabled)."""
        if not self.enabled:
            return None
        if self._gpu:
            from numba import cuda

            event = cuda.event()
            event.record()
            return event
        return time.perf_counter()

    def stop(self, phase: str, mark) -> None:
        """Add the time since ``mark`` (from :meth:`start`) to ``phase``."""
        if not self.enabled:
            return
        if self._gpu:
            from numba import cuda

            event = cuda.event()
            event.record()
            self._events.append((phase, mark, event))
        else:
            self.seconds[phase] += time.perf_counter() - mark

    def finish(self) -> dict:
        """``{phase: seconds}`` so far (on a GPU, after waiting for the last event); ``{}`` when disabled."""
        if self._gpu and self._events:
            self._events[-1][2].synchronize()
            for phase, start, stop in self._events:
                self.seconds[phase] += start.elapsed_time(stop) / 1e3
            self._events = []
        return dict(self.seconds) if self.enabled else {}
