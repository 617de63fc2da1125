"""The explorer runs the methods it compares, and its widget reruns when a slider moves."""

import matplotlib

matplotlib.use("Agg")


def test_explore(explored):
    assert explored["converged"] and explored["amari"] < 0.05 and explored["seconds_per_step"] > 0
    assert explored["launches_per_step"]["blas"] > explored["launches_per_step"]["fused"]


def test_explorer_widget():
    from course_lib.ica import widgets

    box = widgets.convergence_explorer(1500)
    assert "steps" in box.children[1].value
    box.children[0].children[0].value = 12  # moving a slider reruns it
    assert "Amari" in box.children[1].value
