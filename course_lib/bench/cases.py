"""What a unit declares to the shared benchmark layer: its probe cases and its cost model.

The layer names no unit. Each unit's ``course_lib/<unit>/bench.py`` declares, beside its own
benchmark (``run``, ``summary``, ``plot``):

- ``PROBE``, a :class:`Probe`: the inputs the GPU probe builds once (host time, sizes) and its
  cases, one :class:`Case` per row or group of rows: what the row measures, at which size, which
  method of the unit's API it calls, whether that method is the unit's default GPU method, what the
  call's result counts (steps, restarts, levels, merges) and how long the case is expected to take;
- ``COST_MODEL``, a :class:`CostModel`: how :mod:`course_lib.bench.model` predicts the unit's
  committed GPU rows;
- ``HOST_COSTS``: ``{figure: reader}``, the committed rows from which
  :mod:`course_lib.bench.costs` reads the host cost of a launch, a copy or an allocation.

:func:`course_lib.registry.declared` finds them. A unit adds a GPU method to its probe by adding
it to its API's list of GPU methods: :func:`method_cases` makes one case per listed method, so
a method the declaration has never heard of is still timed (with the default method's call).

>>> def run(x, method="fast"):
...     return x
>>> default_gpu_method(run, ("fast", "slow"))
'fast'
>>> default_gpu_method(lambda x, method="cpu": x, ("fast", "slow"))  # a CPU default: the first GPU method
'fast'
>>> cases = method_cases(("fast", "slow"), "fast", lambda m: Case(m, "end to end", "n = 10", 1.0, "call",
...                      lambda inputs: None), teaching={"slow": dict(expected_seconds=0.5)})
>>> [(c.variant, c.default, c.method, c.expected_seconds) for c in cases]
[('fast', True, 'fast', 1.0), ('slow', False, 'slow', 0.5)]
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field, replace
from typing import Any, Callable

__all__ = ["KINDS", "Case", "CostModel", "Inputs", "Probe", "default_gpu_method", "method_cases"]

#: How the probe measures a case:
#: ``"call"``: a public call as a user makes it, on the GPU: warmed up (compilation), timed plainly
#: ``repeat`` times (the device synchronised before and after each), then once inside the split
#: (:mod:`course_lib.bench.split`); ``run(inputs)`` returns the zero-argument call.
#: ``"cpu"``: a CPU path's call, timed the same way without the split.
#: ``"rows"``: the case measures itself (device time of queued launches, a library peer, SASS
#: counts): ``run(inputs)`` returns the rows.
KINDS = ("call", "cpu", "rows")


@dataclass(frozen=True)
class Inputs:
    """What a unit's probe builds once on the host and hands to each case.

    Attributes
    ----------
    label : str
        The inputs and their sizes, e.g. ``"Kronecker scale 22, edge factor 16 (128M arcs)"``.
    build : callable
        ``build() -> dict``, the inputs by name.
    expected_seconds : float
        Host seconds to build them on the probe's machine.
    """

    label: str
    build: Callable[[], dict]
    expected_seconds: float


@dataclass(frozen=True)
class Case:
    """One case of a unit's probe: a row (or, for ``kind="rows"``, a few rows).

    Attributes
    ----------
    variant : str
        The row's ``variant`` (for a call, the method's name or the method and its options).
    measures : str
        What the row measures, one phrase (written into the row and the plan).
    size : str
        The input the row runs on.
    expected_seconds : float
        Seconds the case takes on an H100/H200, compilation and every repetition included.
    kind : str
        One of :data:`KINDS`.
    run : callable
        ``run(inputs)``: the zero-argument call (kinds ``"call"``, ``"cpu"``) or the rows (``"rows"``).
    method : str or None
        The method of the unit's API the row calls.
    default : bool
        Whether ``method`` is the unit's default GPU method (read from the API, see
        :func:`default_gpu_method`); the probe's JSON names the default row.
    counts : callable or None
        ``counts(result) -> dict``: what the call's result counts, as the method counts them (steps
        kept and restarts apart, levels, merges); written into the row.
    per : tuple or None
        ``(count, name)``: the row also gets ``seconds_per_<name>`` = seconds / ``row[count]`` (and the
        best run's, ``seconds_best_per_<name>``) and ``<count>_per_s``.
    derive : callable or None
        ``derive(row) -> dict``: fields computed from the finished row (rates from its seconds and counts).
    repeat : int
        Plain timed calls (kinds ``"call"`` and ``"cpu"``).
    split : bool
        Whether a ``"call"`` also runs once inside the split (device time, launches, copies, allocations).
    fields : dict
        Fields added to the row as they are (sizes, options).
    """

    variant: str
    measures: str
    size: str
    expected_seconds: float
    kind: str
    run: Callable[[dict], Any]
    method: str | None = None
    default: bool = False
    counts: Callable[[Any], dict] | None = None
    per: tuple | None = None
    derive: Callable[[dict], dict] | None = None
    repeat: int = 5
    split: bool = True
    fields: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"case {self.variant!r}: kind must be one of {KINDS}, not {self.kind!r}")
        if self.expected_seconds <= 0 or self.repeat < 1:
            raise ValueError(f"case {self.variant!r}: expected_seconds must be > 0 and repeat >= 1")


@dataclass(frozen=True)
class Probe:
    """A unit's GPU probe: its inputs, its cases and the notes its rows give.

    Attributes
    ----------
    inputs : Inputs or None
        Built once before the cases (None: each case builds what it needs).
    cases : tuple of Case
        In the order they run; exactly one of the ``"call"`` cases is the default.
    notes : callable or None
        ``notes(rows) -> list of str``, e.g. the default against the fastest CPU path.
    """

    inputs: Inputs | None
    cases: tuple
    notes: Callable[[list], list] | None = None

    def __post_init__(self):
        defaults = [c.variant for c in self.cases if c.default]
        if len(defaults) != 1:
            raise ValueError(f"a probe has exactly one default case, not {defaults or 'none'}")
        variants = [c.variant for c in self.cases if c.kind != "rows"]
        if len(set(variants)) != len(variants):
            raise ValueError(f"two cases of a probe make the same row: {sorted(variants)}")

    def expected_seconds(self) -> float:
        """The probe's expected seconds: its inputs and every case."""
        return float((self.inputs.expected_seconds if self.inputs else 0.0)
                     + sum(c.expected_seconds for c in self.cases))

    @property
    def default(self) -> Case:
        """The case of the unit's default GPU method."""
        return next(c for c in self.cases if c.default)


@dataclass(frozen=True)
class CostModel:
    """How the cost model predicts a unit's committed GPU rows (:mod:`course_lib.bench.model`).

    Attributes
    ----------
    predict : callable
        ``predict(row, run, costs) -> (seconds, terms)`` or ``(None, why)``; ``run`` is the
        results file the row comes from, ``costs`` the committed
        :class:`~course_lib.bench.costs.HostCosts`.
    label : callable
        ``label(row) -> str``, what tells the row apart from the other rows of its variant.
    calibration : callable
        ``calibration(row) -> bool``: a row the committed host costs were read from (agreement
        there is by construction, and the error leaves it out).
    """

    predict: Callable[[dict, dict, Any], tuple]
    label: Callable[[dict], str]
    calibration: Callable[[dict], bool] = lambda row: False


def default_gpu_method(function, gpu_methods) -> str:
    """The unit's default GPU method, read from its API.

    ``function``'s default ``method`` when it is one of ``gpu_methods`` (the method a user gets
    without asking); otherwise (a public call whose default runs on the CPU) the first of
    ``gpu_methods``, which the units list first as the GPU method to use.

    Raises
    ------
    ValueError
        ``gpu_methods`` is empty.
    """
    gpu_methods = tuple(gpu_methods)
    if not gpu_methods:
        raise ValueError("a unit's probe needs at least one GPU method")
    parameter = inspect.signature(function).parameters.get("method")
    default = None if parameter is None else parameter.default
    return default if default in gpu_methods else gpu_methods[0]


def method_cases(methods, default: str, make: Callable[[str], Case], *, teaching: dict | None = None) -> tuple:
    """One ``"call"`` case per GPU method of a unit's API.

    Parameters
    ----------
    methods : iterable of str
        The API's GPU methods, every one timed.
    default : str
        The default GPU method (one of ``methods``): its case is marked ``default``.
    make : callable
        ``make(method) -> Case``: the call as a user makes it with that method.
    teaching : dict, optional
        ``{method: {field: value}}``: fields of :class:`Case` replaced for an older method kept as a
        teaching row (a smaller sample, fewer repetitions, no split); the default method's case is
        never replaced.

    Raises
    ------
    ValueError
        ``default`` is not one of ``methods``.
    """
    methods = tuple(methods)
    if default not in methods:
        raise ValueError(f"the default GPU method {default!r} is not one of the methods {methods}")
    cases = []
    for method in methods:
        case = replace(make(method), method=method, default=method == default)
        if method != default and method in (teaching or {}):
            case = replace(case, **teaching[method])
        cases.append(case)
    return tuple(cases)
