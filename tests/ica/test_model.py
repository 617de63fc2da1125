"""Models: occupancy (the thesis's 17 %), SIMT efficiency, launches and work per step."""

import pytest

from course_lib.ica import model


def test_thesis_occupancy_at_32_channels_on_fermi():
    r = model.occupancy(32, 29, 2048, "sm_20")
    assert r["limiter"] == "blocks" and r["blocks_per_sm"] == 8 and r["occupancy"] == pytest.approx(8 / 48)


def test_128_channels_fill_a_modern_sm():
    assert model.occupancy(128, 29, 2048, "sm_90")["occupancy"] == 1.0
    assert model.occupancy(32, 29, 2048, "sm_90") == pytest.approx({**model.occupancy(32, 29, 2048, "sm_90"),
                                                                     "occupancy": 0.5})


def test_register_and_shared_limits():
    assert model.occupancy(256, 128, 0, "sm_80")["limiter"] == "registers"
    assert model.occupancy(64, 16, 40 * 1024, "sm_80")["limiter"] == "shared memory"


def test_simt_and_launches():
    assert model.simt_efficiency(32) == 1.0 and model.simt_efficiency(40) == pytest.approx(40 / 64)
    assert model.launches_per_minibatch("blas", 244) == 249
    assert model.launches_per_step("fused", 180_000, 244) == 2 * 737
    assert model.flops_per_step(2, 10, 5) == 2 * (4 * 4 * 5 + 2 * 8)


@pytest.mark.parametrize("call, match", [
    (lambda: model.occupancy(0, 1, 0), "threads_per_block"), (lambda: model.occupancy(32, 1, 0, "sm_99"), "arch"),
    (lambda: model.launches_per_minibatch("magic", 3), "method"), (lambda: model.simt_efficiency(0), "n_channels"),
])
def test_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_the_split_step_prediction_is_labelled_and_built_from_its_inputs():
    inputs = {"launch_seconds": 50e-6, "copy_seconds": 70e-6, "pinned_bytes_per_s": 50e9, "pageable_bytes_per_s": 7e9,
              "fp64_flops_per_s": 33.45e12, "sm_count": 132}
    assumed = {"grid_sync_seconds": 1e-6, "l2_seconds": 0.2e-6, "dram_seconds": 0.6e-6}
    p = model.split_step_prediction(64, 180_000, inputs=inputs, assumed=assumed, steps=84, blown_minibatches=18)
    assert p["label"].startswith("prediction") and p["launches_per_step"] == 1 and p["grid_syncs_per_minibatch"] == 2
    assert p["minibatches_per_step"] == 737 and p["owners"] == 61
    assert p["minibatch_seconds"] == pytest.approx(p["stage_a_seconds"] + p["stage_b_seconds"] + 2e-6)
    assert p["step_device_seconds"] == pytest.approx(1e-6 + 737 * p["minibatch_seconds"])
    assert p["convergence_seconds"] == pytest.approx(84 * (p["step_device_seconds"] + p["step_host_seconds"])
                                                     + 18 * p["minibatch_seconds"] + 8 * 64 * 180_000 / 7e9)
    slower = model.split_step_prediction(64, 180_000, inputs=inputs, assumed=dict(assumed, grid_sync_seconds=2e-6))
    assert slower["minibatch_seconds"] == pytest.approx(p["minibatch_seconds"] + 2e-6)
    committed = model.split_step_prediction()  # from the committed H200 runs
    assert committed["device"] == "NVIDIA H200" and 0 < committed["convergence_seconds"] < 5
