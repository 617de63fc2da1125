"""The host-traffic table: each form of host<->device traffic with what numba-cuda 0.30.4's driver makes for it on
a GPU (read from its source: ``cudadrv/devicearray.py``, ``args.py``, ``dispatcher.py``, ``cudadrv/driver.py``).

It runs on both backends: in the simulator (CI) record() must log these counts, and on a GPU
(``COURSE_BACKEND=gpu``, ``benchmarks/gpu_check.sh tests``) it is the check that they are the driver's.
Each row: the form, a function doing it (given a fresh ``Arrays``), the events logged and the allocations.
"""

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from numba import cuda

from course_lib.sim._record import Launch, Transfer, Wait, record


@cuda.jit
def scale(x, factor):
    i = cuda.grid(1)
    if i < x.size:
        x[i] *= factor


H, D, DD = "HtoD", "DtoH", "DtoD"
LAUNCH = Launch("scale", (1, 1, 1), (32, 1, 1))
SETITEM = Launch("setitem", None, None)


class Arrays:
    """What a form starts from, made outside the record: ``x`` (100 float32 on the host), ``d`` and ``d2`` (its
    device copies), ``h`` (64 float64 on the host), ``s`` (a stream)."""

    def __init__(self):
        self.x = np.arange(100, dtype=np.float32)
        self.d = cuda.to_device(self.x)
        self.d2 = cuda.to_device(self.x)
        self.h = np.ones(64, dtype=np.float64)
        self.s = cuda.stream()


def _in_a_thread(a):
    t = threading.Thread(target=lambda: cuda.to_device(a.x))
    t.start()
    t.join()


POOL = ThreadPoolExecutor(1)  # its worker is started before any record opens


def _in_a_pool(a):
    POOL.submit(lambda: a.d.copy_to_host()).result()


def _event(a):
    e = cuda.event()
    e.record()
    e.synchronize()


# (form, action, events, allocations as (bytes, kind))
TABLE = [
    ("to_device", lambda a: cuda.to_device(a.x), [Transfer(H, 400)], [(400, "device")]),
    ("to_device copy=False", lambda a: cuda.to_device(a.x, copy=False), [], [(400, "device")]),
    ("to_device to=", lambda a: cuda.to_device(a.x, to=a.d), [Transfer(H, 400)], []),
    ("to_device of an empty array", lambda a: cuda.to_device(a.x[:0]), [], []),
    ("device_array", lambda a: cuda.device_array(10, np.float32), [], [(40, "device")]),
    ("device_array_like", lambda a: cuda.device_array_like(a.x), [], [(400, "device")]),
    ("copy_to_host", lambda a: a.d.copy_to_host(), [Transfer(D, 400)], []),
    ("copy_to_host(ary)", lambda a: a.d.copy_to_host(np.empty(100, np.float32)), [Transfer(D, 400)], []),
    ("copy_to_host on a stream, then its sync", lambda a: (a.d.copy_to_host(stream=a.s), a.s.synchronize()),
     [Transfer(D, 400), Wait("stream")], []),
    ("copy_to_device from the host", lambda a: a.d.copy_to_device(a.x), [Transfer(H, 400)], []),
    ("copy_to_device from the device", lambda a: a.d.copy_to_device(a.d2), [Transfer(DD, 400)], []),
    ("np.asarray", lambda a: np.asarray(a.d), [Transfer(D, 400)], []),
    ("element read", lambda a: int(a.d[0]), [Transfer(D, 4)], []),
    ("element reads in a loop", lambda a: [float(a.d[i]) for i in range(3)], [Transfer(D, 4)] * 3, []),
    ("element write", lambda a: a.d.__setitem__(0, np.float32(7)), [Transfer(H, 4), SETITEM, Wait("stream")],
     [(4, "device")]),
    ("slice", lambda a: a.d[10:20], [], []),
    ("slice copied back", lambda a: a.d[10:20].copy_to_host(), [Transfer(D, 40)], []),
    ("strided slice copied back (its whole span)", lambda a: a.d[::2].copy_to_host(), [Transfer(D, 396)], []),
    ("launch on device arrays", lambda a: scale[1, 32](a.d, 2.0), [LAUNCH], []),
    ("NumPy argument", lambda a: scale[1, 32](a.h, 2.0),
     [Transfer(H, 512), LAUNCH, Transfer(D, 512), Wait("stream")], [(512, "device")]),
    ("NumPy argument on a stream", lambda a: scale[1, 32, a.s](a.h, 2.0),
     [Transfer(H, 512), LAUNCH, Transfer(D, 512)], [(512, "device")]),
    ("cuda.In", lambda a: scale[1, 32](cuda.In(a.h), 2.0), [Transfer(H, 512), LAUNCH], [(512, "device")]),
    ("cuda.Out", lambda a: scale[1, 32](cuda.Out(a.h), 2.0), [LAUNCH, Transfer(D, 512), Wait("stream")],
     [(512, "device")]),
    ("empty NumPy argument", lambda a: scale[1, 32](a.h[:0], 2.0),
     [Transfer(H, 0), LAUNCH, Transfer(D, 0), Wait("stream")], []),
    ("cuda.synchronize", lambda a: cuda.synchronize(), [Wait("device")], []),
    ("stream sync", lambda a: a.s.synchronize(), [Wait("stream")], []),
    ("event sync", _event, [Wait("event")], []),
    ("pinned_array", lambda a: cuda.pinned_array(10, np.float32), [], [(40, "pinned")]),
    ("pinned array as an argument", lambda a: scale[1, 32](cuda.pinned_array(16, np.float64), 2.0),
     [Transfer(H, 128), LAUNCH, Transfer(D, 128), Wait("stream")], [(128, "pinned"), (128, "device")]),
    ("mapped_array", lambda a: cuda.mapped_array(10, np.float32), [], [(40, "mapped")]),
    ("mapped array read and written by the host", lambda a: (lambda m: (m.__setitem__(0, 1), float(m[0])))(
        cuda.mapped_array(10, np.float32)), [], [(40, "mapped")]),
    ("mapped array as an argument", lambda a: scale[1, 32](cuda.mapped_array(16, np.float32), 2.0), [LAUNCH],
     [(64, "mapped")]),
    ("a thread started inside", _in_a_thread, [Transfer(H, 400)], [(400, "device")]),
    ("a pool's worker started before", _in_a_pool, [Transfer(D, 400)], []),
]


@pytest.fixture(scope="module")
def warm():
    """Compile the kernels and make the context outside any record (a GPU's first launch loads modules)."""
    a = Arrays()
    scale[1, 32](a.d, 1.0)
    scale[1, 32](a.h, 1.0)
    a.d[0] = np.float32(0)
    cuda.synchronize()
    return True


@pytest.mark.parametrize("form, action, events, allocations", TABLE, ids=[row[0] for row in TABLE])
def test_each_form_is_counted_as_the_driver_does_it(warm, form, action, events, allocations):
    a = Arrays()
    with record() as log:
        action(a)
    assert log.events == events, form
    assert list(zip(log.allocations, log.allocation_kinds)) == allocations, form


def test_an_imported_name_is_counted_too():
    """A name imported from numba.cuda before the record still runs the hooks (they sit on the objects)."""
    from numba.cuda import device_array, synchronize, to_device

    x = np.ones(8, np.float32)
    with record() as log:
        to_device(x)
        device_array(4, np.float32)
        synchronize()
    assert log.events == [Transfer(H, 32), Wait("device")]
    assert log.allocations == [32, 16]


def test_a_host_loop_of_element_reads_is_not_copy_free():
    """A loop reading one element per step makes one copy per step (as a GPU's driver does), so the host-cost
    questions grade it the same on both backends."""
    d = cuda.to_device(np.zeros(16, np.int32))
    with record() as log:
        best = 0
        for _ in range(5):
            scale[1, 32](d, 1)
            best = max(best, int(d[0]))
    assert log.counts()["DtoH_count"] == 5 and log.counts()["launches"] == 5


def test_the_host_cost_judge_sees_the_per_step_reads_as_a_gpu_does():
    """The host-cost questions (ps5.q3-ps8.q3) judge counted_call's counts: a loop that reads the device's best
    value back each step makes one copy per step on a GPU, so it exceeds a bound of one copy back in the
    simulator too (the expected counts are the GPU driver's)."""
    from course_lib.grading.authoring.hostcosts import counted_call, judge_bounded
    from course_lib.grading.model import TestFailure

    d = cuda.to_device(np.zeros(16, np.int32))

    def per_step_reads(steps):
        for _ in range(steps):
            scale[1, 32](d, 1)
            if int(d[0]) > 0:
                break
        return d.copy_to_host()

    def one_read_at_the_end(steps):
        for _ in range(steps):
            scale[1, 32](d, 1)
        return d.copy_to_host()

    _, reads = counted_call(per_step_reads, 6)
    _, once = counted_call(one_read_at_the_end, 6)
    assert (reads["DtoH_count"], reads["launches"], reads["copies"]) == (7, 6, 7)
    assert (once["DtoH_count"], once["launches"], once["copies"]) == (1, 6, 1)
    judge_bounded([("copies", once["copies"], 1, "one copy back at the end")], "for 6 steps")
    with pytest.raises(TestFailure, match="7 copies"):
        judge_bounded([("copies", reads["copies"], 1, "one copy back at the end")], "for 6 steps")
