"""The public entry points of the primitives: :func:`reduce`, :func:`scan`, :func:`segmented_scan`,
:func:`compact` and :func:`histogram`, each with ``method=`` picking the variant.

A launch handles one tile per block; what crosses tiles is finished here, on the host side of
the loop: the tiles' totals are scanned by the same method (recursively, until one tile holds
them) and added back by :func:`~course_lib.primitives.kernels.add_block_offsets_kernel`. Data
stays on the device between the passes; only small counts come back (a compaction's length,
a segmented scan's carries).
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .. import device
from .._validate import check_array, check_block, check_choice, check_flag, check_float, check_int
from . import kernels
from .cpu import _histogram, _reduce, _scan, _segmented_scan, check_keys

__all__ = ["HISTOGRAM_METHODS", "REDUCE_GRID", "REDUCE_METHODS", "SCAN_METHODS", "compact", "default_block", "histogram",
           "reduce", "scan", "segmented_scan"]

SCAN_METHODS = ("blelloch_padded", "blelloch", "hillis_steele", "warp", "cpu")
REDUCE_METHODS = ("tree", "warp", "cpu")
#: Blocks of the grid-stride reduction's first launch, whatever n: enough to fill a large GPU (132 SMs x 8).
REDUCE_GRID = 1024
HISTOGRAM_METHODS = ("private", "atomic", "cpu")
_DTYPES = (np.float32, np.int32)


def default_block() -> int:
    """Threads per block when none is given: 256 on a GPU, 32 in the simulator."""
    return device.pick(sim=32, gpu=256)


def _block(block):
    block = default_block() if block is None else check_block(block, multiple_of=32, maximum=512)
    if block not in kernels.BLOCKS:
        raise ValueError(f"block must be one of {kernels.BLOCKS} (a power of two), got {block}")
    return block


def _values(x, name="x"):
    return check_array(x, name, ndim=1, dtype=_DTYPES, finite=True)


def _dtype_name(x) -> str:
    return np.dtype(x.dtype).name


def _device_scan(d_x, method, block, dtype):
    """Exclusive scan of a device array, on the device (recursing on the tiles' totals)."""
    n = d_x.shape[0]
    d_out = cuda.device_array(n, dtype)
    if method in ("hillis_steele", "warp"):  # inclusive within the tile
        per_block = block
        kernel = (kernels.hillis_steele_scan_kernel if method == "hillis_steele" else kernels.warp_scan_kernel)(block, dtype)
    else:
        per_block = 2 * block
        kernel = kernels.blelloch_scan_kernel(block, dtype, method == "blelloch_padded")
    tiles = -(-n // per_block)
    d_sums = cuda.device_array(tiles, dtype)
    kernel[tiles, block](d_x, d_out, d_sums)
    if per_block == block:  # inclusive within the tile: shift to exclusive (out - x)
        _subtract[-(-n // block), block](d_out, d_x)
    if tiles > 1:
        d_offsets = _device_scan(d_sums, method, block, dtype)
        kernels.add_block_offsets_kernel[-(-n // block), block](d_out, d_offsets, np.int32(per_block))
    return d_out


@cuda.jit
def _subtract(out, x):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] -= x[i]


def scan(x, *, method: str = "blelloch_padded", inclusive: bool = False, block: int | None = None) -> np.ndarray:
    """Prefix sums of ``x``.

    Parameters
    ----------
    x : array_like of shape (n,), float32 or int32
    method : {"blelloch_padded", "blelloch", "hillis_steele", "warp", "cpu"}
        The work-efficient scan with or without the bank-conflict padding, the step-efficient
        scan, the hybrid scan of warp shuffles (:func:`~course_lib.primitives.kernels.warp_scan_kernel`,
        two barriers per block), or ``numpy.cumsum``.
    inclusive : bool
        ``out[i]`` includes ``x[i]`` (default: exclusive, ``out[0] = 0``).
    block : int, optional
        Threads per block, one of 32, 64, 128, 256, 512 (default :func:`default_block`).

    Returns
    -------
    numpy.ndarray of shape (n,), the dtype of ``x``
    """
    x = _values(x)
    method = check_choice(method, "method", SCAN_METHODS)
    inclusive = check_flag(inclusive, "inclusive")
    block = _block(block)
    if method == "cpu":
        return _scan(x, inclusive)
    if x.size == 0:
        return x.copy()
    d_x = cuda.to_device(np.ascontiguousarray(x))
    out = _device_scan(d_x, method, block, _dtype_name(x)).copy_to_host()
    return out + x if inclusive else out


def reduce(x, *, method: str = "tree", block: int | None = None):
    """Sum of ``x`` (shape (n,), float32 or int32), by tree reduction per block, then of the partial
    sums until one is left (``"tree"``, a launch per level), by a grid-stride loop and warp shuffles
    (``"warp"``, :func:`~course_lib.primitives.kernels.warp_reduce_kernel`: two launches whatever n), or by NumPy
    (``"cpu"``). Returns a scalar of the dtype of ``x``."""
    x = _values(x)
    method = check_choice(method, "method", REDUCE_METHODS)
    block = _block(block)
    if method == "cpu" or x.size == 0:
        return _reduce(x)
    d_values = cuda.to_device(np.ascontiguousarray(x))
    if method == "warp":
        kernel = kernels.warp_reduce_kernel(block, _dtype_name(x))
        blocks = min(-(-x.size // block), REDUCE_GRID)
        d_partial = cuda.device_array(blocks, x.dtype)
        kernel[blocks, block](d_values, d_partial)
        d_total = cuda.device_array(1, x.dtype)
        kernel[1, block](d_partial, d_total)
        return d_total.copy_to_host()[0]
    kernel = kernels.block_reduce_kernel(block, _dtype_name(x))
    while d_values.shape[0] > 1:
        tiles = -(-d_values.shape[0] // block)
        d_partial = cuda.device_array(tiles, x.dtype)
        kernel[tiles, block](d_values, d_partial)
        d_values = d_partial
    return d_values.copy_to_host()[0]


def _device_segmented_scan(d_x, d_heads, block):
    """Inclusive segmented scan of device arrays, on the device: each tile, then the tiles' tails (a segmented scan
    of their own, recursively) carried into the tiles their segments reach."""
    n = d_x.shape[0]
    tiles = -(-n // block)
    d_out, d_reached = cuda.device_array(n, np.float32), cuda.device_array(n, np.int32)
    kernels.segmented_scan_kernel(block)[tiles, block](d_x, d_heads, d_out, d_reached)
    if tiles > 1:
        d_tails, d_stopped = cuda.device_array(tiles, np.float32), cuda.device_array(tiles, np.int32)
        kernels.tile_tails_kernel[-(-tiles // block), block](d_out, d_reached, np.int32(block), d_tails, d_stopped)
        d_flowing = _device_segmented_scan(d_tails, d_stopped, block)  # what flows out of tiles 0..b
        d_carries = cuda.device_array(tiles, np.float32)
        kernels.shift_right_kernel[-(-tiles // block), block](d_flowing, d_carries)  # what flows into tile b
        kernels.add_segment_carries_kernel[tiles, block](d_out, d_reached, d_carries, np.int32(block))
    return d_out


def segmented_scan(x, heads, *, method: str = "gpu", block: int | None = None) -> np.ndarray:
    """Inclusive scan of float32 ``x`` (shape (n,)) restarting at every element where ``heads`` (int32, (n,))
    is non-zero. ``method="gpu"`` scans each tile on the device and carries the tiles' tails across, on the
    device too (the tails' own segmented scan, recursively: one copy in, one out); ``"cpu"`` uses ``numpy.cumsum``."""
    x = check_array(x, "x", ndim=1, dtype=np.float32, finite=True)
    heads = check_array(heads, "heads", ndim=1, shape=x.shape, dtype=np.int32)
    method = check_choice(method, "method", ("gpu", "cpu"))
    block = _block(block)
    if method == "cpu" or x.size == 0:
        return _segmented_scan(x, heads != 0)
    return _device_segmented_scan(cuda.to_device(x), cuda.to_device(heads), block).copy_to_host()


def compact(x, threshold: float, *, method: str = "blelloch_padded", block: int | None = None) -> np.ndarray:
    """The elements of float32 ``x`` (shape (n,)) greater than ``threshold``, in order: flags (a map),
    their exclusive scan (``method``, one of the scan methods) and a scatter. Returns float32 (kept,)."""
    x = check_array(x, "x", ndim=1, dtype=np.float32, finite=True)
    threshold = np.float32(check_float(threshold, "threshold"))
    method = check_choice(method, "method", SCAN_METHODS)
    block = _block(block)
    if method == "cpu" or x.size == 0:
        return x[x > threshold]
    n, grid = x.size, -(-x.size // block)
    d_x = cuda.to_device(x)
    d_keep = cuda.device_array(n, np.int32)
    kernels.keep_flags_kernel[grid, block](d_x, threshold, d_keep)
    d_positions = _device_scan(d_keep, method, block, "int32")
    kept = int(d_positions[n - 1:].copy_to_host()[0] + d_keep[n - 1:].copy_to_host()[0])
    d_out = cuda.device_array(max(kept, 1), np.float32)
    kernels.scatter_kept_kernel[grid, block](d_x, d_keep, d_positions, d_out)
    return d_out.copy_to_host()[:kept]


def histogram(keys, bins: int, *, method: str = "private", block: int | None = None,
              blocks: int | None = None) -> np.ndarray:
    """Counts of int32 ``keys`` (shape (n,), values in [0, bins)): int64 of shape (bins,).

    ``"private"`` counts into a shared-memory copy per block and merges it once (``blocks`` blocks,
    a grid-stride loop; default one per 8 tiles of work); ``"atomic"`` adds one global atomic per key;
    ``"cpu"`` is ``numpy.bincount``.
    """
    keys, bins = check_keys(keys, bins, maximum=4096)
    method = check_choice(method, "method", HISTOGRAM_METHODS)
    block = _block(block)
    if method == "cpu" or keys.size == 0:
        return _histogram(keys, bins).astype(np.int64)
    d_keys, d_counts = cuda.to_device(keys), cuda.to_device(np.zeros(bins, np.int32))
    if method == "atomic":
        kernels.histogram_atomic_kernel[-(-keys.size // block), block](d_keys, d_counts)
    else:
        blocks = max(1, -(-keys.size // (8 * block))) if blocks is None else check_int(blocks, "blocks", minimum=1)
        kernels.histogram_private_kernel(bins)[blocks, block](d_keys, d_counts)
    return d_counts.copy_to_host().astype(np.int64)
