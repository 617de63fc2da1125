"""The bitmap searches' workspace: every device array allocated once per graph, results downloaded in one copy."""

from __future__ import annotations

import ctypes
import weakref

import numpy as np

__all__ = ["BitmapWorkspace"]


class BitmapWorkspace:
    """Every array a bitmap search needs, allocated once per graph (no allocation during a search).

    Attributes
    ----------
    result : device array of shape (2, V), int32
        The search's result, depth in row 0 and parent in row 1 (``depth`` and ``parent``
        are those rows), downloaded in one copy at the end.
    depth, parent : device arrays of shape (V,), int32
    visited : device array of shape (ceil(V / 32),), uint32
        One bit per vertex.
    bits : device array of shape (3, ceil(V / 32)), uint32
        Frontier bitmaps in rotation (level L reads ``bits[L % 3]``).
    counters : device array of shape (2, 2), int32
        Size and out-arcs of the next frontier, alternating between two rows.
    queues : tuple of two device arrays of shape (V,), int32
        The frontier and the next one, swapped every level.
    pinned : ndarray of shape (2,), int32, page-locked
        Where the host receives a level's counters: the one copy per level.
    """

    #: Page-locked result buffers kept for reuse: a caller holding the result of one search while
    #: running the next (``run = traverse(...)`` in a loop) still allocates nothing.
    HOST_BUFFERS = 2

    def __init__(self, n_vertices):
        from numba import cuda

        words = max(1, -(-n_vertices // 32))
        self.n_vertices = n_vertices
        self.result = cuda.device_array((2, n_vertices), np.int32)
        self.depth, self.parent = self.result[0], self.result[1]
        self.visited = cuda.device_array(words, np.uint32)
        self.bits = cuda.device_array((3, words), np.uint32)
        self.counters = cuda.device_array((2, 2), np.int32)
        self.queues = (cuda.device_array(n_vertices, np.int32), cuda.device_array(n_vertices, np.int32))
        self.pinned = cuda.pinned_array(2, np.int32)
        # Page-locked memory for results, each with a weak reference to the array last made over it.
        self._host_memory = []

    def download(self) -> np.ndarray:
        """Copy ``result`` to the host in one copy into page-locked memory.

        The array returned is a fresh ndarray over one of the workspace's page-locked
        buffers; every view of it (``depth``, ``parent``, their slices) keeps it alive, and
        a buffer is reused only once nothing refers to the array made over it, so a result
        the caller keeps is never overwritten. A buffer is allocated only when every kept
        one is still in use.

        Returns
        -------
        ndarray of shape (2, V), int32
        """
        from numba import cuda

        memory = next((m for m, last in self._host_memory if last() is None), None)
        if memory is None:
            # A ctypes array over the page-locked one: every view of an array made over it keeps that
            # array alive (NumPy collapses a view's base down to the first array over a non-array,
            # and would see through a memoryview to the page-locked array itself).
            pinned = cuda.pinned_array(2 * self.n_vertices, np.int32)
            memory = (ctypes.c_int32 * pinned.size).from_buffer(pinned)
            self._host_memory = self._host_memory[-(self.HOST_BUFFERS - 1):] + [(memory, None)]
        host = np.ndarray((2, self.n_vertices), np.int32, buffer=memory)
        self._host_memory = [(m, weakref.ref(host) if m is memory else last) for m, last in self._host_memory]
        self.result.copy_to_host(host)
        return host
