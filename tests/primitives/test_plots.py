"""The plot draws the model's lines and the measured points."""

import matplotlib

matplotlib.use("Agg")

from course_lib import primitives  # noqa: E402


def test_work_and_span_plot():
    import matplotlib.pyplot as plt

    fig = primitives.plots.plot_work_and_span(tiles=(32, 64), measured={"blelloch": {64: 126}})
    work, span = fig.axes
    assert len(work.lines) == 4 and len(span.lines) == 3
    plt.close(fig)
