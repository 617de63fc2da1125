"""Seeded sparse matrices for SpMV experiments (no downloads).

The structured family is the Laplacian stencils of Bell & Garland (3-, 5-, 7-, 9- and
27-point); the unstructured matrices of their study need a download, so this module
generates look-alikes with the row-length profiles that matter for the kernels:
balanced random rows, power-law rows (web/social graphs), a banded FEM-like matrix, a
dense block, and a matrix with empty rows and one very long row.

Every generator returns a ``scipy.sparse.csr_matrix`` in canonical form (sorted column
indices, no duplicates) with int32 indices and the requested value dtype, and is
deterministic for a given ``seed``.
"""

from __future__ import annotations

import numpy as np

import scipy.sparse as sp

from .._docs import fill_doc
from .._validate import check_choice, check_dtype, check_float, check_positive_int, check_seed

__all__ = [
    "MATRICES",
    "STENCILS",
    "banded_fem",
    "dense_block",
    "empty_rows_and_long_row",
    "laplacian",
    "make_matrix",
    "power_law_rows",
    "random_balanced",
    "row_length_family",
]

#: Stencil name -> (dimensions, points), the structured family of Bell & Garland.
STENCILS = {"3pt": (1, 3), "5pt": (2, 5), "7pt": (3, 7), "9pt": (2, 9), "27pt": (3, 27)}


#: Every generator's last two parameters, documented once.
_fill_generator_doc = fill_doc(seed_dtype="""
seed : int
    Seed of the generator: the same seed gives the same matrix.
dtype : float32 or float64
""")


def _check_shape(n_rows, n_cols):
    """``(n_rows, n_cols)`` validated; ``n_cols`` defaults to ``n_rows`` (a square matrix)."""
    n_rows = check_positive_int(n_rows, "n_rows")
    return n_rows, n_rows if n_cols is None else check_positive_int(n_cols, "n_cols")


def _finish(matrix, dtype):
    """Canonical CSR with int32 indices and the requested dtype."""
    csr = sp.csr_matrix(matrix, dtype=dtype)
    csr.sum_duplicates()
    csr.sort_indices()
    csr.indices = csr.indices.astype(np.int32, copy=False)
    csr.indptr = csr.indptr.astype(np.int32, copy=False)
    return csr


def laplacian(stencil, n, dtype=np.float32):
    """The Laplacian of a regular grid with ``n`` points per side.

    Parameters
    ----------
    stencil : {"3pt", "5pt", "7pt", "9pt", "27pt"}
        ``"3pt"``: 1-D grid of n points; ``"5pt"`` and ``"9pt"``: 2-D n x n grid (the
        9-point stencil couples the 8 neighbours of the 3 x 3 box); ``"7pt"`` and
        ``"27pt"``: 3-D n x n x n grid (the 27-point stencil couples the 3 x 3 x 3 box).
    n : int
        Points per side. Bell & Garland use 1e6 (3pt), 1000 (5pt, 9pt) and 100 (7pt, 27pt).
    dtype : float32 or float64

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n**d, n**d)
        Diagonal ``points - 1``, -1 for each neighbour; interior rows have ``points``
        non-zeros, boundary rows fewer.
    """
    check_choice(stencil, "stencil", sorted(STENCILS))
    n = check_positive_int(n, "n")
    dims, points = STENCILS[stencil]
    identity = sp.identity(n, format="csr")
    if points == 3 ** dims:  # the full box: 3pt, 9pt, 27pt
        box = sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(n, n), format="csr")
        pattern = box
        for _ in range(dims - 1):
            pattern = sp.kron(pattern, box, format="csr")
        matrix = (points) * sp.identity(n**dims, format="csr") - pattern
    else:  # axis neighbours only: 5pt, 7pt
        second = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n), format="csr")
        matrix = sp.csr_matrix((n**dims, n**dims))
        for axis in range(dims):
            term = sp.identity(1, format="csr")
            for k in range(dims):
                term = sp.kron(term, second if k == axis else identity, format="csr")
            matrix = matrix + term
    return _finish(matrix, check_dtype(dtype))


def _from_row_lengths(lengths, n_cols, rng, dtype):
    """A matrix whose row r has ``lengths[r]`` distinct random columns, values in [-1, 1).

    Columns are drawn for all rows at once; the few rows that drew a column twice are
    redrawn without replacement, so every row gets exactly its length (capped at n_cols).
    """
    lengths = np.minimum(np.asarray(lengths, dtype=np.int64), n_cols)
    n_rows = len(lengths)
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    rows = np.repeat(np.arange(n_rows), lengths)
    cols = rng.integers(0, n_cols, size=indptr[-1])
    cols = cols[np.lexsort((cols, rows))]  # rows are already in order: sorts columns within each row
    repeated = (cols[1:] == cols[:-1]) & (rows[1:] == rows[:-1])
    for r in np.unique(rows[1:][repeated]):
        cols[indptr[r]:indptr[r + 1]] = np.sort(rng.choice(n_cols, size=lengths[r], replace=False))
    data = rng.uniform(-1.0, 1.0, size=indptr[-1])
    return _finish(sp.csr_matrix((data, cols.astype(np.int32), indptr), shape=(n_rows, n_cols)), dtype)


@_fill_generator_doc
def random_balanced(n_rows, nnz_per_row, n_cols=None, seed=0, dtype=np.float32):
    """Every row has ``nnz_per_row`` non-zeros in random columns (balanced rows).

    Parameters
    ----------
    n_rows : int
    nnz_per_row : int
        Non-zeros per row (capped at ``n_cols``).
    n_cols : int, optional
        Columns; defaults to ``n_rows``.
    {seed_dtype}

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_rows, n_cols)
    """
    n_rows, n_cols = _check_shape(n_rows, n_cols)
    k = check_positive_int(nnz_per_row, "nnz_per_row")
    rng = np.random.default_rng(check_seed(seed))
    return _from_row_lengths(np.full(n_rows, k), n_cols, rng, check_dtype(dtype))


@_fill_generator_doc
def power_law_rows(n_rows, mean_nnz=8.0, exponent=2.0, n_cols=None, seed=0, dtype=np.float32):
    """Row lengths from a Pareto (power-law) tail, like web and social graphs.

    Lengths are ``ceil(x_min * U**(-1 / (exponent - 1)))`` for uniform U, capped at
    ``n_cols``; a few rows are very long, most short. ``x_min`` is fitted to the draws (a
    heavy tail's sample mean is far from its expectation, and the cap cuts it further), and
    the last few entries go to random rows, so the matrix has exactly
    ``round(min(mean_nnz, n_cols) * n_rows)`` non-zeros: the mean row length is ``mean_nnz``.

    Parameters
    ----------
    n_rows : int
    mean_nnz : float
        Mean row length, >= 1 (capped at ``n_cols``).
    exponent : float
        Tail exponent of the row-length density, > 2 so the mean exists (2.0 is
        clipped to 2.05). Smaller means more skewed.
    n_cols : int, optional
        Defaults to ``n_rows``; row lengths are capped at it.
    {seed_dtype}

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_rows, n_cols)
    """
    n_rows, n_cols = _check_shape(n_rows, n_cols)
    mean_nnz = check_float(mean_nnz, "mean_nnz", minimum=1)
    # A power law with exponent < 2 has no finite mean.
    exponent = check_float(exponent, "exponent", minimum=2)
    alpha = max(float(exponent), 2.05) - 1.0  # Pareto shape of the lengths
    rng = np.random.default_rng(check_seed(seed))
    tail = rng.uniform(0.0, 1.0, n_rows) ** (-1.0 / alpha)  # Pareto draws, >= 1

    def lengths_for(x_min):
        return np.minimum(np.ceil(x_min * tail), n_cols).astype(np.int64)

    target = int(round(min(mean_nnz, n_cols) * n_rows))
    # The total grows with x_min: bisect for the largest x_min whose total does not pass the target.
    low, high = 0.0, float(n_cols)
    for _ in range(100):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if lengths_for(middle).sum() <= target else (low, middle)
    lengths = lengths_for(low)
    short = np.flatnonzero(lengths < n_cols)
    lengths[rng.choice(short, target - int(lengths.sum()), replace=False)] += 1  # the last few entries
    return _from_row_lengths(lengths, n_cols, rng, check_dtype(dtype))


@_fill_generator_doc
def banded_fem(n, half_bandwidth=8, density=0.6, seed=0, dtype=np.float32):
    """A symmetric banded matrix like a finite-element stiffness matrix.

    Parameters
    ----------
    n : int
        Rows and columns.
    half_bandwidth : int
        Entries only where ``|i - j| <= half_bandwidth``.
    density : float
        Fraction of the band that is non-zero (0 < density <= 1); the diagonal always is.
    {seed_dtype}

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n, n)
        Symmetric and diagonally dominant (positive definite).
    """
    n = check_positive_int(n, "n")
    half_bandwidth = check_positive_int(half_bandwidth, "half_bandwidth")
    density = check_float(density, "density", minimum=0, maximum=1, min_inclusive=False)
    rng = np.random.default_rng(check_seed(seed))
    rows, cols = [], []
    for offset in range(1, min(half_bandwidth, n - 1) + 1):
        i = np.arange(n - offset)
        keep = rng.uniform(size=i.size) < density
        rows.append(i[keep])
        cols.append(i[keep] + offset)
    rows = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    cols = np.concatenate(cols) if cols else np.zeros(0, np.int64)
    values = -rng.uniform(0.1, 1.0, size=rows.size)
    upper = sp.coo_matrix((values, (rows, cols)), shape=(n, n))
    off = upper + upper.T
    diagonal = 1.0 - np.asarray(off.sum(axis=1)).ravel()  # row sums of |off| + 1: dominant
    return _finish(off + sp.diags(diagonal), check_dtype(dtype))


def dense_block(n, seed=0, dtype=np.float32):
    """A dense n x n matrix stored as sparse (Bell & Garland's "Dense" case).

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n, n) with n * n non-zeros
    """
    n = check_positive_int(n, "n")
    rng = np.random.default_rng(check_seed(seed))
    return _finish(rng.uniform(0.5, 1.5, size=(n, n)), check_dtype(dtype))


@_fill_generator_doc
def empty_rows_and_long_row(n_rows, long_row=None, empty_fraction=0.5, seed=0, dtype=np.float32):
    """Mostly short rows, many empty rows, and one very long row.

    Parameters
    ----------
    n_rows : int
        Rows and columns (>= 2).
    long_row : int, optional
        Length of the long row; defaults to ``n_rows`` (a full row).
    empty_fraction : float
        Fraction of the other rows that are empty (0 <= f <= 1).
    {seed_dtype}

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_rows, n_rows)
        Row ``n_rows // 3`` is the long row; the other non-empty rows have 1 to 4 entries.
    """
    n_rows = check_positive_int(n_rows, "n_rows")
    if n_rows < 2:
        raise ValueError("n_rows must be >= 2 (one long row and at least one other)")
    long_row = n_rows if long_row is None else check_positive_int(long_row, "long_row")
    empty_fraction = check_float(empty_fraction, "empty_fraction", minimum=0, maximum=1)
    rng = np.random.default_rng(check_seed(seed))
    lengths = rng.integers(1, 5, size=n_rows)
    lengths[rng.uniform(size=n_rows) < empty_fraction] = 0
    lengths[n_rows // 3] = long_row
    return _from_row_lengths(lengths, n_rows, rng, check_dtype(dtype))


@_fill_generator_doc
def row_length_family(n_rows, skew, mean_nnz=8.0, seed=0, dtype=np.float32):
    """Rows from balanced (``skew = 0``) to very skewed, with the same mean length.

    Row lengths are log-normal with ``sigma = skew``, rescaled to the mean, so one knob
    moves from the stencil-like case to the power-law-like one.

    Parameters
    ----------
    n_rows : int
        Rows and columns.
    skew : float
        0 gives every row ``round(mean_nnz)`` entries; 1 is moderately skewed, 2 to 3
        resembles a power law.
    mean_nnz : float
    {seed_dtype}

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_rows, n_rows)
    """
    n_rows = check_positive_int(n_rows, "n_rows")
    skew = check_float(skew, "skew", minimum=0)
    mean_nnz = check_float(mean_nnz, "mean_nnz", minimum=1)
    rng = np.random.default_rng(check_seed(seed))
    raw = rng.lognormal(0.0, float(skew), size=n_rows) if skew > 0 else np.ones(n_rows)
    lengths = np.maximum(np.rint(raw * (mean_nnz / raw.mean())), 0).astype(np.int64)
    return _from_row_lengths(lengths, n_rows, rng, check_dtype(dtype))


def _scaled(size, sim, gpu):
    return {"sim": sim, "gpu": gpu}[size]


#: Name -> builder(size, seed, dtype) for ``size`` in {"sim", "gpu"}: the benchmark
#: families at simulator size (tens of rows) and at Bell & Garland's size.
MATRICES = {
    "laplacian_3pt": lambda size, seed, dtype: laplacian("3pt", _scaled(size, 40, 1_000_000), dtype),
    "laplacian_5pt": lambda size, seed, dtype: laplacian("5pt", _scaled(size, 7, 1000), dtype),
    "laplacian_7pt": lambda size, seed, dtype: laplacian("7pt", _scaled(size, 4, 100), dtype),
    "laplacian_9pt": lambda size, seed, dtype: laplacian("9pt", _scaled(size, 7, 1000), dtype),
    "laplacian_27pt": lambda size, seed, dtype: laplacian("27pt", _scaled(size, 3, 100), dtype),
    "random_balanced": lambda size, seed, dtype: random_balanced(_scaled(size, 48, 1_000_000), 8, seed=seed,
                                                                 dtype=dtype),
    "power_law": lambda size, seed, dtype: power_law_rows(_scaled(size, 64, 1_000_000), 8.0, 2.2, seed=seed,
                                                          dtype=dtype),
    "banded_fem": lambda size, seed, dtype: banded_fem(_scaled(size, 48, 1_000_000), 12, 0.7, seed=seed,
                                                       dtype=dtype),
    "dense_block": lambda size, seed, dtype: dense_block(_scaled(size, 12, 2000), seed=seed, dtype=dtype),
    "empty_rows_long_row": lambda size, seed, dtype: empty_rows_and_long_row(_scaled(size, 48, 1_000_000),
                                                                             _scaled(size, 45, 200_000),
                                                                             seed=seed, dtype=dtype),
}


@_fill_generator_doc
def make_matrix(name, size="sim", seed=0, dtype=np.float32):
    """One of the course's matrices by name, at simulator or full (GPU) size.

    Parameters
    ----------
    name : str
        A key of :data:`MATRICES`.
    size : {"sim", "gpu"}
        ``"sim"``: tens of rows, for the simulator; ``"gpu"``: Bell & Garland's sizes
        (about 1e6 rows, large enough to leave a 50 MB L2 cache).
    {seed_dtype}

    Returns
    -------
    scipy.sparse.csr_matrix
    """
    check_choice(name, "name", sorted(MATRICES))
    check_choice(size, "size", ("sim", "gpu"))
    return MATRICES[name](size, check_seed(seed), check_dtype(dtype))
