"""``python -m course_lib.bench <unit> [--quick] [--gpu] [--out DIR]``: run a unit's benchmark.

``--gpu`` is the run whose results are committed: it refuses to start without a GPU (exit
status 2, saying why) and writes into the checkout's ``benchmarks/results/``
(:data:`course_lib.bench.RESULTS_DIR`), where lessons read the newest run
(:func:`course_lib.bench.gpu_figures`).

``python -m course_lib.bench probe [units...] [--dry-run]`` is the GPU probe of every unit, minutes
long (:mod:`course_lib.bench.probe`); ``python -m course_lib.bench model [units...]`` prints the cost
model's error against every committed GPU row (:mod:`course_lib.bench.model`).

``python -m course_lib.bench grading`` measures the grader's throughput on a synthetic class instead
(:mod:`course_lib.grading.throughput`).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys

from .. import UNITS, device
from . import RESULTS_DIR, load_note, stamp, write_results
from .. import bench as _bench

#: Exit status of ``--gpu`` without a GPU.
NEEDS_GPU = 2


def benchmarked_units() -> list:
    """The units that have a ``bench`` module."""
    def has_bench(unit):
        try:
            return importlib.util.find_spec(f"course_lib.{unit}.bench") is not None
        except ModuleNotFoundError:  # the unit's package itself is missing
            return False

    return sorted(u for u in UNITS if has_bench(u))


#: Benchmarks that are not a unit's: name -> module (with ``run(quick=...)``, ``summary`` and ``plot``).
OTHER = {"grading": "course_lib.grading.throughput"}


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["probe"]:
        from .probe import main as probe_main

        return probe_main(args[1:])
    if args[:1] == ["model"]:
        from .model import main as model_main

        return model_main(args[1:])
    parser = argparse.ArgumentParser(prog="python -m course_lib.bench",
                                     description="Benchmark a course unit; writes JSON and a plot.")
    parser.add_argument("unit", choices=benchmarked_units() + sorted(OTHER))
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--gpu", action="store_true",
                        help="the GPU run (needs an NVIDIA GPU): CPU part, GPU part and GPU library peers, written to "
                             "the checkout's benchmarks/results/ unless --out says otherwise")
    parser.add_argument("--out", default=None,
                        help="output folder (default: benchmarks/results, the checkout's with --gpu)")
    parser.add_argument("--problem-sets", nargs="+", default=None,
                        help="grading only: the problem sets of the synthetic class (default: all)")
    parser.add_argument("--submissions", type=int, default=None,
                        help="grading only: submissions per problem set (default 100; the notes say when fewer)")
    ns = parser.parse_args(argv)
    if ns.unit != "grading" and (ns.problem_sets or ns.submissions):
        parser.error("--problem-sets and --submissions are options of the grading benchmark")
    if ns.gpu and not device.is_gpu():
        print(f"`python -m course_lib.bench {ns.unit} --gpu` needs an NVIDIA GPU and its driver, and this machine "
              f"runs the {device.backend()!r} backend (no GPU found, or the simulator was asked for). Nothing was "
              f"measured. Run it on a GPU machine, or without --gpu for the CPU part only.", file=sys.stderr)
        return NEEDS_GPU
    out_dir = ns.out or (RESULTS_DIR if ns.gpu else "benchmarks/results")
    module = importlib.import_module(OTHER.get(ns.unit, f"course_lib.{ns.unit}.bench"))
    if device.is_simulator() and ns.unit not in OTHER:
        print("No GPU: running the CPU part only (simulator timings say nothing about a GPU).")
    results = stamp(ns.unit)
    extra = {k: v for k, v in (("problem_sets", ns.problem_sets), ("submissions", ns.submissions)) if v}
    results.update(module.run(quick=ns.quick, **extra))
    results["quick"] = bool(ns.quick)  # small sizes: named apart from a full run (write_results)
    results["load_average_end"] = list(os.getloadavg())
    results.setdefault("notes", []).append(load_note(results))
    if ns.gpu and not any(v.startswith("cupy") for v in results["versions"]):
        results.setdefault("notes", []).append("CuPy is not installed: no GPU library peer (CuPy, cuSPARSE) measured")
    json_path, png_path = write_results(results, out_dir, getattr(module, "plot", None))
    print(module.summary(results) if hasattr(module, "summary") else "")
    print(f"wrote {json_path}" + (f" and {png_path}" if png_path else ""))
    return 0


if __name__ == "__main__":
    _bench.PROGRESS = True  # a run stopped at a time limit still says how far it got (standard error)
    sys.exit(main())
