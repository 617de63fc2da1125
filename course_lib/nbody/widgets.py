"""Explorer widget of Unit 1: N and the tile size -> global loads, blocks vs SMs, time."""

from __future__ import annotations

import numpy as np

from .. import device
from .model import BYTES_PER_BODY, global_fetches, tile_report

__all__ = ["MAX_TIMED_N", "tile_explorer", "tile_explorer_text"]

#: Largest N the explorer times on a GPU (about 0.1 s per launch on a recent GPU).
MAX_TIMED_N = 1 << 19


def tile_explorer_text(n, tile, *, sm_count, measure=False):
    """The explorer's readout as text (also what the widget shows).

    With ``measure=True`` on a GPU, times the tiled kernel at this (N, P) with CUDA events.
    """
    r = tile_report(n, tile, sm_count=sm_count)
    naive = global_fetches(n, "naive")
    lines = [
        f"N = {n:,}, P = {tile}: {r['blocks']:,} blocks of {tile} threads for {sm_count} SMs "
        f"({r['busy_sms']} busy{', some SMs idle' if r['busy_sms'] < sm_count else ''})",
        f"global loads: {r['fetches']:,} body records = {r['bytes'] / 2**20:,.1f} MiB "
        f"(naive kernel: {naive * BYTES_PER_BODY / 2**20:,.1f} MiB, {naive / r['fetches']:.1f}x more)",
        f"resident blocks per SM (thread/shared-memory limits): {r['blocks_per_sm']}",
    ]
    if measure and device.is_gpu() and n > MAX_TIMED_N:
        lines.append(f"measured time: only up to N = {MAX_TIMED_N:,}, to keep the widget responsive "
                     "(python -m course_lib.bench nbody times larger N)")
    elif measure and device.is_gpu():
        lines.append(f"measured: {_measure(n, tile) * 1e3:.3f} ms")
    elif measure:
        lines.append("measured time: needs a GPU (the simulator's timings mean nothing)")
    return "\n".join(lines)


def _measure(n, tile):
    from numba import cuda

    from ..bench import gpu_time
    from . import kernels
    from .api import pack_bodies
    from .data import uniform_cube

    pos, _, mass = uniform_cube(n, seed=0)
    d_bodies = cuda.to_device(pack_bodies(pos, mass))
    d_acc = cuda.device_array((n, 3), np.float32)
    kernel = kernels.nbody_tiled_kernel(tile)
    return gpu_time(lambda: kernel[(n + tile - 1) // tile, tile](d_bodies, np.float32(1e-4), d_acc), repeat=3)


def tile_explorer(sm_count=None):
    """Sliders for N and P; shows loads, blocks vs SMs and, on a GPU, the measured time.

    Parameters
    ----------
    sm_count : int, optional
        SMs of the device to reason about; defaults to this GPU's, or 132 (an H100) in
        the simulator.
    """
    import ipywidgets as widgets
    from ..controls import aligned

    if sm_count is None:
        sm_count = device.info().sm_count if device.is_gpu() else 132
    # Update on release only: on a GPU every change times the kernel.
    n = widgets.IntSlider(value=16, min=10, max=22, description="log2 N", continuous_update=False)
    tile = widgets.SelectionSlider(options=[2**k for k in range(3, 11)], value=256, description="tile P",
                                   continuous_update=False)
    out = widgets.HTML()

    def update(_=None):
        text = tile_explorer_text(2**n.value, tile.value, sm_count=sm_count, measure=device.is_gpu())
        out.value = "<pre>" + text + "</pre>"

    n.observe(update, "value")
    tile.observe(update, "value")
    update()
    aligned(n, tile)  # whole descriptions, one width
    return widgets.VBox([widgets.HBox([n, tile], layout={"flex_flow": "row wrap"}), out])
