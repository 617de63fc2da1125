"""Are the prefix sum, the scatter and the initial population right on awkward sizes? Are the
counter-based random numbers and the per-cell rules the kernels call right, and the same on every target?"""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from numba import cuda
from scipy import stats

from course_lib import cellsim as cs
from course_lib import device
from course_lib.cellsim import _core, api, kernels


@pytest.mark.parametrize("n, block", [(1, 2), (3, 4), (4, 4), (5, 4), (17, 4), (70, 4), (33, 32), (200, 32)])
def test_exclusive_scan_matches_cumsum(n, block):
    values = np.random.default_rng(n).integers(0, 3, n).astype(np.int32)
    frame = api.BatchArrays(n, block)
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
    frame = api.BatchArrays(5, 2)
    total = api.exclusive_scan(d, 5, frame.offsets, frame.scan, 2)
    assert frame.offsets.copy_to_host().tolist() == [0, 2, 2, 4, 6] and int(total.copy_to_host()[0]) == 6


def test_kernel_factories_refuse_bad_sizes():
    with pytest.raises(ValueError, match="between 2 and 1024"):
        kernels.scan_block_kernel(1)
    with pytest.raises(ValueError, match="between 2 and 8192"):
        kernels.fate_histogram_kernel(1)
    assert cs.default_block() in (32, 256)


# ----------------------------------------------------------------------------------------------
# The per-cell rules and counter-based random numbers (course_lib.cellsim._core, kernels.cell_rules)
# ----------------------------------------------------------------------------------------------

# Random123's known-answer vectors for Philox4x32-10: counter, key, output.
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


class OnDevice:
    """The ``cuda`` target's rules called as a GPU allows: from a one-thread kernel (a device function called
    from the host is refused on a GPU, "Kernel launch configuration was not specified", and its Python body,
    run on the host, would multiply with libdevice's ``dmul_rn`` stub, which returns None). The simulator
    calls device functions from the host, and there the suite does so: a launch of these kernels first costs
    the simulator's typing check (about 20 s on 2 cores for the three)."""


    def __init__(self, rules):
        philox, uniform, cell_uniform, timer = rules.philox, rules.uniform, rules.cell_uniform, rules.division_timer

        @cuda.jit
        def philox_kernel(out, c0, c1, c2, c3, k0, k1):
            r0, r1, r2, r3 = philox(c0, c1, c2, c3, k0, k1)
            out[0], out[1], out[2], out[3] = r0, r1, r2, r3

        @cuda.jit
        def uniform_kernel(out, a, b):
            out[0] = uniform(a, b)

        @cuda.jit
        def cell_kernel(out, cell_id, generation, stream, k0, k1, mean, std, cdf_at_zero, table):
            u = cell_uniform(cell_id, generation, stream, k0, k1)
            out[0] = u
            out[1] = timer(u, mean, std, cdf_at_zero, table)

        self._kernels = philox_kernel, uniform_kernel, cell_kernel

    def philox(self, *words):
        out = np.zeros(4, np.uint64)
        self._kernels[0][1, 1](out, *words)
        return tuple(out)

    def uniform(self, a, b):
        out = np.zeros(1, np.float64)
        self._kernels[1][1, 1](out, a, b)
        return out[0]

    def cell_and_timer(self, cell_id, generation, stream, k0, k1, mean, std, cdf_at_zero, table):
        """``cell_uniform`` and the ``division_timer`` of it, in one launch."""
        out = np.zeros(2, np.float64)
        self._kernels[2][1, 1](out, np.int64(cell_id), np.int64(generation), np.int64(stream), np.int64(k0),
                               np.int64(k1), mean, std, cdf_at_zero, table)
        return float(out[0]), float(out[1])


@pytest.fixture(scope="module", params=["python", "cpu", "cuda"])
def core(request):
    rules = kernels.cell_rules(request.param)
    return OnDevice(rules) if request.param == "cuda" and not device.is_simulator() else rules


@pytest.mark.parametrize("counter, key, expected", KAT)
def test_philox_matches_the_known_answers_on_every_target(core, counter, key, expected):
    out = core.philox(*map(np.uint64, counter), *map(np.uint64, key))
    assert tuple(int(v) for v in out) == expected


def test_uniform_covers_zero_to_one_exclusive(core):
    assert core.uniform(np.uint64(0), np.uint64(0)) == 0.0
    top = core.uniform(np.uint64(0xFFFFFFFF), np.uint64(0xFFFFFFFF))
    assert top < 1.0 and top == 1.0 - 2.0**-53


def test_every_target_gives_the_same_bits_for_the_same_cell():
    table = _core.normal_table()
    targets = [_core.build(t) for t in ("python", "cpu", "cuda")]
    device_rules = None if device.is_simulator() else OnDevice(targets.pop())
    for cell_id in (0, 1, 2**32 + 5, 2**62 + 3):
        values = set()
        for core in targets:
            u = core.cell_uniform(cell_id, 7, _core.STREAM_TIMER, 12345, 678)
            values.add((float(u), float(core.division_timer(u, 48.33, 21.6, 0.0126, table))))
        if device_rules is not None:
            values.add(device_rules.cell_and_timer(cell_id, 7, _core.STREAM_TIMER, 12345, 678, 48.33, 21.6, 0.0126,
                                                   table))
        assert len(values) == 1


def test_the_stream_changes_with_id_generation_stream_and_seed():
    core = _core.build("python")
    base = core.cell_uniform(5, 2, 0, 1, 0)
    for args in [(4, 2, 0, 1, 0), (5, 3, 0, 1, 0), (5, 2, 1, 1, 0), (5, 2, 0, 2, 0), (5, 2, 0, 1, 1)]:
        assert core.cell_uniform(*args) != base


def test_normal_table_is_increasing_with_matching_tails():
    q = _core.normal_table()
    assert q.size == _core.TABLE_SIZE + 1
    assert np.all(np.diff(q) > 0)
    assert q[0] == -q[-1]
    assert abs(q[_core.TABLE_SIZE // 2]) < 1e-12
    # The first interval's mean equals the normal's mean below q[1].
    q1 = q[1]
    assert (q[0] + q1) / 2 == pytest.approx(-stats.norm.pdf(q1) / stats.norm.cdf(q1), rel=1e-12)


def _draws(mean, std, n=20000):
    core = _core.build("cpu")
    table = _core.normal_table()
    cdf0 = stats.norm.cdf(-mean / std) if std > 0 else 0.0
    return np.array([core.division_timer(core.cell_uniform(i, 1, 0, 99, 0), mean, std, cdf0, table)
                     for i in range(n)])


@pytest.mark.parametrize("mean, std", [(48.33, 21.6), (86.3, 26.8), (5.0, 10.0)])
def test_division_times_follow_the_truncated_normal(mean, std):
    """Kolmogorov-Smirnov against SciPy's truncated normal; p >= 0.01 on 20,000 draws."""
    x = _draws(mean, std)
    assert np.all(x > 0)
    truncated = stats.truncnorm(-mean / std, np.inf, loc=mean, scale=std)
    assert stats.kstest(x, truncated.cdf).pvalue >= 0.01


def test_a_zero_std_gives_exactly_the_mean():
    core = _core.build("python")
    table = _core.normal_table()
    for i in range(20):
        assert core.division_timer(core.cell_uniform(i, 0, 0, 3, 0), 30.0, 0.0, 0.0, table) == 30.0


def test_initial_cells_follow_the_histogram_and_the_proportions():
    from course_lib.cellsim import THESIS_TYPES, lognormal_histogram

    core = _core.build("cpu")
    h0 = lognormal_histogram(3000, seed=4)
    params = THESIS_TYPES.params()
    cells = [core.initial_cell(j, h0.cumulative, h0.fluorescence, params, 11, 0) for j in range(h0.n_cells)]
    np.testing.assert_array_equal([c[0] for c in cells], h0.cell_fluorescence())
    counts = np.bincount([c[1] for c in cells], minlength=3)
    assert stats.chisquare(counts, THESIS_TYPES.proportions * h0.n_cells).pvalue >= 0.01


def test_bin_index_agrees_with_searchsorted_at_and_between_edges():
    from course_lib.cellsim._result import bin_counts

    core = _core.build("python")
    edges = np.array([1.0, 2.0, 4.0, 8.0])
    values = np.array([0.5, 1.0, 1.5, 2.0, 3.99, 4.0, 8.0, 8.5])
    slots = [core.bin_index(v, edges) for v in values]
    assert slots == [3, 0, 0, 1, 1, 2, 2, 3]
    counts, outside = bin_counts(values, edges)
    assert counts.tolist() == [2, 2, 2] and outside == 2


def test_kernels_compile_without_fused_multiply_adds():
    """The PTX of every cellsim kernel has no fma.rn.f64: products go through dmul_rn."""
    code = textwrap.dedent("""
        import course_lib
        from course_lib import device
        device.configure(force="gpu")
        from numba import cuda
        from course_lib.registry import all_kernels
        for spec in all_kernels():
            if spec.name.startswith("cellsim."):
                ptx, _ = cuda.compile_ptx(spec.get_pyfunc(), spec.signature, cc=(9, 0))
                print(spec.name, ptx.count("fma.rn.f64"), ptx.count("mul.rn.f64"))
    """)
    env = {"COURSE_BACKEND": "gpu", "NUMBA_ENABLE_CUDASIM": "0"}
    import os

    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **env})
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = dict((line.split()[0], line.split()[1:]) for line in proc.stdout.splitlines())
    assert "cellsim.fate_histogram_kernel[slots=129]" in rows and "cellsim.tree_level_kernel" in rows
    assert all(fma == "0" for fma, _ in rows.values()), rows
    assert int(rows["cellsim.tree_level_kernel"][1]) >= 3  # the products of the timer are mul.rn


def test_cell_rules_name_their_targets():
    assert kernels.cell_rules("python").cell_uniform(1, 0, kernels.STREAM_TIMER, 0, 0) == \
        _core.build("python").cell_uniform(1, 0, _core.STREAM_TIMER, 0, 0)
    with pytest.raises(ValueError, match="target"):
        kernels.cell_rules("gpu")
