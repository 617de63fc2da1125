"""Extended Infomax's state: the sources' signs (sub- or super-Gaussian) and when to re-estimate them.

Read by the step loop of :mod:`course_lib.ica.reference` and the CPU stepper; re-exported there.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ExtendedState"]

# Extended Infomax (as in runica and MNE): kurtosis momentum, bias toward super-Gaussian,
# and how the re-estimation interval grows once the signs are stable.
_EXT_MOMENTUM = 0.5
_SIGNS_BIAS = 0.02
_SIGNCOUNT_THRESHOLD = 25
_SIGNCOUNT_STEP = 2


def _kurtosis(a):
    """Excess (Fisher) kurtosis of each row."""
    a = a - a.mean(axis=1, keepdims=True)
    m2 = (a * a).mean(axis=1)
    m4 = (a ** 4).mean(axis=1)
    return m4 / np.where(m2 > 0, m2 * m2, 1.0) - 3.0


class ExtendedState:
    """State of extended Infomax: the signs and when to re-estimate them (runica's rules)."""

    def __init__(self, n_channels, n_subgauss, ext_blocks, kurt_size):
        self.n_channels, self.n_subgauss, self.initial_blocks, self.kurt_size = (n_channels, n_subgauss,
                                                                                 ext_blocks, kurt_size)
        self.reset()

    def reset(self):
        self.signs = np.ones(self.n_channels)
        self.signs[:self.n_subgauss] = -1.0
        self.old_kurt = np.zeros(self.n_channels)
        self.old_signs = np.zeros(self.n_channels)
        self.signcount = 0
        self.ext_blocks = self.initial_blocks
        self.blockno = 0

    def after_block(self, Xs, W, rng):
        """Count a minibatch; every ``ext_blocks`` of them re-estimate the signs from a subsample."""
        self.blockno += 1
        if self.ext_blocks <= 0 or self.blockno % self.ext_blocks:
            return
        n = Xs.shape[1]
        if self.kurt_size < n:
            part = W @ Xs[:, rng.integers(0, n, self.kurt_size)]
        else:
            part = W @ Xs
        kurt = _EXT_MOMENTUM * self.old_kurt + (1.0 - _EXT_MOMENTUM) * _kurtosis(part)
        self.old_kurt = kurt
        self.signs = np.sign(kurt + _SIGNS_BIAS)
        if np.array_equal(self.signs, self.old_signs):
            self.signcount += 1
        else:
            self.signcount = 0
        self.old_signs = self.signs
        if self.signcount >= _SIGNCOUNT_THRESHOLD:
            self.ext_blocks = int(self.ext_blocks * _SIGNCOUNT_STEP)
            self.signcount = 0
