"""Do the figures and the explorer build, and does importing the unit stay light?"""

import subprocess
import sys

import matplotlib
import numpy as np
import pytest

from course_lib import cellsim as cs

matplotlib.use("Agg")


def test_importing_the_unit_does_not_import_matplotlib_or_ipywidgets():
    code = ("import sys, course_lib, course_lib.cellsim as cs; "
            "print('matplotlib' in sys.modules, 'ipywidgets' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "False"]


def test_histogram_over_time_and_population_by_type(h0, thesis_types):
    import matplotlib.pyplot as plt

    results = cs.plots.simulate_times(h0, thesis_types, [0, 60, 120], phi_min=11.0, seed=1)
    # one population: a later time never has fewer divisions
    assert [r.divisions for r in results] == sorted(r.divisions for r in results)
    fig = cs.plots.histogram_over_time(h0, thesis_types, None, phi_min=11.0, results=results)
    assert len(fig.axes[0].patches) >= 3
    fig2 = cs.plots.population_by_type(h0, thesis_types, None, phi_min=11.0, results=results)
    assert len(fig2.axes[0].lines) == thesis_types.n_types + 1
    fig3 = cs.plots.memory_per_level([10, 20, 40], [10, 14, 0], slot_bytes=24, cell_bytes=44)
    assert len(fig3.axes[0].lines) == 2
    plt.close("all")


def test_explorer_normalises_the_proportions(h0, thesis_types):
    result, mixed = cs.widgets.explorer_result(h0, thesis_types, 96.0, 11.0, [2, 1, 1])
    np.testing.assert_allclose(mixed.proportions, [0.5, 0.25, 0.25])
    assert result.same_as(cs.simulate(h0, mixed, tau_max=96.0, phi_min=11.0, method="cpu"))
    with pytest.raises(ValueError, match="not all zero"):
        cs.widgets.explorer_result(h0, thesis_types, 96.0, 11.0, [0, 0, 0])


def test_explorer_widget_builds(h0, thesis_types):
    pytest.importorskip("ipywidgets")
    import matplotlib.pyplot as plt

    box = cs.widgets.explorer(h0, thesis_types)
    before = box.children[2].value
    assert "cells alive at tau_max" in before
    box.children[0].children[0].value = 0.0  # tau_max slider: recomputes, nobody divides by t = 0
    after = box.children[2].value
    assert after != before and f"{h0.n_cells} cells alive at tau_max, 0 divisions" in after
    plt.close("all")


def test_quiz_answers():
    for quiz in cs.QUIZ.values():
        assert quiz.answer(quiz.correct).startswith("Right.")
