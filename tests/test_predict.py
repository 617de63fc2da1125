"""Predict-then-measure exercises: no answer before a prediction, an explanation after a wrong one."""

import importlib
import re
from pathlib import Path

import pytest

import course_lib
from course_lib.predict import Prediction

ROOT = Path(__file__).resolve().parents[1]
P = Prediction("How many sectors?", 8, "32 lanes x 8 bytes = 256 bytes = 8 sectors.")


def test_no_prediction_hides_the_measurement():
    text = P.feedback(None, 8)
    assert "8" not in text and "No prediction yet" in text


def test_right_and_wrong_predictions_explain():
    assert P.feedback(8, 8.0).startswith("Right: measured 8.")
    wrong = P.feedback(4, 8)
    assert wrong.startswith("Not quite: you predicted 4, the measurement is 8.") and "256 bytes" in wrong


def test_a_changed_measurement_fails_loudly():
    with pytest.raises(AssertionError, match="no longer matches the expected value"):
        P.feedback(None, 4)


@pytest.mark.parametrize("bad", ["8", True, float("nan"), [8]])
def test_a_prediction_must_be_a_number(bad):
    with pytest.raises(ValueError, match="predicted must be a number"):
        P.feedback(bad, 8)


def test_check_prints(capsys):
    P.check(7, 8)
    assert "Not quite" in capsys.readouterr().out


@pytest.mark.parametrize("unit", sorted(course_lib.UNITS))
def test_lesson_predictions_are_well_formed(unit):
    predictions = importlib.import_module(f"course_lib.{unit}.quiz").PREDICTIONS
    assert 2 <= len(predictions) <= 4  # the lesson skeleton: 2-4 exercises
    for key, prediction in predictions.items():
        assert "?" in prediction.prompt, key
        assert prediction.why and prediction.feedback(prediction.expected, prediction.expected).startswith("Right")


@pytest.mark.parametrize("unit", sorted(course_lib.UNITS))
def test_every_prediction_is_checked_by_its_lesson_after_the_summary(unit):
    """Each exercise is a cell that starts from ``my_prediction = None`` and checks one prediction; they come last."""
    import nbformat

    predictions = importlib.import_module(f"course_lib.{unit}.quiz").PREDICTIONS
    nb = nbformat.read(ROOT / course_lib.UNITS[unit], as_version=4)
    checked, exercise_cells = [], []
    for index, cell in enumerate(nb.cells):
        found = re.findall(r'PREDICTIONS\["(\w+)"\]\.check\(my_prediction, measured=', cell.source)
        if cell.cell_type == "code" and found:
            assert cell.source.startswith("my_prediction = None"), f"cell {index} must start from my_prediction = None"
            checked += found
            exercise_cells.append(index)
    assert sorted(checked) == sorted(predictions), f"{course_lib.UNITS[unit]} checks {checked}, quiz.py has {list(predictions)}"
    summary = max(i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and "## Summary" in c.source)
    exercises = max(i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and "## Exercises" in c.source)
    assert summary <= exercises < min(exercise_cells), "idea -> code -> measurement -> summary -> exercises"
    assert all(c.cell_type == "markdown" or i in exercise_cells for i, c in enumerate(nb.cells) if i > exercises), (
        "after the exercises' heading come only their questions and their cells")
