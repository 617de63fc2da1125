"""Every reference kernel compiles to PTX for sm_75 (Colab's T4), sm_80 and sm_90, without a GPU, and every
cooperative (grid-barrier) kernel fits a cooperative grid on a 40-SM T4.

Cost: each kernel is typed and lowered once and NVVM makes the three architectures' PTX from the same IR
(``compile_all``), so sm_75 adds only its NVVM and ptxas time. Measured on 21 of the kernels (every sixth), CPU
seconds in one process: 32.2 s for sm_80 + sm_90 compiled separately (as before), 20.3 s for sm_75 + sm_80 + sm_90
from one lowering (12.5 s of it the lowering): the check with sm_75 costs about 0.63 of the old one."""

import pytest

from course_lib import UNITS
from course_lib.compile_check import T4_SMS, blocks_per_sm, launch_block, run_in_subprocess


@pytest.fixture(scope="module")
def results():
    return run_in_subprocess()


def test_every_kernel_compiles_for_sm75_sm80_and_sm90(results):
    failures = [f"{r.kernel} {r.cc}: {r.error}" for r in results if not r.ok]
    assert not failures, "\n".join(failures)
    assert {r.cc for r in results} == {"sm_75", "sm_80", "sm_90"}
    assert len({r.kernel for r in results}) * 3 == len(results)


def test_cooperative_kernels_fit_a_cooperative_grid_on_a_t4(results):
    """A grid barrier needs every block resident: at its launch block, each cooperative kernel must keep at least
    one block per SM on sm_75 with the registers and shared memory ptxas gives it there (the course launches
    ``max_cooperative_grid_blocks(block)`` blocks at most, which is then 40 x that on a T4)."""
    cooperative = [r for r in results if r.cooperative_blocks_per_sm is not None]
    kernels = {r.kernel.split("[")[0] for r in cooperative}
    assert {"hac.merge_loop_kernel", "poisson.jacobi_cooperative_kernel", "ica.persistent_step_kernel"} <= kernels
    t4 = {r.kernel: r.cooperative_blocks_per_sm for r in cooperative if r.cc == "sm_75"}
    assert all(blocks >= 1 for blocks in t4.values()), t4
    assert all(T4_SMS * blocks >= 1 for blocks in t4.values())


def test_the_occupancy_model_matches_the_calculator_on_known_cases():
    # 256 threads, 32 registers, no shared memory: 1024 threads per SM on sm_75 -> 4 blocks; 2048 on sm_90 -> 8.
    assert blocks_per_sm((7, 5), 256, 32, 0) == 4 and blocks_per_sm((9, 0), 256, 32, 0) == 8
    # 255 registers x 256 threads = 65,280 (rounded per warp to 8,192 x 8 warps = 65,536): one block.
    assert blocks_per_sm((7, 5), 256, 255, 0) == 1
    # Shared memory: 40 KiB per block fits once in sm_75's 64 KiB.
    assert blocks_per_sm((7, 5), 128, 32, 40 * 1024) == 1
    assert launch_block("hac.merge_loop_kernel[float32,block=256]") == 256
    with pytest.raises(KeyError, match="COOPERATIVE_BLOCKS"):
        launch_block("unit.some_new_grid_kernel")


def test_every_unit_has_registered_kernels(results):
    units = {r.kernel.split(".")[0] for r in results}
    assert units == set(UNITS)


def test_resources_are_reported(results):
    for r in results:
        assert r.registers is not None and 0 < r.registers <= 255, r
        assert r.spill_bytes == 0, f"{r.kernel} spills registers on {r.cc}"


def test_tiled_kernel_uses_its_tile_of_shared_memory(results):
    by_name = {(r.kernel, r.cc): r for r in results}
    # 16 bytes per body; sm_90 adds 1 KiB reserved per block.
    assert by_name[("nbody.nbody_tiled_kernel[tile=256]", "sm_80")].shared_bytes == 256 * 16
    assert by_name[("nbody.nbody_naive_kernel", "sm_80")].shared_bytes == 0


def test_fused_jacobi_kernel_uses_two_tiles_and_the_labels_of_shared_memory(results):
    by_name = {(r.kernel, r.cc): r for r in results}
    # Two float32 buffers of 3 channels x 16 x 32 pixels, plus one uint8 label per pixel.
    assert by_name[("poisson.jacobi_fused_kernel[halo=4,block=32x16]", "sm_80")].shared_bytes == 2 * 3 * 16 * 32 * 4 + 16 * 32
    assert by_name[("poisson.jacobi_step_kernel", "sm_80")].shared_bytes == 0
