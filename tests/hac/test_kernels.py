"""Do the kernels, in every layout and fusion, make exactly the CPU version's merges?

In the simulator the kernels do the same float operations in the same order as the
compiled CPU version, so the trees must be identical, ties included.
"""

import numpy as np
import pytest
from numba import cuda

from course_lib import hac
from course_lib.hac import data, kernels
from course_lib.sim import check

VARIANTS = [("gpu", "segmented", "soa"), ("gpu", "atomic", "soa"), ("gpu", "segmented", "aos"),
            ("gpu_roundtrip", "cpu_sort", "soa"), ("gpu_roundtrip", "atomic", "aos"),
            ("gpu_roundtrip", "segmented", "soa")]

GRAPHS = {
    "one": lambda: data.path_graph(1),
    "two": lambda: data.path_graph(2),
    "path": lambda: data.path_graph(7),
    "star": lambda: data.star_graph(6),
    "components_and_isolated": lambda: data.components_graph((4, 3), n_isolated=2, seed=1),
    "ties": lambda: data.tied_graph(9, density=0.5, levels=2, seed=4),
}


@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("method, fusion, layout", VARIANTS)
def test_gpu_versions_match_the_cpu_version(method, fusion, layout, name):
    g = GRAPHS[name]()
    expected = hac.cluster(g, "cpu", dtype=np.float32)
    got = hac.cluster(g, method, fusion=fusion, layout=layout)
    assert np.array_equal(got.parent, expected.parent)
    assert np.array_equal(got.height, expected.height)


@pytest.mark.parametrize("fusion", ["segmented", "atomic"])
def test_float64_and_a_block_that_does_not_divide_m(fusion):
    g = data.random_graph(11, 0.4, seed=9)
    assert g.n_entries % 8
    expected = hac.cluster(g, "cpu", dtype=np.float64)
    got = hac.cluster(g, "gpu", dtype=np.float64, fusion=fusion, block=8)
    assert np.array_equal(got.parent, expected.parent) and np.array_equal(got.height, expected.height)


def _run(kernel, grid, block, *args):
    kernel[grid, block](*args)
    return args


@pytest.mark.parametrize("m", [1, 31, 33, 70])
@pytest.mark.parametrize("layout", ["soa", "aos"])
def test_argmax_takes_the_lowest_index_of_ties(m, layout):
    from course_lib.hac.profiling import argmax_launch

    rng = np.random.default_rng(m)
    w = rng.random(m).astype(np.float32)
    w[rng.random(m) < 0.2] = -np.inf  # tombstones
    if m > 3:
        w[[m // 3, m - 1]] = 5.0
    kernel, grid, block, args = argmax_launch(w, layout, block=16)
    kernel[grid, block](*args)
    if layout == "soa":
        values, indices = args[1], args[2]
        finish = kernels.argmax_pairs_kernel(16)
        out_v, out_i = np.zeros(1, np.float32), np.zeros(1, np.int32)
        finish[1, 16](values, indices, out_v, out_i)
    else:
        from numba import cuda

        out = cuda.to_device(np.zeros((1, 2), np.float32))
        kernel[1, 16](args[2], args[3], out, out.view(np.int32))
        out_v, out_i = out[:, 0].copy_to_host(), out.view(np.int32)[:, 1].copy_to_host()
    assert out_i[0] == np.argmax(w) and out_v[0] == w.max()


def test_sort_kernel_sorts_both_sides():
    rng = np.random.default_rng(0)
    keys = np.zeros((2, 64), np.int64)
    keys[0, :37] = rng.integers(0, 2**40, 37)
    keys[1, :5] = rng.integers(0, 2**40, 5)
    expected = [np.sort(keys[0, :37]), np.sort(keys[1, :5])]
    kernels.sort_keys_kernel[1, 8](keys, np.array([37, 5], np.int32))
    assert np.array_equal(keys[0, :37], expected[0]) and np.array_equal(keys[1, :5], expected[1])


def test_segmented_fusion_sums_runs_of_any_length_across_chunks():
    # Side 0: neighbour 7 has a run of 6 entries crossing the 4-thread chunks; neighbour 9 one entry.
    m = 12
    weights = np.arange(1, m + 1, dtype=np.float32)
    src, dst = np.zeros(m, np.int32), np.zeros(m, np.int32)
    runs = {7: [1, 2, 4, 5, 8, 10], 9: [3], 11: [0, 6]}
    keys = np.zeros((2, 16), np.int64)
    flat = sorted((l << 32) | e for l, entries in runs.items() for e in entries)
    keys[0, :len(flat)] = flat
    counts = np.array([len(flat), 0], np.int32)
    expected = weights.copy()
    for entries in runs.values():
        expected[entries[0]] = weights[entries].sum()
        expected[entries[1:]] = -np.inf
    kernels.fusion_segmented_kernel(4)[1, 4](keys, counts, src, dst, weights)
    assert np.array_equal(weights, expected)
    assert counts.tolist() == [0, 0]  # ready for the next collection
    assert src[4] == -1 and src[1] == 0


def test_merge_runs_kernel_is_the_thesis_fusion():
    grid, block, args = kernels.merge_runs_kernel and kernels._example_merge_runs()
    entries, starts, src, dst, w = args
    expected = w.copy()
    for r in range(len(starts) - 1):
        run = entries[starts[r]:starts[r + 1]]
        expected[run[0]] = w[run].sum()
        expected[run[1:]] = -np.inf
    kernels.merge_runs_kernel[grid, block](*args)
    assert np.array_equal(w, expected)


# The reference kernels' own race checks run in tests/sim/test_reference_kernels.py (their examples).


@cuda.jit
def racy_scatter(src, dst, weights, k, acc):
    e = cuda.grid(1)
    if e < weights.shape[0] and src[e] == k:
        acc[dst[e]] += weights[e]  # read-modify-write of a shared slot: the scatter-add race


def test_fusion_without_atomics_is_a_race():
    src = np.array([9, 9, 9, 2], np.int32)
    dst = np.array([2, 4, 2, 9], np.int32)
    report = check(racy_scatter, 1, 32, src, dst, np.ones(4, np.float32), np.int32(9), np.zeros(10, np.float32))
    assert not report.ok
