"""Every reference kernel compiles to PTX for sm_80 and sm_90, without a GPU."""

import pytest

from course_lib import UNITS
from course_lib.compile_check import run_in_subprocess


@pytest.fixture(scope="module")
def results():
    return run_in_subprocess()


def test_every_kernel_compiles_for_sm80_and_sm90(results):
    failures = [f"{r.kernel} {r.cc}: {r.error}" for r in results if not r.ok]
    assert not failures, "\n".join(failures)
    assert {r.cc for r in results} == {"sm_80", "sm_90"}


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
