"""What each argument of Unit 6's public functions is (for tests/test_bad_inputs.py)."""

import numpy as np

from tests.bad_inputs import NO_ARGUMENTS, Call


def _eeg():
    from course_lib.ica import simulate_eeg

    return simulate_eeg(4, 400, seed=1)


def _unmixing():
    rng = np.random.default_rng(0)
    return {"unmixing": rng.normal(size=(4, 4)), "mixing": rng.normal(size=(4, 4))}


def _sources():
    rng = np.random.default_rng(0)
    true = rng.normal(size=(3, 50))
    return {"estimated": true[::-1] * 2.0, "true": true}


_OPTIONS = {"lrate": "positive?", "tol": "positive", "max_steps": "count", "extended": "flag", "seed": "seed",
            "history": "flag"}

ARGUMENTS = {
    "amari_index": Call(_unmixing, unmixing="real_array", mixing="real_array"),
    "center_and_sphere": Call(lambda: {"X": _eeg().data}, X="real_array"),
    "default_batch_size": Call(lambda: {"n_samples": 1000}, n_samples="count"),
    "default_block": NO_ARGUMENTS,
    "default_lrate": Call(lambda: {"n_channels": 8}, n_channels="count"),
    "electrode_positions": Call(lambda: {"n_channels": 8}, n_channels="count"),
    "ica_peer": Call(lambda: {"X": _eeg().data, "peer": "fastica", "seed": 0, "extended": False, "max_iter": 1000},
                     X="real_array", peer="choice", seed="seed", extended="flag", max_iter="count?"),
    "infomax": Call(lambda: {"X": _eeg().data, "method": "cpu", "batch": 40, "lrate": 1e-3, "tol": 1e-3,
                             "max_steps": 100, "extended": False, "seed": 1, "history": False},
                    X="real_array", method="choice", batch="count?", **_OPTIONS),
    "infomax_reference": Call(lambda: {"X": _eeg().data, "batch": 40, "lrate": 1e-3, "tol": 1e-3, "max_steps": 100,
                                       "extended": False, "n_subgauss": 1, "ext_blocks": 1, "kurt_size": 200,
                                       "seed": 1, "history": False},
                              X="real_array", batch="count?", n_subgauss="nonneg_int", ext_blocks="nonneg_int",
                              kurt_size="count", **_OPTIONS),
    "match_sources": Call(_sources, estimated="real_array", true="real_array"),
    "simulate_eeg": Call(lambda: {"n_channels": 4, "n_samples": 300, "sfreq": 128.0, "noise": 0.01,
                                  "n_subgaussian": 1, "seed": 0},
                         n_channels="count", n_samples="count", sfreq="positive", noise="nonneg",
                         n_subgaussian="nonneg_int", seed="seed"),
    "source_kinds": Call(lambda: {"n_channels": 4, "n_subgaussian": 1}, n_channels="count",
                         n_subgaussian="nonneg_int"),
    "validate_data": Call(lambda: {"X": _eeg().data, "name": "X"}, X="real_array"),
}
