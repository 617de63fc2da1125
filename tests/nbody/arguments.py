"""What each argument of Unit 1's public functions is (for tests/test_bad_inputs.py)."""

import numpy as np

from tests.bad_inputs import NO_ARGUMENTS, Call


def _bodies():
    rng = np.random.default_rng(0)
    return {"pos": rng.uniform(-1, 1, (5, 3)).astype(np.float32), "mass": np.full(5, 0.2, np.float32)}


def _state():
    state = _bodies()
    state["vel"] = np.zeros((5, 3), np.float32)
    return state


def _packed():
    from course_lib.nbody import pack_bodies

    return {"bodies": pack_bodies(**_bodies()), "softening_sq": 0.01}


ARGUMENTS = {
    "accelerations": Call(lambda: {**_bodies(), "softening": 0.1, "method": "cpu"},
                          pos="real_array", mass="real_array", softening="positive", method="choice"),
    "accelerations_cpu": Call(_packed, bodies="float_array", softening_sq="positive"),
    "accelerations_reference": Call(lambda: {**_bodies(), "softening": 0.1, "chunk": 2},
                                    pos="real_array", mass="real_array", softening="positive", chunk="count"),
    "colliding_clusters": Call(lambda: {"n": 6, "seed": 1, "separation": 4.0, "speed": 0.2},
                               n="count", seed="seed", separation="nonneg", speed="real"),
    "default_block": NO_ARGUMENTS,
    "global_fetches": Call(lambda: {"n": 100, "method": "tiled", "tile": 16},
                           n="nonneg_int", method="choice", tile="count"),
    "initial_conditions": Call(lambda: {"kind": "plummer", "n": 8, "seed": 2}, kind="choice", n="count", seed="seed"),
    "leapfrog": Call(lambda: {**_state(), "dt": 0.01, "steps": 2, "softening": 0.1, "method": "cpu", "every": 1},
                     pos="real_array", vel="real_array", mass="real_array", dt="positive", steps="nonneg_int",
                     softening="positive", method="choice", every="count"),
    "pack_bodies": Call(_bodies, pos="real_array", mass="real_array"),
    "plummer_sphere": Call(lambda: {"n": 8, "seed": 3, "scale": 1.0}, n="count", seed="seed", scale="positive"),
    "tile_report": Call(lambda: {"n": 1000, "tile": 64, "sm_count": 4},
                        n="nonneg_int", tile="count", sm_count="count", max_threads_per_block="count",
                        max_blocks_per_sm="count", max_threads_per_sm="count", shared_per_sm="count",
                        registers_per_thread="count?", reserved_shared_per_block="nonneg_int",
                        registers_per_sm="count", register_unit="count",
                        warps_to_hide="positive?"),
    "total_energy": Call(lambda: {**_state(), "softening": 0.1},
                         pos="real_array", vel="real_array", mass="real_array", softening="positive"),
    "uniform_cube": Call(lambda: {"n": 8, "seed": 4, "side": 2.0}, n="count", seed="seed", side="positive"),
}
