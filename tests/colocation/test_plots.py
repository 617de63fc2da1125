"""Do the figures draw what they are given?"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from course_lib import colocation as co  # noqa: E402


def test_points_and_versions_draw():
    data = co.planted_colocations(100, 3, groups=((0, 1),), seed=2)
    ax = co.plots.plot_points(data.points, data.features, r=1.0, patterns=[(0, 1)])
    assert len(ax.collections) == 3  # one scatter per feature
    assert "(0, 1)" in ax.get_legend().get_title().get_text()
    rows = [dict(version="v0: x", launches=10, HtoD_count=5, DtoH_count=4, HtoD_bytes=100, DtoH_bytes=50),
            dict(version="v2: y", launches=4, HtoD_count=2, DtoH_count=1, HtoD_bytes=2048, DtoH_bytes=0)]
    axes = co.plots.plot_versions(rows)
    assert len(axes) == 3
    assert [p.get_height() for p in axes[0].patches] == [10, 4]
    plt.close("all")


def test_importing_the_unit_does_not_import_plotting():
    import subprocess
    import sys

    code = "import course_lib.colocation, sys; print('matplotlib.pyplot' in sys.modules, 'ipywidgets' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
