"""infomax checks the recording once, at its door: the reference and the step loop take it checked."""

import numpy as np
import pytest

from course_lib import ica
from course_lib.ica import api, reference
from tests.checked_once import counted_checks


@pytest.fixture
def checks(monkeypatch):
    return counted_checks(monkeypatch, reference.check_array, (api, reference), raising=False)


@pytest.mark.parametrize("method", ["reference", "cpu"])
def test_infomax_checks_the_recording_once(checks, tiny, method):
    with pytest.warns(ica.ConvergenceWarning):  # three steps are enough to count the checks
        result = ica.infomax(tiny.data, method, max_steps=3, seed=1)
    assert checks == ["X"]
    assert result.unmixing.shape == (5, 5)


def test_the_public_inner_functions_still_check_what_students_pass():
    with pytest.raises(ValueError, match="X"):
        reference.center_and_sphere(np.array([[1.0, np.nan], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="X"):
        reference.run_steps(np.ones(4), reference.ReferenceStepper, method="reference")
    with pytest.raises(ValueError, match="samples"):
        ica.infomax_reference(np.ones((3, 5)))
