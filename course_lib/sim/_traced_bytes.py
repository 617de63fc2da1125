"""Memory that views of several widths reach, as the observers of :mod:`course_lib.sim._instrument` see it.

A race is two conflicting accesses to overlapping bytes (PTX ISA, "Memory Consistency Model"), whatever
the element types of the views that make them. Accesses to memory reached through views of several
widths are reported with their bytes (``itemsize``) and compared byte by byte
(:meth:`course_lib.sim._check._Checker._access_bytes`): dynamic shared memory, the fields of a record,
device-array arguments viewing one allocation with different element sizes.
"""

from __future__ import annotations

import sys

__all__ = ["TracedRecord", "bytewise_where_widths_meet"]


def bytewise_where_widths_meet(arrays):
    """Arguments that are views of one allocation with different element sizes (or element starts that do not
    line up) are compared byte by byte: a float32 view and a uint8 view of one buffer race where bytes overlap."""
    layouts = {}
    for array in arrays:
        layouts.setdefault(array.alloc, set()).add((array.itemsize, array._base % array.itemsize))
    for array in arrays:
        if len(layouts[array.alloc]) > 1:
            array.bytewise = True


class _FieldSlot:
    """A record field of a traced array, as the observers see an access to it: its bytes (``itemsize``) in the
    array's allocation, compared byte by byte."""

    __slots__ = ("name", "space", "alloc", "itemsize", "uninit", "bytewise")

    def __init__(self, array, field, size):
        self.name = f"{array.name}.{field}"
        self.space, self.alloc, self.uninit = array.space, array.alloc, array.uninit
        self.itemsize, self.bytewise = size, True


class TracedRecord:
    """One record of a traced record array: reading or writing a field reports an access to the field's bytes
    (numba-cuda loads and stores a field alone), so threads writing different fields of a record do not race,
    and a field written while another thread reads the whole record does."""

    __slots__ = ("_array", "_offset", "_value", "_index")

    def __init__(self, array, offset, value, index):
        object.__setattr__(self, "_array", array)
        object.__setattr__(self, "_offset", offset)
        object.__setattr__(self, "_value", value)
        object.__setattr__(self, "_index", index)

    def _field(self, name, write):
        array = self._array
        fields = array._a.dtype.fields
        if name not in fields:
            raise AttributeError(name)
        dtype, where = fields[name][0], fields[name][1]
        slot = _FieldSlot(array, name, dtype.itemsize)
        array._obs.access(slot, self._offset + where, write, self._index, sys._getframe(2))

    def __getattr__(self, name):
        self._field(name, False)
        return self._value[name]

    def __setattr__(self, name, value):
        self._field(name, True)
        self._value[name] = value

    def __getitem__(self, name):
        if isinstance(name, str):
            self._field(name, False)
        return self._value[name]

    def __setitem__(self, name, value):
        if isinstance(name, str):
            self._field(name, True)
        self._value[name] = value

    def __repr__(self):
        return repr(self._value)
