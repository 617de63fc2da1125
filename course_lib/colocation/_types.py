"""Constants and result types shared by the miners of Unit 8 (:mod:`~course_lib.colocation.api`,
:mod:`~course_lib.colocation.cpu`, :mod:`~course_lib.colocation.reference`, the kernels)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["MAX_PATTERN", "LevelStats", "MiningResult"]

#: Largest pattern size (features per pattern) the kernels handle.
MAX_PATTERN = 8


@dataclass(frozen=True)
class LevelStats:
    """What happened to the candidates of one pattern size.

    Attributes
    ----------
    size : int
        Features per pattern.
    candidates : int
        Candidates from Apriori.
    after_filter : int
        Candidates whose upper bound of PI reached the threshold.
    prevalent : int
        Candidates whose participation index reached the threshold.
    rows : int
        Row instances found for the candidates that were refined.
    """

    size: int
    candidates: int
    after_filter: int
    prevalent: int
    rows: int


@dataclass
class MiningResult:
    """Prevalent patterns and how the search went.

    Attributes
    ----------
    patterns : dict
        ``{pattern: PI}``, patterns as sorted tuples of feature ids (size >= 2).
    levels : list of LevelStats
    method : str
    stats : dict
        GPU only: ``pinned_allocations`` and ``pinned_bytes`` (page-locked host memory allocated)
        and ``uploads`` (host-to-device uploads staged by the miner).
    """

    patterns: dict
    levels: list = field(default_factory=list)
    method: str = ""
    stats: dict = field(default_factory=dict)

    def __repr__(self):
        shown = ", ".join(f"{p}: {pi:.3f}" for p, pi in list(self.patterns.items())[:6])
        more = ", ..." if len(self.patterns) > 6 else ""
        return f"MiningResult({len(self.patterns)} prevalent patterns: {{{shown}{more}}}, method={self.method!r})"
