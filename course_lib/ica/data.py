"""Seeded synthetic EEG with known sources, mixed through a real electrode layout.

No real EEG ships inside a PyPI wheel (MNE's data sets download at run time), so the
unit simulates recordings whose sources and mixing matrix are known, which is what
validation needs: recovered components can be compared with the truth.

Sources (one per channel: square ICA), each with its own kind:

* ``"blink"``: eye blinks, smooth pulses of ~0.3 s at random times (strongly super-Gaussian);
* ``"alpha"`` / ``"beta"`` / ``"theta"``: oscillations at ~10 / ~20 / ~6 Hz whose amplitude
  waxes and wanes in bursts (super-Gaussian);
* ``"line"``: mains interference, a steady 50 Hz sinusoid (sub-Gaussian, kurtosis -1.5);
* ``"muscle"``: broadband noise in bursts (super-Gaussian).

The first five sources are one of each (blink, alpha, line, muscle, beta); further ones
cycle through rhythms and muscle bursts with their own frequencies. Exactly
``n_subgaussian`` sources are sub-Gaussian (sinusoids at 50, 100/3, 60, ... Hz); plain
Infomax (logistic nonlinearity) separates super-Gaussian sources and at most one
sub-Gaussian one, extended Infomax handles several.

The mixing matrix comes from a forward model on real electrode positions: each source is a
current dipole inside a spherical head, and column ``j`` of the mixing matrix is the
potential of dipole ``j`` at every electrode (the infinite-medium dipole formula, enough for
realistic smooth dipolar topographies). Electrode positions come from the standard 10-20
and 10-05 montages shipped inside MNE's wheel (no download); ``n_channels`` electrodes are
chosen spread over the head by farthest-point sampling from Cz.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._validate import check_float, check_int, check_seed

__all__ = ["MAX_CHANNELS", "MIN_CHANNELS", "SimulatedEEG", "electrode_positions", "simulate_eeg"]

MIN_CHANNELS = 2
MAX_CHANNELS = 256
#: Head radius in metres (MNE's standard montages are in metres, head radius ~0.085-0.095).
HEAD_RADIUS = 0.09
_FIRST_KINDS = ("blink", "alpha", "line", "muscle", "beta")
_MORE_KINDS = ("alpha", "muscle", "beta", "theta", "muscle", "alpha")
#: Frequencies (Hz) of the sub-Gaussian sinusoids: mains, then further interference lines.
_LINE_FREQS = (50.0, 100.0 / 3.0, 60.0, 16.7, 25.0, 40.0, 45.0, 55.0)


@dataclass(frozen=True)
class SimulatedEEG:
    """A simulated recording and its ground truth.

    Attributes
    ----------
    data : ndarray of shape (C, N), float64
        Channels x samples, in volts-like units (``mixing @ sources + noise``).
    sources : ndarray of shape (C, N), float64
        The true sources, each with unit variance.
    mixing : ndarray of shape (C, C), float64
        Column ``j``: topography of source ``j`` (gain at every electrode).
    kinds : tuple of str
        Kind of each source (``"blink"``, ``"alpha"``, ...).
    ch_names : tuple of str
        Electrode names (10-05 system).
    positions : ndarray of shape (C, 3), float64
        Electrode positions in metres (head coordinates, x right, y front, z up).
    sfreq : float
        Sampling rate in Hz.
    noise : float
        Sensor noise standard deviation relative to each channel's signal RMS.
    seed : int or None
    """

    data: np.ndarray = field(repr=False)
    sources: np.ndarray = field(repr=False)
    mixing: np.ndarray = field(repr=False)
    kinds: tuple
    ch_names: tuple
    positions: np.ndarray = field(repr=False)
    sfreq: float
    noise: float
    seed: int | None

    @property
    def n_channels(self) -> int:
        return self.data.shape[0]

    @property
    def n_samples(self) -> int:
        return self.data.shape[1]

    def info(self):
        """An ``mne.Info`` with the channel names and positions (for MNE's topographic plots)."""
        import mne

        info = mne.create_info(list(self.ch_names), self.sfreq, "eeg")
        montage = mne.channels.make_dig_montage(dict(zip(self.ch_names, self.positions)), coord_frame="head")
        info.set_montage(montage)
        return info


def _standard_montage(kind="1005"):
    """MNE's standard 10-05 or 10-20 montage (their names changed in MNE 1.13)."""
    import warnings

    import mne

    for name in (f"colin27_{kind}", f"standard_{kind}"):
        if name in mne.channels.get_builtin_montages():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)  # the old name is deprecated, still shipped
                return mne.channels.make_standard_montage(name)
    raise RuntimeError(f"MNE ships no standard {kind} montage in this version")  # pragma: no cover


def electrode_positions(n_channels):
    """Names and positions of ``n_channels`` electrodes spread over the scalp.

    Farthest-point sampling, starting at Cz, first over the familiar 10-20/10-10 electrodes
    of MNE's standard 10-20 montage, then (beyond those) over the rest of the 10-05 montage;
    the lowest ring (below the ears) is left out. Deterministic, and every prefix is spread
    out too.

    Parameters
    ----------
    n_channels : int
        2 to 256.

    Returns
    -------
    names : tuple of str
    positions : ndarray of shape (n_channels, 3), float64
        Metres, head coordinates.
    """
    n_channels = check_int(n_channels, "n_channels", minimum=MIN_CHANNELS, maximum=MAX_CHANNELS)
    ch_pos = _standard_montage("1005").get_positions()["ch_pos"]
    names = [name for name, p in ch_pos.items() if np.all(np.isfinite(p))]
    pos = np.array([ch_pos[name] for name in names], dtype=np.float64)
    keep = pos[:, 2] > np.percentile(pos[:, 2], 10)  # drop the lowest ring (under the ears, neck)
    names = [n for n, k in zip(names, keep) if k]
    pos = pos[keep]
    familiar = set(_standard_montage("1020").ch_names)
    first = np.array([n in familiar for n in names])
    chosen = [names.index("Cz")]
    dist = np.linalg.norm(pos - pos[chosen[0]], axis=1)
    for _ in range(n_channels - 1):
        pool = first if np.any(first & (dist > 0)) else np.ones_like(first)
        nxt = int(np.argmax(np.where(pool, dist, -1.0)))
        chosen.append(nxt)
        dist = np.minimum(dist, np.linalg.norm(pos - pos[nxt], axis=1))
    return tuple(names[i] for i in chosen), pos[chosen].copy()


def _dipole_mixing(positions, kinds, rng):
    """Gain of a current dipole per source (columns) at every electrode (rows).

    Each source sits inside the head at 40-75 % of the radius, at a place that suits its
    kind (eyes in front and low, alpha at the back, beta over the motor strip, muscle at
    the temples, line noise anywhere), with a random orientation; the gain is the
    infinite-medium potential ``p . (r - r0) / |r - r0|^3``.
    """
    centre = positions.mean(axis=0)
    centre[2] = positions[:, 2].min()
    rel = positions - centre
    radius = np.median(np.linalg.norm(rel, axis=1))
    anchors = {  # rough direction (x right, y front, z up) of each kind's generators
        "blink": (0.0, 1.0, -0.2), "alpha": (0.0, -1.0, 0.3), "beta": (0.0, 0.1, 1.0), "theta": (0.0, 0.6, 0.8),
        "muscle": (1.0, 0.1, 0.1), "line": (0.0, 0.0, 1.0),
    }
    columns = []
    for j, kind in enumerate(kinds):
        if j < len(_FIRST_KINDS):
            direction = np.array(anchors[kind], float)
            direction = direction / np.linalg.norm(direction) + rng.normal(0.0, 0.3, 3)
        else:  # further sources anywhere over the upper head: spread topographies, a well-posed mixture
            direction = rng.normal(size=3)
            direction[2] = abs(direction[2]) + 0.3
        direction /= np.linalg.norm(direction)
        depth = rng.uniform(0.6, 0.85) * radius
        r0 = depth * direction
        moment = rng.normal(size=3)
        if kind in ("alpha", "beta", "theta"):
            moment += 1.5 * direction  # cortical sources: mostly radial
        moment /= np.linalg.norm(moment)
        d = rel - r0
        columns.append(d @ moment / np.linalg.norm(d, axis=1) ** 3)
    mixing = np.array(columns).T
    return mixing / np.abs(mixing).max()


def _bursty_envelope(n, sfreq, rng, mean_burst_s, duty):
    """A positive envelope that is mostly low with bursts (log-normal of smoothed noise)."""
    width = max(1, int(mean_burst_s * sfreq))
    noise = rng.normal(size=n + 4 * width)
    kernel = np.hanning(2 * width + 1)
    smooth = np.convolve(noise, kernel / np.sqrt((kernel ** 2).sum()), mode="same")[2 * width:2 * width + n]
    threshold = np.quantile(smooth, 1.0 - duty) if n > 1 else 0.0
    return 0.2 + np.exp(smooth - threshold).clip(max=20.0)


def _source(kind, n, sfreq, rng, line_freq=50.0):
    t = np.arange(n) / sfreq
    if kind == "blink":
        s = np.zeros(n)
        rate = 0.35  # blinks per second
        n_blinks = max(2, rng.poisson(rate * n / sfreq))
        width = 0.08 * sfreq
        centres = rng.uniform(0, n, n_blinks)
        idx = np.arange(n)
        for c in centres:
            lo, hi = int(max(0, c - 5 * width)), int(min(n, c + 5 * width))
            s[lo:hi] += rng.uniform(0.7, 1.3) * np.exp(-0.5 * ((idx[lo:hi] - c) / width) ** 2)
        return s
    if kind == "line":
        return np.sin(2 * np.pi * line_freq * t + rng.uniform(0, 2 * np.pi))
    if kind == "muscle":
        noise = rng.normal(size=n)
        noise = noise - np.convolve(noise, np.ones(3) / 3, mode="same")  # high-pass: broadband EMG
        return noise * _bursty_envelope(n, sfreq, rng, 0.25, 0.15)
    centre = {"alpha": 10.0, "beta": 20.0, "theta": 6.0}[kind]
    freq = centre * rng.uniform(0.85, 1.15)
    drift = np.cumsum(rng.normal(0.0, 0.02, n))  # slowly wandering phase, as real rhythms do
    burst = {"alpha": 0.5, "beta": 0.3, "theta": 0.6}[kind]
    return np.sin(2 * np.pi * freq * t + drift + rng.uniform(0, 2 * np.pi)) * _bursty_envelope(n, sfreq, rng, burst,
                                                                                                0.2)


def source_kinds(n_channels, n_subgaussian=1):
    """The kind of each of the ``n_channels`` sources (see the module docstring)."""
    n_channels = check_int(n_channels, "n_channels", minimum=1, maximum=MAX_CHANNELS)
    n_subgaussian = check_int(n_subgaussian, "n_subgaussian", minimum=0)
    kinds = list(_FIRST_KINDS[:n_channels])
    while len(kinds) < n_channels:
        kinds.append(_MORE_KINDS[(len(kinds) - len(_FIRST_KINDS)) % len(_MORE_KINDS)])
    lines = [j for j, k in enumerate(kinds) if k == "line"]
    wanted = min(n_subgaussian, n_channels)
    if len(lines) > wanted:  # fewer channels than the first five kinds, or no sub-Gaussian wanted
        for j in lines[wanted:]:
            kinds[j] = "theta"
    candidates = [j for j, k in enumerate(kinds) if k != "line" and k != "blink"]
    for j in reversed(candidates):
        if sum(k == "line" for k in kinds) >= wanted:
            break
        kinds[j] = "line"
    return tuple(kinds)


def simulate_eeg(n_channels=8, n_samples=5000, *, sfreq=256.0, noise=0.01, n_subgaussian=1, seed=0):
    """Simulated EEG with known sources and mixing (see the module docstring).

    Parameters
    ----------
    n_channels : int
        Channels = sources, 2 to 256.
    n_samples : int
        Samples per channel (at least 1).
    sfreq : float
        Sampling rate in Hz (at least 128, so that 50 Hz mains is below Nyquist).
    noise : float
        Independent sensor noise, standard deviation relative to each channel's RMS
        (0 for an exactly square, noiseless mixture).
    n_subgaussian : int
        How many sources are sub-Gaussian sinusoids (mains and other interference lines).
    seed : int or None
        Seed of NumPy's ``default_rng``: the same seed gives the same recording.

    Returns
    -------
    SimulatedEEG

    Examples
    --------
    >>> eeg = simulate_eeg(8, 2000, seed=1)
    >>> eeg.data.shape, eeg.kinds[:3]
    ((8, 2000), ('blink', 'alpha', 'line'))
    """
    n_channels = check_int(n_channels, "n_channels", minimum=MIN_CHANNELS, maximum=MAX_CHANNELS)
    n_samples = check_int(n_samples, "n_samples", minimum=1)
    sfreq = check_float(sfreq, "sfreq", minimum=128.0)
    noise = check_float(noise, "noise", minimum=0.0)
    n_subgaussian = check_int(n_subgaussian, "n_subgaussian", minimum=0, maximum=len(_LINE_FREQS))
    seed = check_seed(seed)
    rng = np.random.default_rng(seed)
    names, positions = electrode_positions(n_channels)
    kinds = source_kinds(n_channels, n_subgaussian)
    sources = np.empty((n_channels, n_samples))
    line_no = 0
    for j, kind in enumerate(kinds):
        source_rng = np.random.default_rng([0 if seed is None else seed, j, int(rng.integers(1 << 31))])
        s = _source(kind, n_samples, sfreq, source_rng, _LINE_FREQS[line_no] if kind == "line" else 50.0)
        line_no += kind == "line"
        s = s - s.mean()
        std = s.std()
        sources[j] = s / std if std > 0 else s
    mixing = _dipole_mixing(positions, kinds, rng)
    data = mixing @ sources
    if noise > 0:
        rms = np.sqrt((data ** 2).mean(axis=1, keepdims=True))
        data = data + noise * rms * rng.normal(size=data.shape)
    return SimulatedEEG(data, sources, mixing, kinds, names, positions, float(sfreq), float(noise), seed)
