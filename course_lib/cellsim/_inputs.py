"""The model's inputs: the initial fluorescence histogram H(0) and the table of cell types.

Both have a plain-text format, one entry per line, as in the thesis's input files
(blank lines and ``#`` comments are ignored):

* histogram: ``phi psi`` - a fluorescence value measured in the lab and how many cells
  have it (a non-negative integer);
* types: ``proportion mean std`` - the fraction of the initial population of that
  type and the mean and standard deviation (hours) of its division time, a normal
  truncated to > 0; ``-1 -1`` marks a quiescent type, which never divides.

Every check raises ``ValueError`` naming the problem (and the line, when parsing).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._validate import check_array, check_float, check_seed

__all__ = ["MAX_TYPES", "PROPORTION_TOLERANCE", "CellTypes", "InitialHistogram", "as_histogram", "as_types"]

#: At most this many cell types (the kernels keep one shared-memory counter per type).
MAX_TYPES = 16
#: Proportions must sum to 1 within this tolerance.
PROPORTION_TOLERANCE = 1e-6
#: Initial cells get ids 0 .. L - 1 and generation-g cells ids below L * 2**g, which must fit in 63 bits.
_MAX_ID_BITS = 63


def _numbers(text, expected, what):
    """Rows of ``expected`` floats parsed from ``text``; ValueError naming the line."""
    if not isinstance(text, str):
        raise ValueError(f"{what} text must be a str, got {type(text).__name__}")
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        content = line.split("#", 1)[0].strip()
        if not content:
            continue
        parts = content.replace(",", " ").split()
        if len(parts) != expected:
            raise ValueError(f"{what} line {number}: expected {expected} numbers, got {len(parts)} in {line!r}")
        try:
            rows.append([float(p) for p in parts])
        except ValueError:
            raise ValueError(f"{what} line {number}: not a number in {line!r}") from None
    return rows


@dataclass(frozen=True)
class InitialHistogram:
    """The initial histogram H(0): fluorescence values and how many cells have each.

    Build it with :meth:`from_arrays`, :meth:`from_text` or :meth:`load` (they validate).

    Attributes
    ----------
    fluorescence : ndarray of shape (B,), float64
        Distinct, finite, positive values phi_i.
    counts : ndarray of shape (B,), int64
        psi_i >= 0, not all zero.
    """

    fluorescence: np.ndarray = field(repr=False)
    counts: np.ndarray = field(repr=False)

    @classmethod
    def from_arrays(cls, fluorescence, counts) -> "InitialHistogram":
        """Validate the pairs (phi_i, psi_i).

        Raises
        ------
        ValueError
            Empty histogram, no cells at all, lengths that differ, fluorescence not finite
            and positive or repeated, counts negative or not integers.
        """
        phi = check_array(fluorescence, "fluorescence", ndim=1, dtype="iuf", finite=True)
        psi = check_array(counts, "counts", ndim=1, dtype="iuf", finite=True)
        if phi.size == 0:
            raise ValueError("histogram is empty: give at least one (fluorescence, count) pair")
        if psi.shape != phi.shape:
            raise ValueError(f"counts must have one entry per fluorescence value ({phi.size}), got {psi.size}")
        phi = phi.astype(np.float64)
        if np.any(phi <= 0):
            raise ValueError(f"fluorescence values must be > 0, got {phi[phi <= 0][0]}")
        if np.unique(phi).size != phi.size:
            values, seen = np.unique(phi, return_counts=True)
            raise ValueError(f"fluorescence values must be distinct: {values[seen > 1][0]} appears more than once")
        if np.any(psi < 0):
            raise ValueError(f"counts must be >= 0, got {psi[psi < 0][0]}")
        if psi.dtype.kind == "f" and np.any(psi != np.round(psi)):
            raise ValueError(f"counts must be whole numbers of cells, got {psi[psi != np.round(psi)][0]}")
        psi = psi.astype(np.int64)
        total = int(psi.sum())
        if total == 0:
            raise ValueError("histogram is empty: every count is 0, so there is no initial cell")
        if total >= 2**31:
            raise ValueError(f"the histogram holds {total} cells; at most 2**31 - 1 initial cells are supported")
        return cls(phi, psi)

    @classmethod
    def from_text(cls, text: str) -> "InitialHistogram":
        """Parse lines ``phi psi`` (see the module docstring)."""
        rows = _numbers(text, 2, "histogram")
        if not rows:
            raise ValueError("histogram is empty: the text has no 'phi psi' line")
        data = np.array(rows, dtype=np.float64)
        return cls.from_arrays(data[:, 0], data[:, 1])

    @classmethod
    def load(cls, path) -> "InitialHistogram":
        """Read a histogram file (see :meth:`from_text`)."""
        return cls.from_text(Path(path).read_text())

    def to_text(self) -> str:
        """The histogram in the text format (``repr`` of each float: it reads back exactly)."""
        return "".join(f"{phi!r} {int(psi)}\n" for phi, psi in zip(self.fluorescence.tolist(), self.counts))

    @property
    def n_cells(self) -> int:
        """L, the size of the initial population."""
        return int(self.counts.sum())

    @property
    def cumulative(self) -> np.ndarray:
        """``cumsum(counts)`` (int64): initial cell j has the fluorescence of the first bin whose
        cumulative count exceeds j."""
        return np.cumsum(self.counts)

    def cell_fluorescence(self) -> np.ndarray:
        """The initial population X_0: phi_i repeated psi_i times (float64, shape (L,))."""
        return np.repeat(self.fluorescence, self.counts)

    def __repr__(self):
        return (f"InitialHistogram({self.fluorescence.size} values from {self.fluorescence.min():g} to "
                f"{self.fluorescence.max():g}, {self.n_cells} cells)")


@dataclass(frozen=True)
class CellTypes:
    """The cell types: proportion of the initial population and division-time distribution.

    Attributes
    ----------
    proportions : ndarray of shape (T,), float64
        pi_t in [0, 1], summing to 1 (within :data:`PROPORTION_TOLERANCE`).
    means, stds : ndarray of shape (T,), float64
        Mean and standard deviation (hours) of the division time; -1 and -1 for a quiescent type.
    names : tuple of str
    """

    proportions: np.ndarray = field(repr=False)
    means: np.ndarray = field(repr=False)
    stds: np.ndarray = field(repr=False)
    names: tuple = ()

    @classmethod
    def from_arrays(cls, proportions, means, stds, names=None) -> "CellTypes":
        """Validate a type table.

        Raises
        ------
        ValueError
            No type, more than :data:`MAX_TYPES`, lengths that differ, proportions outside
            [0, 1] or not summing to 1, negative times (other than the quiescent -1 -1), a
            zero mean.
        """
        p = check_array(proportions, "proportions", ndim=1, dtype="iuf", finite=True).astype(np.float64)
        mu = check_array(means, "means", ndim=1, dtype="iuf", finite=True).astype(np.float64)
        sd = check_array(stds, "stds", ndim=1, dtype="iuf", finite=True).astype(np.float64)
        if p.size == 0:
            raise ValueError("types is empty: give at least one 'proportion mean std' row")
        if p.size > MAX_TYPES:
            raise ValueError(f"types has {p.size} rows; at most {MAX_TYPES} cell types are supported")
        if mu.shape != p.shape or sd.shape != p.shape:
            raise ValueError(f"proportions, means and stds must have the same length, got {p.size}, {mu.size}, "
                             f"{sd.size}")
        if np.any((p < 0) | (p > 1)):
            raise ValueError(f"proportions must lie in [0, 1], got {p[(p < 0) | (p > 1)][0]}")
        if abs(p.sum() - 1.0) > PROPORTION_TOLERANCE:
            raise ValueError(f"proportions must sum to 1, got {p.sum():.9g} (from {p.tolist()})")
        for t in range(p.size):
            quiescent = mu[t] == -1 and sd[t] == -1
            if quiescent:
                continue
            if mu[t] < 0 or sd[t] < 0:
                raise ValueError(f"type {t}: negative times (mean {mu[t]:g}, std {sd[t]:g}); division times are "
                                 "hours >= 0, and only '-1 -1' (quiescent) may be negative")
            if mu[t] == 0:
                raise ValueError(f"type {t}: mean division time must be > 0 hours, got 0")
        if names is None:
            names = tuple("quiescent" if mu[t] == -1 else f"type {t}" for t in range(p.size))
        names = tuple(str(n) for n in names)
        if len(names) != p.size:
            raise ValueError(f"names must have one entry per type ({p.size}), got {len(names)}")
        return cls(p, mu, sd, names)

    @classmethod
    def from_text(cls, text: str, names=None) -> "CellTypes":
        """Parse lines ``proportion mean std`` (see the module docstring)."""
        rows = _numbers(text, 3, "types")
        if not rows:
            raise ValueError("types is empty: the text has no 'proportion mean std' line")
        data = np.array(rows, dtype=np.float64)
        return cls.from_arrays(data[:, 0], data[:, 1], data[:, 2], names)

    @classmethod
    def load(cls, path, names=None) -> "CellTypes":
        """Read a type file (see :meth:`from_text`)."""
        return cls.from_text(Path(path).read_text(), names)

    def to_text(self) -> str:
        """The table in the text format."""
        return "".join(f"{p!r} {m!r} {s!r}\n" for p, m, s in
                       zip(self.proportions.tolist(), self.means.tolist(), self.stds.tolist()))

    @property
    def n_types(self) -> int:
        return int(self.proportions.size)

    @property
    def quiescent(self) -> np.ndarray:
        """Boolean mask of the quiescent types."""
        return self.means < 0

    def with_proportions(self, proportions) -> "CellTypes":
        """The same types with other proportions (validated)."""
        return CellTypes.from_arrays(proportions, self.means, self.stds, self.names)

    def params(self) -> np.ndarray:
        """What the kernels read: shape (T, 4), float64, rows (cumulative proportion, mean, std,
        normal CDF at zero of the division time). The last cumulative proportion is set to
        exactly 1, and a quiescent type has mean -1."""
        from scipy.special import ndtr  # what scipy.stats.norm.cdf computes, without importing scipy.stats

        out = np.zeros((self.n_types, 4), dtype=np.float64)
        out[:, 0] = np.cumsum(self.proportions)
        out[-1, 0] = 1.0
        out[:, 1] = self.means
        out[:, 2] = self.stds
        dividing = ~self.quiescent & (self.stds > 0)
        out[dividing, 3] = ndtr(-self.means[dividing] / self.stds[dividing])
        return out

    def __repr__(self):
        rows = ", ".join(f"{n}: {p:.3g} {'quiescent' if m < 0 else f'N({m:g}, {s:g})'}"
                         for n, p, m, s in zip(self.names, self.proportions, self.means, self.stds))
        return f"CellTypes({rows})"


def _named(name, build, *args):
    """``build(*args)``, with a ValueError's message prefixed by the argument's name (unless it starts with it)."""
    try:
        return build(*args)
    except ValueError as exc:
        message = str(exc)
        if message.split(" ", 1)[0] == name:
            raise
        raise ValueError(f"{name}: {message}") from None


def _coerced(value, name, cls, columns, accepted):
    """``value`` as a ``cls``: itself, from its text, or from an array of ``columns`` columns (one field each)."""
    if isinstance(value, cls):
        return value
    if isinstance(value, str):
        return _named(name, cls.from_text, value)
    arr = check_array(value, name, dtype="iuf")
    if arr.ndim != 2 or arr.shape[1] != columns:
        raise ValueError(f"{name} must be {accepted}, got shape {arr.shape}")
    return _named(name, cls.from_arrays, *(arr[:, k] for k in range(columns)))


def as_histogram(value, name="histogram") -> InitialHistogram:
    """An :class:`InitialHistogram` from one, from text, or from a pair of arrays / an (B, 2) array.

    Errors name the argument (``name``) first, then the field at fault.
    """
    if isinstance(value, tuple) and len(value) == 2:
        return _named(name, InitialHistogram.from_arrays, *value)
    return _coerced(value, name, InitialHistogram, 2,
                    "an InitialHistogram, its text, a (fluorescence, counts) pair or an array of shape (B, 2)")


def as_types(value, name="types") -> CellTypes:
    """A :class:`CellTypes` from one, from text, or from an array of shape (T, 3).

    Errors name the argument (``name``) first, then the field at fault.
    """
    return _coerced(value, name, CellTypes, 3,
                    "a CellTypes, its text or an array of shape (T, 3) (proportion, mean, std)")


def simulation_inputs(histogram, types, tau_max, phi_min, seed):
    """The validated inputs every simulator of the unit takes (the GPU methods and the reference).

    Returns
    -------
    tuple
        ``(InitialHistogram, CellTypes, tau_max, phi_min, seed)``; a seed of None is 0.
    """
    hist = as_histogram(histogram)
    cell_types = as_types(types)
    tau_max = check_float(tau_max, "tau_max", minimum=0)
    phi_min = check_float(phi_min, "phi_min", minimum=0, min_inclusive=False)
    seed = check_seed(seed)
    return hist, cell_types, tau_max, phi_min, 0 if seed is None else seed
