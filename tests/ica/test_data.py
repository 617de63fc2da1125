"""Simulated EEG: seeded, the promised kinds of sources, a real montage, any channel count 2-256."""

import numpy as np
import pytest
from scipy.stats import kurtosis

from course_lib.ica import electrode_positions, simulate_eeg, source_kinds


def test_seeded():
    a, b, c = simulate_eeg(6, 700, seed=3), simulate_eeg(6, 700, seed=3), simulate_eeg(6, 700, seed=4)
    np.testing.assert_array_equal(a.data, b.data)
    assert not np.allclose(a.data, c.data)


@pytest.mark.parametrize("C", [2, 8, 37, 256])
def test_shapes_and_mixture(C):
    eeg = simulate_eeg(C, 600, noise=0.0, seed=1)
    assert eeg.data.shape == eeg.sources.shape == (C, 600) and eeg.mixing.shape == (C, C)
    np.testing.assert_allclose(eeg.data, eeg.mixing @ eeg.sources, atol=1e-12)
    np.testing.assert_allclose(eeg.sources.std(axis=1), 1.0)
    assert np.linalg.matrix_rank(eeg.mixing) == C
    assert len(set(eeg.ch_names)) == C and eeg.positions.shape == (C, 3)


def test_kinds_and_statistics():
    eeg = simulate_eeg(8, 20000, seed=0)
    assert eeg.kinds[:5] == ("blink", "alpha", "line", "muscle", "beta")
    kurt = dict(zip(eeg.kinds, kurtosis(eeg.sources, axis=1)))
    assert kurt["line"] == pytest.approx(-1.5, abs=0.05)  # a sinusoid: sub-Gaussian
    assert kurt["blink"] > 3 and kurt["muscle"] > 1 and kurt["alpha"] > 0.5
    spectrum = np.abs(np.fft.rfft(eeg.sources[eeg.kinds.index("line")]))
    assert np.fft.rfftfreq(20000, 1 / 256)[np.argmax(spectrum)] == pytest.approx(50, abs=0.1)


def test_subgaussian_count():
    for n_sub in (0, 1, 3):
        kinds = source_kinds(10, n_sub)
        assert kinds.count("line") == n_sub and "blink" in kinds


def test_montage_is_real_and_spread():
    names, pos = electrode_positions(32)
    assert names[0] == "Cz" and {"Fp1", "Oz", "Iz", "FT7"} & set(electrode_positions(64)[0])
    d = np.linalg.norm(pos[:, None] - pos[None], axis=2) + np.eye(32)
    assert d.min() > 0.02  # metres: no two electrodes on top of each other
    assert electrode_positions(8)[0] == names[:8]  # prefixes are stable


def test_topomap_info():
    info = simulate_eeg(8, 300, seed=0).info()
    assert info["nchan"] == 8 and info.get_montage() is not None


@pytest.mark.parametrize("kwargs, match", [
    ({"n_channels": 1}, "n_channels"), ({"n_channels": 257}, "n_channels"), ({"n_channels": 8.0}, "n_channels"),
    ({"n_samples": 0}, "n_samples"), ({"sfreq": 100.0}, "sfreq"), ({"noise": -0.1}, "noise"),
    ({"seed": -1}, "seed"), ({"n_subgaussian": -1}, "n_subgaussian"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        simulate_eeg(**kwargs)
