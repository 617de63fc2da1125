"""The stepper of ``method="persistent_split"``: one launch and one download per step, nothing allocated.

Per call: the data go up once; four device arrays are made (data, the state ``W | bias |
status``, the float64 workspace ``W_spare | W^T | partials``, and a ring of K permutations).
Per step: one launch of :func:`~course_lib.ica._split_step.split_step_kernel` and one download
of the state (W, bias, minibatches run, blow-up flag). The permutations are drawn from the
run's stream (:class:`~course_lib.ica.reference.PermutationStream`, the same draws in the same
order as every other method) into pinned host memory while the device runs the step before,
and go up K at a time in one copy: one upload every K steps. A fresh pass (``W = I``,
``bias = 0``) is set by the kernel itself; other weights than the ones last downloaded go up
in two copies (never in the step loop of :func:`~course_lib.ica.reference.run_steps`).
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import device
from .._docs import fill_doc
from .reference import STEPPER_PARAMETERS
from ._split_step import MAX_THREADS, SAMPLES_PER_BLOCK, plan_split_step, split_step_kernel

__all__ = ["PERMUTATION_SLOTS", "SplitStepper", "split_threads"]

#: Steps' permutations held on the device at once (and uploaded together).
PERMUTATION_SLOTS = 8


def split_threads() -> int:
    """Threads per block of the split step: 256 on a GPU, 32 in the simulator (one thread at a time)."""
    return device.pick(sim=32, gpu=MAX_THREADS)


@fill_doc(stepper=STEPPER_PARAMETERS)
class SplitStepper:
    """Runs Infomax steps with :func:`~course_lib.ica._split_step.split_step_kernel`.

    Parameters
    ----------
    {stepper}
    threads : int, optional
        Threads per block; default :func:`split_threads`.
    per_block : int
        Samples per owning block (S).
    slots : int
        Permutations held on the device (K).
    grid : int, optional
        Blocks of the launch, at most the plan's (``P + C`` within the cooperative limit); fewer
        blocks loop over owners and rows, with the same result.

    Attributes
    ----------
    minibatches_run : int
        Minibatches the last step ran (fewer than ``N // B`` when the weights blew up).
    plan : SplitPlan
    """

    name = "persistent_split"
    #: :func:`~course_lib.ica.reference.run_steps` hands this stepper the run's permutation stream
    #: (:meth:`take_permutations`) and calls :meth:`step` with ``perm=None``.
    draws_permutations = True

    def __init__(self, Xs, batch, *, threads=None, per_block=SAMPLES_PER_BLOCK, slots=PERMUTATION_SLOTS, grid=None):
        from numba import cuda

        n_channels, n_samples = Xs.shape
        self.n_channels, self.n_samples, self.batch = n_channels, n_samples, int(batch)
        self.n_minibatches = n_samples // self.batch
        threads = split_threads() if threads is None else int(threads)
        limit = self._limit(threads)
        self.plan = plan_split_step(n_channels, self.batch, limit if grid is None else min(limit, int(grid)), threads,
                                    int(per_block))
        square = n_channels * n_channels
        self.xt = cuda.to_device(np.ascontiguousarray(Xs.T))
        self.state = cuda.device_array(square + n_channels + 2, np.float64)
        self.W = self.state[:square].reshape(n_channels, n_channels)
        self.bias = self.state[square:square + n_channels]
        self.status = self.state[square + n_channels:]
        work = cuda.device_array(2 * square + self.plan.owners * (square + n_channels), np.float64)
        self.W_spare = work[:square].reshape(n_channels, n_channels)
        self.Wt = work[square:2 * square].reshape(n_channels, n_channels)
        self.partials = work[2 * square:].reshape(self.plan.owners, square + n_channels)
        self.slots = max(1, int(slots))
        self.perms = cuda.device_array((self.slots, n_samples), np.int32)
        # Two pinned staging halves: one may still be going up while the next is drawn.
        self.staging = cuda.pinned_array((2, self.slots, n_samples), np.int32)
        self.state_host = cuda.pinned_array(square + n_channels + 2, np.float64)
        self.stream = cuda.stream()
        self.permutations = None
        self.steps_run = 0  # steps launched, blown-up ones included: step s uses slot s % K
        self.drawn = 0  # permutations drawn from the stream into the staging halves
        self.last = None  # (W, bias) as last downloaded: what the device holds
        self.minibatches_run = 0

    def _limit(self, threads):
        if device.is_simulator():
            from ..sim import max_cooperative_grid_blocks

            return max_cooperative_grid_blocks(threads)
        import numba

        from ._split_step import _example

        args = _example()[2]
        sig = tuple(numba.typeof(a) for a in args)
        return split_step_kernel.compile(sig).max_cooperative_grid_blocks(threads)

    def take_permutations(self, permutations):
        """Draw this stepper's permutations from ``permutations`` (a :class:`PermutationStream`)."""
        self.permutations = permutations

    def _draw(self):
        """The next permutation of the stream into its staging row (chunk parity, slot)."""
        index = self.drawn
        self.staging[(index // self.slots) % 2, index % self.slots] = self.permutations.draw()
        self.drawn += 1

    def _permutation_slot(self):
        """The slot of this step's permutation; at the start of a chunk, the chunk goes up in one copy."""
        step = self.steps_run
        slot = step % self.slots
        if slot == 0:
            while self.drawn < step + self.slots:  # the first chunk (later ones were drawn during steps)
                self._draw()
            self.perms.copy_to_device(self.staging[(step // self.slots) % 2], stream=self.stream)
        return slot

    def launch(self, slot, lrate, max_weight, reset, stream=None):
        """Enqueue one step on the device's state with permutation ``slot`` (one launch, no copy).

        ``stream``: default the stepper's own; ``0`` the default stream (where a timing harness queues).
        """
        plan = self.plan
        stream = self.stream if stream is None else stream
        with warnings.catch_warnings():
            # Weights that blow up overflow to inf: silently on a GPU, with NumPy's RuntimeWarning in the
            # simulator. The kernel stops the step after that minibatch; the host throws the step away.
            warnings.simplefilter("ignore", RuntimeWarning)
            split_step_kernel[plan.grid, plan.threads, stream](
                self.W, self.W_spare, self.Wt, self.bias, self.status, self.xt, self.perms, int(slot),
                self.n_minibatches, self.batch, plan.per_block, float(lrate), float(max_weight), int(reset),
                self.partials)

    def step(self, perm, W, bias, lrate, max_weight):
        """One step from ``W``, ``bias``; returns ``(W, bias, blown_up)`` as host arrays.

        ``perm`` must be None: the permutation is the stream's next (see :meth:`take_permutations`).
        """
        if perm is not None or self.permutations is None:
            raise ValueError("SplitStepper draws its own permutations: call take_permutations(stream) and pass "
                             "perm=None")
        n = self.n_channels
        reset = int(np.array_equal(W, np.eye(n)) and not np.any(bias))
        if not reset and not (self.last is not None and np.array_equal(self.last[0], W)
                              and np.array_equal(self.last[1], bias)):
            self.W.copy_to_device(np.ascontiguousarray(W, dtype=np.float64), stream=self.stream)
            self.bias.copy_to_device(np.ascontiguousarray(bias, dtype=np.float64), stream=self.stream)
        self.launch(self._permutation_slot(), lrate, max_weight, reset)
        self.steps_run += 1
        if self.drawn < self.steps_run + self.slots:  # the next chunk's permutation, while the device runs
            self._draw()
        self.state.copy_to_host(self.state_host, stream=self.stream)
        self.stream.synchronize()
        square = n * n
        W = self.state_host[:square].reshape(n, n).copy()
        bias = self.state_host[square:square + n].copy()
        self.minibatches_run = int(self.state_host[square + n])
        blown_up = bool(self.state_host[square + n + 1] != 0.0) or not bool(np.all(np.abs(W) <= max_weight))
        self.last = (W.copy(), bias.copy())
        return W, bias, blown_up
