"""Technique signatures: a question's technique judged by several measured features together.

One profiler figure at one small size cannot tell a technique from its imitations (one thread
staging the whole tile loads as few bytes as the whole block staging it). A *signature* is a
list of :class:`Feature`: each a figure the course's profiler measures (global traffic,
coalescing, shared bytes allocated per block, barriers per block, atomics, shuffles, SIMT
efficiency, span), with the range the technique's cost model gives it — derived from the
model, not from one solution's exact count, so another correct loop order or thread mapping
lands inside. :func:`signature_test` measures every feature on two or more launch
configurations (blocks of several warps, and an awkward size with a partial last block) and
fails with the first feature that misses: its name, the measured value against the bound, and
what the technique would do — never the answer.

A question's docstring lists its features, their bounds and where they come from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .harness import Launch, _judge_outputs, exact, fail
from .testkinds import _outputs_test, _technique_failure

__all__ = ["Feature", "at_least", "at_most", "between", "block_barriers", "load_bytes_per_request",
           "load_sectors_per_request", "no_atomics", "profile_signature", "sample_blocks", "shared_bytes_per_block",
           "signature_test", "warp_share", "work_ratio_test"]


@dataclass(frozen=True)
class Feature:
    """One measured feature of a technique and the range its cost model allows.

    Attributes
    ----------
    name : str
        What is measured, in the feedback (``"shared bytes allocated per block"``).
    measure : callable
        ``measure(metrics, data) -> float`` (grader side), from the profile's counts: the kernel
        totals of :class:`course_lib.sim.LineProfile` (``global_load_bytes``, ``atomics``,
        ``shuffles``, ``active_lanes``...), the launch's (``thread_span``, ``barriers_per_block``,
        ``shared_bytes_per_block``, ``threads``, ``blocks``... of :class:`course_lib.sim.ProfileReport`)
        and ``shared_lane_accesses`` (shared loads and stores per lane, from the lines' requests).
    bound : callable
        ``bound(data) -> (low, high)``: the range the technique gives on these inputs.
    technique : str
        What the technique does that this feature shows (``"each block stages one tile of P
        records, not the whole input"``), told when the feature misses.
    source : str
        Where the bound comes from (the cost model), for the question's docstring.
    """

    name: str
    measure: object
    bound: object
    technique: str
    source: str = ""

    def judge(self, metrics, data):
        """None when the measured value lies in the bound, else the failure message."""
        value = self.measure(metrics, data)
        low, high = self.bound(data)
        if isinstance(value, (int, float, np.integer, np.floating)) and math.isfinite(value) and \
                low <= value <= high:
            return None
        shown = f"{value:.3g}" if isinstance(value, (int, float, np.integer, np.floating)) else repr(value)
        if low == -math.inf:
            wanted = f"at most {high:.3g}"
        elif high == math.inf:
            wanted = f"at least {low:.3g}"
        else:
            wanted = f"in [{low:.3g}, {high:.3g}]"
        return f"{self.name}: measured {shown}, the technique gives {wanted} here. The technique: {self.technique}"


def at_most(high):
    """A bound ``(-inf, high(data))``; ``high`` is a number or a function of the data."""
    return lambda data: (-math.inf, high(data) if callable(high) else high)


def at_least(low):
    """A bound ``(low(data), inf)``; ``low`` is a number or a function of the data."""
    return lambda data: (low(data) if callable(low) else low, math.inf)


def between(low, high):
    """A bound ``(low, high)``; each a number or a function of the data."""
    return lambda data: (low(data) if callable(low) else low, high(data) if callable(high) else high)


# The features several problem sets measure alike, named once: the same name and measure everywhere;
# each question gives the bound its cost model allows and says what its technique does.

def _named_feature(function_name: str, name: str, measure, metric: str):
    """A constructor of the feature ``name``: ``make(bound, technique, source="") -> Feature``.

    Parameters
    ----------
    function_name : str
        The constructor's own name (in ``help()`` and tracebacks).
    name : str
        The feature's name in the feedback.
    measure : callable
        ``measure(metrics, data) -> float``.
    metric : str
        What ``measure`` reads, for the constructor's docstring.

    Returns
    -------
    callable
    """
    def make(bound, technique: str, source: str = "") -> Feature:
        return Feature(name, measure, bound, technique, source)

    make.__name__ = make.__qualname__ = function_name
    make.__doc__ = f"""The feature ``"{name}"`` ({metric}).

    Parameters
    ----------
    bound : callable
        ``bound(data) -> (low, high)``, e.g. :func:`between`.
    technique, source : str
        As in :class:`Feature`.

    Returns
    -------
    Feature
    """
    return make


block_barriers = _named_feature("block_barriers", "block barriers (syncthreads) per block",
                                lambda m, data: m["barriers_per_block"], "the launch's ``barriers_per_block``")
shared_bytes_per_block = _named_feature("shared_bytes_per_block", "shared bytes allocated per block",
                                        lambda m, data: m["shared_bytes_per_block"],
                                        "the launch's ``shared_bytes_per_block``")
load_bytes_per_request = _named_feature("load_bytes_per_request", "global load bytes per request",
                                        lambda m, data: m["global_load_bytes"] / max(m["global_load_requests"], 1),
                                        "global bytes loaded over load requests: at least 32 when a request serves "
                                        "a warp's lanes")
load_sectors_per_request = _named_feature(
    "load_sectors_per_request", "global load sectors per request",
    lambda m, data: m["global_load_sectors"] / max(m["global_load_requests"], 1),
    "32-byte sectors the global loads touch over load requests: 4 when a warp's 32 lanes read 32 consecutive "
    "4-byte words, up to 32 when each lane's word lies in its own sector")
warp_share = _named_feature("warp_share", "busiest warp's share of its block's work",
                            lambda m, data: m["worst_warp_share"],
                            "the launch's ``worst_warp_share``: per block, its busiest warp's instructions over the "
                            "mean per warp (a block doing less than the median block measured against the median "
                            "one's), in the worst block that ran; about 1 when the warps share every block's work, "
                            "about the warps per block when one warp does it while the others wait, in any block")
_atomics = _named_feature("_atomics", "atomic operations", lambda m, data: m["atomics"], "the kernel's ``atomics``")


def no_atomics(technique: str, source: str = "") -> Feature:
    """The feature ``"atomic operations"``, bound to 0: every output has one owner, which stores it plainly.

    Parameters
    ----------
    technique, source : str
        As in :class:`Feature`.

    Returns
    -------
    Feature
    """
    return _atomics(between(0, 0), technique, source)


def _adjacent(rng, dims, most):
    """Flat (x fastest) indices of a block drawn anywhere it has a next neighbour along each of the first ``most``
    dimensions of two blocks or more, and of those neighbours."""
    along = [d for d, size in enumerate(dims) if size >= 2][:most]
    anchor = [int(rng.integers(size - 1 if d in along else size)) for d, size in enumerate(dims)]
    strides = [math.prod(dims[:d]) for d in range(len(dims))]
    flat = sum(c * stride for c, stride in zip(anchor, strides))
    return [flat] + [flat + strides[d] for d in along]


def sample_blocks(rng, grid, k: int = 3) -> tuple | None:
    """Draw ``k`` distinct blocks of a grid for the profiler to run (the grader's draw, at grading time).

    Any block can be drawn (the first, the last with its partial tail, and the interior), so a kernel
    cannot tell which of its blocks are measured. With ``k >= 2`` the draw holds a block and its next
    neighbour along x (and, with ``k >= 3`` in a grid of two or more dimensions, along y too), the
    rest drawn anywhere: a kernel that works one way in every other block (odd ``blockIdx.x``, odd
    ``blockIdx.y``, a checkerboard) has both ways measured on every draw. A grid of at most ``k``
    blocks is not sampled.

    Parameters
    ----------
    rng : numpy.random.Generator
        The test's generator (the grading seed's).
    grid : int or tuple of int
        The launch's grid.
    k : int
        Blocks to draw.

    Returns
    -------
    tuple or None
        Block indices (ints for a 1-D grid, else ``(x, y, z)`` tuples) for :class:`Launch` ``blocks``;
        None for a grid of at most ``k`` blocks (it runs whole).
    """
    dims = (int(grid),) if isinstance(grid, (int, np.integer)) else tuple(int(g) for g in grid)
    total = math.prod(dims)
    if total <= k:
        return None
    picks = _adjacent(rng, dims, k - 1) if k >= 2 else []
    rest = np.setdiff1d(np.arange(total), picks)
    picks = sorted(picks + [int(i) for i in rng.choice(rest, size=k - len(picks), replace=False)])
    if len(dims) == 1:
        return tuple(picks)
    full = dims + (1,) * (3 - len(dims))
    return tuple(tuple(int(v) for v in np.unravel_index(i, full, order="F")) for i in picks)


def profile_signature(launch: Launch) -> dict:
    """Run a launch under the course's profiler (in the simulator, on any backend): the kernel totals
    and the launch's counts (span, barriers, shared bytes per block, warp share) in one dict, and the
    outputs. A launch with ``blocks`` profiles only that sample of its grid."""
    from .coverage import note_profile
    from .trusted import trusted_profile

    args = {name: np.array(v) if isinstance(v, np.ndarray) else v for name, v in launch.args.items()}
    options = {} if launch.blocks is None else {"blocks": launch.blocks}
    report = trusted_profile(launch.kernel, launch.grid, launch.block, *args.values(), **options)
    note_profile(report)
    metrics = {k: float(v) for k, v in report.total.as_dict().items() if isinstance(v, (int, float))}
    metrics.update({k: float(v) for k, v in report.launch_metrics().items() if isinstance(v, (int, float))})
    # Shared loads and stores counted per lane (a request serves the lanes executing its line): how often the
    # threads read a staged value, whatever the warps' shapes.
    metrics["shared_lane_accesses"] = float(sum(line.shared_requests * line.active_lanes / line.warp_instructions
                                                for line in report.lines if line.warp_instructions))
    return {"metrics": metrics, "outputs": {name: args[name] for name in launch.outputs}}


def _measurement(features, metrics, data):
    """``{"measured", "low", "high", "unit"}`` of the first feature out of its bound, else of the first
    feature; a bound open below starts at 0 (every feature is a count or a ratio); features with no upper
    bound are left out. None if no feature has a finite range (the report then shows no measurement)."""
    first = None
    for feature in features:
        value = feature.measure(metrics, data)
        low, high = feature.bound(data)
        low = 0.0 if low == -math.inf else low
        if not isinstance(value, (int, float, np.integer, np.floating)) or not all(
                math.isfinite(x) for x in (value, low, high)):
            continue
        entry = {"measured": float(value), "low": float(low), "high": float(high), "unit": feature.name}
        first = first or entry
        if not low <= value <= high:
            return entry
    return first


def signature_test(name: str, points: float, *, configs, launch, expect, features, compare=None, label=None,
                   hidden=False, hint="", hints=None):
    """The technique test of a question: every feature of its signature on every configuration.

    Parameters
    ----------
    name : str
    points : float
    configs : sequence of callable
        ``inputs(rng, info) -> data``, one per configuration; at least two (one with blocks of
        several warps, one with an awkward size and a partial last block: the grader's tests
        check each question's configurations for both). A configuration may be drawn from ``rng``
        at grading time (sizes, block shapes, a sample of the blocks of a large grid drawn with
        :func:`sample_blocks`, kept in the data as ``data["blocks"]`` and passed by ``launch`` as the
        launch's ``blocks``): the technique must hold on every configuration the question allows,
        not only on the ones a student can guess.
    launch : callable
        ``launch(answer, data) -> Launch``.
    expect : callable
        ``expect(data) -> {output: array}``: the result under the profiler must be right too (a
        kernel that does nothing passes no technique test). Not judged on a configuration whose
        data holds a sample of blocks (``data["blocks"]``: the others did not run): its features are.
    features : sequence of Feature
    compare : callable, optional
        As in :func:`course_lib.grading.authoring.harness.result_test`.
    label : callable, optional
        ``label(data) -> str`` naming the configuration in messages (visible tests only).

    A failure caps the question's points (``technique=True``).
    """
    configs, features = tuple(configs), tuple(features)
    if len(configs) < 2:
        raise ValueError(f"test {name!r}: a technique is judged on at least two configurations")
    if not features:
        raise ValueError(f"test {name!r}: a signature has at least one feature")
    compare = compare or exact

    def inputs(rng, info):
        return {"configs": [make(rng, info) for make in configs]}

    def produce(answer, data):
        return [profile_signature(launch(answer, config)) for config in data["configs"]]

    def judge(data, got, info):
        if type(got) is not list or len(got) != len(data["configs"]):
            raise fail("the profiler's counts did not come back")
        shown = None  # the measurement the class report plots: the first feature that missed, else the first
        for config, result in zip(data["configs"], got):
            if not isinstance(result, dict) or not isinstance(result.get("metrics"), dict):
                raise fail("the profiler's counts did not come back")
            where = "" if hidden or label is None else f" ({label(config)})"
            if not (isinstance(config, dict) and config.get("blocks") is not None):  # the grader's draw, not the reply
                _judge_outputs(result.get("outputs"), expect(config), config, compare, judge.rules,
                               "under the profiler" + where, None)
            metrics = {k: v for k, v in result["metrics"].items() if type(v) in (int, float)}
            missed = [m for m in (feature.judge(metrics, config) for feature in features) if m]
            measured = _measurement(features, metrics, config)
            shown = shown or measured
            if missed:
                raise _technique_failure(f"the course's profiler (course_lib.sim.profile){where}: " + "\n".join(missed),
                                        measured)
        return shown

    judge.features = features  # the class report's technique census names them
    return _outputs_test(name, points, inputs=inputs, produce=produce, judge=judge, hidden=hidden, hint=hint,
                         hints=hints, technique=True)


def work_ratio_test(name: str, *, inputs, launches, most: float, baseline: str, hidden: bool = True):
    """The work of launches relative to others of the same kernel factory on the same inputs (0 points; a failure
    caps the question): what a bound per interaction cannot see when the wrong way costs only a small factor more,
    such as the q threads of a body each summing every source at q = 2.

    Parameters
    ----------
    name : str
    inputs : callable
        ``inputs(rng, info) -> data``, drawn at grading time.
    launches : callable
        ``launches(answer, data) -> [(launch, baseline), ...]``: pairs of launches that do the same useful work,
        every block of each profiled (no ``blocks`` sample); one pair for each configuration where the technique
        could be switched (every tile a question launches, say), each judged.
    most : float or callable
        The largest ratio of the lane-statements (statements executed, times the lanes that executed them) of a
        pair's ``launch`` to those of its ``baseline`` that the technique allows; ``most(data, i)`` for pair ``i``
        where it depends on the configuration (the fixed costs of a small tile are a larger share).
    baseline : str
        The baseline launch, in the failure's message (``"the same kernel at q = 4"``).
    """
    def produce(answer, data):
        return [[profile_signature(launch)["metrics"].get("active_lanes") for launch in pair]
                for pair in launches(answer, data)]

    def judge(data, got, info):
        if type(got) is not list or not got or not all(type(pair) is list and len(pair) == 2 and all(
                type(v) is float and v > 0 for v in pair) for pair in got):
            raise fail("the profiler's counts did not come back")
        bounds = [most(data, i) if callable(most) else most for i in range(len(got))]
        # The pair nearest its bound (or furthest past it) is the one reported.
        ratio, bound = max(((work / base, bound) for (work, base), bound in zip(got, bounds)),
                           key=lambda pair: pair[0] / pair[1])
        unit = f"x the work of {baseline}"
        if not ratio <= bound:
            raise _technique_failure(f"the course's profiler (course_lib.sim.profile): {ratio:.2f} x the work of "
                                     f"{baseline}, at most {bound:g} expected: the same work spread over more "
                                     "threads adds no statements",
                                     {"measured": ratio, "low": 0.0, "high": bound, "unit": unit})
        return {"measured": ratio, "low": 0.0, "high": bound, "unit": unit}

    return _outputs_test(name, 0, inputs=inputs, produce=produce, judge=judge, hidden=hidden, hint="", hints=None,
                         technique=True)
