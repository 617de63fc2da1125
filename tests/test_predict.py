"""Predict-then-measure exercises: no answer before a prediction, an explanation after a wrong one."""

import pytest

from course_lib.predict import Prediction

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


@pytest.mark.parametrize("unit", ["sim", "nbody", "spmv", "bfs", "poisson"])
def test_lesson_predictions_are_well_formed(unit):
    import importlib

    predictions = importlib.import_module(f"course_lib.{unit}.quiz").PREDICTIONS
    assert 2 <= len(predictions) <= 4  # the lesson skeleton: 2-4 exercises
    for key, prediction in predictions.items():
        assert "?" in prediction.prompt, key
        assert prediction.why and prediction.feedback(prediction.expected, prediction.expected).startswith("Right")
