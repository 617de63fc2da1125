"""Does record() log every transfer and launch, explicit or implicit, and clean up after itself?"""

import numpy as np
import pytest
from numba import cuda

from course_lib.sim import Launch, Transfer, record
from course_lib.sim._record import Wait


@cuda.jit
def scale(x, factor):
    i = cuda.grid(1)
    if i < x.size:
        x[i] *= factor


def test_explicit_copies_and_launches_are_logged():
    x = np.arange(100, dtype=np.float32)
    with record() as log:
        d_x = cuda.to_device(x)
        scale[4, 32](d_x, 2.0)
        scale[(4,), (32,)](d_x, 2.0)
        y = d_x.copy_to_host()
    np.testing.assert_array_equal(y, 4 * x)
    assert log.events == [
        Transfer("HtoD", 400),
        Launch("scale", (4, 1, 1), (32, 1, 1)),
        Launch("scale", (4, 1, 1), (32, 1, 1)),
        Transfer("DtoH", 400),
    ]
    assert log.summary() == {"HtoD_count": 1, "HtoD_bytes": 400, "DtoH_count": 1, "DtoH_bytes": 400, "launches": 2}
    assert "2 kernel launch(es)" in str(log) and "<table>" in log._repr_html_()


def test_numpy_arguments_are_copied_both_ways_at_every_launch():
    x = np.ones(64, dtype=np.float64)
    with record() as log:
        scale[2, 32](x, 3.0)
        scale[2, 32](x, 3.0)
    np.testing.assert_array_equal(x, 9.0)
    assert log.summary() == {"HtoD_count": 2, "HtoD_bytes": 1024, "DtoH_count": 2, "DtoH_bytes": 1024, "launches": 2}
    # numba-cuda: the argument's buffer allocated and copied in, the launch, the copy back and a wait for it
    once = [Transfer("HtoD", 512), Launch("scale", (2, 1, 1), (32, 1, 1)), Transfer("DtoH", 512), Wait("stream")]
    assert log.events == once * 2 and log.allocations == [512, 512]
    assert log.counts()["waits"] == 2 and log.counts()["copies"] == 4


def test_nothing_is_logged_outside_and_hooks_are_removed():
    x = np.ones(8, dtype=np.float32)
    before = _hooked_objects()
    with record() as outer:
        with record() as inner:
            cuda.to_device(x)
        cuda.to_device(x)
    cuda.to_device(x)
    assert len(inner.transfers) == 1 and len(outer.transfers) == 2
    assert _hooked_objects() == before


def _hooked_objects():
    """What record() replaces on this backend, compared by identity (and code objects)."""
    from course_lib import device

    if device.is_simulator():
        from numba.cuda.simulator import api
        from numba.cuda.simulator.cudadrv import devicearray

        functions = [devicearray.to_device, devicearray.auto_device, api.synchronize, cuda.to_device]
        classes = [(devicearray.FakeCUDAArray, n) for n in ("__getitem__", "__setitem__", "copy_to_host",
                                                            "copy_to_device", "__getattr__")]
        return ([f.__code__ for f in functions] + [c.__dict__.get(n) for c, n in classes]
                + [cuda.to_device is devicearray.to_device or cuda.to_device])
    from numba.cuda.cudadrv import driver
    from numba.cuda.dispatcher import CUDADispatcher

    from course_lib.sim._record_gpu import DRIVER_FUNCTIONS

    return ([driver.driver.__dict__.get(n) for n in DRIVER_FUNCTIONS]
            + [driver.Context.__dict__[n] for n in ("memalloc", "memhostalloc", "memallocmanaged", "mempin")]
            + [CUDADispatcher.call])


def test_each_thread_logs_only_its_own_copies_and_launches():
    """A grader measures submissions in threads: each record() holds its own thread's events, and
    simulated launches from several threads at once run one after another (never mixed up)."""
    import threading

    start = threading.Barrier(4)
    logs, errors = {}, []

    def measure(k):
        try:
            x = np.ones(32 * (k + 1), dtype=np.float32)
            start.wait()
            with record() as log:
                for _ in range(k + 1):
                    scale[k + 1, 32](x, 2.0)
            logs[k] = (log.summary(), x)
        except Exception as exc:  # pragma: no cover (reported below)
            errors.append(repr(exc))

    threads = [threading.Thread(target=measure, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for k, (summary, x) in logs.items():
        n, nbytes = k + 1, 128 * (k + 1)
        assert summary == {"HtoD_count": n, "HtoD_bytes": n * nbytes, "DtoH_count": n, "DtoH_bytes": n * nbytes,
                           "launches": n}, k
        np.testing.assert_array_equal(x, 2.0 ** n)


def test_on_the_real_cuda_target_the_hooks_find_what_they_wrap():
    """Without a GPU nothing can be copied, but what record() hooks on a GPU must exist, be replaced while a
    record is open (the driver's functions on the driver object, bound at their first call: no GPU needed to
    install them) and be put back after; and a launch of an untouched stub kernel raises NotImplementedError
    there as in the simulator (course_lib.stub_kernels)."""
    import os
    import subprocess
    import sys

    script = (
        "import course_lib\n"
        "from numba.cuda.cudadrv import driver, devicearray\n"
        "from numba.cuda.dispatcher import CUDADispatcher\n"
        "from course_lib.sim._record_gpu import DRIVER_FUNCTIONS\n"
        "d = driver.driver\n"
        "def state():\n"
        "    return ([d.__dict__.get(n) for n in DRIVER_FUNCTIONS] + [CUDADispatcher.call, driver.Context.memalloc,\n"
        "            driver.Context.memhostalloc, driver.Context.memallocmanaged,\n"
        "            devicearray._to_strided_memory_view])\n"
        "before = state()\n"
        "from course_lib.sim import record\n"
        "with record() as log:\n"
        "    during = state()\n"
        "    assert all(callable(d.__dict__.get(n)) for n in DRIVER_FUNCTIONS)\n"
        "    assert all(a is not b for a, b in zip(before, during)), (before, during)\n"
        "assert state() == before\n"
        "import numpy as np, warnings\n"
        "from numba import cuda\n"
        "warnings.simplefilter('ignore')\n"
        "@cuda.jit\n"
        "def stub(x):\n"
        "    '''What it should do.'''\n"
        "    # YOUR CODE HERE\n"
        "    raise NotImplementedError()\n"
        "try:\n"
        "    stub[1, 32](np.zeros(4))  # course_lib.stub_kernels: refused before anything needs a device\n"
        "except NotImplementedError:\n"
        "    print('ok', course_lib.backend())\n"
    )
    env = dict(os.environ, COURSE_BACKEND="gpu", NUMBA_ENABLE_CUDASIM="0")
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert proc.stdout.strip() == "ok gpu", proc.stderr[-2000:]


def test_allocations_and_the_modelled_host_time_per_call():
    """Each device array made (explicitly, or for a NumPy argument) is an allocation; per call, the
    launches, copies and allocations cost host time at the committed per-launch and per-copy costs."""
    from course_lib.bench.costs import HostCosts

    x = np.ones(100, dtype=np.float32)
    with record() as log:
        for _ in range(2):  # two "public calls"
            d_x = cuda.to_device(x)
            cuda.device_array(10, dtype=np.float32)
            scale[4, 32](d_x, 2.0)
            scale[4, 32](x, 2.0)  # implicit: allocation, copy in, copy out
            d_x.copy_to_host()
    assert log.allocations == [400, 40, 400] * 2
    costs = HostCosts(launch_seconds=50e-6, copy_seconds=70e-6, pageable_bytes_per_s=1e9, pinned_bytes_per_s=None,
                      alloc_seconds=None, device="a GPU", sources={})
    per = log.per_call(2, costs)
    assert (per["launches"], per["copies"], per["allocations"], per["copy_bytes"]) == (2, 4, 3, 1600)
    assert per["modelled_host_seconds"] == pytest.approx(2 * 50e-6 + 4 * 70e-6 + 1600 / 1e9)
    assert per["modelled_from"] == "a GPU"
    line = log.cost_line(2, costs)
    assert line.startswith("per call: 2 launch(es), 4 copies, 3 allocation(s); modelled host time 0.382 ms (model:")
    none = HostCosts(None, None, None, None, None, "", {})
    assert log.per_call(1, none)["modelled_host_seconds"] is None and "no committed GPU run" in log.cost_line(1, none)


def test_the_printed_record_states_the_cost_per_call_from_the_committed_runs():
    from course_lib.bench.costs import committed_costs

    with record() as log:
        scale[1, 32](cuda.to_device(np.ones(8, np.float32)), 2.0)
    text = str(log).splitlines()
    costs = committed_costs()
    assert text[1].startswith("per call: 1 launch(es), 1 copies, 1 allocation(s)")
    if costs.launch_seconds is not None:  # a checkout with committed GPU runs
        assert f"measured on {costs.device}" in text[1] and "modelled host time" in text[1]
