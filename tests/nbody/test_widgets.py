"""Plots and the explorer widget build and show the right numbers."""


import matplotlib

matplotlib.use("Agg")

from course_lib.nbody.widgets import tile_explorer, tile_explorer_text

def test_explorer_text_reports_idle_sms_and_savings():
    text = tile_explorer_text(4096, 1024, sm_count=132)
    assert "4 blocks of 1024 threads for 132 SMs (4 busy, some SMs idle)" in text
    assert "needs a GPU" in tile_explorer_text(4096, 64, sm_count=132, measure=True) or "measured:" in \
        tile_explorer_text(4096, 64, sm_count=132, measure=True)


def test_explorer_widget_updates_on_slider_change():
    box = tile_explorer(sm_count=100)
    n_slider, tile_slider = box.children[0].children
    out = box.children[1]
    tile_slider.value = 64
    assert "P = 64" in out.value
    n_slider.value = 12
    assert "N = 4,096" in out.value
