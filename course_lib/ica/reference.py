"""Trusted reference: Infomax ICA in float64 NumPy, written to be read, plus the measures of separation.

:func:`infomax_reference` is Bell-Sejnowski Infomax with the natural gradient, as EEGLAB's
``runica`` and the CUDAICA code run it (the unit's fact sheet), step by step:

1. centre every channel; sphere: ``x <- 2 cov^(-1/2) x`` with ``cov = X X^T / (N - 1)``;
2. ``W = I``, ``bias = 0``, minibatch size (runica's "block") ``B = floor(sqrt(N / 3))``,
   learning rate ``lrate = 0.015 / ln(C)``;
3. one *step* = a fresh random permutation of the samples, then ``floor(N / B)`` minibatches:
   ``U = W X_b + bias``; ``Y = -tanh(U / 2)`` (= 1 - 2 logistic(U));
   ``W += lrate (Y U^T + B I) W``; ``bias += lrate sum_b Y``;
   extended Infomax instead uses ``W += lrate (B I - K tanh(U) U^T - U U^T) W`` with
   ``K = diag(signs)``, ``signs`` the signs of the components' kurtosis;
4. blow-up guard: if some ``|W_ij| > 1e8`` (or is not finite), restart from ``W = I`` with
   ``lrate *= 0.9`` (fail once ``lrate`` falls below 1e-10);
5. after each step: ``change = ||W - W_old||_F^2``; the angle between this step's change and
   the last remembered one; if it exceeds 60 degrees, ``lrate *= 0.9`` (annealing);
   stop when ``change < 1e-6`` (after step 2) or after 512 steps.

The random numbers are drawn in one fixed order from ``numpy.random.default_rng(seed)``
(one permutation per step, then the kurtosis subsamples of extended Infomax), so every
implementation of the unit given the same seed sees the same minibatches.

:func:`amari_index` and :func:`match_sources` compare a result with the ground truth up
to the permutation, sign and scale that ICA cannot recover.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from .._validate import check_array, check_flag, check_float, check_int, check_seed
from ._extended import ExtendedState
from .data import MIN_CHANNELS

__all__ = [
    "ANNEAL_DEG",
    "ANNEAL_STEP",
    "MAX_WEIGHT",
    "MIN_LRATE",
    "MIN_SAMPLES_PER_CHANNEL",
    "PermutationStream",
    "RESTART_FACTOR",
    "ReferenceStepper",
    "ConvergenceError",
    "ConvergenceWarning",
    "ExtendedState",
    "InfomaxOptions",
    "InfomaxResult",
    "amari_index",
    "center_and_sphere",
    "check_options",
    "default_batch_size",
    "default_lrate",
    "infomax_reference",
    "match_sources",
    "run_steps",
    "validate_data",
]

#: Anneal when successive weight changes turn by more than this many degrees...
ANNEAL_DEG = 60.0
#: ... by multiplying the learning rate by this.
ANNEAL_STEP = 0.9
#: Blow-up guard on the weights.
MAX_WEIGHT = 1e8
#: Learning-rate factor at a restart after a blow-up.
RESTART_FACTOR = 0.9
#: Give up when restarts bring the learning rate below this.
MIN_LRATE = 1e-10


class ConvergenceWarning(UserWarning):
    """Infomax stopped at the step cap before the weight change fell below the tolerance."""


class ConvergenceError(RuntimeError):
    """Infomax cannot proceed: the weights keep blowing up even with a tiny learning rate."""


@dataclass
class InfomaxResult:
    """What an Infomax run returns.

    Attributes
    ----------
    unmixing : ndarray of shape (C, C), float64
        ``W``, the weights learnt on the sphered data.
    sphere : ndarray of shape (C, C), float64
        ``2 cov^(-1/2)``; the full unmixing matrix is ``unmixing @ sphere``.
    mixing : ndarray of shape (C, C), float64
        ``inv(unmixing @ sphere)``: column ``j`` is the topography of component ``j``.
    sources : ndarray of shape (C, N), float64
        ``unmixing @ sphere @ (X - mean)``: the components' activations.
    mean : ndarray of shape (C,), float64
        Channel means removed before sphering.
    bias : ndarray of shape (C,), float64
    n_steps : int
        Steps done in the final (successful) run.
    converged : bool
        Whether the weight change fell below the tolerance before the step cap.
    lrate : float
        Learning rate at the end (after annealing and restarts).
    restarts : int
        Restarts after a blow-up.
    steps_run : int
        Steps run in all, those of the passes that blew up included (the blown-up steps too).
    minibatches_run : int
        Minibatches run in all, those of the passes that blew up included (a stepper that
        checks the weights after every minibatch stops a pass at its blow-up; one that checks
        once per step runs the whole step).
    batch : int
        Samples per minibatch.
    changes : list of float
        ``||W_step - W_previous||_F^2`` per step of the final run.
    angles : list of float
        Degrees between successive changes per step (0 for the first two steps).
    lrates : list of float
        Learning rate used in each step.
    history : list of ndarray or None
        ``unmixing`` after each step when asked for (``history=True``), for plots of
        convergence; None otherwise.
    method : str
    extended : bool
    signs : ndarray of shape (C,) or None
        Extended Infomax: +1 for super-Gaussian, -1 for sub-Gaussian components.
    """

    unmixing: np.ndarray = field(repr=False)
    sphere: np.ndarray = field(repr=False)
    mixing: np.ndarray = field(repr=False)
    sources: np.ndarray = field(repr=False)
    mean: np.ndarray = field(repr=False)
    bias: np.ndarray = field(repr=False)
    n_steps: int
    converged: bool
    lrate: float
    restarts: int
    batch: int
    steps_run: int = 0
    minibatches_run: int = 0
    changes: list = field(repr=False, default_factory=list)
    angles: list = field(repr=False, default_factory=list)
    lrates: list = field(repr=False, default_factory=list)
    history: list | None = field(repr=False, default=None)
    method: str = "reference"
    extended: bool = False
    signs: np.ndarray | None = field(repr=False, default=None)

    @property
    def full_unmixing(self) -> np.ndarray:
        """``unmixing @ sphere``: applied to centred channels it gives the sources."""
        return self.unmixing @ self.sphere


#: Fewer samples than this per channel cannot estimate a C x C unmixing matrix (C^2 unknowns).
MIN_SAMPLES_PER_CHANNEL = 10


def validate_data(X, name="X"):
    """Check a recording and return it as float64 ``(C, N)``.

    Raises
    ------
    ValueError
        Not a 2-D array of real numbers, NaN or infinite values, fewer than 2 channels,
        fewer than :data:`MIN_SAMPLES_PER_CHANNEL` samples per channel (the message says which).
    """
    X = check_array(X, name, ndim=2, dtype="fiu", finite=True, allow_empty=False)
    n_channels, n_samples = X.shape
    if n_channels < MIN_CHANNELS:
        raise ValueError(f"{name} must have at least {MIN_CHANNELS} channels (rows), got {n_channels}: "
                         "ICA separates several channels")
    if n_samples < MIN_SAMPLES_PER_CHANNEL * n_channels:
        raise ValueError(f"{name} has too few samples for its channels: {n_samples} samples for {n_channels} "
                         f"channels; Infomax needs at least {MIN_SAMPLES_PER_CHANNEL} per channel "
                         f"({MIN_SAMPLES_PER_CHANNEL * n_channels}), and many more (~30 C^2) for a good estimate. "
                         "Is the array transposed? It must be channels x samples")
    return np.asarray(X, dtype=np.float64)


@dataclass(frozen=True)
class InfomaxOptions:
    """The validated options shared by every Infomax implementation (see :func:`check_options`)."""

    batch: int | None
    lrate: float | None
    tol: float
    max_steps: int
    seed: int | None
    history: bool
    extended: bool

    def as_dict(self) -> dict:
        return {"batch": self.batch, "lrate": self.lrate, "tol": self.tol, "max_steps": self.max_steps,
                "seed": self.seed, "history": self.history, "extended": self.extended}


def check_options(X, *, batch=None, lrate=None, tol=1e-6, max_steps=512, seed=None, history=False,
                  extended=False) -> InfomaxOptions:
    """Validate the options of an Infomax run on the validated recording ``X`` (C, N).

    Raises
    ------
    ValueError
        Naming the argument: batch not in 1 .. N, lrate or tol not > 0, max_steps < 1, a bad
        seed, history or extended not True/False.
    """
    n_samples = X.shape[1]
    return InfomaxOptions(
        batch=None if batch is None else check_int(batch, "batch", minimum=1, maximum=n_samples),
        lrate=None if lrate is None else check_float(lrate, "lrate", minimum=0.0, min_inclusive=False),
        tol=check_float(tol, "tol", minimum=0.0, min_inclusive=False),
        max_steps=check_int(max_steps, "max_steps", minimum=1),
        seed=check_seed(seed),
        history=check_flag(history, "history"),
        extended=check_flag(extended, "extended"),
    )


def default_batch_size(n_samples: int) -> int:
    """``floor(sqrt(N / 3))`` samples per minibatch (at least 1), the runica heuristic."""
    n_samples = check_int(n_samples, "n_samples", minimum=1)
    return max(1, int(math.floor(math.sqrt(n_samples / 3.0))))


def default_lrate(n_channels: int) -> float:
    """``0.015 / ln(C)``, the CUDAICA default (MNE uses ``0.01 / ln(C^2)``, three times smaller)."""
    n_channels = check_int(n_channels, "n_channels", minimum=MIN_CHANNELS)
    return 0.015 / math.log(n_channels)


def center_and_sphere(X):
    """Centre each channel and sphere: returns ``(Xs, sphere, mean)``.

    Parameters
    ----------
    X : ndarray of shape (C, N), float64

    Returns
    -------
    Xs : ndarray of shape (C, N), float64
        ``sphere @ (X - mean)``: uncorrelated channels of variance 4.
    sphere : ndarray of shape (C, C), float64
        ``2 cov^(-1/2)`` (symmetric), ``cov = Xc Xc^T / (N - 1)``.
    mean : ndarray of shape (C,), float64

    Raises
    ------
    ValueError
        If the covariance is singular (rank-deficient data).
    """
    return _center_and_sphere(_recording(X))


def _recording(X):
    """``X`` checked as a 2-D array of finite real numbers, as float64."""
    return check_array(X, "X", ndim=2, dtype="fiu", finite=True, allow_empty=False).astype(np.float64)


def _center_and_sphere(X):
    """:func:`center_and_sphere` of a checked float64 recording (what :func:`validate_data` returns)."""
    if X.shape[1] < 2:
        raise ValueError(f"X must have at least 2 samples (columns) to estimate a covariance, got {X.shape[1]}")
    mean = X.mean(axis=1)
    Xc = X - mean[:, None]
    cov = Xc @ Xc.T / (X.shape[1] - 1)
    evals, evecs = np.linalg.eigh(cov)
    rank = rank_of(evals)
    if rank < X.shape[0]:
        raise ValueError(f"X is rank deficient: its {X.shape[0]} channels span only {rank} dimensions (a channel "
                         "that is a combination of others, e.g. after re-referencing to the average, or a flat or "
                         "copied channel); drop channels or reduce the data with PCA first")
    sphere = 2.0 * (evecs / np.sqrt(evals)) @ evecs.T
    return sphere @ Xc, sphere, mean


def rank_of(evals) -> int:
    """Numerical rank of a covariance from its eigenvalues (relative tolerance 1e-12)."""
    evals = np.asarray(evals)
    top = evals.max(initial=0.0)
    if not top > 0:
        return 0
    return int(np.count_nonzero(evals > top * 1e-12))


def infomax_reference(X, *, batch=None, lrate=None, tol=1e-6, max_steps=512, extended=False, n_subgauss=1,
                      ext_blocks=1, kurt_size=6000, seed=None, history=False):
    """Infomax ICA, float64 NumPy, one minibatch at a time (the unit's trusted reference).

    Parameters
    ----------
    X : ndarray of shape (C, N)
        Channels x samples, already validated (see :func:`course_lib.ica.infomax`, which
        checks and calls this for ``method="reference"``).
    batch : int, optional
        Samples per minibatch; default :func:`default_batch_size`.
    lrate : float, optional
        Initial learning rate; default :func:`default_lrate`.
    tol : float
        Stop when ``||W_step - W_previous||_F^2`` falls below it (after step 2).
    max_steps : int
        Step cap.
    extended : bool
        Extended Infomax (sub- and super-Gaussian sources).
    n_subgauss, ext_blocks, kurt_size : int
        Extended Infomax: initial number of sub-Gaussian components, minibatches between
        kurtosis estimates, samples per estimate.
    seed : int or None
    history : bool
        Keep ``W`` after every step in ``result.history``.

    Returns
    -------
    InfomaxResult
    """
    X = validate_data(X)
    options = check_options(X, batch=batch, lrate=lrate, tol=tol, max_steps=max_steps, seed=seed, history=history,
                            extended=extended)
    return _run_steps_checked(X, ReferenceStepper, method="reference",
                              n_subgauss=check_int(n_subgauss, "n_subgauss", minimum=0, maximum=X.shape[0]),
                              ext_blocks=check_int(ext_blocks, "ext_blocks", minimum=0),
                              kurt_size=check_int(kurt_size, "kurt_size", minimum=1), **options.as_dict())


class PermutationStream:
    """The run's permutations, one per step (blown-up steps included), drawn in order from its generator.

    A stepper that keeps permutations on the device (``draws_permutations = True``) draws
    them itself, ahead of the steps, from the same stream: the same permutations in the same
    order as a stepper handed one per step.
    """

    def __init__(self, rng, n_samples):
        self.rng, self.n_samples = rng, n_samples

    def draw(self):
        """The next permutation of ``0 .. N - 1`` (int64)."""
        return self.rng.permutation(self.n_samples)


#: The two arguments every stepper takes from :func:`run_steps` (``make_stepper(Xs, batch)``), documented once
#: (:func:`course_lib._docs.fill_doc`).
STEPPER_PARAMETERS = """
Xs : ndarray of shape (C, N), float64
    Sphered data (:func:`~course_lib.ica.reference.center_and_sphere`).
batch : int
    Samples per minibatch (B).
"""


class ReferenceStepper:
    """The minibatches of one step, as the module docstring writes them (the weights checked after each).

    Every implementation of the unit runs the same step loop (:func:`run_steps`) with its own
    stepper; this one is the reference's. Parameters: the sphered data ``Xs`` (C, N), the
    minibatch size and, for extended Infomax, the :class:`ExtendedState` and the run's random
    stream (the kurtosis subsamples draw from it between minibatches).
    """

    name = "reference"

    def __init__(self, Xs, batch, ext=None, rng=None):
        self.Xs, self.batch, self.ext, self.rng = Xs, batch, ext, rng
        self.eye = np.eye(Xs.shape[0])
        self.minibatches_run = 0

    def step(self, perm, W, bias, lrate, max_weight):
        """Every minibatch of the permutation ``perm``; returns ``(W, bias, blown_up)``."""
        Xs, batch, ext, eye = self.Xs, self.batch, self.ext, self.eye
        for t in range(0, (perm.size // batch) * batch, batch):
            self.minibatches_run = t // batch + 1
            U = W @ Xs[:, perm[t:t + batch]] + bias[:, None]
            if ext is None:
                Y = -np.tanh(U / 2.0)
                W = W + lrate * (Y @ U.T + batch * eye) @ W
                bias = bias + lrate * Y.sum(axis=1)
            else:
                Y = np.tanh(U)
                W = W + lrate * (batch * eye - ext.signs[:, None] * (Y @ U.T) - U @ U.T) @ W
                bias = bias - 2.0 * lrate * Y.sum(axis=1)
            if not np.all(np.abs(W) <= max_weight):  # also catches inf and NaN
                return W, bias, True
            if ext is not None:
                ext.after_block(Xs, W, self.rng)
        return W, bias, False


def run_steps(X, make_stepper, *, method, **options):
    """The step loop of every implementation: annealing, blow-up restarts, stopping (steps 2-5 above).

    ``make_stepper(Xs, batch)`` (``make_stepper(Xs, batch, ext, rng)`` for extended Infomax)
    returns an object whose ``step(perm, W, bias, lrate, max_weight) -> (W, bias, blown_up)``
    runs every minibatch of one permutation from ``W`` and ``bias`` (host float64 arrays,
    returned as new host arrays): :class:`ReferenceStepper`, the fast CPU one
    (:mod:`course_lib.ica.cpu`), the kernels or CuPy (:mod:`course_lib.ica._gpu`,
    :mod:`course_lib.ica._gpu_split`). A stepper may check the weights after every minibatch (the
    reference, the CPU, the split step on the device) or once per step (the other GPU steppers: a
    check per minibatch would cost a copy to the host each time); the outcome is the same, since a
    blown-up step is thrown away either way and the random stream drew one permutation for it. A
    stepper that says how many minibatches its last step ran (``minibatches_run``) has them counted
    in ``result.minibatches_run``; otherwise a step counts all ``N // B``. A stepper with
    ``draws_permutations = True`` gets the run's :class:`PermutationStream` once
    (``take_permutations``) and ``perm=None`` at every step. ``options``: ``batch``, ``lrate``,
    ``tol``, ``max_steps``, ``seed``, ``history``, ``extended``, ``n_subgauss``, ``ext_blocks``,
    ``kurt_size`` (as :func:`infomax_reference` takes them) and ``callback``.
    """
    return _run_steps_checked(_recording(X), make_stepper, method=method, **options)


def _run_steps_checked(X, make_stepper, *, method, batch=None, lrate=None, tol=1e-6, max_steps=512, seed=None,
                       history=False, extended=False, n_subgauss=1, ext_blocks=1, kurt_size=6000, callback=None):
    """:func:`run_steps` of a checked float64 recording (for :func:`course_lib.ica.infomax`, which checks it once)."""
    Xs, sphere, mean = _center_and_sphere(X)
    n_channels, n_samples = Xs.shape
    batch = default_batch_size(n_samples) if batch is None else int(batch)
    lrate = default_lrate(n_channels) if lrate is None else float(lrate)
    rng = np.random.default_rng(seed)
    ext = ExtendedState(n_channels, n_subgauss, ext_blocks, min(kurt_size, n_samples)) if extended else None
    stepper = make_stepper(Xs, batch) if ext is None else make_stepper(Xs, batch, ext, rng)
    permutations = PermutationStream(rng, n_samples)
    draws = bool(getattr(stepper, "draws_permutations", False))
    if draws:
        stepper.take_permutations(permutations)
    eye = np.eye(n_channels)
    restarts = steps_run = minibatches_run = 0
    while True:  # one pass per (re)start
        W, bias = eye.copy(), np.zeros(n_channels)
        old_W, old_delta, old_change = W.copy(), None, 0.0
        changes, angles, lrates, kept = [], [], [], []
        blown_up, converged, step = False, False, 0
        if ext is not None:
            ext.reset()
        while step < max_steps:
            perm = None if draws else permutations.draw()
            W, bias, blown_up = stepper.step(perm, W, bias, lrate, MAX_WEIGHT)
            steps_run += 1
            minibatches_run += getattr(stepper, "minibatches_run", n_samples // batch)
            if blown_up or not np.all(np.abs(W) <= MAX_WEIGHT):
                blown_up = True
                break
            step += 1
            delta = (W - old_W).ravel()
            change = float(delta @ delta)
            angle = 0.0
            if step > 2:
                cosine = float(delta @ old_delta) / math.sqrt(change * old_change)
                angle = math.degrees(math.acos(min(1.0, max(-1.0, cosine))))
            old_W = W.copy()
            changes.append(change)
            angles.append(angle)
            lrates.append(lrate)
            if history:
                kept.append(W.copy())
            if callback is not None:
                callback(step, W)
            if angle > ANNEAL_DEG:
                lrate *= ANNEAL_STEP
                old_delta, old_change = delta, change
            elif step == 1:
                old_delta, old_change = delta, change
            if step > 2 and change < tol:
                converged = True
                break
        if not blown_up:
            break
        restarts += 1
        lrate *= RESTART_FACTOR
        if lrate < MIN_LRATE:
            raise ConvergenceError(f"the weights blew up {restarts} times; the learning rate fell below "
                                   f"{MIN_LRATE:g}: the data may be badly scaled or nearly singular")
    return finish(X, W, bias, sphere, mean, Xs, step=step, converged=converged, lrate=lrate, restarts=restarts,
                  steps_run=steps_run, minibatches_run=minibatches_run, batch=batch, changes=changes, angles=angles,
                  lrates=lrates, history=kept if history else None, method=method, extended=extended,
                  signs=None if ext is None else ext.signs.copy(), max_steps=max_steps, tol=tol)


def finish(X, W, bias, sphere, mean, Xs, *, step, converged, lrate, restarts, batch, changes, angles, lrates,
           history, method, extended, signs, max_steps, tol, steps_run=0, minibatches_run=0):
    """Build the :class:`InfomaxResult` (and warn when the step cap was hit before convergence)."""
    if not converged:
        last = changes[-1] if changes else float("nan")
        warnings.warn(f"Infomax did not converge: {max_steps} steps done, last weight change {last:.3g} is above "
                      f"tol={tol:g}; raise max_steps, or lower lrate", ConvergenceWarning, stacklevel=3)
    full = W @ sphere
    return InfomaxResult(unmixing=W, sphere=sphere, mixing=np.linalg.inv(full), sources=W @ Xs, mean=mean,
                         bias=bias, n_steps=step, converged=converged, lrate=lrate, restarts=restarts, batch=batch,
                         steps_run=steps_run, minibatches_run=minibatches_run,
                         changes=changes, angles=angles, lrates=lrates, history=history, method=method,
                         extended=extended, signs=signs)


def amari_index(unmixing, mixing):
    """Amari index of ``P = unmixing @ mixing``: 0 when P is a scaled permutation.

    ``(sum_i (sum_j |p_ij| / max_j |p_ij| - 1) + sum_j (sum_i |p_ij| / max_i |p_ij| - 1)) / (2 C (C - 1))``,
    between 0 (perfect separation) and 1.

    Parameters
    ----------
    unmixing : ndarray of shape (C, C)
        The full unmixing matrix (``result.full_unmixing``).
    mixing : ndarray of shape (C, C)
        The true mixing matrix.

    Returns
    -------
    float
    """
    unmixing = check_array(unmixing, "unmixing", ndim=2, dtype="fiu", finite=True, allow_empty=False)
    mixing = check_array(mixing, "mixing", shape=(unmixing.shape[1], None), dtype="fiu", finite=True,
                         allow_empty=False)
    if unmixing.shape[0] != mixing.shape[1]:
        raise ValueError(f"mixing must have shape ({unmixing.shape[1]}, {unmixing.shape[0]}) so that "
                         f"unmixing @ mixing is square, got {mixing.shape}")
    P = np.abs(unmixing.astype(np.float64) @ mixing.astype(np.float64))
    n = P.shape[0]
    if n < 2:
        return 0.0
    rows = (P.sum(axis=1) / P.max(axis=1) - 1.0).sum()
    cols = (P.sum(axis=0) / P.max(axis=0) - 1.0).sum()
    return float((rows + cols) / (2.0 * n * (n - 1)))


def match_sources(estimated, true):
    """Pair each true source with one estimated component, maximising total |correlation|.

    Parameters
    ----------
    estimated : ndarray of shape (C, N)
    true : ndarray of shape (C, N)

    Returns
    -------
    order : ndarray of shape (C,), int
        ``estimated[order[j]]`` is the component matched to ``true[j]``.
    correlations : ndarray of shape (C,)
        ``|corr(estimated[order[j]], true[j])|``: 1 is a perfect match up to sign and scale.
    signs : ndarray of shape (C,)
        Sign of each correlation (multiply to align the component with the truth).
    """
    from scipy.optimize import linear_sum_assignment

    est = check_array(estimated, "estimated", ndim=2, dtype="fiu", finite=True, allow_empty=False).astype(float)
    tru = check_array(true, "true", shape=est.shape, dtype="fiu", finite=True, allow_empty=False).astype(float)
    est = est - est.mean(axis=1, keepdims=True)
    tru = tru - tru.mean(axis=1, keepdims=True)
    est_n = est / np.maximum(np.linalg.norm(est, axis=1, keepdims=True), 1e-300)
    tru_n = tru / np.maximum(np.linalg.norm(tru, axis=1, keepdims=True), 1e-300)
    corr = tru_n @ est_n.T  # (true, estimated)
    rows, cols = linear_sum_assignment(-np.abs(corr))
    order = np.empty(tru.shape[0], dtype=np.int64)
    order[rows] = cols
    picked = corr[np.arange(tru.shape[0]), order]
    return order, np.abs(picked), np.sign(picked)
