"""The host side of the GPU versions: device arrays, the launches of one iteration, the loop.

Two loops drive the same kernels:

* device-resident (``resident=True``): every quantity an iteration needs (i, j, k, the
  factors, the fusion lists) stays in device memory; the host only launches, and
  copies ``parent`` and ``height`` back once at the end;
* host round trip (``resident=False``, the thesis's design): each iteration copies the
  argmax and the pair's endpoints to the host, which computes k and the factors and
  sends them back; with ``fusion="cpu_sort"`` the host also sorts k's entries.
"""

from __future__ import annotations


import numpy as np

from ..clock import PhaseClock
from . import kernels as K
from ._dendrogram import Dendrogram

__all__ = ["DeviceClustering", "FUSIONS", "LAYOUTS", "STAGES"]

FUSIONS = ("segmented", "atomic", "cpu_sort")
LAYOUTS = ("soa", "aos")
STAGES = ("matching", "suppression", "weighting", "collection", "integration", "fusion")
#: Largest grid of the first argmax pass (threads loop over the rest): the partials fit one block's loop.
MAX_ARGMAX_BLOCKS = 1024


def _next_pow2(x):
    p = 1
    while p < x:
        p *= 2
    return p


class DeviceClustering:
    """One clustering on the device: the arrays, and the launches of each stage.

    Parameters
    ----------
    graph : AffinityGraph
    dtype : numpy.dtype
        float32 or float64.
    fusion : {"segmented", "atomic", "cpu_sort"}
    layout : {"soa", "aos"}
        Of the weights, as the argmax reads them.
    block : int
        Threads per block (a power of two).
    resident : bool
        Keep the iteration's state on the device (True) or round-trip through the host.
    """

    def __init__(self, graph, dtype, fusion, layout, block, resident):
        from numba import cuda

        self.graph, self.dtype, self.fusion, self.layout = graph, np.dtype(dtype), fusion, layout
        self.block, self.resident = block, resident
        n, m, nodes = graph.n_elements, graph.n_entries, graph.n_nodes
        self.n, self.m, self.nodes = n, m, nodes
        self.grid = max(1, -(-m // block))
        self.argmax_grid = min(self.grid, MAX_ARGMAX_BLOCKS)
        self.src = cuda.to_device(graph.src.copy())
        self.dst = cuda.to_device(graph.dst.copy())
        weights = graph.weight.astype(self.dtype)
        if layout == "soa":
            self.weights = cuda.to_device(weights)
            self.part_value = cuda.device_array(self.argmax_grid, self.dtype)
            self.part_index = cuda.device_array(self.argmax_grid, np.int32)
            self.best_value = cuda.device_array(1, self.dtype)
            self.best_index = cuda.device_array(1, np.int32)
        else:
            index_type = np.int32 if self.dtype == np.float32 else np.int64
            structs = np.zeros((m, 2), self.dtype)
            structs[:, 0] = weights
            structs.view(index_type)[:, 1] = np.arange(m)
            self.pairs = cuda.to_device(structs)
            self.pair_values = self.pairs
            self.pair_indices = self.pairs.view(index_type)
            self.weights = self.pairs[:, 0]  # a strided view: every kernel pays the struct layout
            self.part_pairs = cuda.to_device(np.zeros((self.argmax_grid, 2), self.dtype))
            self.best_pairs = cuda.to_device(np.zeros((1, 2), self.dtype))
            self.best_index = self.best_pairs.view(index_type)[:, 1]
        self.pop = cuda.to_device(np.ones(nodes, self.dtype))
        self.parent = cuda.to_device(np.arange(nodes, dtype=np.int32))
        self.height = cuda.to_device(np.full(nodes, np.inf, self.dtype))
        self.state = cuda.to_device(np.zeros(4, np.int32))
        self.factors = cuda.to_device(np.zeros(2, self.dtype))
        if fusion == "atomic":
            self.acc = cuda.to_device(np.zeros((2, nodes), self.dtype))
            self.first = cuda.to_device(np.full((2, nodes), K.INDEX_SENTINEL, np.int32))
        else:
            # k has at most two entries per other cluster on each side: 2N slots, a power of two for the sort.
            self.keys = cuda.to_device(np.zeros((2, _next_pow2(max(2 * n, 2))), np.int64))
            self.counts = cuda.to_device(np.zeros(2, np.int32))
        if not resident:
            self.host_parent = np.arange(nodes, dtype=np.int32)
            self.host_height = np.full(nodes, np.inf, self.dtype)
            self.host_pop = np.ones(nodes, self.dtype)

    # -- stages --------------------------------------------------------------------------
    def matching(self, q):
        """Argmax (two launches), then the merge step on the device or through the host."""
        if self.layout == "soa":
            K.argmax_soa_kernel(self.block)[self.argmax_grid, self.block](self.weights, self.part_value,
                                                                          self.part_index)
            K.argmax_pairs_kernel(self.block)[1, self.block](self.part_value, self.part_index, self.best_value,
                                                             self.best_index)
        else:
            kernel = K.argmax_aos_kernel(self.block)
            index_type = self.pair_indices.dtype
            kernel[self.argmax_grid, self.block](self.pair_values, self.pair_indices, self.part_pairs,
                                                 self.part_pairs.view(index_type))
            kernel[1, self.block](self.part_pairs, self.part_pairs.view(index_type), self.best_pairs,
                                  self.best_pairs.view(index_type))
        if self.resident:
            K.merge_step_kernel[1, 1](self.best_index, self.src, self.dst, self.weights, self.pop, self.parent,
                                      self.height, self.state, self.factors, np.int32(self.n))
            return
        # Host round trip: the winner, its endpoints; the host computes k and the factors.
        m = int(self.best_index.copy_to_host()[0])
        i = int(self.src[m:m + 1].copy_to_host()[0])
        j = int(self.dst[m:m + 1].copy_to_host()[0])
        k = self.n + q
        if self.layout == "soa":
            value = self.weights[m:m + 1].copy_to_host()[0]
        else:  # copy the whole struct (contiguous) rather than a strided one-element view
            value = self.pairs[m:m + 1].copy_to_host()[0, 0]
        pop = self.host_pop
        self.host_height[k] = value
        self.host_parent[i] = self.host_parent[j] = k
        pop[k] = pop[i] + pop[j]
        self.state.copy_to_device(np.array([i, j, k, q + 1], np.int32))
        self.factors.copy_to_device(np.array([pop[i] / pop[k], pop[j] / pop[k]], self.dtype))

    def suppression(self):
        K.suppress_kernel[self.grid, self.block](self.src, self.dst, self.weights, self.state)

    def weighting(self):
        K.weight_relabel_kernel[self.grid, self.block](self.src, self.dst, self.weights, self.state, self.factors)

    def collection(self):
        if self.fusion == "atomic":
            K.fusion_scatter_kernel[self.grid, self.block](self.src, self.dst, self.weights, self.state, self.acc,
                                                           self.first)
        else:
            K.collect_kernel[self.grid, self.block](self.src, self.dst, self.state, self.keys, self.counts)

    def integration(self):
        """Sort k's keys: on the device (segmented), on the host (cpu_sort); nothing for atomics."""
        if self.fusion == "segmented":
            K.sort_keys_kernel[1, self.block](self.keys, self.counts)
        elif self.fusion == "cpu_sort":
            from numba import cuda

            counts = self.counts.copy_to_host()
            entries, starts, offset = [], [], 0
            for side in range(2):
                c = int(counts[side])
                if c == 0:
                    continue
                keys = np.sort(self.keys[side, :c].copy_to_host())  # by neighbour, then by entry index
                neighbour = keys >> 32
                starts.append(offset + np.flatnonzero(np.r_[True, neighbour[1:] != neighbour[:-1]]))
                entries.append(keys & 0xFFFFFFFF)
                offset += c
            self.counts.copy_to_device(np.zeros(2, np.int32))
            self._runs = None
            if offset:
                run_starts = np.concatenate(starts + [[offset]]).astype(np.int32)
                self._runs = (cuda.to_device(np.concatenate(entries).astype(np.int32)), cuda.to_device(run_starts))

    def fusion_step(self):
        if self.fusion == "atomic":
            K.fusion_apply_kernel[self.grid, self.block](self.src, self.dst, self.weights, self.state, self.acc,
                                                         self.first)
            K.fusion_reset_kernel[self.grid, self.block](self.src, self.dst, self.state, self.acc, self.first)
        elif self.fusion == "segmented":
            K.fusion_segmented_kernel(self.block)[1, self.block](self.keys, self.counts, self.src, self.dst,
                                                                 self.weights)
        elif self._runs is not None:
            entries, run_starts = self._runs
            n_runs = run_starts.size - 1
            K.merge_runs_kernel[-(-n_runs // self.block), self.block](entries, run_starts, self.src, self.dst,
                                                                      self.weights)

    # -- the loop ------------------------------------------------------------------------
    def run(self, *, measure_stages=False, max_merges=None):
        """Run the N - nC iterations (or ``max_merges``) and return the Dendrogram."""
        clock = PhaseClock(STAGES, measure_stages)
        n_merges = self.n - self.graph.n_components
        if max_merges is not None:
            n_merges = min(n_merges, int(max_merges))
        steps = (("matching", self.matching), ("suppression", self.suppression), ("weighting", self.weighting),
                 ("collection", self.collection), ("integration", self.integration), ("fusion", self.fusion_step))
        for q in range(n_merges):
            for stage, step in steps:
                mark = clock.start()
                step(q) if stage == "matching" else step()
                clock.stop(stage, mark)
        seconds = clock.finish()
        if self.resident:
            parent, height = self.parent.copy_to_host(), self.height.copy_to_host()
        else:
            parent, height = self.host_parent, self.host_height
        method = "gpu" if self.resident else "gpu_roundtrip"
        return Dendrogram(self.n, parent, height, f"{method}[{self.layout},{self.fusion}]", seconds)
