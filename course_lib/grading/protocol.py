"""Plain-data encoding of what crosses between the grader and a submission's process.

Only ``None``, booleans, integers, floats, strings, NumPy arrays and scalars of numeric or
boolean dtype, and lists, tuples and string-keyed dicts of them are carried, as JSON (NumPy
arrays as base64 bytes with dtype and shape). Decoding never runs code, unlike pickle, so a
hostile submission cannot execute anything in the grader; any other object arrives as an
:class:`Unsupported` marker that equals nothing but itself.
"""

from __future__ import annotations

import base64
import json

import numpy as np

__all__ = ["ProtocolError", "Unsupported", "decode", "dumps", "encode", "loads"]

#: Nesting deeper than this is refused (a deeply nested list would blow the stack).
MAX_DEPTH = 32
_KINDS = "biuf"  # bool, signed and unsigned integers, floats


class ProtocolError(ValueError):
    """A message that is not valid plain data."""


class Unsupported:
    """Stands for an object of another type (its type name is kept for messages)."""

    def __init__(self, type_name: str):
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<{self.type_name} object>"


def encode(obj, _depth: int = 0):
    """Turn ``obj`` into JSON-compatible plain data (see the module docstring)."""
    if _depth > MAX_DEPTH:
        raise ProtocolError("nested too deeply")
    # Exact type checks: a subclass of int or str could carry a rigged __eq__.
    if obj is None or type(obj) in (bool, int, float, str):
        return obj
    if isinstance(obj, np.generic) and obj.dtype.kind in _KINDS:
        return obj.item()
    if isinstance(obj, np.ndarray) and obj.dtype.kind in _KINDS:
        # tobytes() writes C order whatever the strides; np.ascontiguousarray would turn a 0-d array into 1-d.
        return {"__ndarray__": base64.b64encode(obj.tobytes()).decode("ascii"),
                "dtype": obj.dtype.str, "shape": list(obj.shape)}
    if type(obj) in (list, tuple):
        return [encode(item, _depth + 1) for item in obj]
    if type(obj) is dict and all(type(k) is str for k in obj):
        return {"__dict__": {k: encode(v, _depth + 1) for k, v in obj.items()}}
    return {"__unsupported__": type(obj).__name__}


def decode(data, _depth: int = 0):
    """Inverse of :func:`encode`; raises :class:`ProtocolError` on anything else."""
    if _depth > MAX_DEPTH:
        raise ProtocolError("nested too deeply")
    if data is None or type(data) in (bool, int, float, str):
        return data
    if type(data) is list:
        return [decode(item, _depth + 1) for item in data]
    if type(data) is dict:
        if "__ndarray__" in data:
            try:
                dtype = np.dtype(data["dtype"])
                shape = tuple(int(n) for n in data["shape"])
                if dtype.kind not in _KINDS:
                    raise ProtocolError(f"unsupported dtype {dtype}")
                raw = base64.b64decode(data["__ndarray__"], validate=True)
                return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
            except (TypeError, ValueError, KeyError) as exc:
                raise ProtocolError(f"bad array: {exc}") from None
        if "__dict__" in data and type(data["__dict__"]) is dict:
            return {str(k): decode(v, _depth + 1) for k, v in data["__dict__"].items()}
        if "__unsupported__" in data:
            return Unsupported(str(data["__unsupported__"])[:100])
    raise ProtocolError(f"unexpected {type(data).__name__}")


def dumps(message: dict) -> bytes:
    """One protocol line."""
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def loads(line: bytes) -> dict:
    """Parse one protocol line; raises :class:`ProtocolError` unless it is a JSON object."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"not JSON: {exc}") from None
    if type(message) is not dict:
        raise ProtocolError("not a JSON object")
    return message
