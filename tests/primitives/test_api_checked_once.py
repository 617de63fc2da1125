"""The public functions check their arrays once, at their door: the CPU paths take them checked."""

import numpy as np
import pytest

from course_lib import primitives
from course_lib.primitives import api, cpu
from tests.checked_once import counted_checks


@pytest.fixture
def checks(monkeypatch):
    return counted_checks(monkeypatch, api.check_array, (api, cpu))


@pytest.mark.parametrize("method", ["cpu", "hillis_steele"])
def test_each_array_is_checked_once(checks, method):
    x = np.arange(5, dtype=np.float32)
    primitives.scan(x, method=method)
    primitives.compact(x, 1.5, method=method)
    assert checks == ["x", "x"]
    checks.clear()
    primitives.reduce(x, method="cpu")
    primitives.segmented_scan(x, np.array([1, 0, 1, 0, 0], np.int32), method="cpu")
    primitives.histogram(np.array([0, 2, 2], np.int32), 3, method="cpu")
    assert checks == ["x", "x", "heads", "keys"]


def test_the_cpu_functions_still_check_what_students_pass():
    with pytest.raises(ValueError, match="inclusive"):
        primitives.scan_cpu(np.ones(3, np.float32), inclusive="yes")
    with pytest.raises(ValueError, match=r"keys must lie in \[0, bins\)"):
        primitives.histogram_cpu(np.array([0, 3], np.int32), 3)
    with pytest.raises(ValueError, match="flags"):
        primitives.segmented_scan_cpu(np.ones(3, np.float32), np.ones(2, np.int32))
    assert primitives.histogram_cpu(np.array([0, 2, 2], np.int32), 3).tolist() == [1, 0, 2]
