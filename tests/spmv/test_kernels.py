"""Unit 2 kernels against the float64 SciPy reference, on awkward matrices on purpose."""

import numpy as np
import pytest
import scipy.sparse as sp

from course_lib import spmv
from course_lib.spmv import kernels

KERNEL_METHODS = ["csr_scalar", "csr_vector", "coo", "coo_atomic", "ell", "hyb", "merge_path"]
BLOCK = 32
needs_shuffles = pytest.mark.skipif(
    not spmv.has_warp_shuffles(),
    reason="cuda.shfl_down_sync is missing in this CUDA simulator (the course's simulator tools add it)",
)


def method_param(method):
    return pytest.param(method, marks=needs_shuffles) if method == "csr_vector" else method


ALL_KERNELS = [method_param(m) for m in KERNEL_METHODS]


def rtol_for(dtype):
    # float32 sums of up to ~100 terms in another order than SciPy's float64 loop.
    return 2e-6 if np.dtype(dtype) == np.float64 else 1e-5


def assert_matches_reference(y, A, x):
    ref = spmv.spmv_reference(A, x)
    assert y.shape == ref.shape
    # Error bound relative to sum |a_ij x_j| of each row, the scale of its rounding error;
    # products below the smallest normal number underflow to 0 in the working precision.
    scale = np.abs(sp.csr_matrix(A, dtype=np.float64)) @ np.abs(np.asarray(x, dtype=np.float64))
    tol = rtol_for(y.dtype) * scale + np.finfo(y.dtype).tiny
    bad = np.abs(y.astype(np.float64) - ref) > tol
    assert not bad.any(), f"rows {np.flatnonzero(bad)[:10]} differ: {y[bad][:5]} vs {ref[bad][:5]}"


def random_x(n, dtype, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, n).astype(dtype)


@pytest.mark.parametrize("name", sorted(spmv.MATRICES))
@pytest.mark.parametrize("method", ALL_KERNELS + ["cpu", "scipy"])
def test_every_family_matches_scipy_float32(method, name):
    A = spmv.make_matrix(name, "sim", seed=3)
    if method in ("coo", "hyb") and A.nnz > 400:
        A = A[: A.shape[0] // 2]  # the segmented scan is the simulator's slowest kernel
    x = random_x(A.shape[1], np.float32)
    y = spmv.spmv(A, x, method=method, block=BLOCK if method in KERNEL_METHODS else None)
    assert y.dtype == (np.float64 if method == "scipy" else np.float32)
    assert_matches_reference(y, A, x)


@pytest.mark.parametrize("name", ["power_law", "empty_rows_long_row", "laplacian_27pt"])
@pytest.mark.parametrize("method", ALL_KERNELS + ["cpu"])
def test_float64_matches_scipy(method, name):
    A = spmv.make_matrix(name, "sim", seed=5, dtype=np.float64)
    x = random_x(A.shape[1], np.float64, seed=1)
    y = spmv.spmv(A, x, method=method, block=BLOCK if method in KERNEL_METHODS else None)
    assert y.dtype == np.float64
    assert_matches_reference(y, A, x)


@pytest.mark.parametrize("method", ALL_KERNELS + ["cpu"])
def test_one_by_one(method):
    y = spmv.spmv(sp.csr_matrix(np.array([[2.5]], np.float32)), np.array([-2.0], np.float32), method=method)
    np.testing.assert_array_equal(y, np.array([-5.0], np.float32))


@pytest.mark.parametrize("method", ALL_KERNELS + ["cpu"])
@pytest.mark.parametrize("shape", [(5, 7), (1, 1), (0, 3), (3, 0)])
def test_no_nonzeros_gives_zeros(method, shape):
    A = sp.csr_matrix(shape, dtype=np.float32)
    y = spmv.spmv(A, np.ones(shape[1], np.float32), method=method)
    assert y.shape == (shape[0],) and y.dtype == np.float32
    np.testing.assert_array_equal(y, 0)


@pytest.mark.parametrize("method", ALL_KERNELS)
@pytest.mark.parametrize("n_rows", [BLOCK - 1, BLOCK + 1, 37])
def test_rows_not_a_multiple_of_the_block(method, n_rows):
    A = spmv.random_balanced(n_rows, 3, n_cols=11, seed=n_rows)
    x = random_x(11, np.float32)
    assert_matches_reference(spmv.spmv(A, x, method=method, block=BLOCK), A, x)


@pytest.mark.parametrize("method", ALL_KERNELS)
def test_rows_longer_than_a_warp_and_a_block(method):
    # Row 1 spans three COO blocks of 32 (a run crossing block boundaries), row 3 is empty.
    lengths = [2, 3 * BLOCK + 5, 1, 0, BLOCK + 1]
    rng = np.random.default_rng(7)
    rows = np.repeat(np.arange(5), lengths)
    cols = np.concatenate([rng.choice(120, n, replace=False) for n in lengths])
    A = sp.coo_matrix((rng.uniform(-1, 1, rows.size), (rows, cols)), shape=(5, 120)).astype(np.float32)
    x = random_x(120, np.float32)
    y = spmv.spmv(A, x, method=method, block=BLOCK)
    assert_matches_reference(y, A, x)
    assert y[3] == 0


@pytest.mark.parametrize("method", ["coo", "hyb"])
@pytest.mark.parametrize("block", [1, 7, 64])
def test_segmented_scan_on_odd_block_sizes(method, block):
    A = spmv.empty_rows_and_long_row(20, 30, seed=2)
    x = random_x(20, np.float32)
    assert_matches_reference(spmv.spmv(A, x, method=method, block=block), A, x)


@pytest.mark.parametrize("items", [1, 2, 3, 8])
@pytest.mark.parametrize("block", [1, 2, 7, 32])
def test_merge_path_any_share_and_block(monkeypatch, items, block):
    # Rows longer than a block's share (carries across several blocks), runs of empty rows, a last empty row.
    lengths = [0, 0, 1, 70, 0, 3, 0, 0, 0, 2, 31, 1, 0]
    rng = np.random.default_rng(items * 100 + block)
    rows = np.repeat(np.arange(len(lengths)), lengths)
    cols = np.concatenate([rng.choice(80, n, replace=False) for n in lengths])
    A = sp.csr_matrix((rng.uniform(-1, 1, rows.size), (rows, cols)), shape=(len(lengths), 80))
    monkeypatch.setattr(spmv.api, "ITEMS_PER_THREAD", items)
    x = random_x(80, np.float32, seed=block)
    assert_matches_reference(spmv.spmv(A, x, method="merge_path", block=block), A, x)


@pytest.mark.parametrize("n_rows", [1, 2, 13, 31])  # a prime number of steps and a row per step
def test_merge_path_on_a_diagonal_and_an_empty_matrix(n_rows):
    A = sp.identity(n_rows, format="csr", dtype=np.float32) * 3
    x = random_x(n_rows, np.float32, seed=n_rows)
    assert_matches_reference(spmv.spmv(A, x, method="merge_path"), A, x)
    empty = sp.csr_matrix((n_rows, 5), dtype=np.float32)
    np.testing.assert_array_equal(spmv.spmv(empty, np.ones(5, np.float32), method="merge_path"), 0)


@pytest.mark.parametrize("name,expected", [("power_law", "merge_path"), ("empty_rows_long_row", "merge_path"),
                                           ("laplacian_5pt", "hyb"), ("laplacian_27pt", "hyb"),
                                           ("random_balanced", "hyb")])
def test_auto_takes_merge_path_for_irregular_rows(name, expected):
    A = spmv.make_matrix(name, "sim", seed=1)
    assert spmv.choose_method(A) == expected
    op = spmv.prepare(A)
    assert op.method == expected
    x = random_x(A.shape[1], np.float32)
    assert_matches_reference(spmv.spmv(A, x), A, x)


def test_merge_path_searches_the_path():
    # Rows of lengths 2, 0, 3: the path is nz, nz, end0, end1, nz, nz, nz, end2 (8 steps).
    indptr = np.array([0, 2, 2, 5], np.int32)
    expected = [(0, 0), (0, 1), (0, 2), (1, 2), (2, 2), (2, 3), (2, 4), (2, 5), (3, 5)]
    search = kernels.merge_path_search.py_func
    assert [search(d, indptr, 3, 5) for d in range(9)] == expected


@pytest.mark.parametrize("K", [0, 1, 2, 5, 40])
def test_hyb_any_width(K):
    A = spmv.power_law_rows(30, 4, 2.1, seed=4)
    x = random_x(30, np.float32)
    assert_matches_reference(spmv.spmv(A, x, method="hyb", K=K, block=BLOCK), A, x)


def test_extreme_but_finite_values():
    A = sp.csr_matrix(np.array([[1e30, 1e-30, 0], [0, -1e30, 1e30], [3e-38, 0, 0]], np.float32))
    x = np.array([1e-10, 1e5, 1.0], np.float32)
    for method in ["csr_scalar", "ell", "hyb", "coo_atomic", "cpu"]:
        assert_matches_reference(spmv.spmv(A, x, method=method), A, x)


def test_any_input_format_and_dtype_conversion():
    dense = np.array([[0, 2, 0], [1, 0, 3]])
    x = np.array([1, 2, 3])
    for A in (sp.coo_matrix(dense), sp.csc_matrix(dense), sp.lil_matrix(dense), sp.csr_array(dense)):
        y = spmv.spmv(A, x, method="csr_scalar")
        assert y.dtype == np.float64
        np.testing.assert_array_equal(y, [4.0, 10.0])
    y = spmv.spmv(sp.csr_matrix(dense.astype(np.float32)), x.astype(np.float64), method="ell")
    assert y.dtype == np.float64  # float32 matrix with a float64 vector computes in float64


def test_duplicate_entries_are_summed():
    A = sp.coo_matrix(([1.0, 2.0, 4.0], ([0, 0, 1], [1, 1, 0])), shape=(2, 2)).astype(np.float32)
    for method in ["coo", "hyb", "csr_scalar"]:
        np.testing.assert_array_equal(spmv.spmv(A, [1.0, 1.0], method=method), [3.0, 4.0])


def test_device_array_in_device_array_out():
    from numba import cuda

    A = spmv.laplacian("3pt", 9)
    d_x = cuda.to_device(np.ones(9, np.float32))
    d_y = spmv.spmv(A, d_x, method="csr_scalar")
    assert spmv.is_device_array(d_y)
    np.testing.assert_array_equal(d_y.copy_to_host(), [1, 0, 0, 0, 0, 0, 0, 0, 1])
    assert spmv.is_device_array(spmv.spmv(A, d_x, method="cpu"))


def test_prepared_matrix_reused():
    A = spmv.banded_fem(20, 3, seed=1)
    op = spmv.prepare(A, "hyb", block=BLOCK)
    assert op.K == spmv.bell_garland_k(A) and "hyb" in repr(op)
    for seed in range(2):
        x = random_x(20, np.float32, seed)
        assert_matches_reference(op(x), A, x)


@needs_shuffles
def test_vector_kernel_directly_with_whole_warps():
    from numba import cuda

    A = spmv.power_law_rows(6, 20, 2.1, n_cols=100, seed=9)
    x = random_x(100, np.float32)
    y = cuda.device_array(6, np.float32)
    kernels.csr_vector_kernel[3, 64](A.indptr, A.indices, A.data, x, y)
    assert_matches_reference(y.copy_to_host(), A, x)


@pytest.mark.skipif(spmv.has_warp_shuffles(), reason="only meaningful where shuffles are missing")
def test_vector_method_without_shuffles_says_why():
    with pytest.raises(RuntimeError, match="shfl_down_sync"):
        spmv.spmv(spmv.laplacian("3pt", 4), np.ones(4), method="csr_vector")


BAD_CASES = [
    (np.eye(3), np.ones(3), {}, "SciPy sparse matrix"),
    (sp.csr_matrix(np.eye(3, dtype=complex)), np.ones(3), {}, "real numbers"),
    (sp.csr_matrix(np.eye(3)), np.ones(4), {}, r"x must have shape \(3,\)"),
    (sp.csr_matrix(np.eye(3)), np.ones((3, 1)), {}, r"x must have shape \(3,\)"),
    (sp.csr_matrix(np.eye(3)), np.array(["a", "b", "c"]), {}, "x must (be a numeric array|have a real)"),
    (sp.csr_matrix(np.eye(3)), np.ones(3) * 1j, {}, "x must (be a numeric array|have a real)"),
    (sp.csr_matrix(np.eye(3)), np.ones(3), {"method": "gpu"}, "method must be one of"),
    (sp.csr_matrix(np.eye(3)), np.ones(3), {"method": "csr_scalar", "K": 2}, "K only applies"),
    (sp.csr_matrix(np.eye(3)), np.ones(3), {"method": "hyb", "K": -1}, "non-negative integer"),
    (sp.csr_matrix(np.eye(3)), np.ones(3), {"method": "hyb", "K": 1.5}, "non-negative integer"),
    (sp.csr_matrix(np.eye(3)), np.ones(3), {"method": "ell", "block": 0}, "between 1 and 1024"),
    (sp.csr_matrix(np.eye(3)), np.ones(3), {"method": "ell", "block": 2048}, "between 1 and 1024"),
    (sp.csr_matrix(np.eye(3)), np.ones(3), {"method": "csr_vector", "block": 48}, "multiple of 32"),
    (sp.csr_matrix(np.eye(3)), np.ones(3), {"method": "cpu", "block": 32}, "only apply to the kernel"),
]


@pytest.mark.parametrize("A,x,kwargs,message", BAD_CASES)
def test_bad_input_is_a_clear_error(A, x, kwargs, message):
    with pytest.raises(ValueError, match=message):
        spmv.spmv(A, x, **kwargs)


def test_ell_refuses_hopeless_padding():
    A = spmv.empty_rows_and_long_row(3000, 3000, empty_fraction=1.0, seed=0)
    with pytest.raises(ValueError, match="use method='hyb'"):
        spmv.ell_split(A)


def test_kernel_factory_rejects_impossible_blocks():
    with pytest.raises(ValueError, match="between 1 and 1024"):
        kernels.coo_segmented_kernel(0)
    with pytest.raises(ValueError, match="between 1 and 1024"):
        kernels.coo_segmented_kernel(1025)


# ---- from test_race_check.py

import numpy as np


import pytest


from numba import cuda, int32


from course_lib import spmv


from course_lib.sim import check


from course_lib.spmv import kernels


LENGTHS = [2, 37, 1, 0, 17]


@pytest.fixture(scope="module")
def matrix():
    import scipy.sparse as sp

    rng = np.random.default_rng(11)
    rows = np.repeat(np.arange(len(LENGTHS)), LENGTHS)
    cols = np.concatenate([rng.choice(40, n, replace=False) for n in LENGTHS])
    A = sp.coo_matrix((rng.uniform(-1, 1, rows.size), (rows, cols)), shape=(len(LENGTHS), 40))
    return spmv.as_csr(A, np.float32)


def _x():
    return np.random.default_rng(0).uniform(-1, 1, 40).astype(np.float32)


def _y():
    return np.zeros(len(LENGTHS), np.float32)


def test_csr_scalar_is_clean(matrix):
    assert check(kernels.csr_scalar_kernel, 1, 8, matrix.indptr, matrix.indices, matrix.data, _x(), _y()).ok


def test_csr_vector_is_clean(matrix):
    report = check(kernels.csr_vector_kernel, 3, 64, matrix.indptr, matrix.indices, matrix.data, _x(), _y())
    assert report.ok, str(report)


@pytest.mark.parametrize("seed", [None, 3])
def test_coo_segmented_is_clean(matrix, seed):
    rows = np.repeat(np.arange(matrix.shape[0], dtype=np.int32), np.diff(matrix.indptr))
    report = check(kernels.coo_segmented_kernel(16), -(-matrix.nnz // 16), 16, rows, matrix.indices, matrix.data,
                   _x(), _y(), seed=seed)
    assert report.ok, str(report)


def test_coo_atomic_and_zero_are_clean(matrix):
    rows = np.repeat(np.arange(matrix.shape[0], dtype=np.int32), np.diff(matrix.indptr))
    assert check(kernels.coo_atomic_kernel, 4, 16, rows, matrix.indices, matrix.data, _x(), _y()).ok
    assert check(kernels.zero_kernel, 1, 8, _y()).ok


def test_ell_is_clean(matrix):
    h = spmv.hyb_split(matrix, K=2)
    assert check(kernels.ell_kernel, 1, 8, h.ell_indices, h.ell_data, _x(), _y()).ok


@pytest.mark.parametrize("items,block", [(1, 8), (3, 4), (5, 8)])
def test_merge_path_and_fixup_are_clean(matrix, items, block):
    steps = matrix.shape[0] + matrix.nnz
    blocks = -(-steps // (items * block))
    y = _y()
    carry_rows, carry_values = np.zeros(blocks, np.int32), np.zeros(blocks, np.float32)
    report = check(kernels.merge_path_kernel(block), blocks, block, matrix.indptr, matrix.indices, matrix.data, _x(),
                   y, np.int64(items), carry_rows, carry_values)
    assert report.ok, str(report)
    report = check(kernels.merge_path_fixup_kernel, 1, blocks, carry_rows, carry_values, y)
    assert report.ok, str(report)
    assert_matches_reference(y, matrix, _x())


def test_checker_catches_a_scan_without_its_middle_barrier():
    """Dropping the barrier between reading a neighbour and writing is a race the checker names."""
    block = 8

    @cuda.jit
    def scan_missing_barrier(rows, cols, data, x, y):
        products = cuda.shared.array(block, y.dtype)
        segment = cuda.shared.array(block, int32)
        t = cuda.threadIdx.x
        products[t] = data[t] * x[cols[t]]
        segment[t] = rows[t]
        cuda.syncthreads()
        offset = 1
        while offset < block:
            if t >= offset and segment[t - offset] == segment[t]:
                products[t] += products[t - offset]  # reads and writes in the same barrier interval
            cuda.syncthreads()
            offset *= 2
        if t == block - 1 or segment[t + 1] != segment[t]:
            cuda.atomic.add(y, segment[t], products[t])

    rows = np.zeros(block, np.int32)
    report = check(scan_missing_barrier, 1, block, rows, np.arange(block, dtype=np.int32),
                   np.ones(block, np.float32), np.ones(block, np.float32), np.zeros(1, np.float32))
    assert "race" in report.kinds()


def _plan_steps(plan):
    return plan.rows.astype(np.int64) + plan.nnz


@pytest.mark.parametrize("lengths,tile", [
    ([0, 0, 1, 70, 0, 3, 0, 0, 0, 2, 31, 1, 0], 16),  # a row over four tiles, one over two, runs of empty rows
    ([5] * 23, 7),  # every boundary inside a row of 5 > 7 // 2: nothing snaps
    ([3] * 23, 8),  # every boundary snaps: no split row
    ([], 8), ([0] * 9, 4), ([1], 2), ([37], 1)])
def test_merge_tiles_snap_short_rows_and_split_long_ones(lengths, tile):
    from course_lib.spmv._merge_plan import plan_merge_tiles

    lengths = np.array(lengths, dtype=np.int64)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    plan = plan_merge_tiles(indptr, tile)
    steps = _plan_steps(plan)
    n_rows, nnz = lengths.size, int(indptr[-1])
    assert (plan.rows[0], plan.nnz[0], plan.rows[-1], plan.nnz[-1]) == (0, 0, n_rows, nnz)
    assert plan.n_tiles == max(1, -(-(n_rows + nnz) // tile))
    sizes = np.diff(steps)
    assert (sizes[:-1] >= tile - tile // 2).all() and (sizes <= tile + tile // 2).all()
    assert (sizes > 0).all() or n_rows + nnz == 0
    # Each boundary is a point of the merge path: rows[b] rows finished, then some non-zeros of row rows[b].
    inner = plan.rows < n_rows
    assert (indptr[plan.rows[inner]] <= plan.nnz[inner]).all()
    assert (plan.nnz[inner] <= indptr[plan.rows[inner] + 1]).all()
    cut = inner & (plan.nnz > indptr[np.minimum(plan.rows, max(n_rows - 1, 0))])
    assert (lengths[plan.rows[cut]] > tile // 2).all()  # only long rows are cut
    assert (plan.split >= 0).tolist() == cut.tolist()
    np.testing.assert_array_equal(plan.split_rows, np.unique(plan.rows[cut]))
    np.testing.assert_array_equal(plan.parts, np.bincount(plan.split[cut], minlength=plan.split_rows.size) + 1)


def test_merge_path_is_one_launch_with_nothing_copied_or_allocated():
    from numba import cuda

    from course_lib.sim import record

    A = spmv.empty_rows_and_long_row(40, 60, seed=3)
    x = random_x(A.shape[1], np.float32, seed=1)
    op = spmv.prepare(A, "merge_path", block=4)  # tiles of 4 x 8 steps
    assert op._device["parts"].shape[0] >= 1  # its long row (40) is cut by a tile boundary
    d_x, d_y = cuda.to_device(x), cuda.device_array(A.shape[0], np.float32)
    for _ in range(2):  # the split rows' sums and arrivals are left at zero for the next product
        with record() as log:
            op.launch(d_x, d_y)
        assert [launch.kernel for launch in log.launches] == ["merge_path_tiles_4"]
        assert log.transfers == [] and log.allocations == []
        assert_matches_reference(d_y.copy_to_host(), A, x)
    assert op._device["sums"].copy_to_host().tolist() == [0] * op._device["sums"].shape[0]
    assert not op._device["arrived"].copy_to_host().any()


@pytest.mark.parametrize("seed", [None, 1, 2])
def test_merge_path_tiles_is_clean_in_any_block_order(seed):
    """The last block to add a part of a split row writes it, whichever order the blocks run in."""
    from course_lib.spmv._merge_plan import plan_merge_tiles

    lengths = [0, 3, 40, 0, 1, 2, 0, 5, 1, 1, 0, 19]
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    rng = np.random.default_rng(7)
    A = sp.csr_matrix((rng.uniform(-1, 1, indptr[-1]).astype(np.float32), rng.integers(0, 13, indptr[-1]), indptr),
                      shape=(len(lengths), 13))
    x = random_x(13, np.float32, seed=2)
    plan = plan_merge_tiles(A.indptr, 16)
    assert plan.parts.max() >= 3 and plan.split_rows.tolist() == [2, 11]  # row 2 over three tiles
    sums, arrived = np.zeros(plan.parts.size, np.float32), np.zeros(plan.parts.size, np.int32)
    y = np.full(len(lengths), np.nan, np.float32)
    report = check(kernels.merge_path_tiles_kernel(4), plan.n_tiles, 4, A.indptr, A.indices, A.data, x, y,
                   plan.rows, plan.nnz, plan.split, plan.parts, sums, arrived, seed=seed)
    assert report.ok, str(report)
    assert_matches_reference(y, A, x)
    assert not sums.any() and not arrived.any()
