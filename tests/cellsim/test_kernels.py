"""Are the prefix sum, the scatter and the initial population right on awkward sizes?"""

import numpy as np
import pytest
from numba import cuda

from course_lib import cellsim as cs
from course_lib.cellsim import _core, api, kernels


@pytest.mark.parametrize("n, block", [(1, 2), (3, 4), (4, 4), (5, 4), (17, 4), (70, 4), (33, 32), (200, 32)])
def test_exclusive_scan_matches_cumsum(n, block):
    values = np.random.default_rng(n).integers(0, 3, n).astype(np.int32)
    frame = api._Frame(n, block)
    frame.children.copy_to_device(values)
    total = api.exclusive_scan(frame.children, n, frame.offsets, frame.scan, block)
    out = frame.offsets.copy_to_host()
    np.testing.assert_array_equal(out, np.cumsum(values) - values)
    assert int(total.copy_to_host()[0]) == values.sum()


@pytest.mark.parametrize("window", [(0, 100), (0, 7), (7, 20), (19, 40)])
def test_scatter_writes_a_window_of_the_daughters(window):
    n = 13
    ids = np.arange(100, 100 + n, dtype=np.int64)
    phis = np.linspace(20, 80, n)
    taus = np.zeros(n)
    types = (np.arange(n) % 3).astype(np.int32)
    children = np.where(np.arange(n) % 4 == 1, 0, 2).astype(np.int32)
    offsets = (np.cumsum(children) - children).astype(np.int32)
    times = np.arange(n, dtype=np.float64) + 0.5
    total = int(children.sum())
    start, stop = window[0], min(window[1], total)
    size = max(stop - start, 0)
    out = (np.full(size, -1, np.int64), np.zeros(size), np.zeros(size), np.zeros(size, np.int32))
    kernels.scatter_daughters_kernel[1, 16](ids, phis, taus, types, children, offsets, times, n, start, stop, *out)
    mothers = np.repeat(np.arange(n), children)
    expect_ids = 2 * ids[mothers] + np.tile([0, 1], total // 2)
    np.testing.assert_array_equal(out[0], expect_ids[start:stop])
    np.testing.assert_array_equal(out[1], phis[mothers][start:stop] / 2)
    np.testing.assert_array_equal(out[2], times[mothers][start:stop])
    np.testing.assert_array_equal(out[3], types[mothers][start:stop])


def test_init_kernel_builds_the_initial_population(h0, thesis_types):
    n = h0.n_cells
    cells = (np.zeros(n, np.int64), np.zeros(n), np.ones(n), np.zeros(n, np.int32))
    kernels.init_cells_kernel[3, 32](h0.cumulative, h0.fluorescence, thesis_types.params(), np.uint64(5),
                                     np.uint64(0), 0, n, *cells)
    np.testing.assert_array_equal(cells[0], np.arange(n))
    np.testing.assert_array_equal(cells[1], h0.cell_fluorescence())
    assert np.all(cells[2] == 0)
    core = _core.build("python")
    expected = [core.initial_type(core.cell_uniform(j, 0, 1, 5, 0), thesis_types.params()) for j in range(n)]
    np.testing.assert_array_equal(cells[3], expected)


def test_fate_kernel_counts_recorded_cells_by_generation_and_type(h0, thesis_types):
    problem = api.prepare_problem(h0, thesis_types, tau_max=60.0, phi_min=11.0, seed=2)
    n = problem.n_cells
    core = _core.build("python")
    phis = h0.cell_fluorescence()
    types = np.array([core.initial_cell(j, h0.cumulative, h0.fluorescence, problem.params, 2, 0)[1]
                      for j in range(n)], np.int32)
    hist = np.zeros(problem.n_slots, np.int64)
    level_counts = np.zeros((problem.depth + 1, 3), np.int64)
    children, times = np.zeros(n, np.int32), np.zeros(n)
    kernels.fate_histogram_kernel(problem.n_slots)[3, 32](
        np.arange(n, dtype=np.int64), phis, np.zeros(n), types, n, 1, problem.params, problem.table, np.uint64(2),
        np.uint64(0), 60.0, 11.0, problem.edges, children, times, hist, level_counts)
    fates = [core.fate(j, 1, phis[j], 0.0, types[j], problem.params, problem.table, 2, 0, 60.0, 11.0)
             for j in range(n)]
    recorded = np.array([f[0] == _core.RECORD for f in fates])
    np.testing.assert_array_equal(children, [2 if f[0] == _core.DIVIDE else 0 for f in fates])
    np.testing.assert_array_equal(times, [f[1] for f in fates])
    assert level_counts[1].tolist() == np.bincount(types[recorded], minlength=3).tolist()
    assert level_counts.sum() == level_counts[1].sum() == hist.sum()


def test_device_arrays_work_too(h0, thesis_types):
    """The same kernels take device arrays (what the simulators pass)."""
    d = cuda.to_device(np.array([2, 0, 2, 2, 0], np.int32))
    frame = api._Frame(5, 2)
    total = api.exclusive_scan(d, 5, frame.offsets, frame.scan, 2)
    assert frame.offsets.copy_to_host().tolist() == [0, 2, 2, 4, 6] and int(total.copy_to_host()[0]) == 6


def test_kernel_factories_refuse_bad_sizes():
    with pytest.raises(ValueError, match="between 2 and 1024"):
        kernels.scan_block_kernel(1)
    with pytest.raises(ValueError, match="between 2 and 8192"):
        kernels.fate_histogram_kernel(1)
    assert cs.default_block() in (32, 256)
