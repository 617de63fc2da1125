"""Public entry points of Unit 2: :func:`spmv`, :func:`prepare` and the hybrid split."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .. import device
from .._validate import check_array, check_block, check_choice, check_int
from ._checks import as_csr
from ._merge_plan import plan_merge_tiles
from . import cpu, reference
from .cpu import CpuSpmv
from .model import bell_garland_k

__all__ = ["GPU_METHODS", "ITEMS_PER_THREAD", "METHODS", "DeviceSpmv", "choose_method", "HybMatrix", "as_csr", "default_block", "ell_split",
           "has_warp_shuffles", "hyb_split", "is_device_array", "prepare", "spmv"]

#: Kernel methods, then the CPU ones: ``"cpu"`` (Numba, :mod:`course_lib.spmv.cpu`) and ``"scipy"`` (the reference).
METHODS = ("csr_scalar", "csr_vector", "coo", "coo_atomic", "ell", "hyb", "merge_path", "cpu", "scipy")
GPU_METHODS = METHODS[:7]
#: Merge-path steps (rows + non-zeros) per thread: enough to amortise the binary search, few enough
#: that a block's share (block x 8) stays small beside the matrix.
ITEMS_PER_THREAD = 8
#: ``method="auto"`` takes merge path when the longest row exceeds this many times the mean (and a warp).
IRREGULAR_RATIO = 4
#: ELL refuses to pad more than this many times the non-zeros (beyond a small matrix).
MAX_ELL_FILL = 10
_SMALL_ELL = 1 << 20


def default_block() -> int:
    """Threads per block when none is given: 256 on a GPU, 32 in the simulator."""
    return device.pick(sim=32, gpu=256)


@dataclass(frozen=True)
class HybMatrix:
    """A matrix split for the hybrid kernel: ELL for the first K entries of each row, COO for the rest.

    Attributes
    ----------
    shape : tuple of int
        (R, C).
    K : int
        ELL width.
    ell_indices : ndarray of shape (K, R), int32
        Column of slot k of row r (column-major: slot k of all rows is contiguous), -1 in padding.
    ell_data : ndarray of shape (K, R)
        Values, 0 in padding.
    coo_rows, coo_cols : ndarray of shape (Z_coo,), int32
        Row (sorted) and column of each remaining entry.
    coo_data : ndarray of shape (Z_coo,)
    """

    shape: tuple
    K: int
    ell_indices: np.ndarray = field(repr=False)
    ell_data: np.ndarray = field(repr=False)
    coo_rows: np.ndarray = field(repr=False)
    coo_cols: np.ndarray = field(repr=False)
    coo_data: np.ndarray = field(repr=False)

    @property
    def ell_nnz(self) -> int:
        """Real (non-padding) entries in the ELL part."""
        return int(np.count_nonzero(self.ell_indices >= 0))

    @property
    def coo_nnz(self) -> int:
        """Entries in the COO part."""
        return int(self.coo_data.size)

    @property
    def padding(self) -> float:
        """Fraction of the ELL slots that are padding (0 when there are none)."""
        slots = self.ell_indices.size
        return 1.0 - self.ell_nnz / slots if slots else 0.0

    def to_csr(self):
        """The matrix back as ``scipy.sparse.csr_matrix`` (checks a split loses nothing)."""
        keep = self.ell_indices >= 0
        slot_rows = np.broadcast_to(np.arange(self.shape[0]), self.ell_indices.shape)
        rows = np.concatenate([slot_rows[keep], self.coo_rows])
        cols = np.concatenate([self.ell_indices[keep], self.coo_cols])
        data = np.concatenate([self.ell_data[keep], self.coo_data])
        return sp.csr_matrix((data, (rows, cols)), shape=self.shape)


def hyb_split(A, K=None, dtype=None):
    """Split A into the ELL part (first K entries of every row) and the COO rest.

    Parameters
    ----------
    A : scipy sparse matrix of shape (R, C)
    K : int, optional
        ELL width; default :func:`~course_lib.spmv.model.bell_garland_k` (the largest K
        such that a third of the rows still have K entries).
    dtype : float32 or float64, optional
        See :func:`as_csr`.

    Returns
    -------
    HybMatrix

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from course_lib.spmv import hyb_split
    >>> A = sp.csr_matrix([[1, 2, 3, 4], [5, 0, 0, 0], [0, 6, 0, 0]], dtype="float32")
    >>> h = hyb_split(A, K=1)
    >>> h.ell_indices.tolist(), h.coo_cols.tolist()
    ([[0, 0, 1]], [1, 2, 3])
    """
    csr = as_csr(A, dtype)
    lengths = np.diff(csr.indptr)
    K = bell_garland_k(lengths) if K is None else check_int(K, "K", minimum=0)
    n_rows = csr.shape[0]
    rows = np.repeat(np.arange(n_rows, dtype=np.int32), lengths)
    position = np.arange(csr.nnz) - np.repeat(csr.indptr[:-1], lengths)  # place of each entry within its row
    in_ell = position < K
    ell_indices = np.full((K, n_rows), -1, dtype=np.int32)
    ell_data = np.zeros((K, n_rows), dtype=csr.dtype)
    ell_indices[position[in_ell], rows[in_ell]] = csr.indices[in_ell]
    ell_data[position[in_ell], rows[in_ell]] = csr.data[in_ell]
    rest = ~in_ell
    return HybMatrix(csr.shape, K, ell_indices, ell_data, rows[rest].copy(), csr.indices[rest].copy(),
                     csr.data[rest].copy())


def ell_split(A, dtype=None):
    """ELL with every row in it: :func:`hyb_split` with K = the longest row.

    Raises
    ------
    ValueError
        When padding would exceed ``MAX_ELL_FILL`` times the non-zeros (and a million
        slots): one long row makes ELL useless, which is the point of the hybrid.
    """
    csr = as_csr(A, dtype)
    lengths = np.diff(csr.indptr)
    K = int(lengths.max(initial=0))
    slots = K * csr.shape[0]
    if slots > max(MAX_ELL_FILL * csr.nnz, _SMALL_ELL):
        raise ValueError(f"ELL would store {slots} slots for {csr.nnz} non-zeros (longest row {K}): "
                         "use method='hyb', which keeps only the first K entries of each row in ELL")
    return hyb_split(csr, K)


def choose_method(A) -> str:
    """The kernel method ``"auto"`` picks for A: ``"merge_path"`` for irregular rows, else ``"hyb"``.

    Rows are irregular when the longest is more than :data:`IRREGULAR_RATIO` times the
    mean length and longer than a warp (power-law rows, a few dense rows among empty
    ones): there the hybrid's COO tail is a second pass with atomics while merge path
    balances rows + non-zeros in one pass. On regular rows (stencils, FEM bands) the
    hybrid is one short, coalesced ELL kernel and stays the better choice.

    Parameters
    ----------
    A : scipy sparse matrix of shape (R, C)

    Returns
    -------
    str
    """
    csr = as_csr(A)
    lengths = np.diff(csr.indptr)
    if lengths.size == 0:
        return "hyb"
    longest, mean = int(lengths.max()), float(lengths.mean())
    return "merge_path" if longest > max(IRREGULAR_RATIO * mean, 32) else "hyb"


def _check_block(block, method):
    if block is None:
        block = default_block()
    # csr_vector gives each row a whole warp: its blocks hold whole warps.
    return check_block(block, multiple_of=32 if method == "csr_vector" else 1)


class DeviceSpmv:
    """A matrix on the device in the layout of one method, ready for repeated products.

    Build it with :func:`prepare`. :meth:`launch` only enqueues kernels (for timing
    with CUDA events); calling the object computes ``A @ x`` for a host or device ``x``.

    Attributes
    ----------
    method : str
    shape : tuple of int
    dtype : numpy.dtype
    nnz : int
    block : int
        Threads per block of the kernels.
    K : int or None
        ELL width (``"ell"`` and ``"hyb"``).
    """

    def __init__(self, csr, method, block, K=None):
        from numba import cuda

        from . import kernels

        self.method, self.shape, self.dtype, self.nnz, self.block = method, csr.shape, csr.dtype, csr.nnz, block
        self.K = None
        self._kernels = kernels
        self._arrays = {}
        if method in ("csr_scalar", "csr_vector", "merge_path"):
            self._arrays = {"indptr": csr.indptr, "indices": csr.indices, "data": csr.data}
        elif method in ("coo", "coo_atomic"):
            coo_rows = np.repeat(np.arange(csr.shape[0], dtype=np.int32), np.diff(csr.indptr))
            self._arrays = {"rows": coo_rows, "cols": csr.indices, "data": csr.data}
        else:
            split = ell_split(csr) if method == "ell" else hyb_split(csr, K)
            self.K = split.K
            self._arrays = {"ell_indices": split.ell_indices, "ell_data": split.ell_data, "rows": split.coo_rows,
                            "cols": split.coo_cols, "data": split.coo_data}
        if method == "merge_path":  # the tiles, planned once with the matrix; the split rows' sums start at zero
            plan = plan_merge_tiles(csr.indptr, block * ITEMS_PER_THREAD)
            self._arrays.update(tile_rows=plan.rows, tile_nnz=plan.nnz, split=plan.split, parts=plan.parts,
                                sums=np.zeros(max(plan.parts.size, 1), csr.dtype),
                                arrived=np.zeros(max(plan.parts.size, 1), np.int32))
        self._device = {name: cuda.to_device(np.ascontiguousarray(a)) for name, a in self._arrays.items()}

    def launch(self, d_x, d_y):
        """Enqueue the kernels computing ``d_y = A @ d_x`` (device arrays of the right dtype and length)."""
        n_rows, block, dev, k = self.shape[0], self.block, self._device, self._kernels
        if n_rows == 0:
            return
        if self.method == "csr_scalar":
            k.csr_scalar_kernel[-(-n_rows // block), block](dev["indptr"], dev["indices"], dev["data"], d_x, d_y)
        elif self.method == "csr_vector":
            threads = n_rows * k.WARP
            k.csr_vector_kernel[-(-threads // block), block](dev["indptr"], dev["indices"], dev["data"], d_x, d_y)
        elif self.method == "merge_path":  # one launch, a block per planned tile
            tiles = dev["tile_rows"].shape[0] - 1
            k.merge_path_tiles_kernel(block)[tiles, block](dev["indptr"], dev["indices"], dev["data"], d_x, d_y,
                                                          dev["tile_rows"], dev["tile_nnz"], dev["split"],
                                                          dev["parts"], dev["sums"], dev["arrived"])
            return
        elif self.method in ("ell", "hyb"):
            k.ell_kernel[-(-n_rows // block), block](dev["ell_indices"], dev["ell_data"], d_x, d_y)
        else:  # the COO kernels add into y
            k.zero_kernel[-(-n_rows // block), block](d_y)
        if self.method in ("coo", "coo_atomic", "hyb") and dev["data"].size:
            grid = -(-dev["data"].size // block)
            kernel = k.coo_atomic_kernel if self.method == "coo_atomic" else k.coo_segmented_kernel(block)
            kernel[grid, block](dev["rows"], dev["cols"], dev["data"], d_x, d_y)

    def __call__(self, x):
        """``A @ x``: a NumPy array for a host ``x``, a device array for a device ``x``."""
        from numba import cuda

        on_device = is_device_array(x)
        d_x = _check_x(x, self.shape, self.dtype, on_device)
        d_y = cuda.device_array(self.shape[0], dtype=self.dtype)
        self.launch(d_x, d_y)
        return d_y if on_device else d_y.copy_to_host()

    def __repr__(self):
        extra = f", K={self.K}" if self.K is not None else ""
        return f"DeviceSpmv(method={self.method!r}, shape={self.shape}, nnz={self.nnz}, dtype={self.dtype}{extra})"


def has_warp_shuffles() -> bool:
    """True when kernels can call ``cuda.shfl_down_sync``: always on a GPU; in the
    simulator once :mod:`course_lib.sim` has added the warp primitives (``import
    course_lib`` does)."""
    if device.is_gpu():
        return True
    from numba.cuda.simulator.kernelapi import FakeCUDAModule

    return hasattr(FakeCUDAModule, "shfl_down_sync")


def is_device_array(x) -> bool:
    """True for a CUDA device array (Numba's, CuPy's, or the simulator's stand-in)."""
    from numba import cuda

    if device.is_simulator():
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

        return isinstance(x, FakeCUDAArray)
    return cuda.is_cuda_array(x)


def _check_x(x, shape, dtype, on_device):
    """Validate ``x`` and return it as a contiguous device array of ``dtype``."""
    from numba import cuda

    if on_device:
        x = cuda.as_cuda_array(x) if not device.is_simulator() else x
        if x.ndim != 1 or x.shape[0] != shape[1]:
            raise ValueError(f"x must have shape ({shape[1]},) to match A's {shape[1]} columns, got {x.shape}")
        if np.dtype(x.dtype) != dtype:
            raise ValueError(f"device x has dtype {x.dtype} but the matrix is {dtype}: convert one of them")
        return x
    host = _host_x(x, shape)
    return cuda.to_device(np.ascontiguousarray(host, dtype=dtype))


def _host_x(x, shape):
    return check_array(x, "x", shape=(shape[1],), dtype="biuf", finite=True)


def _result_dtype(A, x):
    kinds = [np.dtype(A.dtype)]
    if hasattr(x, "dtype"):
        kinds.append(np.dtype(x.dtype))
    if all(k in (np.float16, np.float32) for k in kinds):
        return np.dtype(np.float32)
    return np.dtype(np.float64)


def prepare(A, method="auto", *, K=None, block=None, dtype=None):
    """Copy A to the device in the layout ``method`` needs, or check it once for the CPU.

    Parameters
    ----------
    A : scipy sparse matrix of shape (R, C)
    method : {"auto", "csr_scalar", "csr_vector", "coo", "coo_atomic", "ell", "hyb", "merge_path", "cpu"}
        ``"auto"`` (the default): :func:`choose_method`, merge path for irregular rows and
        the hybrid otherwise; a kernel, or ``"cpu"``: the Numba CPU loop on a matrix checked once
        (:class:`~course_lib.spmv.cpu.CpuSpmv`), as repeated products on the CPU should run.
    K : int, optional
        ELL width for ``"hyb"`` (default: the Bell-Garland rule).
    block : int, optional
        Threads per block (default :func:`default_block`); a multiple of 32 for ``"csr_vector"``.
    dtype : float32 or float64, optional
        See :func:`as_csr`.

    Returns
    -------
    DeviceSpmv, or CpuSpmv for ``"cpu"``
    """
    check_choice(method, "method", ("auto",) + GPU_METHODS + ("cpu",))
    if method == "auto":
        method = "hyb" if K is not None else choose_method(A)
    if K is not None and method != "hyb":
        raise ValueError(f"K only applies to method 'hyb', not {method!r}")
    if method == "cpu":
        if block is not None:
            raise ValueError("block only applies to the kernel methods, not 'cpu'")
        return CpuSpmv._of_checked(as_csr(A, dtype))
    K = None if K is None else check_int(K, "K", minimum=0)
    block = _check_block(block, method)
    if method == "csr_vector" and not has_warp_shuffles():
        raise RuntimeError("method 'csr_vector' needs cuda.shfl_down_sync, which this CUDA simulator lacks; "
                           "use a course_lib whose simulator tools add the warp primitives, or a GPU")
    return DeviceSpmv(as_csr(A, dtype), method, block, K)


def spmv(A, x, method="auto", *, K=None, block=None):
    """Sparse matrix-vector product ``y = A @ x``.

    Parameters
    ----------
    A : scipy sparse matrix or array of shape (R, C)
        Any format (converted as the method needs); real values.
    x : array_like of shape (C,), or a device array
        The vector.
    method : {"auto", "hyb", "merge_path", "csr_scalar", "csr_vector", "coo", "coo_atomic", "ell", "cpu", "scipy"}
        ``"auto"`` (the default): :func:`choose_method` picks ``"merge_path"`` for
        irregular rows and ``"hyb"`` otherwise; ``"merge_path"``: CSR with equal shares
        of rows + non-zeros per thread, in one launch on tiles whose boundaries avoid
        short rows (rows longer than half a tile are summed part by part);
        ``"csr_scalar"``: thread per row; ``"csr_vector"``: warp per row with shuffles;
        ``"coo"``: thread per element with a segmented reduction; ``"coo_atomic"``:
        thread per element with atomics; ``"ell"``: padded, column-major; ``"hyb"``: ELL
        for the first K entries of each row plus COO for the rest; ``"cpu"``: the Numba
        loop of :func:`~course_lib.spmv.cpu.spmv_cpu` (all cores from
        :data:`~course_lib.spmv.cpu.PARALLEL_MIN_NNZ` non-zeros, one core below);
        ``"scipy"``: the float64 SciPy reference.
    K : int, optional
        ELL width for ``"hyb"`` (default: the Bell-Garland rule, see :func:`hyb_split`).
    block : int, optional
        Threads per block of the kernels (default :func:`default_block`).

    Returns
    -------
    ndarray of shape (R,), or a device array when ``x`` is one
        float32 when A and x are float32 (or float16), else float64; ``"scipy"`` always
        returns float64.

    Raises
    ------
    ValueError
        A not sparse, complex or non-numeric values, x of the wrong length, an
        unknown method, or K / block the method cannot use.

    Examples
    --------
    >>> import numpy as np
    >>> from course_lib.spmv import laplacian, spmv
    >>> A = laplacian("5pt", 4)
    >>> spmv(A, np.ones(16, np.float32), method="csr_scalar")[:4]
    array([2., 1., 1., 2.], dtype=float32)
    """
    check_choice(method, "method", ("auto",) + METHODS)
    if method not in ("auto",) + GPU_METHODS and (K is not None or block is not None):
        raise ValueError(f"K and block only apply to the kernel methods, not {method!r}")
    if not sp.issparse(A):
        as_csr(A)  # raises the explanatory error
    from numba import cuda

    on_device = is_device_array(x)
    dtype = _result_dtype(A, x)
    if method in ("auto",) + GPU_METHODS:
        return prepare(A, method, K=K, block=block, dtype=dtype)(x)
    csr = as_csr(A, dtype)
    if on_device:
        x = x if device.is_simulator() else cuda.as_cuda_array(x)
    host = x.copy_to_host() if on_device else x
    host = _host_x(host, csr.shape)
    y = (reference if method == "scipy" else cpu)._spmv_checked(csr, host)
    return cuda.to_device(y) if on_device else y

