"""Benchmark of Unit 6: ``python -m course_lib.bench ica [--quick]``.

CPU part (runs everywhere): on simulated EEG of 64 channels x 180,000 samples (``--quick``:
16 x 20,000), Infomax to convergence with the fast CPU version against the external peers
(MNE's ``infomax``, standard and extended; picard; scikit-learn's FastICA): seconds and Amari
index against the true mixing; and seconds per step of the CPU version and the NumPy
reference at 32-256 channels.

Goal (CPU): the CPU version at least as fast as MNE's infomax at 64 x 180,000 with an equal
(within 10 %) or better Amari index.

GPU part (only on a GPU): seconds per step of the ``fused``, ``custom`` and ``blas`` kernel
methods and CuPy/cuBLAS (CUDA events around the launches of one step, device data, no
copies) at 32-256 channels; and the ``fused`` method to convergence (wall clock, copies
of W per step included) at 64 and 256 channels.

Goal (GPU): 64 x 180,000 in float64 to convergence in at most 3 s (a modern CUDAICA build
reports 6-7 s on an A100); 256 channels reported.

The results say whether each goal was met; nothing here is asserted.
"""

from __future__ import annotations

import time
import warnings


from .. import device
from .api import ica_peer, infomax
from .data import simulate_eeg
from .model import launches_per_minibatch
from .reference import ConvergenceWarning, amari_index, default_batch_size

GOAL_GPU_SECONDS = 3.0
#: "Equal" Amari index: within this factor of MNE's.
AMARI_EQUAL_FACTOR = 1.10


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


def _convergence_rows(eeg, seed):
    rows = []
    runs = [
        ("cpu", lambda: infomax(eeg.data, "cpu", seed=seed)),
        ("mne_infomax", lambda: ica_peer(eeg.data, "mne", seed=seed)),
        ("mne_infomax_extended", lambda: ica_peer(eeg.data, "mne", seed=seed, extended=True)),
        ("picard", lambda: ica_peer(eeg.data, "picard", seed=seed)),
        ("fastica", lambda: ica_peer(eeg.data, "fastica", seed=seed)),
    ]
    ica_peer(simulate_eeg(4, 400, seed=0).data, "picard")  # imports and first-call compilation off the clock
    for variant, fn in runs:
        seconds, result = _timed(fn)
        rows.append(_row(variant, eeg, seconds, result))
    return rows


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
        for method in ("fused", "custom", "blas") + (("cupy",) if have_cupy() else ()):
            seconds = time_gpu_step(eeg.data, method, seed=seed, repeat=1 if method == "blas" else 3)
            rows.append({"variant": method, "kind": "gpu_per_step", "channels": channels, "samples": n_samples,
                         "seconds": seconds, "launches_per_minibatch": launches_per_minibatch(method, batch)})
    return rows


def _gpu_convergence_rows(quick, seed):
    from ._gpu import have_cupy

    rows = []
    n_samples = 20_000 if quick else 180_000
    for channels in ((64,) if quick else (64, 256)):
        eeg = simulate_eeg(channels, n_samples, seed=seed)
        for method in ("fused",) + (("cupy",) if have_cupy() else ()):
            _timed(lambda: infomax(eeg.data[:, :3000], method, seed=seed, max_steps=2))  # compile, warm up
            seconds, result = _timed(lambda: infomax(eeg.data, method, seed=seed))
            rows.append({**_row(f"gpu_{method}", eeg, seconds, result), "kind": "gpu_to_convergence"})
    return rows


def run(*, quick=False, seed=0):
    """Run the benchmark; see the module docstring."""
    size = (16, 20_000) if quick else (64, 180_000)
    eeg = simulate_eeg(*size, seed=seed)
    rows = _convergence_rows(eeg, seed + 1)
    rows += _step_rows(quick, seed + 1)
    by = {r["variant"]: r for r in rows if r["kind"] == "to_convergence"}
    cpu, mne = by["cpu"], by["mne_infomax"]
    summary = {
        "size": {"channels": size[0], "samples": size[1]},
        "cpu_seconds": cpu["seconds"], "mne_seconds": mne["seconds"],
        "cpu_amari": cpu["amari"], "mne_amari": mne["amari"],
        "cpu_goal_met": bool(cpu["seconds"] <= mne["seconds"] and cpu["amari"] <= AMARI_EQUAL_FACTOR * mne["amari"]),
    }
    notes = ["CPU times are wall-clock on this machine; on a shared or busy machine they are inflated"]
    if device.is_gpu():
        gpu_steps = _gpu_step_rows(quick, seed + 1)
        gpu_conv = _gpu_convergence_rows(quick, seed + 1)
        rows += gpu_steps + gpu_conv
        fused64 = next(r for r in gpu_conv if r["variant"] == "gpu_fused" and r["channels"] == 64)
        summary.update(gpu_fused_64_seconds=fused64["seconds"], gpu_fused_64_amari=fused64["amari"],
                       gpu_goal_seconds=GOAL_GPU_SECONDS,
                       gpu_goal_met=bool(not quick and fused64["seconds"] <= GOAL_GPU_SECONDS and fused64["converged"]),
                       speedup_vs_cpu=cpu["seconds"] / fused64["seconds"] if not quick else None)
    else:
        notes.append("no GPU: only the CPU part was measured")
    return {"rows": rows, "summary": summary, "notes": notes}


def summary(results):
    """A few human-readable lines."""
    lines = []
    for r in results["rows"]:
        extra = (f"  {r['steps']:>4} steps{'' if r['converged'] else ' (NOT converged)'}  Amari {r['amari']:.4f}"
                 if "amari" in r and r["kind"].endswith("convergence") else "")
        lines.append(f"{r['kind']:<19} {r['variant']:<21} {r['channels']:>4} ch x {r['samples']:>7,}  "
                     f"{r['seconds']:9.3f} s{extra}")
    s = results["summary"]
    lines.append(f"CPU goal (as fast as MNE's infomax, Amari within {AMARI_EQUAL_FACTOR:.2f}x): "
                 f"{'met' if s['cpu_goal_met'] else 'NOT met'} ({s['cpu_seconds']:.2f} s vs {s['mne_seconds']:.2f} s; "
                 f"Amari {s['cpu_amari']:.4f} vs {s['mne_amari']:.4f})")
    if "gpu_goal_met" in s:
        lines.append(f"GPU goal (64 x 180,000 float64 <= {GOAL_GPU_SECONDS:.0f} s): "
                     f"{'met' if s['gpu_goal_met'] else 'NOT met'} ({s['gpu_fused_64_seconds']:.2f} s)")
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
