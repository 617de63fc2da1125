"""The explorer widget of the primitives: pick a scan and a tile, see its work, span, barriers and
bank conflicts, modelled and (in the simulator, on small tiles) measured."""

from __future__ import annotations

from .model import scan_adds, scan_barriers, scan_steps, sweep_wavefronts

__all__ = ["explorer", "scan_table"]


def scan_table(block: int, measure: bool = False) -> str:
    """An HTML table of the four tile kernels for blocks of ``block`` threads.

    Parameters
    ----------
    block : int
        Threads per block (Blelloch's tile is twice that).
    measure : bool
        Also profile one tile of each in the simulator (a few seconds for blocks of 32-64).

    Returns
    -------
    str
        HTML.
    """
    from .profiling import measure_scan

    rows = []
    for method in ("reduce", "hillis_steele", "blelloch", "blelloch_padded"):
        tile = 2 * block if method.startswith("blelloch") else block
        model = "blelloch" if method.startswith("blelloch") else method
        conflicts = sweep_wavefronts(tile, method == "blelloch_padded")["worst"] if model == "blelloch" else 1
        cells = [method, tile, scan_adds(model, tile), scan_steps(model, tile), scan_barriers(model, tile), conflicts]
        if measure:
            m = measure_scan(method, tile, block)
            cells += [m["adds"], m["barriers_per_block"], f"{m['conflict_ratio']:.2f}"]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    head = ["kernel", "tile", "adds", "steps", "barriers", "worst wavefronts (model)"]
    head += ["adds (measured)", "barriers (measured)", "wavefronts / ideal (measured)"] if measure else []
    return ("<div style='overflow-x:auto'><table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"
            + "".join(rows) + "</table></div>")


def explorer(block: int = 32):
    """A slider of threads per block and a checkbox to measure; the table of :func:`scan_table` below.

    Returns
    -------
    ipywidgets.VBox
    """
    import ipywidgets as widgets

    size = widgets.SelectionSlider(options=[32, 64, 128, 256, 512], value=block, description="threads")
    measure = widgets.Checkbox(value=False, description="measure in the simulator (blocks of 32-64)")
    out = widgets.HTML()

    def update(_=None):
        out.value = scan_table(size.value, measure.value and size.value <= 64)

    size.observe(update, "value")
    measure.observe(update, "value")
    update()
    return widgets.VBox([size, measure, out])
