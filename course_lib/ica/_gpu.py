"""Steppers that run the minibatches of a step on the device: the course's kernels, or CuPy (cuBLAS).

Each ``step`` copies ``W`` and the bias in (C^2 + C doubles) and the step's permutation
(N int32), launches every minibatch, and copies ``W`` and the bias back once: the step loop of
:func:`course_lib.ica.reference.run_steps` then decides on annealing, restarts and stopping on the host.
The data are copied to the device once per run.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import device
from .._docs import fill_doc
from .reference import STEPPER_PARAMETERS

#: Launches per minibatch of each kernel method (B = samples per minibatch).
LAUNCHES_PER_MINIBATCH = {"blas": "B + 5", "custom": "6", "fused": "2", "persistent": "1 per step"}


def launch_shape_2d(threads_per_block):
    """Block shape of the 2-D kernels: a warp (or less) along x, the columns, for coalesced rows."""
    x = min(32, threads_per_block)
    return x, max(1, threads_per_block // x)


@fill_doc(stepper=STEPPER_PARAMETERS)
class KernelStepper:
    """Minibatches with the course's kernels (``method`` ``"blas"``, ``"custom"`` or ``"fused"``).

    Parameters
    ----------
    {stepper}
    method : str
    threads_per_block : int
        Threads per block of the 1-D and 2-D general kernels (the block-per-sample and
        block-per-row kernels always use one thread per channel).
    """

    def __init__(self, Xs, batch, method, threads_per_block):
        from numba import cuda

        self.name = method
        n_channels = Xs.shape[0]
        self.block, self.tpb = batch, threads_per_block
        self.xt = cuda.to_device(np.ascontiguousarray(Xs.T))
        self.U = cuda.device_array((batch, n_channels), np.float64)
        self.Y = cuda.device_array((batch, n_channels), np.float64)
        self.G = cuda.device_array((n_channels, n_channels), np.float64)
        self.P = cuda.device_array((n_channels, n_channels), np.float64)
        self.W_spare = cuda.device_array((n_channels, n_channels), np.float64)

    def launch_step(self, perm_host, d_perm, d_W, d_Wt, d_bias, lrate):
        """Enqueue every minibatch of one step; returns the device array holding the final W."""
        from . import kernels as k

        n_channels = d_W.shape[0]
        block, tpb = self.block, self.tpb
        n_blocks = perm_host.shape[0] // block
        grid_1d = -(-n_channels // tpb)
        bx, by = launch_shape_2d(tpb)
        grid_cc = (-(-n_channels // bx), -(-n_channels // by))
        grid_bc = (-(-n_channels // bx), -(-block // by))
        lrate = float(lrate)
        W, W_next = d_W, self.W_spare
        for blk in range(n_blocks):
            start = blk * block
            if self.name == "fused":
                k.activations_kernel[block, n_channels](d_Wt, self.xt, d_perm, start, d_bias, self.U, self.Y)
                k.weight_update_kernel[n_channels, n_channels](W, self.U, self.Y, lrate, W_next, d_Wt, d_bias)
                W, W_next = W_next, W
                continue
            if self.name == "blas":  # one GEMV launch per sample, as the C code called dgemv
                for b in range(block):
                    k.gemv_kernel[grid_1d, tpb](W, self.xt[int(perm_host[start + b])], self.U[b])
            else:
                k.permuted_gemv_kernel[block, n_channels](d_Wt, self.xt, d_perm, start, self.U)
            k.logistic_kernel[grid_bc, (bx, by)](self.U, d_bias, self.Y)
            k.gemm_tn_kernel[grid_cc, (bx, by)](self.Y, self.U, self.G)
            k.gemm_kernel[grid_cc, (bx, by)](self.G, W, self.P)
            k.weights_update_kernel[grid_cc, (bx, by)](W, self.P, lrate, float(block), d_Wt)
            k.bias_update_kernel[grid_1d, tpb](self.Y, lrate, d_bias)
        return W

    def step(self, perm, W, bias, lrate, max_weight):
        """One step; returns ``(W, bias, blown_up)`` as host arrays."""
        from numba import cuda

        d_perm = cuda.to_device(perm.astype(np.int32))
        d_W = cuda.to_device(np.ascontiguousarray(W))
        d_Wt = cuda.to_device(np.ascontiguousarray(W.T))
        d_bias = cuda.to_device(np.ascontiguousarray(bias))
        with warnings.catch_warnings():
            # Weights that blow up overflow to inf: silently on a GPU, with NumPy's RuntimeWarning in the
            # simulator. The step is thrown away and restarted either way.
            warnings.simplefilter("ignore", RuntimeWarning)
            final = self.launch_step(perm, d_perm, d_W, d_Wt, d_bias, lrate)
        if final is not d_W:  # the fused method ping-pongs W: keep the spare for the next step
            self.W_spare = d_W
        W = final.copy_to_host()
        bias = d_bias.copy_to_host()
        return W, bias, not bool(np.all(np.abs(W) <= max_weight))


@fill_doc(stepper=STEPPER_PARAMETERS)
class PersistentStepper(KernelStepper):
    """A whole step in one cooperative launch of :func:`~course_lib.ica.kernels.persistent_step_kernel`.

    ``W`` and the bias stay on the device between steps: a step uploads its permutation
    (N int32), launches once, and downloads ``W`` and the bias (the host's step loop
    decides on annealing, restarts and stopping). They are uploaded again only when the
    host hands in other values than the ones it got back (a restart).

    Parameters
    ----------
    {stepper}
    """

    def __init__(self, Xs, batch):
        from numba import cuda

        super().__init__(Xs, batch, "persistent", Xs.shape[0])
        n_channels = Xs.shape[0]
        self.d_W = cuda.device_array((n_channels, n_channels), np.float64)
        self.d_Wt = cuda.device_array((n_channels, n_channels), np.float64)
        self.d_bias = cuda.device_array(n_channels, np.float64)
        self.on_device = None  # (W, bias) as last downloaded: what d_W and d_bias hold
        self.grid = None

    def _grid(self, args):
        from .. import device
        from . import kernels as k

        n_channels = self.d_W.shape[0]
        if device.is_simulator():
            from ..sim import max_cooperative_grid_blocks

            limit = max_cooperative_grid_blocks(n_channels)
        else:
            import numba

            limit = k.persistent_step_kernel.compile(tuple(numba.typeof(a) for a in args)) \
                .max_cooperative_grid_blocks(n_channels)
        # Enough blocks for the larger stage (B samples or C rows), within the cooperative limit.
        return max(1, min(limit, max(self.block, n_channels)))

    def launch_step(self, d_perm, lrate):
        """Enqueue one step on the device's ``W`` and bias (one launch, no copy)."""
        from . import kernels as k

        n_minibatches = d_perm.shape[0] // self.block
        args = (self.d_W, self.W_spare, self.d_Wt, self.xt, d_perm, n_minibatches, self.d_bias, self.U, self.Y,
                float(lrate))
        if self.grid is None:
            self.grid = self._grid(args)
        k.persistent_step_kernel[self.grid, self.d_W.shape[0]](*args)

    def step(self, perm, W, bias, lrate, max_weight):
        """One step; returns ``(W, bias, blown_up)`` as host arrays."""
        from numba import cuda

        d_perm = cuda.to_device(perm.astype(np.int32))
        last = self.on_device
        if last is None or not (np.array_equal(last[0], W) and np.array_equal(last[1], bias)):
            self.d_W.copy_to_device(np.ascontiguousarray(W))
            self.d_bias.copy_to_device(np.ascontiguousarray(bias))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a blow-up overflows, as in KernelStepper.step
            self.launch_step(d_perm, lrate)
        W = self.d_W.copy_to_host()
        bias = self.d_bias.copy_to_host()
        self.on_device = (W.copy(), bias.copy())
        return W, bias, not bool(np.all(np.abs(W) <= max_weight))


class CupyStepper:
    """Minibatches with CuPy on cuBLAS: the GPU library peer (GPU machines with CuPy only).

    The best use of the library, not the drop-in one: the permuted data are gathered once
    per step, then each minibatch is three cuBLAS GEMMs and a few elementwise kernels on
    contiguous ``(B, C)`` slices, in the transposed form of :mod:`course_lib.ica.cpu`.
    """

    name = "cupy"

    def __init__(self, Xs, block):
        import cupy as cp

        self.cp = cp
        self.block = block
        self.xt = cp.asarray(np.ascontiguousarray(Xs.T))
        self.eye_b = block * cp.eye(Xs.shape[0])

    def launch_step(self, d_perm, v, bias, lrate):
        """Enqueue one step on ``v = W^T`` and ``bias`` (CuPy arrays, updated in place)."""
        cp, block = self.cp, self.block
        xp = self.xt[d_perm]  # one gather per step
        for blk in range(d_perm.shape[0] // block):
            u = xp[blk * block:(blk + 1) * block] @ v
            u += bias
            y = -cp.tanh(0.5 * u)
            v += lrate * (v @ (u.T @ y + self.eye_b))
            bias += lrate * y.sum(axis=0)

    def step(self, perm, W, bias, lrate, max_weight):
        cp = self.cp
        v = cp.asarray(np.ascontiguousarray(W.T))
        d_bias = cp.asarray(bias)
        self.launch_step(cp.asarray(perm), v, d_bias, float(lrate))
        W = cp.asnumpy(v).T.copy()
        return W, cp.asnumpy(d_bias), not bool(np.all(np.abs(W) <= max_weight))


def have_cupy() -> bool:
    """True when CuPy can be imported and a GPU is in use."""
    if not device.is_gpu():
        return False
    try:
        import cupy  # noqa: F401
    except ImportError:
        return False
    return True
