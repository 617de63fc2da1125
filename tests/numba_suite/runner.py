"""numba-cuda's simulator tests, run on the stock simulator and on course_lib's scheduler.

numba-cuda ships its test suite in the wheel. The tests that its simulator runs
(``numba.cuda.tests.cudapy``, ``cudasim`` and ``doc_examples``; the others need a GPU
or test the compiler) are run twice, each in a fresh ``pytest`` process:

* ``stock``: Numba's own simulator, untouched;
* ``course``: with course_lib's hooks installed (block scheduler, warp primitives,
  ticking atomics) in the test process and in every process its tests spawn (see
  ``site/sitecustomize.py``).

Every test must end the same way in both runs. The one exception allowed is a test
that fails on the stock simulator and passes on course_lib's (the stock simulator runs
each CUDA thread on its own OS thread, so output of ``print`` in kernels can interleave
mid-line: ``test_print`` fails there now and then).

Run ``python -m tests.numba_suite.runner`` (or ``pytest tests/sim/test_numba_suite.py
--numba-suite``, which CI does as a step of its own). Needs the ``test`` extra
(filecheck, ml_dtypes: numba-cuda's test dependencies).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SUITES = ("numba.cuda.tests.cudapy", "numba.cuda.tests.cudasim", "numba.cuda.tests.doc_examples")
#: Seconds one numba-cuda test may take before it counts as a failure (a hang).
PER_TEST_TIMEOUT = 120
#: Seconds a whole run may take.
RUN_TIMEOUT = 900


_PROBE = "from numba.cuda.simulator import kernel; print(kernel.BlockManager.__module__)"


def run_suite(mode, junit, *, suites=SUITES, per_test_timeout=PER_TEST_TIMEOUT, extra=()):
    """Run the suites in a child pytest; ``mode`` is "stock" or "course". Returns (returncode, seconds, output)."""
    if mode not in ("stock", "course"):
        raise ValueError(f"mode must be 'stock' or 'course', got {mode!r}")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", COURSE_BACKEND="sim", PYTHONDONTWRITEBYTECODE="1")
    env.pop("COURSE_SIM_HOOKS", None)
    # A temporary folder of each run's own: numba's test helpers put caches under tempfile.gettempdir(), in
    # folders named after the test, and the two runs go side by side (run_both).
    tmp = Path(junit).parent / f"{mode}-tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    env["TMPDIR"] = str(tmp)
    paths = [str(ROOT)]
    if mode == "course":
        env["COURSE_SIM_HOOKS"] = "1"
        paths.insert(0, str(HERE / "site"))
    env["PYTHONPATH"] = os.pathsep.join(paths + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                                 if p and p not in paths])
    cmd = [sys.executable, "-m", "pytest", "-c", str(HERE / "pytest.ini"), "--rootdir", str(HERE),
           "-p", "tests.numba_suite.plugin", "-p", "no:cacheprovider", "--import-mode=importlib",
           f"--timeout={per_test_timeout}", f"--junitxml={junit}", "-q", "--no-header", "--tb=short",
           "--pyargs", *suites, *extra]
    # The scheduler a process of this run gets (the hooks must be in place, or not, before any test).
    probe = subprocess.run([sys.executable, "-c", _PROBE], env=env, cwd=str(HERE), capture_output=True, text=True,
                           timeout=300)
    manager = probe.stdout.strip()
    wanted = "course_lib.sim._engine" if mode == "course" else "numba.cuda.simulator.kernel"
    if manager != wanted:
        raise RuntimeError(f"the {mode} run would use the block manager of {manager or '?'}, not {wanted}:\n"
                           f"{probe.stderr[-3000:]}")
    start = time.monotonic()
    proc = subprocess.run(cmd, env=env, cwd=str(HERE), capture_output=True, text=True, timeout=RUN_TIMEOUT)
    return proc.returncode, time.monotonic() - start, proc.stdout + proc.stderr


def outcomes(junit) -> dict:
    """Test id -> "passed", "failed", "error", "skipped" or "xfailed", from a JUnit XML file."""
    out = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        test_id = f"{case.get('classname')}::{case.get('name')}"
        result = "passed"
        for child in case:
            if child.tag == "failure":
                result = "failed"
            elif child.tag == "error":
                result = "error"
            elif child.tag == "skipped":
                result = "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
        if result == "passed" or out.get(test_id, "passed") == "passed":
            out[test_id] = result  # an error in teardown comes as a second entry: keep the worse
    return out


def compare(stock: dict, course: dict) -> list:
    """Differences that are regressions: (test id, stock outcome, course outcome)."""
    bad = []
    for test_id in sorted(set(stock) | set(course)):
        s, c = stock.get(test_id, "missing"), course.get(test_id, "missing")
        if s != c and not (s in ("failed", "error") and c == "passed"):
            bad.append((test_id, s, c))
    return bad


def run_both(workdir, **options) -> dict:
    """Run stock and course side by side (two processes: CI has two cores); the outcomes, counts, wall times
    and regressions. Each run is a child pytest of its own, so neither can disturb the other's results."""
    def one(mode):
        junit = Path(workdir) / f"{mode}.xml"
        code, seconds, output = run_suite(mode, junit, **options)
        if not junit.exists():
            raise RuntimeError(f"the {mode} run of numba-cuda's tests wrote no report (exit {code}):\n{output[-4000:]}")
        found = outcomes(junit)
        return {"outcomes": found, "counts": dict(Counter(found.values())), "seconds": seconds, "output": output}

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        runs = {mode: pool.submit(one, mode) for mode in ("stock", "course")}
        result = {mode: future.result() for mode, future in runs.items()}
    result["regressions"] = compare(result["stock"]["outcomes"], result["course"]["outcomes"])
    result["improved"] = sorted(t for t, s in result["stock"]["outcomes"].items()
                                if s in ("failed", "error") and result["course"]["outcomes"].get(t) == "passed")
    return result


def summary(result) -> str:
    lines = []
    for mode in ("stock", "course"):
        r = result[mode]
        counts = ", ".join(f"{n} {k}" for k, n in sorted(r["counts"].items()))
        lines.append(f"{mode:6s} simulator: {counts} in {r['seconds']:.0f} s")
    if result["improved"]:
        lines.append("fail on the stock simulator, pass on course_lib's: " + ", ".join(result["improved"]))
    if result["regressions"]:
        lines.append(f"{len(result['regressions'])} test(s) end differently on course_lib's scheduler:")
        lines += [f"  {t}: stock {s}, course {c}" for t, s, c in result["regressions"]]
    else:
        lines.append("every test ends as on the stock simulator (or better)")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", help="only tests matching this pytest -k expression")
    args = parser.parse_args(argv)
    extra = ("-k", args.k) if args.k else ()
    with tempfile.TemporaryDirectory() as tmp:
        result = run_both(tmp, extra=extra)
    print(summary(result))
    return 1 if result["regressions"] else 0


if __name__ == "__main__":
    sys.exit(main())
