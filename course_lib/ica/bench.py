"""Benchmark of Unit 6: ``python -m course_lib.bench ica [--quick]``.

CPU part (runs everywhere): on simulated EEG of 64 channels x 180,000 samples (``--quick``:
16 x 20,000), Infomax to convergence with the fast CPU version against the external peers
called as their users call them, on data centred and sphered beforehand (that preparation
is timed once and reported as ``prepare_seconds``; the course's own call includes it):
MNE's ``infomax`` with its defaults, standard and extended, and with the course's settings
(``mne_infomax_matched``: the same learning rate, minibatch, stopping tolerance, step cap
and annealing, on the same sphered data); picard; scikit-learn's FastICA. All are warmed
up on a small recording and timed in interleaved rounds (:func:`course_lib.bench.paired`):
median seconds, spread, the peer / course ratio, steps and Amari index against the true
mixing. Then seconds per step of the CPU version and the NumPy reference at 32-256 channels.

Goals (CPU): the CPU version at least as fast as MNE's infomax with the same settings and as
picard, each with an equal (within 10 %) or better Amari index.

GPU part (only on a GPU): seconds per step of the ``persistent`` and ``persistent_split``
methods, the ``fused``, ``custom`` and ``blas`` kernel methods and CuPy/cuBLAS (CUDA events
around the launches of one step, device data, no copies) at 32-256 channels; and the
``persistent``, ``persistent_split`` and ``fused`` methods to convergence (wall clock, copies
of W per step included) at 64 and 256 channels, with the steps of the final pass, the
restarts, and the steps and minibatches run in all; the ``persistent_split`` rows carry the
model's prediction (:func:`course_lib.ica.model.split_step_prediction`) beside the measurement.

Goals (GPU): 64 x 180,000 in float64 to convergence in at most 3 s (a modern CUDAICA build
reports 6-7 s on an A100); ``persistent_split`` in at most 1 s; 256 channels reported.

The results say whether each goal was met; nothing here is asserted.
"""

from __future__ import annotations

import time
import warnings


import numpy as np

from .. import device
from ..bench import LOADED_NOTE, paired, paired_rows, ratio_lines, timed_once
from ..bench.cases import Case, Inputs, Probe, default_gpu_method, method_cases
from .api import GPU_METHODS, infomax
from .data import simulate_eeg
from .model import launches_per_minibatch
from .reference import ConvergenceWarning, amari_index, center_and_sphere, default_batch_size, default_lrate

GOAL_GPU_SECONDS = 3.0
#: Goal of ``persistent_split``: 64 x 180,000 to convergence, end to end.
GOAL_SPLIT_SECONDS = 1.0
#: GPU methods of the unit beyond ``persistent`` and the kernel methods, timed per step and to convergence.
SPLIT_METHODS = ("persistent_split",)
#: "Equal" Amari index: within this factor of the peer's.
AMARI_EQUAL_FACTOR = 1.10
#: Timed rounds of the paired measurement to convergence (``--quick``: QUICK_REPEAT).
REPEAT, QUICK_REPEAT = 3, 5
#: The course's stopping rule, given to the matched peer too.
TOL, MAX_STEPS = 1e-6, 512
#: The peers a CPU goal is set against.
GOAL_PEERS = ("mne_infomax_matched", "picard")


def _timed(fn):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # reported in the row instead
        result = fn()
    return time.perf_counter() - start, result


def _row(variant, eeg, seconds, result, kind="to_convergence"):
    return {"variant": variant, "kind": kind, "channels": eeg.n_channels, "samples": eeg.n_samples,
            "seconds": seconds, "steps": int(result.n_steps), "converged": bool(result.converged),
            "amari": amari_index(result.full_unmixing, eeg.mixing)}


def _calls(X, seed):
    """``{variant: fn}``, each ``fn()`` returning ``(unmixing acting on centred X, steps)``, and the prep seconds.

    The peers' input (centred, sphered; unit variance where the library expects it) is
    prepared here, once, outside the timed calls.
    """
    import picard
    from mne.preprocessing import infomax as mne_infomax
    from sklearn.decomposition import FastICA

    C, N = X.shape
    prepare_seconds, (Xs, sphere, _) = timed_once(lambda: center_and_sphere(np.asarray(X, dtype=np.float64)))
    white = Xs / 2.0  # unit variance, what MNE, picard and scikit-learn expect (the course's sphering gives 4)

    def course():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # reported in the row as converged=False
            r = infomax(X, "cpu", seed=seed, tol=TOL, max_steps=MAX_STEPS)
        return r.full_unmixing, r.n_steps, r.converged

    def mne(extended=False, **settings):
        def call():
            W, steps = mne_infomax(white.T if not settings else Xs.T, extended=extended,
                                   rng=np.random.default_rng(seed), verbose=False, return_n_iter=True, **settings)
            scale = 2.0 if not settings else 1.0  # W acts on white = Xs / 2, or on Xs itself
            if steps >= settings.get("max_iter", 200):
                # MNE returns max_iter both when its w_change rule stops it and when the cap does:
                # the true count and whether it converged are unknown.
                return W / scale @ sphere, None, None
            return W / scale @ sphere, steps, True
        return call

    def picard_call():
        _, W, _, steps = picard.picard(white, whiten=False, ortho=False, extended=True, random_state=seed,
                                       return_n_iter=True)
        return W / 2.0 @ sphere, steps, steps < 500

    def fastica():
        model = FastICA(whiten=False, random_state=seed, max_iter=200, tol=1e-4).fit(white.T)
        return model.components_ / 2.0 @ sphere, model.n_iter_, model.n_iter_ < 200

    matched = dict(l_rate=default_lrate(C), block=default_batch_size(N), w_change=TOL, max_iter=MAX_STEPS,
                   anneal_deg=60.0, anneal_step=0.9, n_small_angle=None)
    calls = {"cpu": course, "mne_infomax": mne(), "mne_infomax_matched": mne(**matched),
             "mne_infomax_extended": mne(extended=True), "picard": picard_call, "fastica": fastica}
    settings = {"cpu": {"lrate": default_lrate(C), "batch": default_batch_size(N), "tol": TOL, "max_steps": MAX_STEPS},
                "mne_infomax": {"settings": "MNE defaults"},
                "mne_infomax_matched": {"settings": "the course's", **{k: v for k, v in matched.items()}},
                "mne_infomax_extended": {"settings": "MNE defaults, extended"},
                "picard": {"settings": "picard defaults (ortho=False, extended=True)"},
                "fastica": {"settings": "scikit-learn FastICA, logcosh, tol 1e-4"}}
    return calls, prepare_seconds, settings


def _convergence_rows(eeg, seed, repeat=None):
    """Every variant to convergence, paired; steps and Amari index from one extra call each."""
    warm, _, _ = _calls(simulate_eeg(4, 2000, seed=0).data, seed)  # imports, compilation: off the clock
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a tiny recording may not converge: only warming up
        for fn in warm.values():
            fn()
    calls, prepare_seconds, settings = _calls(eeg.data, seed)
    outcome = {}

    def keep(name, fn):
        def call():
            outcome[name] = fn()
        return call

    timings = paired({name: keep(name, fn) for name, fn in calls.items()}, course="cpu",
                     repeat=repeat or REPEAT, warmup=0)
    extra = {}
    for name, (unmixing, steps, converged) in outcome.items():
        extra[name] = {"steps": None if steps is None else int(steps),
                       "converged": None if converged is None else bool(converged),
                       "amari": amari_index(unmixing, eeg.mixing), **settings[name]}
        if name != "cpu":
            extra[name]["prepare_seconds"] = prepare_seconds
    common = {"kind": "to_convergence", "channels": eeg.n_channels, "samples": eeg.n_samples}
    return paired_rows(timings, common, extra=extra)


def _step_rows(quick, seed):
    rows = []
    n_samples = 20_000 if quick else 180_000
    for channels in ((16, 32) if quick else (32, 64, 128, 256)):
        eeg = simulate_eeg(channels, n_samples, seed=seed)
        for method in ("cpu", "reference"):
            steps = 2
            seconds, result = _timed(lambda: infomax(eeg.data, method, seed=seed, max_steps=steps, tol=1e-300))
            row = _row(method, eeg, seconds / steps, result, kind="per_step")
            rows.append(row)
    return rows


def _gpu_step_rows(quick, seed):
    from ._gpu import have_cupy
    from .profiling import time_gpu_step

    rows = []
    n_samples = 20_000 if quick else 180_000
    for channels in ((32, 64) if quick else (32, 64, 128, 256)):
        eeg = simulate_eeg(channels, n_samples, seed=seed)
        batch = default_batch_size(n_samples)
        methods = ("persistent",) + SPLIT_METHODS + ("fused", "custom", "blas") + (("cupy",) if have_cupy() else ())
        for method in methods:
            seconds = time_gpu_step(eeg.data, method, seed=seed, repeat=1 if method == "blas" else 3)
            rows.append({"variant": method, "kind": "gpu_per_step", "channels": channels, "samples": n_samples,
                         "seconds": seconds})
            if method.startswith("persistent"):  # one launch per step, whatever the minibatches
                rows[-1]["launches_per_step"] = 1
            else:
                rows[-1]["launches_per_minibatch"] = launches_per_minibatch(method, batch)
    return rows


def _gpu_convergence_rows(quick, seed):
    from ._gpu import have_cupy

    rows = []
    n_samples = 20_000 if quick else 180_000
    for channels in ((64,) if quick else (64, 256)):
        eeg = simulate_eeg(channels, n_samples, seed=seed)
        for method in ("persistent",) + SPLIT_METHODS + ("fused",) + (("cupy",) if have_cupy() else ()):
            _timed(lambda: infomax(eeg.data[:, :3000], method, seed=seed, max_steps=2))  # compile, warm up
            seconds, result = _timed(lambda: infomax(eeg.data, method, seed=seed))
            # Steps as the method counts them: the final pass's, the restarts apart, and all that ran.
            rows.append({**_row(f"gpu_{method}", eeg, seconds, result), "kind": "gpu_to_convergence",
                         "restarts": int(result.restarts), "steps_run": int(result.steps_run),
                         "minibatches_run": int(result.minibatches_run)})
            if method in SPLIT_METHODS:
                from .model import split_step_prediction

                predicted = split_step_prediction(channels, n_samples, steps=result.n_steps,
                                                  blown_minibatches=result.minibatches_run
                                                  - result.n_steps * (n_samples // result.batch))
                rows[-1]["predicted_seconds"] = predicted["convergence_seconds"]  # the model, checked by this row
    return rows


def run(*, quick=False, seed=0):
    """Run the benchmark; see the module docstring."""
    size = (16, 20_000) if quick else (64, 180_000)
    eeg = simulate_eeg(*size, seed=seed)
    rows = _convergence_rows(eeg, seed + 1, repeat=QUICK_REPEAT if quick else REPEAT)
    rows += _step_rows(quick, seed + 1)
    summary = _goal(rows, size)
    notes = [LOADED_NOTE]
    if device.is_gpu():
        gpu_steps = _gpu_step_rows(quick, seed + 1)
        gpu_conv = _gpu_convergence_rows(quick, seed + 1)
        rows += gpu_steps + gpu_conv
        fused64 = next(r for r in gpu_conv if r["variant"] == "gpu_fused" and r["channels"] == 64)
        summary.update(gpu_fused_64_seconds=fused64["seconds"], gpu_fused_64_amari=fused64["amari"],
                       gpu_goal_seconds=GOAL_GPU_SECONDS,
                       gpu_goal_met=bool(not quick and fused64["seconds"] <= GOAL_GPU_SECONDS and fused64["converged"]),
                       speedup_vs_cpu=summary["cpu_seconds"] / fused64["seconds"] if not quick else None)
        persistent64 = next(r for r in gpu_conv if r["variant"] == "gpu_persistent" and r["channels"] == 64)
        summary.update(gpu_persistent_64_seconds=persistent64["seconds"], gpu_persistent_64_amari=persistent64["amari"])
        split64 = next(r for r in gpu_conv if r["variant"] == "gpu_persistent_split" and r["channels"] == 64)
        summary.update(gpu_persistent_split_64_seconds=split64["seconds"],
                       gpu_persistent_split_64_amari=split64["amari"],
                       gpu_persistent_split_64_predicted_seconds=split64["predicted_seconds"],
                       gpu_split_goal_seconds=GOAL_SPLIT_SECONDS,
                       gpu_split_goal_met=bool(not quick and split64["converged"]
                                               and split64["seconds"] <= GOAL_SPLIT_SECONDS))
    else:
        notes.append("no GPU: only the CPU part was measured")
    return {"rows": rows, "summary": summary, "notes": notes}


def _goal(rows, size):
    """The course against each goal peer: paired ratio and Amari index."""
    by = {r["variant"]: r for r in rows if r["kind"] == "to_convergence"}
    cpu = by["cpu"]
    summary = {"size": {"channels": size[0], "samples": size[1]}, "cpu_seconds": cpu["seconds"],
               "cpu_amari": cpu["amari"], "cpu_steps": cpu["steps"], "peers": {}}
    for peer in GOAL_PEERS:
        p = by[peer]
        summary["peers"][peer] = {"seconds": p["seconds"], "amari": p["amari"], "steps": p["steps"],
                                  "peer_over_cpu": p["ratio_to_course"],
                                  "met": bool(p["ratio_to_course"] >= 1.0
                                              and cpu["amari"] <= AMARI_EQUAL_FACTOR * p["amari"])}
    summary["cpu_goal_met"] = all(v["met"] for v in summary["peers"].values())
    return summary


def _steps_text(r):
    if r["steps"] is None:
        return "steps not reported (MNE returns max_iter whichever rule stopped it)"
    return f"{r['steps']} steps" + ("" if r["converged"] else " (NOT converged)")


def summary(results):
    """A few human-readable lines."""
    rows = results["rows"]
    conv = [r for r in rows if r["kind"] == "to_convergence" and "spread" in r]
    timed = ratio_lines(conv, size=lambda r: f"{r['channels']} ch x {r['samples']:,}",
                        course=lambda r: r["variant"] == "cpu")
    lines = [line + f"  {_steps_text(r)}  Amari {r['amari']:.4f}" for line, r in zip(timed, conv)]
    for r in rows:
        if r in conv:
            continue
        extra = (f"  {r['steps']:>4} steps{'' if r['converged'] else ' (NOT converged)'}  Amari {r['amari']:.4f}"
                 if "amari" in r and r["kind"].endswith("convergence") else "")
        lines.append(f"{r['kind']:<19} {r['variant']:<21} {r['channels']:>4} ch x {r['samples']:>7,}  "
                     f"{r['seconds']:9.3f} s{extra}")
    s = results["summary"]
    for peer, v in s.get("peers", {}).items():
        lines.append(f"CPU goal against {peer} (as fast, Amari within {AMARI_EQUAL_FACTOR:.2f}x): "
                     f"{'met' if v['met'] else 'NOT met'} ({peer} / cpu {v['peer_over_cpu']:.2f}x; Amari "
                     f"{s['cpu_amari']:.4f} vs {v['amari']:.4f}; steps {s['cpu_steps']} vs {v['steps'] or 'not reported'})")
    if "gpu_goal_met" in s:
        lines.append(f"GPU goal (64 x 180,000 float64 <= {GOAL_GPU_SECONDS:.0f} s): "
                     f"{'met' if s['gpu_goal_met'] else 'NOT met'} ({s['gpu_fused_64_seconds']:.2f} s)")
    if "gpu_split_goal_met" in s:
        lines.append(f"GPU goal of persistent_split (64 x 180,000 <= {GOAL_SPLIT_SECONDS:.0f} s): "
                     f"{'met' if s['gpu_split_goal_met'] else 'NOT met'} "
                     f"({s['gpu_persistent_split_64_seconds']:.2f} s; "
                     f"the model predicted {s['gpu_persistent_split_64_predicted_seconds']:.2f} s)")
    return "\n".join(lines + results["notes"])


def plot(results, path):
    """Left: seconds to convergence and Amari index per variant. Right: seconds per step against channels."""
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    conv = [r for r in results["rows"] if r["kind"].endswith("convergence")]
    names = [r["variant"] for r in conv]
    left.barh(names, [r["seconds"] for r in conv], color="tab:blue")
    for k, r in enumerate(conv):
        left.text(r["seconds"], k, f" Amari {r['amari']:.3f}", va="center", fontsize=7)
    s = results["summary"]["size"]
    left.set(xscale="log", xlabel="seconds to convergence", title=f"{s['channels']} ch x {s['samples']:,} samples")
    series = {}
    for r in results["rows"]:
        if r["kind"] in ("per_step", "gpu_per_step"):
            series.setdefault(r["variant"], []).append((r["channels"], r["seconds"]))
    for label, pts in sorted(series.items()):
        pts.sort()
        right.plot(*zip(*pts), marker="o", label=label)
    right.set(xscale="log", yscale="log", xlabel="channels", ylabel="seconds per step",
              title=f"one step on {results['device']['name']}")
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# --- The GPU probe (declared for course_lib.bench.cases) ------------------------------------------

#: The probe's recording (the committed runs' size and seed), and the smaller one of the slow teaching rows.
PROBE_SHAPE, TEACHING_SHAPE, PROBE_SEED = (64, 180_000), (16, 20_000), 1
#: Older methods run for one kept step (restarts included) on the full recording or on the smaller one.
#: (fused ran on the full recording in the 2026-11-27 probe; the teaching row now runs on the smaller one.)
TEACHING_ON_FULL = ()


def _probe_inputs():
    return {"full": simulate_eeg(*PROBE_SHAPE, seed=0).data, "small": simulate_eeg(*TEACHING_SHAPE, seed=0).data}


def _step_counts(result):
    """Steps as the step loop counts them: kept steps of the final pass, restarts, and every step run.

    A restart throws away its pass: the steps that pass kept (each reported to the callback) and the step
    that blew up (one per restart) ran on the device too, so ``step_calls`` counts them all.
    """
    r, completed = result
    return {"steps": int(r.n_steps), "restarts": int(r.restarts), "step_calls": completed + int(r.restarts),
            "converged": bool(r.converged), "minibatch": int(r.batch)}


def _infomax_case(method):
    default = default_gpu_method(infomax, GPU_METHODS)
    # The default, and the redesigned step it may be replaced by once measured, run to convergence at full size.
    to_convergence = method == default or method in SPLIT_METHODS
    shape = PROBE_SHAPE if to_convergence or method in TEACHING_ON_FULL else TEACHING_SHAPE

    def run(inputs):
        X = inputs["full" if shape == PROBE_SHAPE else "small"]
        options = {} if to_convergence else {"max_steps": 1, "tol": 1e-300}

        def call():
            completed = []
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)  # the row says converged or not
                r = infomax(X, method, seed=PROBE_SEED, callback=lambda step, W: completed.append(step), **options)
            return r, len(completed)

        return call

    what = "to convergence" if to_convergence else "one kept step (teaching row)"
    return Case(method, f"infomax() end to end, {what}; steps kept, restarts and every step run counted apart",
                f"{shape[0]} x {shape[1]:,} float64, seed {PROBE_SEED}",
                16.0 if method == default else 6.0 if to_convergence else 3.0, "call", run,
                counts=_step_counts,
                per=("step_calls", "step"), repeat=2)


def _cpu_steps(inputs):
    X = inputs["full"]

    def call():
        completed = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            r = infomax(X, "cpu", seed=PROBE_SEED, max_steps=2, tol=1e-300,
                        callback=lambda step, W: completed.append(step))
        return r, len(completed)

    return call


PROBE = Probe(
    Inputs(f"simulated EEG {PROBE_SHAPE[0]} x {PROBE_SHAPE[1]:,} (teaching rows: {TEACHING_SHAPE[0]} x "
           f"{TEACHING_SHAPE[1]:,})", _probe_inputs, 2.0),
    method_cases(GPU_METHODS, default_gpu_method(infomax, GPU_METHODS), _infomax_case,
                 teaching={"fused": dict(expected_seconds=3.0, repeat=1)}) + (
        Case("cpu", "infomax(method='cpu'), two kept steps (restarts counted apart), all cores",
             f"{PROBE_SHAPE[0]} x {PROBE_SHAPE[1]:,}", 5.0, "cpu", _cpu_steps, counts=_step_counts,
             per=("step_calls", "step"), repeat=1),
    ))
