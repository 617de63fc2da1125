"""Public entry points of Unit 4: :func:`seamless_clone`, :func:`clone_history` and :func:`direct_clone`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .. import device
from .._docs import fill_doc
from .._validate import check_choice, check_int
# The one-launch clone's pool, re-exported (release_buffers is its public door).
from ._persistent_buffers import (POOL_SHAPES, _cooperative_blocks, _persistent_buffers,  # noqa: F401
                                  _PersistentBuffers, release_buffers)
from .cpu import _direct_solve, jacobi_cpu
from .data import nonwhite_mask
from .reference import (Prepared, _prepare_checked, check_image, check_problem, compose, jacobi_step_reference,
                        prepare, residual)

__all__ = ["METHODS", "CloneHistory", "DeviceSolver", "PersistentSolver", "clone_history", "default_block", "default_fused",
           "direct_clone", "naive_paste", "seamless_clone", "validate_inputs"]

#: ``"persistent"``: the whole clone in one launch; ``"persistent_bands"``: the same, spread over the SMs
#: (the banded layout); ``"jacobi"``: one kernel launch per iteration; ``"jacobi_fused"``: several
#: iterations per launch in shared memory; ``"cpu"``: Numba ``parallel=True``; ``"numpy"``: the reference.
METHODS = ("persistent", "persistent_bands", "jacobi", "jacobi_fused", "cpu", "numpy")
#: Layouts of :class:`PersistentSolver`: one block per channel in shared memory, a cooperative grid over
#: global memory, or a cooperative grid of blocks each holding a band of rows of one channel in shared memory.
PERSISTENT_LAYOUTS = ("shared", "grid", "bands")


def default_block() -> int:
    """Threads per block of the one-iteration kernels: 256 on a GPU, 64 in the simulator.

    They run as 8 rows of ``default_block() // 8`` threads: 32 x 8 on a GPU (a warp reads
    32 consecutive pixels of a row), 8 x 8 in the simulator.
    """
    return device.pick(sim=64, gpu=256)


def _block_shape(threads):
    """(x, y) of a 2-D block of ``threads`` threads: 8 rows."""
    return threads // 8, 8


def default_fused():
    """Default ``fused=`` launch configuration (halo, block_x, block_y) of ``"jacobi_fused"``.

    (8, 32, 32) on a GPU, (2, 12, 12) in the simulator.
    """
    return device.pick(sim=(2, 12, 12), gpu=(8, 32, 32))


def validate_inputs(source, target, mask=None):
    """Check the inputs of :func:`seamless_clone` and derive the mask if none is given.

    Parameters
    ----------
    source, target : ndarray of shape (H, W, 3), uint8
    mask : ndarray of shape (H, W), bool, optional
        Default: the classic mask, every source pixel that is not pure white.

    Returns
    -------
    source, target : ndarray of shape (H, W, 3), uint8, C-contiguous
    mask : ndarray of shape (H, W), bool

    Raises
    ------
    ValueError
        Wrong dtype or shape, images of different sizes, an empty mask, a mask covering
        the whole image (no inside border to anchor the solution) or one with no strict
        interior (nothing to solve).
    """
    source = check_image(source, "source")
    if mask is None:
        return check_problem(source, target, nonwhite_mask(source),
                             what="the mask derived from the source (its non-white pixels)")
    return check_problem(source, target, mask)


def _check_iterations(iterations, name="iterations"):
    return check_int(iterations, name, minimum=0)


def _crop_box(mask):
    """Rows and columns of the mask's bounding box grown by one pixel (within the image).

    Pixels outside it never change, and inside it every pixel is labelled and counted as
    in the full image: the extra pixel keeps border pixels from looking like image edges.
    """
    rows = np.nonzero(mask.any(axis=1))[0]
    cols = np.nonzero(mask.any(axis=0))[0]
    h, w = mask.shape
    return (slice(max(rows[0] - 1, 0), min(rows[-1] + 2, h)), slice(max(cols[0] - 1, 0), min(cols[-1] + 2, w)))


class _HostSolver:
    """Iterations on the host (the NumPy reference or the Numba CPU version)."""

    def __init__(self, prep: Prepared, method):
        self.prep, self.method = prep, method
        self.current = prep.guess.copy()
        self.spare = prep.guess.copy()

    def run(self, n):
        if self.method == "cpu":
            self.current = jacobi_cpu(self.current, self.prep.rhs, self.prep.labels, n)
            return
        for _ in range(n):
            jacobi_step_reference(self.current, self.prep, out=self.spare)
            self.current, self.spare = self.spare, self.current

    def planes(self):
        return self.current

    def result(self, target):
        return compose(target, self.prep.labels, self.current)


class DeviceSolver:
    """Jacobi iterations with the CUDA kernels (on a GPU or in the simulator), data kept on the device.

    What :func:`seamless_clone` runs for the kernel methods, without the crop: the setup
    kernels run once, then :meth:`run` launches iterations only, which is what a
    benchmark times.

    Parameters
    ----------
    source, target : ndarray of shape (H, W, 3), uint8
    mask : ndarray of shape (H, W), bool, optional
        As for :func:`seamless_clone`.
    method : {"jacobi", "jacobi_fused"}
    fused : tuple of int, optional
        (halo, block_x, block_y) for ``"jacobi_fused"`` (default :func:`default_fused`);
        validated but not used by ``"jacobi"``.

    Examples
    --------
    >>> from course_lib.poisson import DeviceSolver, cat_in_coffee
    >>> solver = DeviceSolver(*cat_in_coffee((12, 16)), "jacobi")
    >>> solver.run(2)
    >>> solver.result(cat_in_coffee((12, 16))[1]).shape
    (12, 16, 3)
    """

    def __init__(self, source, target, mask=None, method="jacobi", fused=None):
        check_choice(method, "method", ("jacobi", "jacobi_fused"))
        fused = default_fused() if fused is None else _check_fused(fused)
        self._setup(*validate_inputs(source, target, mask), method, fused)

    @classmethod
    def _checked(cls, source, target, mask, method, fused):
        """A solver of inputs the public door (:func:`seamless_clone`) has checked: no second check."""
        self = cls.__new__(cls)
        self._setup(source, target, mask, method, fused)
        return self

    def _setup(self, source, target, mask, method, fused):
        from numba import cuda

        from . import kernels

        self.kernels, self.method = kernels, method
        h, w = mask.shape
        self.block = _block_shape(default_block())
        self.grid = (math.ceil(w / self.block[0]), math.ceil(h / self.block[1]))
        self.d_target = cuda.to_device(target)
        self.d_labels = cuda.device_array((h, w), np.uint8)
        kernels.classify_mask_kernel[self.grid, self.block](cuda.to_device(mask.view(np.uint8)), self.d_labels)
        self.d_rhs = cuda.device_array((3, h, w), np.float32)
        self.d_current = cuda.device_array((3, h, w), np.float32)
        kernels.poisson_setup_kernel[self.grid, self.block](cuda.to_device(source), self.d_target, self.d_labels,
                                                           self.d_rhs, self.d_current)
        # The kernels read only strict-interior values, and every step writes all of them;
        # the second buffer still starts as a copy so that planes() never shows
        # uninitialised memory outside the interior.
        self.d_spare = cuda.device_array((3, h, w), np.float32)
        self.d_spare.copy_to_device(self.d_current)
        if method == "jacobi_fused":
            halo, bx, by = fused
            self.halo, self.fused_block = halo, (bx, by)
            self.fused = kernels.jacobi_fused_kernel(halo, bx, by)
            self.fused_grid = (math.ceil(w / (bx - 2 * halo)), math.ceil(h / (by - 2 * halo)))

    def run(self, n):
        """Launch ``n`` more iterations (asynchronous on a GPU)."""
        n = _check_iterations(n, "n")
        if self.method == "jacobi":
            step = self.kernels.jacobi_step_kernel[self.grid, self.block]
            for _ in range(n):
                step(self.d_current, self.d_rhs, self.d_labels, self.d_spare)
                self.d_current, self.d_spare = self.d_spare, self.d_current
            return
        fused = self.fused[self.fused_grid, self.fused_block]
        while n > 0:
            steps = min(n, self.halo)
            fused(self.d_current, self.d_rhs, self.d_labels, self.d_spare, np.int32(steps))
            self.d_current, self.d_spare = self.d_spare, self.d_current
            n -= steps

    def planes(self):
        """The current iterate, ndarray of shape (3, H, W), float32."""
        return self.d_current.copy_to_host()

    def result(self, target):
        """The target with the current iterate on the strict interior, ndarray of shape (H, W, 3), uint8."""
        from numba import cuda

        d_out = cuda.device_array(target.shape, np.uint8)
        self.kernels.compose_kernel[self.grid, self.block](self.d_current, self.d_labels, self.d_target, d_out)
        return d_out.copy_to_host()


class PersistentSolver:
    """The whole clone in one kernel launch: labels, right-hand side, every sweep and the compose.

    What :func:`seamless_clone` runs for ``method="persistent"``. The inputs go up in one
    packed upload (source, target and mask side by side, uint8 (H, W, 7)); the kernel
    leaves the cloned image and the last iterate on the device, and :meth:`result`
    brings the image back in one copy: one launch and two copies per clone, where
    ``"jacobi"`` pays a launch per sweep (~50 us of host time each from Python on a GPU).

    Parameters
    ----------
    source, target : ndarray of shape (H, W, 3), uint8
    mask : ndarray of shape (H, W), bool, optional
        As for :func:`seamless_clone` (pass the crop: the shared layout needs it small).
    layout : {"shared", "grid", "bands"}, optional
        ``"shared"``: :func:`~course_lib.poisson.kernels.jacobi_persistent_kernel`, one
        block per colour channel holding the channel in shared memory, when
        ``(H + 2) * (W + 2)`` fits its capacity; ``"grid"``:
        :func:`~course_lib.poisson.kernels.jacobi_cooperative_kernel`, a cooperative grid
        with a grid barrier between sweeps, for any size; ``"bands"``:
        :func:`~course_lib.poisson.kernels.jacobi_banded_kernel`, a cooperative grid of
        blocks each holding a band of rows of one channel in shared memory, as many as the
        GPU has SMs (:func:`~course_lib.poisson._persistent_buffers.band_plan`), one grid
        barrier per sweep. Default: shared when it fits.

    Notes
    -----
    :meth:`run` only counts iterations; the launch happens when :meth:`result` or
    :meth:`planes` needs it, from the initial guess, with the total count so far (the
    iterations are deterministic, so the image is the same as running them in pieces).
    """

    def __init__(self, source, target, mask=None, layout=None):
        self._setup(*validate_inputs(source, target, mask), layout, pooled=False)

    @classmethod
    def _checked(cls, source, target, mask, layout=None):
        """A solver of inputs the public door has checked (no second check), whose device buffers come
        from this thread's pool (:func:`_persistent_buffers`): a later clone of a crop of the same
        shape allocates nothing and uploads into the same buffer. Its result must be read before
        the next such solver of that shape launches (as :func:`seamless_clone` does)."""
        self = cls.__new__(cls)
        self._setup(source, target, mask, layout, pooled=True)
        return self

    def _setup(self, source, target, mask, layout, pooled):
        from numba import cuda

        from . import kernels

        h, w = mask.shape
        largest, threads = kernels.PERSISTENT_GPU
        padded = (h + 2) * (w + 2)
        fits = padded <= largest
        # The kernel is made for the crop's size class: fewer entries per thread, fewer registers.
        step = 1024
        if device.is_simulator():  # same rule, fewer threads (each one at a barrier costs time there)
            threads, step = kernels.PERSISTENT_SIM_THREADS, 256
        capacity = min(largest, -(-padded // step) * step)
        if layout is None:
            layout = "shared" if fits else "grid"
        check_choice(layout, "layout", PERSISTENT_LAYOUTS)
        if layout == "shared" and not fits:
            raise ValueError(f"a {h} x {w} crop does not fit the shared layout ((H + 2)(W + 2) <= {capacity}): "
                             "use layout='grid'")
        self.kernels, self.layout, self.shape = kernels, layout, (h, w)
        key = (h, w, layout, capacity, threads)
        pool = _persistent_buffers() if pooled else {}
        buffers = pool.get(key)
        if buffers is None:
            buffers = _PersistentBuffers(key, default_block())
            if pooled:
                while len(pool) >= POOL_SHAPES:  # drop the oldest shape
                    pool.pop(next(iter(pool)))
                pool[key] = buffers
        packed = buffers.packed
        packed[..., :3], packed[..., 3:6], packed[..., 6] = source, target, mask
        if buffers.d_packed is None:
            buffers.d_packed = cuda.to_device(packed)  # the one upload (and allocation)
        else:
            buffers.d_packed.copy_to_device(packed)  # the one upload, into the pooled buffer
        self.d_packed, self.d_out, self.d_planes, self.work = (buffers.d_packed, buffers.d_out, buffers.d_planes,
                                                              buffers.work)
        self.kernel, self.grid, self.block = buffers.kernel, buffers.grid, buffers.block
        self.iterations, self._launched = 0, None

    def run(self, n):
        """Count ``n`` more iterations (the launch waits for :meth:`result` or :meth:`planes`)."""
        self.iterations += _check_iterations(n, "n")

    def _launch(self):
        if self._launched == self.iterations:
            return
        count = np.int32(self.iterations)
        if self.layout == "shared":
            self.kernel[self.grid, self.block](self.d_packed, count, self.d_out, self.d_planes)
        else:
            self.kernel[self.grid, self.block](self.d_packed, count, *self.work, self.d_out, self.d_planes)
        self._launched = self.iterations

    def planes(self):
        """The current iterate, ndarray of shape (3, H, W), float32 (0 off the strict interior)."""
        self._launch()
        return self.d_planes.copy_to_host()

    def result(self, target=None):
        """The cloned image, ndarray of shape (H, W, 3), uint8 (``target`` is already on the device)."""
        self._launch()
        return self.d_out.copy_to_host()


def _check_method(method, fused):
    check_choice(method, "method", METHODS)
    if fused is not None and method != "jacobi_fused":
        raise ValueError(f"fused only applies to method 'jacobi_fused', not {method!r}")
    if method == "jacobi_fused":
        return default_fused() if fused is None else _check_fused(fused)
    return fused


def _solver(source, target, mask, method, fused):
    """The solver of checked inputs, method and ``fused`` (:func:`_check_method`)."""
    if method in ("cpu", "numpy"):
        return _HostSolver(_prepare_checked(source, target, mask), method)
    if method in ("persistent", "persistent_bands"):
        return PersistentSolver._checked(source, target, mask, "bands" if method == "persistent_bands" else None)
    return DeviceSolver._checked(source, target, mask, method, default_fused() if fused is None else fused)


def _check_fused(fused):
    try:
        halo, bx, by = (int(v) for v in fused)
    except (TypeError, ValueError):
        raise ValueError(f"fused must be (halo, block_x, block_y), got {fused!r}") from None
    from .kernels import jacobi_fused_kernel

    jacobi_fused_kernel(halo, bx, by)  # validates
    return halo, bx, by


#: What both cloning functions return, for their docstrings (:func:`course_lib._docs.fill_doc`).
_RETURNS_IMAGE = """
Returns
-------
ndarray of shape (H, W, 3), uint8
    A new image; the inputs are not modified.
"""


def _cropped(source, target, mask):
    """Check the inputs, then cut them to the mask's bounding box (grown by one pixel).

    Returns
    -------
    target : ndarray of shape (H, W, 3), uint8
        The checked target.
    box : tuple of slice
        The box, for :func:`_pasted`.
    crops : tuple of ndarray
        ``(source, target, mask)`` cut to the box, contiguous.
    """
    source, target, mask = validate_inputs(source, target, mask)
    box = _crop_box(mask)
    return target, box, tuple(np.ascontiguousarray(a[box]) for a in (source, target, mask))


def _pasted(target, box, patch):
    """A copy of ``target`` with ``patch`` (the box's new pixels) pasted on ``box``; ``target`` is untouched."""
    out = target.copy()
    out[box] = patch
    return out


@fill_doc(returns=_RETURNS_IMAGE)
def seamless_clone(source, target, mask=None, *, iterations=800, method="persistent", fused=None):
    """Clone the masked region of ``source`` into ``target`` seamlessly (Poisson image editing).

    Solves, with double-buffered Jacobi iterations, for the pixels of the mask's strict
    interior whose gradients match the source's while the inside border keeps the
    target's values (see :mod:`course_lib.poisson.reference` for the exact update).

    Parameters
    ----------
    source, target : ndarray of shape (H, W, 3), uint8
        Same size; ``source`` holds the object at the place it should appear in ``target``.
    mask : ndarray of shape (H, W), bool, optional
        Pixels to clone. Default: the classic mask, every non-white source pixel. It may
        touch the image edge (there D counts only in-image neighbours).
    iterations : int
        Jacobi iterations (800 in the classic problem set; 0 pastes the source's interior).
    method : {"persistent", "persistent_bands", "jacobi", "jacobi_fused", "cpu", "numpy"}
        ``"persistent"`` (the default): the whole clone in one launch (setup, every sweep
        and the compose; see :class:`PersistentSolver`); ``"persistent_bands"``: the same
        spread over the SMs (its ``layout="bands"``); ``"jacobi"``: one kernel launch per iteration; ``"jacobi_fused"``: up to ``halo``
        iterations per launch in shared memory; ``"cpu"``: Numba ``parallel=True``;
        ``"numpy"``: the trusted reference. All give the same image.
    fused : tuple of int, optional
        (halo, block_x, block_y) for ``"jacobi_fused"`` (default :func:`default_fused`).

    {returns}

    Raises
    ------
    ValueError
        See :func:`validate_inputs`; also an unknown method, a negative iteration count
        or an impossible ``fused`` configuration.

    Examples
    --------
    >>> from course_lib.poisson import cat_in_coffee, seamless_clone
    >>> source, target, mask = cat_in_coffee((24, 36))
    >>> seamless_clone(source, target, mask, iterations=5, method="cpu").shape
    (24, 36, 3)
    """
    fused = _check_method(method, fused)
    iterations = _check_iterations(iterations)
    target, box, (crop_source, crop_target, crop_mask) = _cropped(source, target, mask)
    solver = _solver(crop_source, crop_target, crop_mask, method, fused)
    solver.run(iterations)
    return _pasted(target, box, solver.result(crop_target))


@fill_doc(returns=_RETURNS_IMAGE)
def direct_clone(source, target, mask=None):
    """Seamless clone by an exact solve of the course's discrete Poisson system, on the CPU.

    The image the Jacobi iterations converge to (where the solution stays within
    [0, 255]): the solution clamped to [0, 255] and truncated to 8 bits, pasted on
    strict-interior pixels. The system is built on the mask's bounding box only (grown by
    one pixel, as :func:`seamless_clone` crops) and factorised once for the three
    channels (see :mod:`course_lib.poisson.cpu`); pixels outside the box are not touched.

    Parameters
    ----------
    source, target : ndarray of shape (H, W, 3), uint8
        Same size; ``source`` holds the object at the place it should appear in ``target``.
    mask : ndarray of shape (H, W), bool, optional
        Pixels to clone (default: every non-white source pixel, as for
        :func:`~course_lib.poisson.seamless_clone`).

    {returns}

    Raises
    ------
    ValueError
        As :func:`~course_lib.poisson.validate_inputs`: wrong dtype or shape, images of
        different sizes, an empty mask, a mask covering the whole image or one without
        a strict-interior pixel.

    Examples
    --------
    >>> from course_lib.poisson import cat_in_coffee, direct_clone, exact_solve
    >>> source, target, mask = cat_in_coffee((24, 36))
    >>> bool((direct_clone(source, target, mask) == exact_solve(source, target, mask)[0]).all())
    True
    """
    target, box, (crop_source, crop_target, crop_mask) = _cropped(source, target, mask)
    prepared = prepare(crop_source, crop_target, crop_mask)
    planes = _direct_solve(prepared)
    return _pasted(target, box, compose(crop_target, prepared.labels, np.clip(planes, 0, 255)))


@dataclass
class CloneHistory:
    """Snapshots of the iterations, from :func:`clone_history`.

    Attributes
    ----------
    iterations : list of int
        The iteration counts of the snapshots, increasing.
    images : list of ndarray of shape (H, W, 3), uint8
        The result after each count.
    residuals : list of float
        RMS residual of the discrete Poisson equation after each count
        (:func:`course_lib.poisson.reference.residual`).
    """

    iterations: list = field(default_factory=list)
    images: list = field(default_factory=list)
    residuals: list = field(default_factory=list)

    def image_at(self, k):
        """The snapshot taken after ``k`` iterations."""
        try:
            return self.images[self.iterations.index(k)]
        except ValueError:
            raise ValueError(f"no snapshot after {k} iterations; have {self.iterations}") from None


def clone_history(source, target, mask=None, checkpoints=(0, 10, 100, 800), *, method="persistent", fused=None):
    """Run the iterations once and keep the image and residual at each checkpoint.

    Parameters
    ----------
    source, target, mask, method, fused
        As for :func:`seamless_clone`.
    checkpoints : iterable of int
        Iteration counts to record (0 is the initial guess).

    Returns
    -------
    CloneHistory
    """
    fused = _check_method(method, fused)
    source, target, mask = validate_inputs(source, target, mask)
    checkpoints = sorted({_check_iterations(k) for k in checkpoints})
    if not checkpoints:
        raise ValueError("checkpoints is empty: give at least one iteration count")
    box = _crop_box(mask)
    crop_source, crop_target, crop_mask = (np.ascontiguousarray(a[box]) for a in (source, target, mask))
    solver = _solver(crop_source, crop_target, crop_mask, method, fused)
    prep = _prepare_checked(crop_source, crop_target, crop_mask)
    history, done = CloneHistory(), 0
    for k in checkpoints:
        solver.run(k - done)
        done = k
        image = target.copy()
        image[box] = solver.result(crop_target)
        history.iterations.append(k)
        history.images.append(image)
        history.residuals.append(residual(solver.planes(), prep))
    return history


def naive_paste(source, target, mask=None):
    """Copy-paste for comparison: the target with the source's pixels wherever the mask is set.

    Returns
    -------
    ndarray of shape (H, W, 3), uint8
    """
    source, target, mask = validate_inputs(source, target, mask)
    out = target.copy()
    out[mask] = source[mask]
    return out
