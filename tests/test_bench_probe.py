"""The GPU probe (``python -m course_lib.bench probe``), the cases units declare for it, and the wall-time split.

The probe names no unit: each unit's ``bench.py`` declares ``PROBE`` (:mod:`course_lib.bench.cases`). These
tests hold the declarations to the units' APIs (every GPU method timed, the API's default marked), the plan
to its budget, and the measurement of a case to what its row says, without a GPU.
"""

import inspect
import json
from contextlib import contextmanager
from types import SimpleNamespace

import pytest

from course_lib import bench, device
from course_lib.bench import probe
from course_lib.bench.__main__ import main
from course_lib.bench.cases import Case, Inputs, Probe, default_gpu_method, method_cases
from course_lib.bench.split import Split

#: The units with a GPU path: each declares a probe.
PROBED = ("nbody", "spmv", "bfs", "poisson", "hac", "ica", "cellsim", "colocation")


def _api_gpu_methods(unit):
    """(the GPU methods, the default one) as each unit's API states them: the test's own reading."""
    import importlib

    api = importlib.import_module(f"course_lib.{unit}.api")
    if unit == "colocation":
        defaults = inspect.signature(api.mine).parameters
        versions = {name.split(":")[0]: opts for name, opts in api.VERSIONS.items()}
        default = next(v for v, opts in versions.items() if all(defaults[k].default == x for k, x in opts.items()))
        return tuple(versions), default
    function, methods = {
        "nbody": (getattr(api, "accelerations", None), [m for m in api.METHODS if m not in ("numpy", "cpu")]),
        "spmv": (getattr(api, "spmv", None), ["auto", *getattr(api, "GPU_METHODS", ())]),
        "bfs": (getattr(api, "traverse", None), [m for m in api.METHODS if m != "cpu"]),
        "poisson": (getattr(api, "seamless_clone", None), [m for m in api.METHODS if m not in ("cpu", "numpy")]),
        "hac": (getattr(api, "cluster", None), list(getattr(api, "GPU_METHODS", ()))),
        "ica": (getattr(api, "infomax", None), list(getattr(api, "GPU_METHODS", ()))),
        "cellsim": (getattr(api, "simulate", None), list(getattr(api, "DEVICE_METHODS", ()))),
    }[unit]
    default = inspect.signature(function).parameters["method"].default
    return tuple(methods), default if default in methods else methods[0]


def test_every_gpu_unit_declares_a_probe_that_times_each_gpu_method_of_its_api():
    probes = probe.probes()
    assert tuple(probes) == PROBED
    for unit, declared in probes.items():
        methods, default = _api_gpu_methods(unit)
        calls = {c.method: c for c in declared.cases if c.kind == "call"}
        assert set(methods) <= set(calls), (unit, sorted(set(methods) - set(calls)))
        assert declared.default.method == default and calls[default].default, unit
        assert sum(c.default for c in declared.cases) == 1
        for case in declared.cases:
            assert case.measures and case.size and case.expected_seconds > 0, (unit, case.variant)


def test_probe_dry_run_plans_every_unit_within_five_minutes(capsys):
    assert probe.BUDGET_SECONDS == 300  # half of a ten-minute device window: the GPU tests get the rest
    assert main(["probe", "--dry-run"]) == 0
    out = capsys.readouterr().out
    for unit, declared in probe.probes().items():
        assert f"\n{unit}  ({declared.expected_seconds():.0f} s; default GPU method {declared.default.method!r})" in out
    assert out.count("  DEFAULT: ") == len(PROBED)
    assert 0 < probe.plan_seconds() <= probe.BUDGET_SECONDS
    assert f"total {probe.plan_seconds():.0f} s of {probe.BUDGET_SECONDS} s" in out and "OVER BUDGET" not in out
    assert "N = 1,048,576" in out and "Kronecker scale 22" in out and "cusparse" in out.lower()


def test_probe_narrows_to_units_refuses_unknown_ones_and_flags_an_over_budget_plan(capsys, monkeypatch):
    assert main(["probe", "bfs", "hac", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("GPU probe plan (2 units") and "\nnbody" not in out
    with pytest.raises(SystemExit):
        main(["probe", "nosuchunit", "--dry-run"])
    monkeypatch.setattr(probe, "BUDGET_SECONDS", 10)
    assert main(["probe", "--dry-run"]) == 1 and "OVER BUDGET" in capsys.readouterr().out


def test_probe_without_a_gpu_measures_nothing(capsys, tmp_path):
    if device.is_gpu():
        pytest.skip("a GPU is present")
    assert main(["probe", "poisson", "--out", str(tmp_path)]) == 2
    assert "needs an NVIDIA GPU" in capsys.readouterr().err and not list(tmp_path.iterdir())


def test_the_default_gpu_method_is_read_from_the_api_and_a_new_method_is_probed():
    def api_call(x, method="persistent"):
        return x

    assert default_gpu_method(api_call, ("fused", "persistent")) == "persistent"
    assert default_gpu_method(lambda x, method="cpu": x, ("persistent", "fused")) == "persistent"
    with pytest.raises(ValueError, match="at least one GPU method"):
        default_gpu_method(api_call, ())
    # A method the API adds is timed with the default's call; an older one keeps its teaching settings.
    from course_lib.hac import bench as hac_bench

    cases = method_cases(("gpu_persistent", "gpu", "gpu_rounds"), "gpu_persistent", hac_bench._cluster_case,
                         teaching={"gpu": dict(repeat=1), "gpu_persistent": dict(repeat=9)})
    assert [(c.method, c.default, c.repeat) for c in cases] == [("gpu_persistent", True, 3), ("gpu", False, 1),
                                                                 ("gpu_rounds", False, 3)]
    with pytest.raises(ValueError, match="not one of the methods"):
        method_cases(("gpu",), "gpu_persistent", hac_bench._cluster_case)
    with pytest.raises(ValueError, match="exactly one default"):
        Probe(None, tuple(c for c in cases if not c.default))


@contextmanager
def _no_gpu_split():
    """The split without a GPU: nothing is counted, the wall time is kept (its report's shape is the real one)."""
    yield Split(elapsed=lambda a, b: 0.0)


def _fake_probe(calls):
    def call(inputs):
        def run():
            calls.append(inputs["n"])
            return SimpleNamespace(n_steps=3, restarts=2, completed=4)
        return run

    def counts(result):
        return {"steps": result.n_steps, "restarts": result.restarts, "step_calls": result.completed + result.restarts}

    return Probe(Inputs("n = 7", lambda: {"n": 7}, 0.1), (
        Case("fast", "a call", "n = 7", 1.0, "call", call, method="fast", default=True, counts=counts,
             per=("step_calls", "step"), repeat=4, fields={"n": 7}),
        Case("own", "rows measured by the case", "n = 7", 1.0, "rows", lambda inputs: [{"variant": "k", "seconds": 2.0}]),
        Case("cpu", "a CPU path", "n = 7", 1.0, "cpu", call, repeat=2),
        Case("broken", "a case that fails", "n = 7", 1.0, "rows", lambda inputs: 1 / 0),
    ), notes=lambda rows: [f"{len(rows)} rows"])


def test_a_call_is_timed_plainly_and_repeated_beside_its_split_with_its_counts():
    calls = []
    rows, notes = probe.run_probe(_fake_probe(calls), synchronize=lambda: None, splitter=_no_gpu_split)
    assert calls == [7] * (1 + 4 + 1) + [7] * (1 + 2)  # warm-up, 4 plain, 1 split; CPU: warm-up, 2 plain
    call, own, cpu = rows
    assert call["default"] and call["method"] == "fast" and call["scope"] == "end_to_end" and call["n"] == 7
    assert call["repetitions"] == 4 and len(call["round_seconds"]) == 4
    assert call["seconds_best"] == min(call["round_seconds"]) <= call["seconds"] == call["seconds_median"]
    assert call["plain_wall_seconds"] == call["seconds"]
    assert call["split_overhead_seconds"] == pytest.approx(call["wall_seconds"] - call["seconds"])
    assert {"device_seconds", "launches", "copies", "allocations"} <= set(call)
    # Steps kept and restarts apart; the per-step figure divides by every step run (4 kept + 2 blown = 6).
    assert (call["steps"], call["restarts"], call["step_calls"]) == (3, 2, 6)
    assert call["seconds_per_step"] == pytest.approx(call["seconds"] / 6)
    assert own["variant"] == "k" and own["measures"] == "rows measured by the case" and not own["default"]
    assert cpu["device"] == "cpu" and cpu["repetitions"] == 2 and "device_seconds" not in cpu
    assert notes[0].startswith("case broken failed: ZeroDivisionError") and notes[-1] == "3 rows"


def test_ica_counts_restarts_apart_from_the_steps_they_threw_away(monkeypatch):
    from course_lib.ica import bench as ica_bench

    def fake_infomax(X, method, *, seed, callback, **options):
        # pass 1: step 1 kept, step 2 blows up; pass 2: step 1 blows up; pass 3: 3 steps kept
        for step in (1, 1, 2, 3):
            callback(step, None)
        return SimpleNamespace(n_steps=3, restarts=2, converged=True, batch=244)

    monkeypatch.setattr(ica_bench, "infomax", fake_infomax)
    case = ica_bench._infomax_case(ica_bench.PROBE.default.method)
    counts = case.counts(case.run({"full": None, "small": None})())
    assert counts == {"steps": 3, "restarts": 2, "step_calls": 6, "converged": True, "minibatch": 244}
    assert case.per == ("step_calls", "step") and "restarts" in case.measures


def test_probe_writes_one_json_per_unit_naming_its_default_row(tmp_path, monkeypatch):
    monkeypatch.setattr(probe, "_nvidia_smi_clock", lambda: 1980.0)
    declared = Probe(None, (Case("cpu", "a CPU path", "n = 1", 1.0, "cpu", lambda inputs: lambda: 1, method="cpu",
                                 default=True, repeat=2),))
    path = probe.probe_unit("poisson", tmp_path, declared)
    results = json.loads(path.read_text())
    assert path.name.startswith("probe-poisson_") and results["unit"] == "probe-poisson"
    assert results["sm_clock"]["median_mhz"] == 1980.0 and results["rows"][0]["variant"] == "cpu"
    assert results["default_variant"] == "cpu" and results["rows"][0]["default"] is True
    assert results["cases"][0]["measures"] == "a CPU path" and results["probe_plan_seconds"] == 1.0
    assert results["date"] and "versions" in results and "cuda" in results
    # A probe file is not a unit benchmark's run: lessons reading the unit's runs never see it.
    assert bench.committed_results("poisson", tmp_path) == []
    broken = Probe(Inputs("x", lambda: 1 / 0, 1.0), declared.cases)
    failed = json.loads(probe.probe_unit("poisson", tmp_path, broken).read_text())
    assert failed["rows"] == [] and "ZeroDivisionError" in failed["notes"][0]


def test_committed_probe_rows_are_readable_with_the_fields_readers_use():
    """Every committed probe file: rows with a variant and seconds; end-to-end rows of a split with its parts."""
    from course_lib.bench.runs import committed_runs

    for unit in PROBED:
        for run in committed_runs(unit, kinds=("probe",)):
            for row in run.rows:
                assert row["variant"] and row["seconds"] > 0
                if "launch_host_seconds" in row:
                    assert row["scope"] == "end_to_end" and row["device_seconds"] >= 0


def test_clock_sampler_keeps_what_it_read_during_the_run():
    import itertools
    import time as _time

    ClockSampler = probe.ClockSampler

    readings = itertools.cycle([1980.0, None, 1755.0])
    with ClockSampler(query=lambda: next(readings), interval=0.001) as clock:
        _time.sleep(0.05)
    summary = clock.summary()
    assert summary["samples"] >= 2 and summary["min_mhz"] == 1755.0 and summary["max_mhz"] == 1980.0
    assert ClockSampler(query=lambda: None).summary() == {}


def test_split_report_divides_wall_time_per_call():

    class Event:
        def __init__(self, t):
            self.t = t

        def synchronize(self):
            pass

    s = Split(launches=30, copies=6, copy_bytes=600, allocations=9, alloc_bytes=900, launch_host_seconds=1.5e-3,
              copy_host_seconds=0.6e-3, alloc_host_seconds=0.3e-3, elapsed=lambda a, b: b.t - a.t,
              events=[(Event(0.0), Event(1e-4))] * 30)
    report = s.report(wall_seconds=3e-3, calls=3)
    assert report["launches"] == 10 and report["copies"] == 2 and report["allocations"] == 3
    assert report["device_seconds"] == pytest.approx(1e-3) and report["launch_host_seconds"] == pytest.approx(5e-4)
    assert report["other_host_seconds"] == pytest.approx((3e-3 - 2.4e-3) / 3) and report["scope"] == "end_to_end"
    parts = sum(report[k] for k in ("launch_host_seconds", "copy_host_seconds", "alloc_host_seconds",
                                    "other_host_seconds"))
    assert parts == pytest.approx(report["wall_seconds"])


def test_split_needs_a_gpu_and_finds_what_it_wraps_on_the_real_target():
    import os
    import subprocess
    import sys

    from course_lib.bench.split import split

    if not device.is_gpu():
        with pytest.raises(RuntimeError, match="needs a GPU"):
            with split():
                pass
    script = ("import course_lib\n"
              "from numba.cuda.cudadrv import driver\n"
              "from numba.cuda import dispatcher\n"
              "from numba.cuda.dispatcher import CUDADispatcher\n"
              "for owner, name in ((dispatcher, 'launch'), (driver, 'host_to_device'), (driver, 'device_to_host'),\n"
              "                    (driver, 'device_to_device'), (driver.Context, 'memalloc'), (CUDADispatcher, 'call')):\n"
              "    assert callable(getattr(owner, name)), name\n"
              "import inspect\n"
              "assert 'launch(stream, config, kernel' in inspect.getsource(dispatcher)  # looked up as a module global\n"
              "print('ok')\n")
    env = dict(os.environ, COURSE_BACKEND="gpu", NUMBA_ENABLE_CUDASIM="0")
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert proc.stdout.strip() == "ok", proc.stderr[-2000:]


