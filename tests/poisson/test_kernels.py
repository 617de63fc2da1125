"""The kernels (in the simulator here, on a GPU with COURSE_BACKEND=gpu) against the NumPy reference.

Tolerances: the kernels use float32 in the same operation order as the reference, so the
images are compared with ``max_pixel_diff=0`` in the simulator (exactly equal). On a GPU
the compiler may contract or reorder float operations, so the classic tolerances
(2 levels, 1% of pixels) apply there.
"""

import math

import numpy as np
import pytest

from course_lib import pick, poisson
from course_lib.poisson import INTERIOR, kernels

TOLERANCES = pick(sim=dict(max_pixel_diff=0, max_fraction=0.0),
                  gpu=dict(max_pixel_diff=poisson.DEFAULT_MAX_PIXEL_DIFF, max_fraction=poisson.DEFAULT_MAX_FRACTION))
BLOCK = (8, 8)


def _grid(shape, block=BLOCK):
    h, w = shape
    return math.ceil(w / block[0]), math.ceil(h / block[1])


# Sizes that are awkward for 8 x 8 blocks: one pixel wide, block - 1, block + 1, primes.
SIZES = [(1, 5), (3, 3), (7, 9), (9, 8), (13, 11)]


@pytest.mark.parametrize("shape", SIZES)
def test_classify_kernel_matches_reference(shape, rng):
    from numba import cuda

    mask = rng.random(shape) < 0.7
    labels = cuda.device_array(shape, np.uint8)
    kernels.classify_mask_kernel[_grid(shape), BLOCK](cuda.to_device(mask.view(np.uint8)), labels)
    np.testing.assert_array_equal(labels.copy_to_host(), poisson.classify_mask(mask))


@pytest.mark.parametrize("shape", [(3, 3), (7, 9), (13, 11)])
def test_setup_step_and_compose_kernels_match_reference(shape, rng):
    """One launch of each kernel, compared with its NumPy counterpart, all pixels."""
    from numba import cuda

    source, target, _ = poisson.synthetic_pair(*shape, seed=shape[0])
    mask = rng.random(shape) < 0.8
    prep = poisson.prepare(source, target, mask)
    grid = _grid(shape)
    d_rhs = cuda.device_array((3,) + shape, np.float32)
    d_guess = cuda.device_array((3,) + shape, np.float32)
    kernels.poisson_setup_kernel[grid, BLOCK](cuda.to_device(source), cuda.to_device(target),
                                              cuda.to_device(prep.labels), d_rhs, d_guess)
    np.testing.assert_array_equal(d_rhs.copy_to_host(), prep.rhs)
    np.testing.assert_array_equal(d_guess.copy_to_host(), prep.guess)

    prev = (prep.guess + rng.uniform(-40, 40, prep.guess.shape)).astype(np.float32)
    d_next = cuda.to_device(np.full_like(prev, -1.0))
    kernels.jacobi_step_kernel[grid, BLOCK](cuda.to_device(prev), d_rhs, cuda.to_device(prep.labels), d_next)
    got = d_next.copy_to_host()
    expected = poisson.jacobi_step_reference(prev, prep)
    interior = prep.labels == INTERIOR
    np.testing.assert_allclose(got[:, interior], expected[:, interior], rtol=0, atol=pick(sim=0, gpu=1e-4))
    assert np.all(got[:, ~interior] == -1.0), "only strict-interior pixels may be written"

    d_out = cuda.device_array(target.shape, np.uint8)
    kernels.compose_kernel[grid, BLOCK](cuda.to_device(expected), cuda.to_device(prep.labels),
                                        cuda.to_device(target), d_out)
    np.testing.assert_array_equal(d_out.copy_to_host(), poisson.compose(target, prep.labels, expected))


@pytest.mark.parametrize("method", ["persistent", "jacobi", "jacobi_fused", "cpu", "numpy"])
def test_methods_match_reference_on_a_blob(method):
    source, target, mask = poisson.synthetic_pair(pick(sim=15, gpu=333), pick(sim=17, gpu=500), seed=1)
    iterations = pick(sim=5, gpu=800)
    expected = poisson.jacobi_reference(source, target, mask, iterations)
    got = poisson.seamless_clone(source, target, mask, iterations=iterations, method=method)
    poisson.assert_images_match(got, expected, **TOLERANCES)
    assert not np.array_equal(got, target)


@pytest.mark.parametrize("method", ["persistent", "jacobi", "jacobi_fused", "cpu"])
def test_mask_touching_the_image_edge(method, edge_pair):
    source, target, mask = edge_pair
    expected = poisson.jacobi_reference(source, target, mask, 6)
    got = poisson.seamless_clone(source, target, mask, iterations=6, method=method)
    poisson.assert_images_match(got, expected, **TOLERANCES)
    # I_0 = S solves the equation far from the border; after 6 iterations the border's
    # influence has reached the pixels on the image edge.
    assert not np.array_equal(got[0, :5], source[0, :5]) and not np.array_equal(got[:8, 0], source[:8, 0])


@pytest.mark.parametrize("method", ["persistent", "jacobi", "jacobi_fused", "cpu"])
def test_single_interior_pixel(method, single_interior_pair):
    source, target, mask = single_interior_pair
    expected = poisson.jacobi_reference(source, target, mask, 2)
    got = poisson.seamless_clone(source, target, mask, iterations=2, method=method)
    poisson.assert_images_match(got, expected, **TOLERANCES)
    changed = np.argwhere(np.any(got != target, axis=2))
    assert changed.tolist() in ([], [[2, 2]])


@pytest.mark.parametrize("halo,block,iterations", [(1, (3, 4), 2), (2, (5, 7), 5), (3, (8, 8), 4)])
def test_fused_kernel_any_halo_and_remainder(halo, block, iterations):
    """Iteration counts that are not a multiple of the halo, tiles smaller than the image."""
    source, target, mask = poisson.synthetic_pair(9, 8, seed=4, fill=0.5)
    expected = poisson.jacobi_reference(source, target, mask, iterations)
    got = poisson.seamless_clone(source, target, mask, iterations=iterations, method="jacobi_fused",
                                 fused=(halo,) + block)
    poisson.assert_images_match(got, expected, **TOLERANCES)


def test_in_place_kernel_is_wrong():
    """Updating in place mixes I_k and I_{k+1}: after one launch it differs from one Jacobi step.

    In the simulator blocks run one after another, so pixels on the first column of the
    second block always read their left neighbour's *new* value.
    """
    from numba import cuda

    source, target, mask = poisson.synthetic_pair(8, 16, seed=6, fill=0.6)
    prep = poisson.prepare(source, target, mask)
    d_image = cuda.to_device(prep.guess)
    kernels.jacobi_in_place_racy_kernel[_grid((8, 16)), BLOCK](d_image, cuda.to_device(prep.rhs),
                                                                cuda.to_device(prep.labels))
    racy = d_image.copy_to_host()
    jacobi = poisson.jacobi_step_reference(prep.guess, prep)
    interior = prep.labels == INTERIOR
    assert interior[:, 8].any() and interior[:, 7].any()
    if pick(sim=True, gpu=False):
        assert not np.array_equal(racy[:, interior], jacobi[:, interior])


def test_fused_kernel_factory_rejects_impossible_configs():
    with pytest.raises(ValueError, match="halo must be at least 1"):
        kernels.jacobi_fused_kernel(0)
    with pytest.raises(ValueError, match="must exceed 2 \\* halo"):
        kernels.jacobi_fused_kernel(4, 8, 16)
    with pytest.raises(ValueError, match="at most 1024 threads"):
        kernels.jacobi_fused_kernel(2, 64, 32)


@pytest.mark.skipif(not pick(sim=True, gpu=False), reason="runs the race checker in this process")
def test_race_checker_flags_the_in_place_kernel_and_passes_the_double_buffered_one():
    from course_lib.registry import all_kernels
    from course_lib.sim import check

    griddim, blockdim, args = kernels.in_place_example_launch()
    report = check(kernels.jacobi_in_place_racy_kernel, griddim, blockdim, *args)
    assert not report.ok and "race" in report.kinds(), str(report)
    assert any(p.array == "image" for p in report.problems), str(report)
    spec = {s.name: s for s in all_kernels()}["poisson.jacobi_step_kernel"]
    griddim, blockdim, args = spec.example_launch()
    assert check(kernels.jacobi_step_kernel, griddim, blockdim, *args).ok


def _hole_in_the_middle():
    source, target, _ = poisson.synthetic_pair(9, 10, seed=9)
    mask = np.ones((9, 10), bool)
    mask[4, 5] = False  # the mask touches all four edges; the only border is around the hole
    return source, target, mask


def _one_row():
    source, target, _ = poisson.synthetic_pair(1, 9, seed=10)
    mask = np.zeros((1, 9), bool)
    mask[0, 1:8] = True  # a 1-pixel-high image: D = 2 for the interior pixels
    return source, target, mask


@pytest.mark.parametrize("make", [_hole_in_the_middle, _one_row], ids=["hole_in_the_middle", "one_row"])
@pytest.mark.parametrize("method", ["persistent", "jacobi", "jacobi_fused", "cpu"])
def test_extreme_masks(method, make):
    source, target, mask = make()
    expected = poisson.jacobi_reference(source, target, mask, 4)
    got = poisson.seamless_clone(source, target, mask, iterations=4, method=method)
    poisson.assert_images_match(got, expected, **TOLERANCES)
    assert not np.array_equal(got, target)


# ---- the one-launch clone: both layouts, on the whole (uncropped) images

def _blob():
    return poisson.synthetic_pair(7, 11, seed=3, fill=0.6)


def _all_mask_but_a_corner():
    source, target, _ = poisson.synthetic_pair(6, 5, seed=12)
    mask = np.ones((6, 5), bool)
    mask[5, 4] = False
    return source, target, mask


CASES = [_blob, _hole_in_the_middle, _one_row, _all_mask_but_a_corner]


@pytest.mark.parametrize("make", CASES, ids=[c.__name__.strip("_") for c in CASES])
@pytest.mark.parametrize("layout", ["shared", "grid"])
@pytest.mark.parametrize("iterations", [0, 1, 3])
def test_persistent_layouts_match_reference(layout, make, iterations):
    source, target, mask = make()
    solver = poisson.PersistentSolver(source, target, mask, layout=layout)
    solver.run(iterations)
    expected = poisson.jacobi_reference(source, target, mask, iterations)
    poisson.assert_images_match(solver.result(), expected, **TOLERANCES)
    # The iterate: the reference's planes on the strict interior, 0 elsewhere.
    prep = poisson.prepare(source, target, mask)
    planes = prep.guess.copy()
    for _ in range(iterations):
        planes = poisson.jacobi_step_reference(planes, prep)
    interior = prep.labels == INTERIOR
    got = solver.planes()
    np.testing.assert_array_equal(got[:, interior], planes[:, interior])
    assert not got[:, ~interior].any()


def test_persistent_runs_in_pieces_as_in_one_go(edge_pair):
    solver = poisson.PersistentSolver(*edge_pair)
    solver.run(2)
    first = solver.result()
    solver.run(3)
    expected = poisson.jacobi_reference(*edge_pair, 5)
    poisson.assert_images_match(solver.result(), expected, **TOLERANCES)
    assert not np.array_equal(first, solver.result())


@pytest.mark.parametrize("layout", ["shared", "grid"])
def test_persistent_clone_is_one_launch_and_two_copies(layout, edge_pair):
    from course_lib.sim import record

    source, target, mask = edge_pair
    with record() as log:
        solver = poisson.PersistentSolver(source, target, mask, layout=layout)
        solver.run(4)
        solver.result()
    summary = log.summary()
    assert summary["launches"] == 1 <= 3
    assert summary["HtoD_count"] + summary["DtoH_count"] == 2
    assert summary.get("DtoD_count", 0) == 0
    with record() as log:
        poisson.seamless_clone(source, target, mask, iterations=4)  # the default method, end to end
    summary = log.summary()
    assert summary["launches"] <= 3 and summary["HtoD_count"] + summary["DtoH_count"] <= 2, str(log)


def test_shared_layout_refuses_a_crop_too_large():
    source, target, mask = poisson.synthetic_pair(120, 120, seed=1, fill=0.9)
    with pytest.raises(ValueError, match="layout='grid'"):
        poisson.PersistentSolver(source, target, mask, layout="shared")
    with pytest.raises(ValueError, match="layout"):
        poisson.PersistentSolver(source, target, mask, layout="tiles")


def test_persistent_kernel_factory_rejects_impossible_configs():
    with pytest.raises(ValueError, match="48 KB"):
        kernels.jacobi_persistent_kernel(20000, 256)
    with pytest.raises(ValueError, match="threads"):
        kernels.jacobi_persistent_kernel(1024, 0)
    with pytest.raises(ValueError, match="at least"):
        kernels.jacobi_persistent_kernel(4, 32)


# The cooperative kernel's race check runs with every registered kernel (tests/sim/test_reference_kernels.py).


_COMPILE_COOPERATIVE = """
import numba.cuda.dispatcher as dispatcher
from numba import cuda


class Hopper:  # numba-cuda asks the current device for its compute capability to type this_grid()
    compute_capability = (9, 0)


dispatcher.get_current_device = lambda: Hopper()
from course_lib.poisson import kernels

ptx, _ = cuda.compile_ptx(kernels.jacobi_cooperative_kernel.py_func, kernels.COOPERATIVE_SIG, cc=(9, 0))
print(ptx.count("cudaCGSynchronize"))
"""


def test_cooperative_kernel_compiles_for_sm90():
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, COURSE_BACKEND="gpu", NUMBA_ENABLE_CUDASIM="0",
               PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", _COMPILE_COOPERATIVE], capture_output=True, text=True, env=env,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # A grid barrier after the labels, after the setup and after each sweep (the loop holds one).
    assert int(proc.stdout.split()[-1]) >= 3
