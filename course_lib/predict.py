""""Predict, then measure" exercises for the end of every lesson.

A lesson's exercise asks for a number (sectors per request, edges examined, ...),
measures it in the same cell, and compares. The expected value and its explanation live
in the unit's ``quiz.py`` (``PREDICTIONS``), not in the lesson, so the cell a student
runs does not print the answer before they commit to one::

    my_prediction = None  # your number here
    rep = profile(...)
    sim.PREDICTIONS["float64_sectors"].check(my_prediction, measured=rep.line(...).load_sectors_per_request)

:meth:`Prediction.check` also keeps the lesson honest: if the measurement ever stops
matching the expected value the explanation is written for, it raises (nbval runs every
lesson in CI), so a regression of the evidence cannot go unnoticed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType

from ._validate import check_id_table

__all__ = ["Prediction", "prediction_dict"]


def _fmt(value) -> str:
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.3g}"
    return f"{value:g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class Prediction:
    """A number to predict, its expected measurement and why.

    Attributes
    ----------
    prompt : str
        The question (the lesson repeats it in its markdown).
    expected : float
        What the measurement gives for the lesson's launch.
    why : str
        The explanation, shown once the student has answered.
    rel_tol : float
        Relative tolerance for accepting a prediction (and for the measurement itself).
    """

    prompt: str
    expected: float
    why: str
    rel_tol: float = 0.05

    def _close(self, value) -> bool:
        return math.isclose(float(value), float(self.expected), rel_tol=self.rel_tol, abs_tol=1e-9)

    def feedback(self, predicted, measured) -> str:
        """The text :meth:`check` prints.

        Parameters
        ----------
        predicted : float or None
            The student's number; None before they answer (the measurement stays hidden).
        measured : float
            What the cell measured.

        Raises
        ------
        AssertionError
            If ``measured`` does not match ``expected``: the lesson's evidence changed.
        ValueError
            If ``predicted`` is not a number.
        """
        assert self._close(measured), (
            f"the measurement ({_fmt(measured)}) no longer matches the expected value ({_fmt(self.expected)}) "
            f"that this exercise's explanation is written for: {self.prompt}")
        if predicted is None:
            return ("No prediction yet: write your number in the cell (replace None) and run it again. "
                    "The measurement is shown once you have predicted.")
        if isinstance(predicted, bool) or not isinstance(predicted, (int, float)) or not math.isfinite(predicted):
            raise ValueError(f"predicted must be a number, got {predicted!r}")
        if self._close(predicted):
            return f"Right: measured {_fmt(measured)}. {self.why}"
        return f"Not quite: you predicted {_fmt(predicted)}, the measurement is {_fmt(measured)}. Why: {self.why}"

    def check(self, predicted, measured) -> None:
        """Print the feedback for a prediction against the measurement (see :meth:`feedback`)."""
        print(self.feedback(predicted, measured))


def prediction_dict(predictions: dict) -> MappingProxyType:
    """A unit's ``PREDICTIONS``: its exercises by id, checked and read-only (like :func:`course_lib.quiz.quiz_dict`).

    Parameters
    ----------
    predictions : dict of str -> Prediction
        Ids are identifiers (``"float64_sectors"``), used by the lessons as ``PREDICTIONS["float64_sectors"]``.

    Examples
    --------
    >>> P = prediction_dict({"sectors": Prediction("How many sectors?", 8, "256 bytes / 32.")})
    >>> P["sectors"].expected
    8
    >>> prediction_dict({"no id": P["sectors"]})
    Traceback (most recent call last):
    ...
    ValueError: prediction ids must be identifiers, got 'no id'
    """
    return check_id_table(predictions, "prediction", "PREDICTIONS", Prediction)
