"""Input validation shared by every public entry point of the course.

Every function raises :class:`ValueError` whose message starts with the
argument's name, says what was expected and shows what came, e.g.
``"n must be a positive integer, got None"``. Nothing is converted silently:
integers must be integers (``3.0`` is not a count), arrays keep their dtype.

>>> check_positive_int(5, "n")
5
>>> check_positive_int(3.0, "n")
Traceback (most recent call last):
    ...
ValueError: n must be a positive integer, got 3.0 (float)
>>> check_array([[0.0, 1.0, 2.0]], "pos", shape=(None, 3), dtype="f").shape
(1, 3)
>>> check_choice("tiled", "method", ("naive", "tiled"))
'tiled'
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "check_array",
    "check_block",
    "check_choice",
    "check_dtype",
    "check_flag",
    "check_float",
    "check_id_table",
    "check_int",
    "check_positive_int",
    "check_seed",
    "describe",
]

# dtype kind letters accepted in check_array(dtype="...") as "any dtype of these kinds".
_KIND_NAMES = {
    "b": "boolean",
    "i": "signed integer",
    "u": "unsigned integer",
    "f": "floating",
    "c": "complex",
}


def describe(value) -> str:
    """A short description of ``value`` for an error message.

    Arrays are described by shape and dtype (never printed whole), other values by
    their ``repr`` (shortened) and, when it helps, their type.

    >>> describe(None)
    'None'
    >>> describe(np.zeros((2, 3), np.float32))
    'an array of shape (2, 3) and dtype float32'
    >>> describe(2.5)
    '2.5 (float)'
    """
    if value is None:
        return "None"
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    if isinstance(value, (bool, np.bool_)):
        return f"{text} (a bool)"
    if isinstance(value, (numbers.Number, str)):
        return f"{text} ({type(value).__name__})"
    return f"{text} (a {type(value).__name__})"


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _int_wanted(minimum, maximum) -> str:
    if minimum is not None and maximum is not None:
        return f"an integer between {minimum} and {maximum}"
    if minimum == 1:
        return "a positive integer"
    if minimum == 0:
        return "a non-negative integer"
    if minimum is not None:
        return f"an integer >= {minimum}"
    if maximum is not None:
        return f"an integer <= {maximum}"
    return "an integer"


def check_int(value, name: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as a Python int, if it is an integer in ``[minimum, maximum]``.

    Python and NumPy integers only: ``bool``, floats (even ``3.0``), ``None`` and
    strings are rejected.

    Parameters
    ----------
    value : object
    name : str
        Argument name, the start of the error message.
    minimum, maximum : int, optional
        Inclusive bounds.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        ``"<name> must be ..., got ..."``.

    >>> check_int(np.int64(7), "k", minimum=0)
    7
    >>> check_int(True, "k")
    Traceback (most recent call last):
        ...
    ValueError: k must be an integer, got True (a bool)
    """
    wanted = _int_wanted(minimum, maximum)
    if not _is_int(value):
        raise ValueError(f"{name} must be {wanted}, got {describe(value)}")
    value = int(value)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise ValueError(f"{name} must be {wanted}, got {value}")
    return value


def check_positive_int(value, name: str) -> int:
    """``check_int(value, name, minimum=1)``: a count of things (bodies, rows, vertices).

    >>> check_positive_int(-2, "n")
    Traceback (most recent call last):
        ...
    ValueError: n must be a positive integer, got -2
    """
    return check_int(value, name, minimum=1)


def _float_wanted(minimum, maximum, min_inclusive, max_inclusive) -> str:
    parts = []
    if minimum is not None:
        if minimum == 0 and not min_inclusive:
            parts.append("> 0")
        else:
            parts.append(f"{'>=' if min_inclusive else '>'} {minimum:g}")
    if maximum is not None:
        parts.append(f"{'<=' if max_inclusive else '<'} {maximum:g}")
    if minimum == 0 and not min_inclusive and maximum is None:
        return "a finite positive number"
    return "a finite number" + (" " + " and ".join(parts) if parts else "")


def check_float(value, name: str, *, minimum: float | None = None, maximum: float | None = None,
                min_inclusive: bool = True, max_inclusive: bool = True) -> float:
    """``value`` as a Python float, if it is a finite real number within the bounds.

    Integers are real numbers too (``dt=1`` is fine); ``bool``, ``None``, strings,
    complex numbers, NaN and infinities are rejected.

    Parameters
    ----------
    value : object
    name : str
    minimum, maximum : float, optional
        Bounds, inclusive unless ``min_inclusive``/``max_inclusive`` is False.

    Returns
    -------
    float

    >>> check_float(1, "dt", minimum=0, min_inclusive=False)
    1.0
    >>> check_float(float("nan"), "dt")
    Traceback (most recent call last):
        ...
    ValueError: dt must be a finite number, got nan (float)
    >>> check_float(0.0, "softening", minimum=0, min_inclusive=False)
    Traceback (most recent call last):
        ...
    ValueError: softening must be a finite positive number, got 0.0
    """
    wanted = _float_wanted(minimum, maximum, min_inclusive, max_inclusive)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.integer, np.floating)):
        raise ValueError(f"{name} must be {wanted}, got {describe(value)}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be {wanted}, got {describe(value)}")
    if minimum is not None and (number < minimum or (not min_inclusive and number == minimum)):
        raise ValueError(f"{name} must be {wanted}, got {number!r}")
    if maximum is not None and (number > maximum or (not max_inclusive and number == maximum)):
        raise ValueError(f"{name} must be {wanted}, got {number!r}")
    return number


def _dtype_rule(dtype):
    """(predicate on np.dtype, text) for check_array's ``dtype`` argument."""
    if isinstance(dtype, str) and dtype and all(c in _KIND_NAMES for c in dtype):
        kinds = tuple(dtype)
        if set(kinds) == {"i", "u", "f"}:
            text = "a real (integer or floating)"
        elif set(kinds) == {"b", "i", "u", "f"}:
            text = "a real (bool, integer or floating)"
        elif set(kinds) == {"i", "u"}:
            text = "an integer"
        else:
            text = "a " + " or ".join(_KIND_NAMES[k] for k in kinds)
        return (lambda dt: dt.kind in kinds), f"{text} dtype"
    options = dtype if isinstance(dtype, tuple) else (dtype,)
    wanted = tuple(np.dtype(d) for d in options)
    text = " or ".join(str(d) for d in wanted)
    return (lambda dt: dt in wanted), f"dtype {text}"


def _shape_text(shape) -> str:
    inner = ", ".join("any" if s is None else str(s) for s in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def check_array(value, name: str, *, ndim: int | None = None, shape: tuple | None = None, dtype=None,
                finite: bool = False, allow_empty: bool = True) -> np.ndarray:
    """``np.asarray(value)``, if it is a numeric array of the expected form.

    The dtype is never changed: a float64 array where float32 is required is an
    error, not a silent cast (the caller decides whether to convert).

    Parameters
    ----------
    value : array_like
    name : str
    ndim : int, optional
        Number of dimensions.
    shape : tuple, optional
        Expected shape, ``None`` for "any length" in an axis, e.g. ``(None, 3)``.
    dtype : dtype, tuple of dtypes, or str of kind letters, optional
        A NumPy dtype (``np.float32``), a tuple of them, or kind letters:
        ``"f"`` floating, ``"i"`` signed integer, ``"u"`` unsigned, ``"iu"`` any
        integer, ``"b"`` bool, ``"c"`` complex. Without it any numeric or bool dtype
        is accepted (never object, string or structured).
    finite : bool
        Reject NaN and infinities.
    allow_empty : bool
        Accept an array with no elements.

    Returns
    -------
    numpy.ndarray

    >>> check_array(np.zeros(4, np.int32), "x", dtype="f")
    Traceback (most recent call last):
        ...
    ValueError: x must have a floating dtype, got dtype int32
    >>> check_array(np.zeros((2, 2)), "pos", shape=(None, 3))
    Traceback (most recent call last):
        ...
    ValueError: pos must have shape (any, 3), got shape (2, 2)
    >>> check_array([1.0, float("nan")], "x", finite=True)
    Traceback (most recent call last):
        ...
    ValueError: x must hold finite values, got nan at index (1,)
    """
    if value is None:
        raise ValueError(f"{name} must be an array, got None")
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{name} must be an array, got {describe(value)} ({exc})") from None
    if array.dtype.kind not in "biufc":
        raise ValueError(f"{name} must be a numeric array, got {describe(value)} "
                         f"(dtype {array.dtype}; ragged lists and non-numbers cannot be kernel inputs)")
    if shape is not None:
        shape = tuple(shape)
        if ndim is not None and ndim != len(shape):
            raise TypeError(f"check_array: ndim={ndim} contradicts shape={shape}")
        ndim = len(shape)
    if ndim is not None and array.ndim != ndim:
        expected = _shape_text(shape) if shape is not None else f"{ndim} dimension{'s' if ndim != 1 else ''}"
        what = "shape" if shape is not None else ""
        raise ValueError(f"{name} must have {what + ' ' if what else ''}{expected}, "
                         f"got {array.ndim}-D shape {array.shape}")
    if shape is not None and any(s is not None and s != got for s, got in zip(shape, array.shape)):
        raise ValueError(f"{name} must have shape {_shape_text(shape)}, got shape {array.shape}")
    if dtype is not None:
        accept, text = _dtype_rule(dtype)
        if not accept(array.dtype):
            raise ValueError(f"{name} must have {text}, got dtype {array.dtype}")
    if not allow_empty and array.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {array.shape}")
    if finite and array.dtype.kind in "fc" and array.size:
        bad = ~np.isfinite(array)
        if bad.any():
            index = tuple(int(i) for i in np.argwhere(bad)[0])
            raise ValueError(f"{name} must hold finite values, got {array[index]} at index {index}")
    return array


def check_block(value, name: str = "block", *, multiple_of: int = 1, maximum: int = 1024) -> int:
    """A number of threads per block: an integer in ``[1, maximum]``, a multiple of ``multiple_of``.

    >>> check_block(128, multiple_of=32)
    128
    >>> check_block(48, multiple_of=32)
    Traceback (most recent call last):
        ...
    ValueError: block must be a multiple of 32 between 32 and 1024 (threads per block), got 48
    """
    if multiple_of > 1:
        wanted = f"a multiple of {multiple_of} between {multiple_of} and {maximum} (threads per block)"
    else:
        wanted = f"an integer between 1 and {maximum} (threads per block)"
    if not _is_int(value):
        raise ValueError(f"{name} must be {wanted}, got {describe(value)}")
    value = int(value)
    if not 1 <= value <= maximum or value % multiple_of:
        raise ValueError(f"{name} must be {wanted}, got {value}")
    return value


def check_choice(value, name: str, choices) -> str:
    """``value``, if it is one of the strings ``choices`` (a method, a kind of data).

    >>> check_choice("fast", "method", ("naive", "tiled"))
    Traceback (most recent call last):
        ...
    ValueError: method must be one of 'naive', 'tiled', got 'fast' (str)
    """
    choices = tuple(choices)
    listed = ", ".join(repr(c) for c in choices)
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {listed}, got {describe(value)}")
    return value


def check_seed(value, name: str = "seed") -> int | None:
    """A random seed: ``None`` (fresh entropy) or a non-negative integer.

    >>> check_seed(None) is None
    True
    >>> check_seed(-1)
    Traceback (most recent call last):
        ...
    ValueError: seed must be None or a non-negative integer, got -1
    """
    if value is None:
        return None
    if not _is_int(value) or value < 0:
        raise ValueError(f"{name} must be None or a non-negative integer, got {describe(value) if not _is_int(value) else int(value)}")
    return int(value)


def check_dtype(value, name: str = "dtype", allowed=(np.float32, np.float64)) -> np.dtype:
    """``np.dtype(value)``, if it is one of ``allowed`` (e.g. the precision of a computation).

    >>> check_dtype("float32")
    dtype('float32')
    >>> check_dtype(np.int32)
    Traceback (most recent call last):
        ...
    ValueError: dtype must be float32 or float64, got int32
    """
    allowed = tuple(np.dtype(a) for a in allowed)
    listed = " or ".join(str(a) for a in allowed)
    try:
        dtype = np.dtype(value) if value is not None else None
    except TypeError:
        dtype = None
    if dtype is None:
        raise ValueError(f"{name} must be {listed}, got {describe(value)}")
    if dtype not in allowed:
        raise ValueError(f"{name} must be {listed}, got {dtype}")
    return dtype


def check_flag(value, name: str) -> bool:
    """``value`` as a bool, if it is True or False (NumPy bools too; not 0, 1 or "yes").

    >>> check_flag(np.True_, "directed")
    True
    >>> check_flag(1, "directed")
    Traceback (most recent call last):
        ...
    ValueError: directed must be True or False, got 1 (int)
    """
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {describe(value)}")
    return bool(value)


def check_id_table(items: dict, what: str, table: str, cls: type):
    """``items`` read-only, once every key is an identifier and every value a ``cls``.

    Parameters
    ----------
    items : dict of str -> cls
    what : str
        What the ids name, for the error (``"quiz"``: "quiz ids must be identifiers").
    table : str
        The table's name in a unit (``"QUIZ"``), for the error on a value.
    cls : type

    Returns
    -------
    types.MappingProxyType
    """
    from types import MappingProxyType

    for key, value in items.items():
        if not (isinstance(key, str) and key.isidentifier()):
            raise ValueError(f"{what} ids must be identifiers, got {key!r}")
        if not isinstance(value, cls):
            raise ValueError(f"{table}[{key!r}] must be a {cls.__name__}, got {type(value).__name__}")
    return MappingProxyType(dict(items))
