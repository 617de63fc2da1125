"""Public entry points of Unit 6: :func:`infomax` (``method=`` picks the implementation) and :func:`ica_peer`."""

from __future__ import annotations

import numpy as np

from .. import device
from .._validate import check_block, check_choice, check_flag, check_int, check_seed
from ._gpu import PersistentStepper
from .kernels import MAX_CHANNELS
from . import reference
from .reference import MIN_SAMPLES_PER_CHANNEL, InfomaxResult, check_options, validate_data

__all__ = ["GPU_METHODS", "KERNEL_METHODS", "METHODS", "MIN_SAMPLES_PER_CHANNEL", "PEERS", "PersistentStepper",
           "default_block", "ica_peer", "infomax", "validate_data"]

#: ``"cpu"``: the fast CPU version; ``"reference"``: float64 NumPy; ``"persistent"``: the GPU
#: method to use, a whole step per cooperative launch (grid barriers between minibatches,
#: W kept on the device); ``"persistent_split"``: a whole step per cooperative launch with
#: each minibatch split across the blocks that own its samples (partial products reduced once),
#: the permutations kept on the device and a blow-up stopping the step (not yet measured on a
#: GPU: the default stays ``"persistent"`` until a run says which is faster); ``"fused"``,
#: ``"custom"``, ``"blas"``: the course's kernels (fused minibatch, the thesis's custom kernels,
#: drop-in port, one call per sample, with naive kernels); ``"cupy"``: CuPy/cuBLAS (GPU machines
#: with CuPy only).
METHODS = ("cpu", "reference", "persistent", "persistent_split", "fused", "custom", "blas", "cupy")
KERNEL_METHODS = ("fused", "custom", "blas")
#: The GPU methods, the default first.
GPU_METHODS = ("persistent", "persistent_split") + KERNEL_METHODS + ("cupy",)
#: External CPU peers of :func:`ica_peer`.
PEERS = ("mne", "picard", "fastica")


def default_block() -> int:
    """Threads per block of the 1-D and 2-D kernels: 256 on a GPU, 32 in the simulator.

    (The block-per-sample and block-per-row kernels always use one thread per channel.)
    """
    return device.pick(sim=32, gpu=256)


def infomax(X, method="cpu", *, batch=None, lrate=None, tol=1e-6, max_steps=512, extended=False, seed=None,
            history=False, block=None, callback=None):
    """Infomax ICA of a recording (Bell-Sejnowski, natural gradient, minibatches).

    Parameters
    ----------
    X : array_like of shape (C, N)
        Channels x samples, real numbers (computed in float64).
    method : {"cpu", "reference", "persistent", "persistent_split", "fused", "custom", "blas", "cupy"}
        ``"cpu"``: minibatches through BLAS in a compiled loop (the fast CPU version);
        ``"reference"``: the float64 NumPy reference; ``"persistent"``: a step per cooperative
        launch; ``"persistent_split"``: a step per cooperative launch, each minibatch split
        across the blocks owning its samples, permutations on the device, a blow-up detected
        after the minibatch that caused it (:mod:`course_lib.ica._split_step`); ``"fused"``: two
        kernel launches per minibatch; ``"custom"``: the thesis's custom kernels (6 launches per minibatch);
        ``"blas"``: the drop-in port with naive kernels, one GEMV launch per sample (B + 5);
        ``"cupy"``: CuPy on cuBLAS (a GPU and CuPy needed). In the simulator the kernel
        methods run, slowly: use small inputs.
    batch : int, optional
        Samples per minibatch (runica's "block"); default ``floor(sqrt(N / 3))``.
    lrate : float, optional
        Initial learning rate; default ``0.015 / ln(C)``.
    tol : float
        Stop once ``||W_step - W_previous||_F^2 < tol`` (after step 2).
    max_steps : int
        Step cap; reaching it before ``tol`` warns with
        :class:`~course_lib.ica.reference.ConvergenceWarning` and sets ``converged=False``.
    extended : bool
        Extended Infomax (sub- and super-Gaussian sources); methods ``"cpu"`` and
        ``"reference"`` only.
    seed : int or None
        Seed of the permutations: the same seed gives the same result.
    history : bool
        Keep the unmixing matrix of every step in ``result.history``.
    block : int, optional
        Threads per block of the general 1-D and 2-D kernels (kernel methods only);
        default :func:`default_block`.
    callback : callable, optional
        ``callback(step, W)`` after every step (not for ``"reference"``).

    Returns
    -------
    InfomaxResult
        ``unmixing`` (W), ``sphere``, ``mixing`` (``inv(W @ sphere)``), ``sources``
        (``W @ sphere @ (X - mean)``), ``converged``, ``n_steps`` (steps of the final pass),
        ``restarts``, ``minibatches_run`` (all passes), the per-step ``changes``, ``angles``
        and ``lrates``.

    Raises
    ------
    ValueError
        Bad ``X`` (see :func:`validate_data`), more than 256 channels for a kernel
        method, an unknown method, or bad options.
    RuntimeError
        ``"cupy"`` without a GPU and CuPy.
    ConvergenceError
        The weights keep blowing up until the learning rate is below 1e-10.

    Examples
    --------
    >>> from course_lib.ica import simulate_eeg, infomax, amari_index
    >>> eeg = simulate_eeg(8, 5000, seed=0)
    >>> result = infomax(eeg.data, seed=1)
    >>> result.converged, amari_index(result.full_unmixing, eeg.mixing) < 0.02
    (True, True)
    """
    method = check_choice(method, "method", METHODS)
    X = validate_data(X)
    options = check_options(X, batch=batch, lrate=lrate, tol=tol, max_steps=max_steps, seed=seed, history=history,
                            extended=extended)
    extended = options.extended
    if block is not None and method not in KERNEL_METHODS:  # the persistent kernels choose their own blocks
        raise ValueError(f"block (threads per block) only applies to the kernel methods {KERNEL_METHODS}, "
                         f"not {method!r}")
    if extended and method not in ("cpu", "reference"):
        raise ValueError(f"extended=True is available for methods 'cpu' and 'reference', not {method!r}")
    if method == "reference" and callback is not None:
        raise ValueError("callback is not available for method 'reference' (use history=True)")
    if callback is not None and not callable(callback):
        raise ValueError(f"callback must be callable or None, got {type(callback).__name__}")
    options = options.as_dict()
    if method == "reference":
        return reference._run_steps_checked(X, reference.ReferenceStepper, method="reference", **options)
    if method in KERNEL_METHODS + ("persistent", "persistent_split"):
        if X.shape[0] > MAX_CHANNELS:
            raise ValueError(f"X has {X.shape[0]} channels; the kernels handle at most {MAX_CHANNELS} "
                             "(one thread per channel, a shared array of that many doubles)")
        threads = default_block() if block is None else check_block(block)
        from ._gpu import KernelStepper

        def make(Xs, size):
            if method == "persistent":  # one thread per channel: ``block`` is not used
                return PersistentStepper(Xs, size)
            if method == "persistent_split":
                from ._gpu_split import SplitStepper

                return SplitStepper(Xs, size)
            return KernelStepper(Xs, size, method, threads)
    elif method == "cupy":
        from ._gpu import CupyStepper, have_cupy

        if not have_cupy():
            raise RuntimeError("method 'cupy' needs a GPU and CuPy (pip install cupy-cuda12x or cupy-cuda13x)")
        make = CupyStepper
    else:
        from .cpu import CpuStepper, ExtendedCpuStepper

        make = ExtendedCpuStepper if extended else CpuStepper
    return reference._run_steps_checked(X, make, method=method, callback=callback, **options)


def ica_peer(X, peer="mne", *, seed=0, extended=False, max_iter=None):
    """Run an external CPU ICA on the same centred and sphered data, for comparison.

    Parameters
    ----------
    X : array_like of shape (C, N)
    peer : {"mne", "picard", "fastica"}
        ``"mne"``: ``mne.preprocessing.infomax`` (its own defaults: learning rate
        ``0.01 / ln(C^2)``, stops on ``w_change=1e-12`` or 20 steps without annealing,
        200 steps at most); ``"picard"``: ``picard.picard`` (preconditioned L-BFGS on the
        Infomax likelihood; ``ortho=False`` for the Infomax fixed points, ``extended=True``
        so that sub-Gaussian sources are found); ``"fastica"``:
        ``sklearn.decomposition.FastICA`` (logcosh, parallel). Each gets the centred,
        sphered data scaled to unit variance, as they expect.
    seed : int
    extended : bool
        Extended Infomax for ``"mne"``.
    max_iter : int, optional
        Iteration cap of the peer (its default when None).

    Returns
    -------
    InfomaxResult
        ``method`` is the peer; ``unmixing`` acts on the same sphered data as
        :func:`infomax`'s, so ``full_unmixing`` and the Amari index compare directly;
        ``n_steps`` is the peer's iteration count where it reports one.
    """
    peer = check_choice(peer, "peer", PEERS)
    X = validate_data(X)
    seed = check_seed(seed)
    extended = check_flag(extended, "extended")
    if max_iter is not None:
        max_iter = check_int(max_iter, "max_iter", minimum=1)
    Xs, sphere, mean = reference._center_and_sphere(X)
    white = Xs / 2.0  # the peers expect whitened data of unit variance (ours has variance 4)
    n_iter = 0
    if peer == "mne":
        from mne.preprocessing import infomax as mne_infomax

        kwargs = {} if max_iter is None else {"max_iter": max_iter}
        W, n_iter = mne_infomax(white.T, extended=extended, rng=np.random.default_rng(seed), verbose=False,
                                return_n_iter=True, **kwargs)
    elif peer == "picard":
        from picard import picard

        kwargs = {} if max_iter is None else {"max_iter": max_iter}
        _, W, _, n_iter = picard(white, whiten=False, ortho=False, extended=True, random_state=seed,
                                 return_n_iter=True, **kwargs)
    else:
        from sklearn.decomposition import FastICA

        model = FastICA(whiten=False, random_state=seed, max_iter=max_iter or 200, tol=1e-4)
        model.fit(white.T)
        W, n_iter = model.components_, model.n_iter_
    W = np.asarray(W, dtype=np.float64) / 2.0  # acting on Xs = 2 * white
    return InfomaxResult(unmixing=W, sphere=sphere, mixing=np.linalg.inv(W @ sphere), sources=W @ Xs, mean=mean,
                         bias=np.zeros(X.shape[0]), n_steps=int(n_iter), converged=True, lrate=float("nan"),
                         restarts=0, batch=0, method=peer, extended=bool(extended))
