"""Warp-level operations of the simulator: what the lanes of a ``*_sync`` call get back.

Pure functions of the values the lanes bring (no scheduling): :mod:`course_lib.sim._block`
makes the lanes of a mask meet at a :class:`_Collective`, then hands it to :func:`_complete`.
The semantics where the hardware leaves a choice are listed in :mod:`course_lib.sim._engine`.
"""

from __future__ import annotations

import numpy as np

FULL_MASK = 0xFFFFFFFF
WARP_SIZE = 32


class WarpError(RuntimeError):
    """A warp-level primitive was used in a way that would hang or be undefined on a GPU."""


class _Collective:
    """One warp-level operation in progress: the lanes of ``mask`` meet here."""

    __slots__ = ("kind", "mask", "line", "values", "waiting", "arrived")

    def __init__(self, kind, mask, line):
        self.kind = kind
        self.mask = mask
        self.line = line
        self.values = {}
        self.waiting = []
        self.arrived = 0  # bits of the lanes that have arrived


def _lanes(mask):
    return [lane for lane in range(WARP_SIZE) if mask >> lane & 1]


def _bits(lanes):
    out = 0
    for lane in lanes:
        out |= 1 << lane
    return out


def _int32_mask(bits):
    """A 32-bit lane mask as the int32 Numba gives on a GPU (negative when lane 31 is set)."""
    return np.uint32(bits).view(np.int32)


def _bit_pattern(value):
    """What ``match.sync`` compares: the value's bits (0.0 and -0.0 differ, a NaN matches its own bits)."""
    if isinstance(value, (float, np.floating)):
        return "f", np.float64(value).tobytes()
    return "i", int(value) & 0xFFFFFFFFFFFFFFFF


def _shuffle_source(kind, lane, operand):
    """Source lane of a shuffle (width 32, as Numba's shfl_*_sync), or None for 'keep own value'.

    ``shfl.sync`` reads only the low five bits of its lane or delta operand (PTX ISA 9.7.9.7,
    ``shfl.sync``: ``bval[4:0] = b[4:0]``): a delta of 33 is a delta of 1, lane -1 is lane 31.
    """
    b = int(operand) & (WARP_SIZE - 1)
    if kind == "shfl_sync":
        return b
    if kind == "shfl_up_sync":
        src = lane - b
        return src if src >= 0 else None
    if kind == "shfl_down_sync":
        src = lane + b
        return src if src < WARP_SIZE else None
    if kind == "shfl_xor_sync":
        return lane ^ b
    raise AssertionError(kind)


def _complete(coll, undefined=None):
    """Results of a collective for each lane, once every non-exited lane of its mask has arrived.

    ``undefined(lane, src)`` is called for each shuffle that reads a lane which does
    not take part (outside the mask, or exited): undefined on a GPU.
    """
    kind, values = coll.kind, coll.values
    if kind.startswith("shfl"):
        out = {}
        for lane, (value, operand) in values.items():
            src = _shuffle_source(kind, lane, operand)
            if src is not None and src in values:
                out[lane] = values[src][0]
            else:
                # Past the warp's edge the hardware keeps the caller's value; from a lane
                # not taking part the value is undefined: the caller's own is as good as any.
                out[lane] = value
                if src is not None and undefined is not None:
                    undefined(lane, src)
        return out
    if kind == "syncwarp":
        return dict.fromkeys(values, None)
    if kind == "match_any_sync":
        keys = {lane: _bit_pattern(v) for lane, v in values.items()}
        return {lane: _int32_mask(_bits(other for other, k in keys.items() if k == key)) for lane, key in keys.items()}
    if kind == "match_all_sync":
        same = len({_bit_pattern(v) for v in values.values()}) == 1
        result = (_int32_mask(coll.arrived), True) if same else (np.int32(0), False)
        return dict.fromkeys(values, result)
    preds = {lane: bool(v) for lane, v in values.items()}
    if kind == "ballot_sync":
        result = _int32_mask(_bits(lane for lane, p in preds.items() if p))
    elif kind == "all_sync":
        result = all(preds.values())
    elif kind == "any_sync":
        result = any(preds.values())
    elif kind == "eq_sync":
        result = len(set(preds.values())) == 1
    else:
        raise AssertionError(kind)
    return dict.fromkeys(values, result)
