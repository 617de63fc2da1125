"""Explorer of Unit 8: r and the threshold -> prevalent patterns, pruning per level, launches per version."""

from __future__ import annotations

from .api import mine
from .model import filter_launches

__all__ = ["explorer", "explorer_text"]


def explorer_text(points, features, r, threshold):
    """The explorer's readout as text (what the widget shows).

    Mines with the compiled CPU miner (fast anywhere), then predicts the filter's launches of the
    per-candidate and the batched GPU versions for the same candidates.
    """
    result = mine(points, features, r, threshold, method="cpu")
    n_features = int(max(features)) + 1 if len(features) else 0
    lines = [f"r = {r:g}, threshold = {threshold:g}: {len(result.patterns)} prevalent pattern(s)"]
    for pattern, pi in result.patterns.items():
        lines.append(f"  {pattern}: PI = {pi:.3f}")
    lines.append("size  candidates  after filter  prevalent  row instances  filter launches (per candidate / batched)")
    for lv in result.levels:
        lines.append(f"{lv.size:>4}  {lv.candidates:>10}  {lv.after_filter:>12}  {lv.prevalent:>9}  {lv.rows:>13}  "
                     f"{2 * lv.candidates:>10} / 2   (at most {filter_launches(n_features, lv.size, batched=False)})")
    return "\n".join(lines)


def explorer(points, features, *, r=1.0, threshold=0.3):
    """Sliders for r and the threshold; the readout of :func:`explorer_text` below them."""
    import ipywidgets as w
    from ..controls import aligned

    r_slider = w.FloatSlider(value=r, min=r / 4, max=r * 3, step=r / 20, description="r",
                             style={"description_width": "initial"}, layout=w.Layout(width="60%"))
    t_slider = w.FloatSlider(value=threshold, min=0.05, max=1.0, step=0.05, description="threshold",
                             style={"description_width": "initial"}, layout=w.Layout(width="60%"))
    out = w.Output()

    def update(*_):
        out.clear_output()
        with out:
            print(explorer_text(points, features, r_slider.value, t_slider.value))

    r_slider.observe(update, "value")
    t_slider.observe(update, "value")
    update()
    aligned(r_slider, t_slider)  # whole descriptions, one width
    return w.VBox([r_slider, t_slider, out])
