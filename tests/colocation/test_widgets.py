"""Does the explorer build, and does its readout report what the miner found?"""

import matplotlib

matplotlib.use("Agg")

from course_lib import colocation as co  # noqa: E402


def test_explorer_readout_lists_patterns_and_launches():
    data = co.planted_colocations(200, 4, groups=((0, 1),), seed=1)
    text = co.widgets.explorer_text(data.points, data.features, 1.0, 0.4)
    found = co.mine(data.points, data.features, 1.0, 0.4, method="cpu").patterns
    assert f"{len(found)} prevalent pattern(s)" in text and "(0, 1)" in text
    assert "12 / 2" in text  # 6 size-2 candidates: 12 launches per candidate, 2 batched


def test_explorer_widget_builds():
    data = co.planted_colocations(100, 3, groups=((0, 1),), seed=2)
    box = co.widgets.explorer(data.points, data.features)
    assert len(box.children) == 3
