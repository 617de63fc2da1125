"""Measurements of the ICA kernels: launches (recorder), memory and SIMT counts (profiler), registers.

* :func:`count_launches` runs Infomax steps under :func:`course_lib.sim.record` and counts
  kernel launches and copies (works on both backends).
* :func:`profile_gemv` profiles the drop-in :func:`~course_lib.ica.kernels.gemv_kernel` and
  the custom :func:`~course_lib.ica.kernels.permuted_gemv_kernel` on the same minibatch:
  sectors per request of the weight reads, shared-memory bank conflicts, SIMT efficiency.
* :func:`compile_resources` compiles the kernels for a real GPU (no GPU needed, the
  toolkit wheels are enough) in a child process and returns registers and static shared
  memory per thread/block, which :func:`course_lib.ica.model.occupancy` turns into
  occupancy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

from .._validate import check_choice, check_int

__all__ = ["MEASURE_BATCH", "OCCUPANCY_KERNELS", "compile_resources", "count_launches", "gemv_case",
           "measure_case", "profile_gemv", "time_gpu_step"]

#: Kernels whose registers and shared memory the lesson reads.
OCCUPANCY_KERNELS = ("permuted_gemv_kernel", "activations_kernel", "weight_update_kernel", "gemv_kernel")

_WT_LINE = "total += Wt[k, c] * sample[k]"
_GATHER_LINE = "sample[c] = Xt[perm[start + b], c]"
_GEMV_LINE = "total += A[i, k] * x[k]"


def count_launches(X, method, *, steps=1, seed=0, batch=None):
    """Run ``steps`` Infomax steps with ``method`` under the recorder.

    Returns
    -------
    dict
        ``launches``, ``HtoD_count``, ``DtoH_count`` (and bytes), ``minibatches``
        (``floor(N / B) * steps``), ``launches_per_minibatch`` and the ``record``.
    """
    import warnings

    from ..sim import record
    from .api import infomax
    from .reference import ConvergenceWarning, default_batch_size

    steps = check_int(steps, "steps", minimum=1)
    with record() as log, warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a few steps never converge
        infomax(X, method, max_steps=steps, tol=1e-300, seed=seed, batch=batch)
    n_samples = np.shape(X)[1]
    size = default_batch_size(n_samples) if batch is None else batch
    minibatches = (n_samples // size) * steps
    out = log.summary()
    out.update(minibatches=minibatches, launches_per_minibatch=out["launches"] / minibatches, record=log)
    return out


def profile_gemv(n_channels, *, batch=2, seed=0):
    """Profile U = W X_b for one small minibatch with the drop-in GEMV and the custom kernel.

    Parameters
    ----------
    n_channels : int
        Channels (threads per block of the custom kernel), 1 to 256. Keep it small in the
        simulator (every thread is traced).
    batch : int
        Samples in the minibatch (blocks of the custom kernel; launches of the GEMV).

    Returns
    -------
    dict
        ``gemv`` and ``custom``: sectors per request of the weight reads
        (``w_sectors_per_request``), global load requests per sample, SIMT efficiency of
        the multiply-add line; ``custom`` also the bank-conflict degree of the shared
        sample read (1 = broadcast, no conflict) and the sectors per request of the gather;
        ``reports``: the profiler's reports.
    """
    from ..sim import profile
    from . import kernels
    from .kernels import MAX_CHANNELS

    n_channels = check_int(n_channels, "n_channels", minimum=1, maximum=MAX_CHANNELS)
    batch = check_int(batch, "batch", minimum=1)
    rng = np.random.default_rng(seed)
    W = np.eye(n_channels) + 0.1 * rng.normal(size=(n_channels, n_channels))
    Xt = rng.normal(size=(batch + 3, n_channels))
    perm = rng.permutation(batch + 3).astype(np.int32)
    U = np.zeros((batch, n_channels))
    threads = 32
    gemv_reports = [profile(kernels.gemv_kernel, -(-n_channels // threads), threads, W, Xt[perm[b]].copy(), U[b])
                    for b in range(batch)]
    custom = profile(kernels.permuted_gemv_kernel, batch, n_channels, np.ascontiguousarray(W.T), Xt, perm, 0, U)

    def gemv_totals():
        req = sum(r.line(_GEMV_LINE).global_load_requests for r in gemv_reports)
        sec = sum(r.line(_GEMV_LINE).global_load_sectors for r in gemv_reports)
        lanes = sum(r.line(_GEMV_LINE).active_lanes for r in gemv_reports)
        instr = sum(r.line(_GEMV_LINE).warp_instructions for r in gemv_reports)
        # the line loads A[i, k] and x[k]: every lane reads the same x[k] (1 sector), so the
        # sectors of A are the total minus one per request pair
        return {"w_sectors_per_request": (sec - req / 2) / (req / 2), "load_requests": req,
                "simt_efficiency": lanes / (32 * instr), "launches": batch}

    line = custom.line(_WT_LINE)
    gather = custom.line(_GATHER_LINE)
    custom_out = {
        # the line loads Wt[k, c] from global memory (one request per warp and k) and sample[k] from shared
        "w_sectors_per_request": line.load_sectors_per_request, "load_requests": line.global_load_requests,
        "simt_efficiency": line.simt_efficiency, "bank_conflict_degree": line.bank_conflict_degree,
        # the gather line loads perm[start + b] (one address: 1 sector) then a row of Xt
        "gather_sectors_per_request": (gather.global_load_sectors - gather.global_load_requests / 2)
        / max(1, gather.global_load_requests / 2),
        "launches": 1,
    }
    return {"gemv": gemv_totals(), "custom": custom_out, "reports": {"gemv": gemv_reports, "custom": custom}}


def compile_resources(ccs=((8, 0), (9, 0)), kernels=OCCUPANCY_KERNELS, timeout=300):
    """Registers per thread and static shared bytes per block of the ICA kernels, from ptxas.

    Compiles in a child process with the real CUDA target (no GPU needed: NVVM and
    nvJitLink come from the toolkit wheels), as :mod:`course_lib.compile_check` does.

    Returns
    -------
    dict
        ``{kernel: {"sm_80": {"registers": int, "shared_bytes": int}, ...}}``.

    Raises
    ------
    RuntimeError
        If the child process fails (e.g. no toolkit wheels installed).
    """
    for name in kernels:
        check_choice(name, "kernels", tuple(OCCUPANCY_KERNELS) + ("logistic_kernel", "gemm_kernel",
                                                                     "gemm_tn_kernel", "weights_update_kernel",
                                                                     "bias_update_kernel"))
    env = dict(os.environ, COURSE_BACKEND="gpu", NUMBA_ENABLE_CUDASIM="0")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    arg = json.dumps({"ccs": [list(cc) for cc in ccs], "kernels": list(kernels)})
    proc = subprocess.run([sys.executable, "-m", "course_lib.ica.profiling", arg], env=env, capture_output=True,
                          text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"compiling the ICA kernels failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _compile_main(arg):
    """Child process of :func:`compile_resources`: print the resources as one JSON line."""
    from .. import device

    device.configure(force="gpu")
    from numba import cuda

    from ..compile_check import ptx_resources
    from ..registry import all_kernels
    from . import kernels  # noqa: F401  (registers the kernels)

    request = json.loads(arg)
    specs = {spec.name: spec for spec in all_kernels()}
    out = {}
    for name in request["kernels"]:
        spec = specs[f"ica.{name}"]
        out[name] = {}
        for cc in request["ccs"]:
            ptx, _ = cuda.compile_ptx(spec.get_pyfunc(), spec.signature, cc=tuple(cc), fastmath=spec.fastmath)
            regs, smem, _spill = ptx_resources(ptx, tuple(cc))
            out[name][f"sm_{cc[0]}{cc[1]}"] = {"registers": regs, "shared_bytes": smem}
    print(json.dumps(out))


if __name__ == "__main__":
    _compile_main(sys.argv[1])


def time_gpu_step(X, method="fused", *, seed=0, lrate=1e-4, repeat=3):
    """Seconds of one Infomax step on a GPU, timed with CUDA events (launches only, device data).

    Parameters
    ----------
    X : ndarray of shape (C, N)
        A recording (centred and sphered here).
    method : {"persistent", "persistent_split", "fused", "custom", "blas", "cupy"}
    lrate : float
        Small, so that the repeated steps from W = I never blow up.

    Raises
    ------
    RuntimeError
        Without a GPU (the simulator's timings mean nothing), or ``"cupy"`` without CuPy.
    """
    from .. import device

    if not device.is_gpu():
        raise RuntimeError("time_gpu_step needs a GPU; the simulator has no meaningful timings")
    from numba import cuda

    from ..bench import gpu_time
    from ._gpu import CupyStepper, KernelStepper, PersistentStepper, have_cupy
    from .api import default_block, validate_data
    from .reference import _center_and_sphere, default_batch_size

    method = check_choice(method, "method", ("persistent", "persistent_split", "fused", "custom", "blas", "cupy"))
    Xs, _, _ = _center_and_sphere(validate_data(X))
    n_channels, n_samples = Xs.shape
    batch = default_batch_size(n_samples)
    perm = np.random.default_rng(seed).permutation(n_samples)
    if method == "cupy":
        if not have_cupy():
            raise RuntimeError("method 'cupy' needs CuPy")
        import cupy as cp

        stepper = CupyStepper(Xs, batch)
        v, bias, d_perm = cp.eye(n_channels), cp.zeros(n_channels), cp.asarray(perm)
        stepper.launch_step(d_perm, v, bias, lrate)
        cp.cuda.Device().synchronize()
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        stepper.launch_step(d_perm, v, bias, lrate)
        stop.record()
        stop.synchronize()
        return cp.cuda.get_elapsed_time(start, stop) / 1e3
    if method == "persistent_split":  # the step from W = I (set by the kernel), its permutation already on the device
        from ._gpu_split import SplitStepper
        from .reference import MAX_WEIGHT, PermutationStream

        stepper = SplitStepper(Xs, batch)
        stepper.take_permutations(PermutationStream(np.random.default_rng(seed), n_samples))
        slot = stepper._permutation_slot()
        stepper.stream.synchronize()  # the permutations are up before the timed launches
        return gpu_time(lambda: stepper.launch(slot, lrate, MAX_WEIGHT, 1, stream=0), repeat=repeat, warmup=1)
    d_perm = cuda.to_device(perm.astype(np.int32))
    if method == "persistent":
        stepper = PersistentStepper(Xs, batch)
        stepper.d_W.copy_to_device(np.eye(n_channels))
        stepper.d_bias.copy_to_device(np.zeros(n_channels))
        return gpu_time(lambda: stepper.launch_step(d_perm, lrate), repeat=repeat, warmup=1)
    stepper = KernelStepper(Xs, batch, method, default_block())
    d_W, d_Wt = cuda.to_device(np.eye(n_channels)), cuda.to_device(np.eye(n_channels))
    d_bias = cuda.to_device(np.zeros(n_channels))
    return gpu_time(lambda: stepper.launch_step(perm, d_perm, d_W, d_Wt, d_bias, lrate), repeat=repeat, warmup=1)


# ----------------------------------------------------------------------------- the problems of problem set 6
def gemv_case(n_channels, batch, start, seed):
    """``inputs`` data: W^T, the data sample-major, a permutation and the minibatch's start."""
    rng = np.random.default_rng(seed)
    n_samples = start + batch + int(rng.integers(0, 4))
    W = np.eye(n_channels) + 0.3 * rng.normal(size=(n_channels, n_channels))
    return {"Wt": np.ascontiguousarray(W.T), "Xt": rng.normal(size=(n_samples, n_channels)),
            "perm": rng.permutation(n_samples).astype(np.int32), "start": int(start), "batch": int(batch)}


#: Samples of the q2 measurement's minibatch (three tiles, the last partial).
MEASURE_BATCH = 37


def measure_case(n_channels):
    """The minibatch the q2 measurement profiles: C channels, B = 37 samples from position 3, seeded by C."""
    return gemv_case(int(n_channels), MEASURE_BATCH, 3, seed=int(n_channels))
