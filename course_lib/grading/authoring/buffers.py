"""Failures with their cause, and the guarded buffers that catch a kernel writing past an array.

:func:`fail` builds the :class:`~course_lib.grading.core.TestFailure` every judge of the harness
raises (its last line names the likely cause); :func:`guarded` puts an array inside a frame of
:data:`GUARD` sentinel elements, :func:`inner` is the view of its original part and
:func:`unguard` checks that the frame is untouched. Part of :mod:`course_lib.grading.authoring.harness`,
which re-exports every name.
"""

from __future__ import annotations

import numpy as np

from ..core import CAUSE_PREFIX, CAUSE_WORDS, LIBRARY_PART_WORDS, PART_WORDS, TestFailure

__all__ = ["GUARD", "fail", "guarded", "inner", "part_failure", "results_per_case", "sentinel", "unguard"]

#: Extra elements around every array a kernel gets in :func:`result_test` (see :func:`guarded`).
GUARD = 32


# ----------------------------------------------------------------------------- failures
def fail(message: str, cause: str | None = None, *, public: bool = False) -> TestFailure:
    """A :class:`TestFailure` whose last line names its most likely cause (``raise fail(...)``).

    Parameters
    ----------
    message : str
        What went wrong, with numbers (for a hidden test it is replaced by the test's result).
    cause : str, optional
        ``"sign"``, ``"barrier"``, ``"bounds"``, ``"race"``, ``"unwritten"``, ``"technique"``... :
        the feedback adds the question's hint for it.
    public : bool
        See :class:`TestFailure`.
    """
    return TestFailure(message + (f"\n{CAUSE_PREFIX}{CAUSE_WORDS.get(cause, cause)}" if cause else ""), public=public,
                       cause=cause)


def results_per_case(got, cases, what: str):
    """Pair each case with the result the student's process sent back for it, checking the shape as it goes.

    Parameters
    ----------
    got : object
        What came back: a list with one dict per case.
    cases : sequence
        The cases the grader drew (what ``produce`` was given).
    what : str
        What the results are, for the failure (``"the measurements"``).

    Yields
    ------
    (case, dict)
        Each case and its result, in order; a ``fail(f"{what} did not come back", "answer")`` is raised before
        the first pair when ``got`` is not a list of ``len(cases)``, and in place of a result that is not a dict.
    """
    if type(got) is not list or len(got) != len(cases):
        raise fail(f"{what} did not come back", "answer")
    for case, result in zip(cases, got):
        if not isinstance(result, dict):
            raise fail(f"{what} did not come back", "answer")
        yield case, result


def part_failure(key: str, message: str, *, library: bool = False) -> TestFailure:
    """The failure of every test that uses the field ``key`` of a dict answer that is missing or not in
    the form the question asks for; its cause line names the part (see :func:`course_lib.grading.core.cause_of`).
    ``library``: the part uses the course's own code (the cause ``"library"``, which caps the question)."""
    if library:
        return TestFailure(f"{message}\n{CAUSE_PREFIX}{LIBRARY_PART_WORDS.format(key=key)}", cause="library")
    return TestFailure(f"{message}\n{CAUSE_PREFIX}{PART_WORDS.format(key=key)}", cause="answer")


# ----------------------------------------------------------------------------- guarded buffers
def sentinel(dtype) -> np.generic:
    """The value of the guard elements of an array of this dtype.

    Floats: -3e38 (finite, so that a kernel copying NaN read past an input does not look like
    an untouched guard); integers: a value no vertex id, count or label could take.
    """
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return dtype.type(-3.0e38)
    if dtype.kind == "i":
        return dtype.type(-0x7A5A5A5A if dtype.itemsize >= 4 else np.iinfo(dtype).min)
    if dtype.kind == "u":
        return dtype.type(np.iinfo(dtype).max)
    if dtype.kind == "b":
        return np.True_
    raise ValueError(f"no guard value for dtype {dtype}")


def _frame(ndim, axes, guard):
    return [(guard, guard) if axis in axes else (0, 0) for axis in range(ndim)]


def guarded(array, *, axes=(0,), guard: int = GUARD, fill=None) -> np.ndarray:
    """A copy of ``array`` inside a frame of ``guard`` elements on each side of the given axes.

    Parameters
    ----------
    array : ndarray
    axes : tuple of int
        Axes that get the frame (negative axes count from the end).
    fill : scalar, optional
        Value of the frame; :func:`sentinel` of the dtype by default.

    Returns
    -------
    ndarray
        Of shape ``array.shape`` plus ``2 * guard`` along each axis in ``axes``; :func:`inner`
        gives the view of the original part.
    """
    array = np.asarray(array)
    axes = tuple(a % array.ndim for a in axes) if array.ndim else ()
    return np.pad(array, _frame(array.ndim, axes, guard),
                  constant_values=sentinel(array.dtype) if fill is None else fill)


def inner(padded, *, axes=(0,), guard: int = GUARD):
    """The view of the original part of a :func:`guarded` array (NumPy or device array)."""
    axes = tuple(a % padded.ndim for a in axes)
    # Explicit slices: device arrays on a GPU take neither an Ellipsis nor a list.
    return padded[tuple(slice(guard, padded.shape[axis] - guard) if axis in axes else slice(None)
                        for axis in range(padded.ndim))]


def unguard(padded, shape, *, name: str, axes=(0,), guard: int = GUARD, dtype=None) -> np.ndarray:
    """Check a returned :func:`guarded` array and return its original part.

    Raises
    ------
    TestFailure
        The array has the wrong shape or dtype, or a guard element changed (cause ``bounds``).
    """
    shape = tuple(int(s) for s in shape)
    axes = tuple(a % len(shape) for a in axes) if shape else ()
    want = tuple(s + 2 * guard if axis in axes else s for axis, s in enumerate(shape))
    if not isinstance(padded, np.ndarray) or padded.shape != want or (dtype is not None and padded.dtype != dtype):
        got = f"{type(padded).__name__} {getattr(padded, 'shape', '')} {getattr(padded, 'dtype', '')}"
        raise fail(f"{name} came back as {got.strip()}, expected shape {want}")
    frame = np.ones(want, bool)
    inner(frame, axes=axes, guard=guard)[...] = False
    value = sentinel(padded.dtype)
    changed = frame & ~((padded == value) | (np.isnan(padded) & np.isnan(value) if padded.dtype.kind == "f" else False))
    if changed.any():
        where = tuple(int(i) - (guard if axis in axes else 0) for axis, i in enumerate(np.argwhere(changed)[0]))
        raise fail(f"the kernel wrote outside {name}: {int(changed.sum())} elements beyond its shape {shape} "
                   f"changed (e.g. at index {where})", "bounds")
    return np.array(inner(padded, axes=axes, guard=guard))
