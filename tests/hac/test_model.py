"""Do the models reproduce the thesis's own arithmetic?"""

import numpy as np
import pytest

from course_lib import hac


def test_amdahl_of_the_thesis():
    assert hac.amdahl_limit(hac.THESIS["kernel_fraction"]) == pytest.approx(4.46, abs=0.01)
    assert hac.amdahl_speedup(0.5, 2) == pytest.approx(4 / 3)
    assert hac.amdahl_speedup(0.776, np.array([1.0, 1e12]))[0] == pytest.approx(1.0)
    assert hac.amdahl_limit(1.0) == float("inf")
    with pytest.raises(ValueError, match="fraction"):
        hac.amdahl_speedup(1.5, 2)
    with pytest.raises(ValueError, match="speedup"):
        hac.amdahl_speedup(0.5, 0)


def test_stage_fractions_and_thesis_speedups():
    cpu, gpu = hac.THESIS["cpu_stage_seconds"], hac.THESIS["gpu_stage_seconds"]
    assert cpu["weighting"] / gpu["weighting"] == pytest.approx(46.5, abs=0.1)
    assert cpu["fusion"] / gpu["fusion"] == pytest.approx(0.25, abs=0.01)
    fractions = hac.stage_fractions(cpu)
    assert sum(fractions.values()) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        hac.stage_fractions({"a": 0.0})


def test_bytes_per_iteration():
    soa = hac.bytes_per_iteration(1000)
    aos = hac.bytes_per_iteration(1000, layout="aos")
    assert aos["matching"] == 2 * soa["matching"] == 8000
    assert hac.bytes_per_iteration(1000, fusion="atomic")["total"] == soa["total"] + 16000
