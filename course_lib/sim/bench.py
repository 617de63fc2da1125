"""Benchmark of the simulator tools: ``python -m course_lib.bench sim``.

Times one launch of course kernels at their simulator sizes four ways: Numba's stock
simulator, the simulator with course_lib's block scheduler (what every launch uses
after ``import course_lib``), under :func:`~course_lib.sim.check` and under
:func:`~course_lib.sim.profile`. Goal: instrumented runs at most 3x the plain
simulator. Simulator timings only: there is nothing to time on a GPU here.

The cost of numba's typing (:mod:`course_lib.sim._typing`) is measured apart: the plain
launch again with Python/NumPy arithmetic (``untyped_s``; ``typing_overhead`` is
``plain_s / untyped_s``), and the wall-clock seconds numba-cuda takes to type the kernel the
first time, with no cache (``first_typing_s``; later launches find it cached).
"""

from __future__ import annotations

import time

import numpy as np

from .. import device

GOAL_OVERHEAD = 3.0


def _cases(quick):
    """The timed launches: the kernels units declare for this benchmark (``SIMULATOR_CASES`` in their
    ``bench.py``, found through :func:`course_lib.registry.declared`), then the simulator's own."""
    from ..registry import declared
    from . import kernels

    rng = np.random.default_rng(0)
    m = 256 if quick else 1024
    data = rng.integers(0, 16, size=m).astype(np.int64)
    a = rng.random((32, 32), dtype=np.float32)
    x = rng.random(m, dtype=np.float32)
    declared_cases = [case for make in declared("SIMULATOR_CASES").values() for case in make(quick)]
    return declared_cases + [
        ("histogram (atomic)", kernels.histogram_atomic_kernel, m // 64, 64, lambda: (data, np.zeros(16, np.int64))),
        ("transpose 32x32 (padded)", kernels.transpose_padded_kernel, 1, (32, 32), lambda: (a, np.zeros_like(a))),
        ("warp shuffle sum", kernels.warp_sum_kernel, m // 64, 64, lambda: (x, np.zeros(1, np.float32))),
    ]


def _seconds(fn, repeat):
    """Least CPU time of ``repeat`` calls (the simulator runs on one core at a time; CPU time
    is not inflated by other processes sharing the machine, wall-clock time is)."""
    samples = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        samples.append(time.process_time() - t0)
    return float(min(samples))


def run(*, quick: bool) -> dict:
    """Time each case four ways; ``rows`` has the seconds and the overhead ratios."""
    from . import _hooks, _typing, check, profile
    from ._profile import _device_functions

    if not device.is_simulator():
        return {"rows": [], "notes": ["The simulator tools are timed in simulator mode (COURSE_BACKEND=sim)."]}
    repeat = 2 if quick else 5
    rows = []
    for name, kernel, grid, block, make_args in _cases(quick):
        def plain():
            kernel[grid, block](*make_args())

        _hooks.uninstall()
        try:
            stock = _seconds(plain, repeat)
        except AttributeError:  # the stock simulator has no warp primitives
            stock = None
        finally:
            _hooks.install()
        scheduled = _seconds(plain, repeat)
        fn = kernel.py_func
        with _typing.untyped(fn, *(dev.fn for dev in _device_functions(fn))):
            untyped = _seconds(plain, repeat)
        first_typing = _typing.first_typing_seconds(fn, make_args())
        checked = _seconds(lambda: check(kernel, grid, block, *make_args()), repeat)
        profiled = _seconds(lambda: profile(kernel, grid, block, *make_args()), repeat)
        rows.append({
            "case": name, "stock_s": stock, "plain_s": scheduled, "check_s": checked, "profile_s": profiled,
            "check_overhead": checked / scheduled, "profile_overhead": profiled / scheduled,
            "check_vs_stock": checked / stock if stock else None,
            "profile_vs_stock": profiled / stock if stock else None,
            "untyped_s": untyped, "typing_overhead": scheduled / untyped, "first_typing_s": first_typing,
        })
    worst = max(max(r["check_overhead"], r["profile_overhead"]) for r in rows)
    return {"rows": rows, "goal_overhead": GOAL_OVERHEAD, "worst_overhead": worst,
            "notes": ["Overheads are relative to the plain simulator with course_lib's scheduler."]}


def summary(results) -> str:
    """A table of the timings and ratios."""
    if not results["rows"]:
        return "\n".join(results["notes"])
    lines = [f"{'case':28s} {'stock s':>8s} {'plain s':>8s} {'check s':>8s} {'prof s':>8s} {'check x':>8s} "
             f"{'prof x':>8s} {'prof/stock':>10s} {'untyped s':>9s} {'typing x':>8s} {'type 1st s':>10s}"]
    for r in results["rows"]:
        stock = f"{r['stock_s']:8.3f}" if r["stock_s"] is not None else f"{'-':>8s}"
        first = f"{r['first_typing_s']:10.3f}" if r.get("first_typing_s") is not None else f"{'-':>10s}"
        lines.append(f"{r['case']:28s} {stock} {r['plain_s']:8.3f} {r['check_s']:8.3f} "
                     f"{r['profile_s']:8.3f} {r['check_overhead']:8.2f} {r['profile_overhead']:8.2f} "
                     + (f"{r['profile_vs_stock']:10.2f}" if r["profile_vs_stock"] else f"{'-':>10s}")
                     + f" {r['untyped_s']:9.3f} {r['typing_overhead']:8.2f} {first}")
    ok = "meets" if results["worst_overhead"] <= results["goal_overhead"] else "MISSES"
    lines.append(f"worst overhead {results['worst_overhead']:.2f}x: {ok} the goal of "
                 f"<= {results['goal_overhead']:.0f}x the plain simulator")
    return "\n".join(lines)


def plot(results, path):
    """Bar chart of the four timings per case."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = results["rows"]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(8, 4))
    keys = [("stock_s", "stock simulator"), ("plain_s", "course_lib scheduler"), ("check_s", "check"),
            ("profile_s", "profile")]
    width = 0.2
    xs = np.arange(len(rows))
    for k, (key, label) in enumerate(keys):
        ax.bar(xs + (k - 1.5) * width, [r[key] or 0.0 for r in rows], width, label=label)
    ax.set_xticks(xs, [r["case"] for r in rows], rotation=20, ha="right")
    ax.set_ylabel("seconds per launch (simulator)")
    ax.set_yscale("log")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
