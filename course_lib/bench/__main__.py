"""``python -m course_lib.bench <unit> [--quick] [--out DIR]``: run a unit's benchmark."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys

from .. import UNITS, device
from . import stamp, write_results


def benchmarked_units() -> list:
    """The units that have a ``bench`` module."""
    def has_bench(unit):
        try:
            return importlib.util.find_spec(f"course_lib.{unit}.bench") is not None
        except ModuleNotFoundError:  # the unit's package itself is missing
            return False

    return sorted(u for u in UNITS if has_bench(u))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_lib.bench",
                                     description="Benchmark a course unit; writes JSON and a plot.")
    parser.add_argument("unit", choices=benchmarked_units())
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--out", default="benchmarks/results", help="output folder (default: %(default)s)")
    ns = parser.parse_args(argv)
    module = importlib.import_module(f"course_lib.{ns.unit}.bench")
    if device.is_simulator():
        print("No GPU: running the CPU part only (simulator timings say nothing about a GPU).")
    results = stamp(ns.unit)
    results.update(module.run(quick=ns.quick))
    json_path, png_path = write_results(results, ns.out, getattr(module, "plot", None))
    print(module.summary(results) if hasattr(module, "summary") else "")
    print(f"wrote {json_path}" + (f" and {png_path}" if png_path else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
