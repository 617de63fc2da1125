"""The explorer's table: the model's figures, and the measured ones when asked."""

from course_lib import primitives
from course_lib.primitives import model


def test_table_shows_the_model_and_the_measurements():
    html = primitives.widgets.scan_table(32, measure=True)
    assert f"<td>{model.scan_adds('hillis_steele', 32)}</td>" in html and "wavefronts / ideal (measured)" in html
    assert html.count("<tr>") == 5


def test_explorer_updates():
    box = primitives.widgets.explorer()
    slider, _, out = box.children
    slider.value = 128
    assert f"<td>{model.scan_adds('blelloch', 256)}</td>" in out.value
