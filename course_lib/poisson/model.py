"""The traffic model of Unit 4: bytes a Jacobi iteration moves, and what bounds it.

One iteration of :func:`course_lib.poisson.kernels.jacobi_step_kernel` reads, for each
strict-interior pixel and each of its 3 channels, I_k (4 bytes) and B + C (4 bytes) and
writes I_{k+1} (4 bytes), and reads the pixel's label (1 byte): 37 bytes per
pixel-iteration. Neighbours' values are the same addresses as other threads' own
pixels, so on a GPU they come from the caches, not from DRAM. The benchmark reports
effective bandwidth with this count, and the lesson and problem set 4 predict with it.
"""

from __future__ import annotations

from .._validate import check_float, check_int

__all__ = ["BYTES_PER_PIXEL_ITERATION", "bandwidth_bound_seconds", "bytes_per_iteration"]

#: Bytes moved per strict-interior pixel per iteration: 3 x (4 + 4 + 4) + 1.
BYTES_PER_PIXEL_ITERATION = 37


def bytes_per_iteration(interior_pixels):
    """DRAM bytes one double-buffered Jacobi iteration moves.

    Parameters
    ----------
    interior_pixels : int
        Strict-interior pixels (the unknowns).

    Returns
    -------
    int

    >>> bytes_per_iteration(1000)
    37000
    """
    return BYTES_PER_PIXEL_ITERATION * check_int(interior_pixels, "interior_pixels", minimum=0)


def bandwidth_bound_seconds(interior_pixels, iterations, bandwidth):
    """The least time ``iterations`` iterations can take at a memory bandwidth (bytes/s).

    >>> bandwidth_bound_seconds(100_000, 800, 3.35e12) < 1e-3
    True
    """
    iterations = check_int(iterations, "iterations", minimum=0)
    bandwidth = check_float(bandwidth, "bandwidth", minimum=0, min_inclusive=False)
    return bytes_per_iteration(interior_pixels) * iterations / bandwidth
