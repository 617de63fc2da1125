"""The step loop shared by the fast methods: annealing, blow-up restarts, stopping.

The same rules as :func:`course_lib.ica.reference.infomax_reference`, with the minibatches
of a step delegated to a *stepper* (CPU, GPU kernels, CuPy). A stepper has

    step(perm, W, bias, lrate, max_weight) -> (W, bias, blown_up)

running every minibatch of one permutation from ``W`` and ``bias`` (host float64 arrays,
returned as new host arrays). The reference checks the weights after every minibatch; a
GPU stepper checks them once per step (a check per minibatch would cost a copy to the host
each time). The outcome is the same: a blown-up step is thrown away either way, and the
random stream drew one permutation for it in both cases.
"""

from __future__ import annotations

import math

import numpy as np

from .reference import (ANNEAL_DEG, ANNEAL_STEP, MAX_WEIGHT, MIN_LRATE, RESTART_FACTOR, ConvergenceError,
                        ExtendedState, center_and_sphere, default_batch_size, default_lrate, finish)


def run(X, make_stepper, *, method, batch=None, lrate=None, tol=1e-6, max_steps=512, seed=None, history=False,
        extended=False, n_subgauss=1, ext_blocks=1, kurt_size=6000, callback=None):
    """Infomax with ``make_stepper(Xs, batch[, extended])`` doing the minibatches; see the reference."""
    Xs, sphere, mean = center_and_sphere(X)
    n_channels, n_samples = Xs.shape
    batch = default_batch_size(n_samples) if batch is None else int(batch)
    lrate = default_lrate(n_channels) if lrate is None else float(lrate)
    rng = np.random.default_rng(seed)
    ext = ExtendedState(n_channels, n_subgauss, ext_blocks, min(kurt_size, n_samples)) if extended else None
    stepper = make_stepper(Xs, batch) if ext is None else make_stepper(Xs, batch, ext, rng)
    eye = np.eye(n_channels)
    restarts = 0
    while True:
        W, bias = eye.copy(), np.zeros(n_channels)
        old_W, old_delta, old_change = W.copy(), None, 0.0
        changes, angles, lrates, kept = [], [], [], []
        blown_up, converged, step = False, False, 0
        if ext is not None:
            ext.reset()
        while step < max_steps:
            perm = rng.permutation(n_samples)
            W, bias, blown_up = stepper.step(perm, W, bias, lrate, MAX_WEIGHT)
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
                  batch=batch, changes=changes, angles=angles, lrates=lrates, history=kept if history else None,
                  method=method, extended=extended, signs=None if ext is None else ext.signs.copy(),
                  max_steps=max_steps, tol=tol)
