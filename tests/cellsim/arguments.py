"""What each argument of Unit 7's public functions is (for tests/test_bad_inputs.py)."""

import numpy as np

from tests.bad_inputs import NO_ARGUMENTS, Call

#: H(0) as an array of rows (fluorescence, count), and the thesis's types as rows (proportion, mean, std).
HISTOGRAM = np.array([[200.0, 3.0], [300.0, 2.0]])
TYPES = np.array([[0.5, 30.0, 8.0], [0.3, 50.0, 20.0], [0.2, -1.0, -1.0]])


def _inputs(**extra):
    return lambda: {"histogram": HISTOGRAM.copy(), "types": TYPES.copy(), "tau_max": 40.0, "phi_min": 50.0,
                    "seed": 1, **extra}


def _runs():
    from course_lib.cellsim import simulate

    runs = [simulate(HISTOGRAM, TYPES, tau_max=60.0, phi_min=20.0, seed=s, method="cpu") for s in range(4)]
    return {"runs_a": runs[:2], "runs_b": runs[2:], "alpha": 0.01, "hellinger_max": 0.5, "permutations": 9,
            "seed": 0}


def _edges():
    from course_lib.cellsim import InitialHistogram

    return {"histogram": InitialHistogram.from_arrays([200.0, 300.0], [3, 2]), "phi_min": 11.0, "per_octave": 4}


_SIMULATION = {"histogram": "real_array", "types": "real_array", "tau_max": "nonneg", "phi_min": "positive",
               "seed": "seed"}

ARGUMENTS = {
    "compare_runs": Call(_runs, alpha="fraction", hellinger_max="fraction", permutations="count", seed="seed"),
    "default_block": NO_ARGUMENTS,
    "default_edges": Call(_edges, phi_min="positive", per_octave="count"),
    "default_memory_budget": NO_ARGUMENTS,
    "depth_bound": Call(lambda: {"max_fluorescence": 300.0, "phi_min": 11.0}, max_fluorescence="positive",
                        phi_min="positive"),
    "depth_estimate": Call(lambda: {"tau_max": 100.0, "mean_division_time": 30.0}, tau_max="nonneg",
                           mean_division_time="positive"),
    "lognormal_histogram": Call(lambda: {"n_cells": 10, "seed": 1, "median": 300.0, "sigma": 0.3, "n_values": 5},
                                n_cells="count", seed="seed", median="positive", sigma="nonneg", n_values="count"),
    "prepare_problem": Call(_inputs(), **_SIMULATION),
    "random_types": Call(lambda: {"n_types": 3, "seed": 1, "quiescent": True}, n_types="count", seed="seed",
                         quiescent="flag"),
    "simulate": Call(_inputs(method="cpu"), **_SIMULATION, method="choice"),
    "simulate_reference": Call(_inputs(streams="philox", return_cells=False), **_SIMULATION, streams="choice",
                               return_cells="flag"),
    "single_value_histogram": Call(lambda: {"n_cells": 4, "fluorescence": 300.0}, n_cells="count",
                                   fluorescence="positive"),
}
