"""simulate() checks its inputs once, at its door: the methods take the prepared problem."""

import pytest

from course_lib import cellsim as cs
from course_lib.cellsim import _inputs, api, reference


@pytest.mark.parametrize("method", ["reference", "compact", "compact_pooled"])
def test_the_inputs_are_checked_once(monkeypatch, method):
    calls = []
    original = _inputs.simulation_inputs

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    for module in (_inputs, api, reference):
        if hasattr(module, "simulation_inputs"):
            monkeypatch.setattr(module, "simulation_inputs", counting)
    h0 = cs.lognormal_histogram(5, seed=1, median=60.0)
    cs.simulate(h0, cs.THESIS_TYPES, tau_max=40.0, phi_min=11.0, seed=1, method=method)
    assert len(calls) == 1
