"""Memory as a GPU lays it out: one shared array per call site, device-array methods that copy or refuse as
numba-cuda's DeviceNDArray, and a race checker that compares bytes, not element starts.

Sources: numba-cuda 0.30.4 (each cuda.shared.array call lowers to its own addrspace(3) global in the LLVM
IR of compile_cuda; cudadrv/devicearray.py for the array methods), CUDA C++ Programming Guide ("Shared
Memory", dynamic shared memory arrays all start at the same address), PTX ISA ("Memory Consistency
Model": a data race is two conflicting accesses to overlapping memory locations, at byte granularity).
"""

import numpy as np
import pytest
from numba import cuda, float32, int8

from course_lib import device

sim_only = pytest.mark.skipif(device.backend() != "sim", reason="the race checker runs in the simulator")


@cuda.jit
def _two_arrays_on_one_line(out):
    a = cuda.shared.array(4, float32); b = cuda.shared.array(4, float32)  # noqa: E702 - two calls, one line
    t = cuda.threadIdx.x
    a[t] = 1.0
    b[t] = 2.0
    cuda.syncthreads()
    out[t] = a[t] + 10 * b[t]


def test_two_shared_arrays_declared_on_one_line_are_two_arrays():
    # compile_cuda of this kernel lowers two addrspace(3) globals of [4 x float]: two arrays, not one.
    out = np.zeros(4, np.float32)
    _two_arrays_on_one_line[1, 4](out)
    assert out.tolist() == [21.0] * 4


def test_device_array_transpose_is_a_copy_and_reshape_never_copies():
    # numba-cuda DeviceNDArray.transpose runs numba.cuda.kernels.transpose into a new array; reshape and
    # ravel raise NotImplementedError("operation requires copying") when they cannot view.
    d = cuda.to_device(np.arange(6.0).reshape(2, 3))
    t = d.T
    t[0, 0] = 99.0
    assert t.shape == (3, 2) and d.copy_to_host()[0, 0] == 0.0
    assert d.transpose((0, 1)) is d
    with pytest.raises(NotImplementedError, match="non-2D"):
        cuda.to_device(np.zeros((2, 2, 2))).transpose()
    with pytest.raises(NotImplementedError, match="operation requires copying"):
        cuda.to_device(np.arange(6.0).reshape(2, 3))[:, ::2].ravel()
    view = d.reshape(3, 2)
    view[0, 0] = 5.0
    assert d.copy_to_host()[0, 0] == 5.0
    assert [s.shape for s in cuda.to_device(np.arange(10)).split(4)] == [(4,), (4,), (2,)]


def _float_written_byte_read(byte):
    """Thread 0 writes a float32 at bytes 0-3 of dynamic shared memory, thread 1 reads byte ``byte`` of the
    same memory through an int8 view, with no barrier between."""

    @cuda.jit
    def float_written_byte_read(out):
        wide = cuda.shared.array(0, float32)
        narrow = cuda.shared.array(0, int8)
        t = cuda.threadIdx.x
        if t == 0:
            wide[0] = 1.0
        if t == 1:
            out[0] = narrow[byte]

    return float_written_byte_read


@sim_only
def test_a_race_between_dynamic_shared_views_of_different_widths_is_reported():
    from course_lib.sim import check

    report = check(_float_written_byte_read(2), 1, 2, np.zeros(1, np.int8), sharedmem=16)  # inside the float
    assert [p.kind for p in report.problems] == ["race"]
    assert check(_float_written_byte_read(4), 1, 2, np.zeros(1, np.int8), sharedmem=16).ok  # after it


_RECORD = np.dtype([("x", np.float32), ("y", np.int32)], align=True)


@cuda.jit
def _fields_of_one_record(records, same):
    t = cuda.threadIdx.x
    if same:
        records[0].y = t  # both threads write field y
    elif t == 0:
        records[0].x = 1.0
    else:
        records[0].y = 2


@sim_only
def test_races_on_record_fields_are_reported_by_field():
    from course_lib.sim import check

    records = np.zeros(1, _RECORD)
    report = check(_fields_of_one_record, 1, 2, records, True)
    assert [p.kind for p in report.problems] == ["race"] and "records.y" in str(report.problems[0])
    assert check(_fields_of_one_record, 1, 2, np.zeros(1, _RECORD), False).ok  # x and y: disjoint bytes


@cuda.jit
def _float_and_byte_views(wide, narrow):
    t = cuda.threadIdx.x
    if t == 0:
        wide[0] = 1.0  # bytes 0-3 of the buffer
    else:
        narrow[3] = 7  # byte 3 of the same buffer (or byte 7, for the view that starts at byte 4)


@sim_only
def test_a_race_between_device_array_views_of_different_widths_is_reported():
    # Two views of one device allocation are one memory on a GPU (DeviceNDArray.view shares gpu_data).
    from course_lib.sim import check

    buffer = cuda.to_device(np.zeros(16, np.uint8))
    assert [p.kind for p in check(_float_and_byte_views, 1, 2, buffer.view(np.float32), buffer).problems] == ["race"]
    assert check(_float_and_byte_views, 1, 2, buffer.view(np.float32), buffer[4:]).ok
