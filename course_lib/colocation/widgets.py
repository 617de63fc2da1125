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
    # Short lines: the readout must fit a phone-wide column (about 40 characters) on the course site.
    lines = [f"r = {r:g}, threshold = {threshold:g}:", f"{len(result.patterns)} prevalent pattern(s)"]
    for pattern, pi in result.patterns.items():
        lines.append(f"  {pattern}: PI = {pi:.3f}")
    for lv in result.levels:
        lines += [f"size {lv.size}: {lv.candidates} candidates,",
                  f"  {lv.after_filter} after the filter, {lv.prevalent} prevalent,",
                  f"  {lv.rows} row instances;",
                  f"  filter launches: {2 * lv.candidates} / 2",
                  f"  (per candidate / batched; at most {filter_launches(n_features, lv.size, batched=False)})"]
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
