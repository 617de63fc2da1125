"""Methods of simulated device arrays that copy, refuse or view as numba-cuda's ``DeviceNDArray`` does.

The stock simulator answers them with NumPy, which views where a GPU copies and copies where a GPU
refuses (numba-cuda 0.30.4, ``cudadrv/devicearray.py``):

* ``transpose()`` / ``.T`` of a 2-D device array runs numba-cuda's transpose kernel into a **new**
  array (``numba.cuda.kernels.transpose``): writing into the result does not change the original.
  Other dimensions raise ``NotImplementedError("transposing a non-2D DeviceNDArray isn't
  supported")``; the identity permutation returns the array itself.
* ``reshape`` and ``ravel`` only ever view: a shape that would need a copy (a non-contiguous array)
  raises ``NotImplementedError("operation requires copying")``, where NumPy would copy silently.
* ``split`` takes a 1-D array of unit stride only (``ValueError``), and yields views.

Installed by :mod:`course_lib.sim._hooks` (:func:`class_methods`).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["class_methods"]


def _fake(ary, like):
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    return FakeCUDAArray(ary, stream=getattr(like, "stream", 0))


def transpose(self, axes=None):
    """``DeviceNDArray.transpose``: a transposed **copy** of a 2-D array (numba-cuda's transpose kernel)."""
    ndim = self._ary.ndim
    if axes and tuple(axes) == tuple(range(ndim)):
        return self
    if ndim != 2:
        raise NotImplementedError("transposing a non-2D DeviceNDArray isn't supported")
    if axes is not None and set(axes) != set(range(ndim)):
        raise ValueError("invalid axes list %r" % (axes,))
    # A copy, laid out as NumPy lays out the transposed view (numba-cuda's own simulator tests compare the
    # strides of arrays made like it with NumPy's); on a GPU the copy is C-contiguous, which no kernel sees.
    return _fake(np.array(self._ary.T, order="K", copy=True), self)


def _transposed(self):
    return self.transpose()


def _viewing(kind):
    def method(self, *args, **kwargs):
        stream = kwargs.pop("stream", 0) if kind == "ravel" else 0
        if kind == "reshape" and len(args) == 1 and isinstance(args[0], (tuple, list)):
            args = tuple(args[0])
        out = getattr(self._ary, kind)(*args, **kwargs)
        if out.size and not np.shares_memory(out, self._ary):
            raise NotImplementedError("operation requires copying")
        return _fake(out, self) if not stream else _fake(out, self).bind(stream)

    method.__name__ = kind
    method.__doc__ = (f"``DeviceNDArray.{kind}``: a view of the same memory; a {kind} that needs a copy raises "
                      "NotImplementedError, as numba-cuda does.")
    return method


def split(self, section, stream=0):
    """``DeviceNDArray.split``: views of ``section`` elements of a 1-D, unit-stride array."""
    ary = self._ary
    if ary.ndim != 1:
        raise ValueError("only support 1d array")
    if ary.strides[0] != ary.dtype.itemsize:
        raise ValueError("only support unit stride")
    count = int(math.ceil(float(ary.size) / section))
    return (_fake(ary[i * section:min((i + 1) * section, ary.size)], self) for i in range(count))


def class_methods():
    """(class, name, replacement) of the device-array methods this module changes."""
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    return [
        (FakeCUDAArray, "transpose", transpose),
        (FakeCUDAArray, "T", property(_transposed)),
        (FakeCUDAArray, "reshape", _viewing("reshape")),
        (FakeCUDAArray, "ravel", _viewing("ravel")),
        (FakeCUDAArray, "split", split),
    ]
