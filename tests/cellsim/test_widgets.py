"""Does the explorer simulate what its sliders say, and build as a widget?"""

import matplotlib
import numpy as np
import pytest

from course_lib import cellsim as cs

matplotlib.use("Agg")


def test_explorer_normalises_the_proportions(h0, thesis_types):
    result, mixed = cs.widgets.explorer_result(h0, thesis_types, 96.0, 11.0, [2, 1, 1])
    np.testing.assert_allclose(mixed.proportions, [0.5, 0.25, 0.25])
    assert result.same_as(cs.simulate(h0, mixed, tau_max=96.0, phi_min=11.0, method="cpu"))
    with pytest.raises(ValueError, match="not all zero"):
        cs.widgets.explorer_result(h0, thesis_types, 96.0, 11.0, [0, 0, 0])


def test_explorer_widget_builds(h0, thesis_types):
    pytest.importorskip("ipywidgets")
    import matplotlib.pyplot as plt

    open_before = set(plt.get_fignums())
    box = cs.widgets.explorer(h0, thesis_types)
    before = box.children[2].value
    assert "cells alive at tau_max" in before
    box.children[0].children[0].value = 0.0  # tau_max slider: recomputes, nobody divides by t = 0
    after = box.children[2].value
    assert after != before and f"{h0.n_cells} cells alive at tau_max, 0 divisions" in after
    for number in set(plt.get_fignums()) - open_before:  # only the explorer's own figures
        plt.close(number)
