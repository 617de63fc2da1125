"""A log of host<->device traffic, kernel launches and host waits: :func:`record`.

Taught in ``lessons/00_seeing_the_gpu.ipynb`` and used by the lessons on transfer costs and by the
host-cost questions of the problem sets. Inside ``with record() as log:`` the log holds, in order, what
numba-cuda's driver does on a GPU:

* every copy between host and device (:class:`Transfer` ``"HtoD"`` / ``"DtoH"``) and between device
  arrays (``"DtoD"``), in any form: ``cuda.to_device``, ``copy_to_host`` / ``copy_to_device`` (with
  or without ``ary=``, ``to=`` or a stream), ``np.asarray(d)``, an element read ``d[i]`` (a one-element
  DtoH), an element write ``d[i] = v`` (numba-cuda copies ``v`` to the device, launches its own
  assignment kernel, logged as ``Launch("setitem", None, None)``, and waits for it), and the implicit
  copies of a NumPy argument at a launch (an allocation, a HtoD copy, the launch, a DtoH copy and a
  wait for it, as numba-cuda 0.30.4's ``args.py`` does; ``cuda.In`` / ``cuda.Out`` drop one copy each);
* every kernel launch (:class:`Launch`);
* every host wait (:class:`Wait`): ``cuda.synchronize()`` (``"device"``), a stream's
  ``synchronize()`` (``"stream"``, also the wait numba-cuda makes after an implicit copy back and after
  an element write) and an event's ``synchronize()`` (``"event"``);
* every allocation (:attr:`Record.allocations`, bytes, and :attr:`Record.allocation_kinds`):
  ``"device"`` (``device_array``, ``to_device``, a NumPy argument's copy), ``"pinned"``
  (``pinned_array``, ``cuda.pinned``), ``"mapped"`` (``mapped_array``) and ``"managed"``
  (``managed_array``). Mapped and managed memory is read and written from the host without copies,
  and passed to a kernel without copies, on a GPU as in the simulator.

A slice of a device array copies nothing. Copies of zero bytes that numba-cuda skips are not logged.

Both backends log the same forms the same way: in the simulator the hooks sit on the simulator's
device-array class and on its module functions' code objects (so ``from numba.cuda import
device_array`` done before the ``with`` is still counted); on a GPU they sit on numba-cuda's driver
object (``cuMemcpy*``, ``cu*Synchronize``), on ``Context``'s allocators and on ``CUDADispatcher.call``
(:mod:`course_lib.sim._record_sim`, :mod:`course_lib.sim._record_gpu`). Everything is restored when
the last open ``record()`` closes.

Threads: what a thread does goes to the records that thread opened; a thread started while records
were open in its starting thread logs into those; any other thread (a pool's worker, say) logs into
every open record. So a grader measuring several submissions in threads, each under its own
``record()``, gets each thread's own traffic, and copies made by a worker thread are not lost.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

from ._record_log import (Launch, Record, Transfer, Wait, _local, _lock, _open, _restore, _thread_start,  # noqa: F401
                          dims, hushed, log, log_allocation, logging_launch, patch, quiet, swap_code)

__all__ = ["Launch", "Record", "Transfer", "Wait", "record"]


@contextmanager
def record():
    """Log host<->device copies, kernel launches, host waits and allocations inside a ``with`` block.

    Yields
    ------
    Record
        Filled as the block runs: ``.events``, ``.transfers``, ``.launches``, ``.waits``,
        ``.allocations``, ``.summary()``, ``.counts()``.

    Examples
    --------
    >>> with record() as log:                       # doctest: +SKIP
    ...     d_x = cuda.to_device(x)
    ...     kernel[4, 256](d_x)
    ...     x = d_x.copy_to_host()
    >>> log.summary()["HtoD_count"], len(log.launches)  # doctest: +SKIP
    (1, 1)
    """
    from .. import device

    rec = Record()
    with _lock:
        if not _open:
            try:
                patch(threading.Thread, "start", _thread_start)
                if device.is_simulator():
                    from . import _record_sim

                    _record_sim.install()
                else:
                    from . import _record_gpu

                    _record_gpu.install()
            except BaseException:
                _uninstall()
                raise
        _open.append(rec)
    _local.records = (getattr(_local, "records", None) or ()) + (rec,)
    try:
        yield rec
    finally:
        _local.records = tuple(r for r in _local.records if r is not rec)
        with _lock:
            _open.remove(rec)
            if not _open:
                _uninstall()


def _uninstall():
    while _restore:
        _restore.pop()()
