"""Shared small recordings for the ICA tests (the simulator runs kernels one thread at a time)."""

import pytest

from course_lib.ica import simulate_eeg


@pytest.fixture(scope="session")
def eeg8():
    """8 channels x 5000 samples: converges in ~60 steps on the CPU."""
    return simulate_eeg(8, 5000, seed=0)


@pytest.fixture(scope="session")
def tiny():
    """5 channels x 157 samples (prime: the last partial minibatch is dropped): for the kernel methods."""
    return simulate_eeg(5, 157, seed=2)


@pytest.fixture(scope="session")
def explored():
    """The explorer's run at 8 channels x 3000 samples (shared by the plot and widget tests)."""
    from course_lib.ica import widgets

    return widgets.explore(8, 3000, max_steps=200)
