"""Do the figures draw and does the explorer's readout report what the miner found?"""

import matplotlib

matplotlib.use("Agg")

from course_lib import colocation as co  # noqa: E402


def test_explorer_readout_lists_patterns_and_launches():
    data = co.planted_colocations(200, 4, groups=((0, 1),), seed=1)
    text = co.widgets.explorer_text(data.points, data.features, 1.0, 0.4)
    found = co.mine(data.points, data.features, 1.0, 0.4, method="cpu").patterns
    assert f"{len(found)} prevalent pattern(s)" in text and "(0, 1)" in text
    assert "12 / 2" in text  # 6 size-2 candidates: 12 launches per candidate, 2 batched


def test_explorer_widget_and_plots_build():
    data = co.planted_colocations(100, 3, groups=((0, 1),), seed=2)
    box = co.widgets.explorer(data.points, data.features)
    assert len(box.children) == 3
    ax = co.plots.plot_points(data.points, data.features, r=1.0, patterns=[(0, 1)])
    assert len(ax.collections) == 3
    rows = [dict(version="v0: x", launches=10, HtoD_count=5, DtoH_count=4, HtoD_bytes=100, DtoH_bytes=50)]
    assert len(co.plots.plot_versions(rows)) == 3


def test_importing_the_unit_does_not_import_plotting():
    import subprocess
    import sys

    code = "import course_lib.colocation, sys; print('matplotlib.pyplot' in sys.modules, 'ipywidgets' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
