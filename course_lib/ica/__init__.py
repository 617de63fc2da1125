"""Unit 6: Infomax ICA of EEG on the GPU (``lessons/06_ica.ipynb``).

Independent component analysis separates the sources mixed in a multichannel EEG (eye
blinks, muscle, mains, brain rhythms). Infomax learns an unmixing matrix by natural-gradient
minibatches that must run one after another; each minibatch is small (C <= 256 channels,
B ~ sqrt(N / 3) samples), so on a GPU the story is launch counts, memory coalescing and
occupancy, not FLOPs: the drop-in BLAS port (one GEMV launch per sample) against the
thesis's custom kernels (one block per permuted sample, the sample in shared memory) and
a fused two-launch minibatch; then whole steps in one cooperative launch (``"persistent"``), and
with each minibatch split across the blocks that own its samples (``"persistent_split"``).

Public entry points: :func:`infomax` (``method=`` picks the implementation), :func:`ica_peer`
(MNE, picard, scikit-learn), the simulator :func:`simulate_eeg`, the measures
:func:`amari_index` and :func:`match_sources`. Kernels in :mod:`course_lib.ica.kernels`,
models (launches, work, occupancy) in :mod:`course_lib.ica.model`, measurements in
:mod:`course_lib.ica.profiling`, plots in :mod:`course_lib.ica.plots` and the explorer in
:mod:`course_lib.ica.widgets` (both loaded on first use), problem set 6 in
:mod:`course_lib.ica.questions`.
"""

from .._lazy import lazy_submodules
from . import _split_step, kernels, model, profiling  # _split_step: registers split_step_kernel
from .api import GPU_METHODS, KERNEL_METHODS, METHODS, PEERS, default_block, ica_peer, infomax
from .cpu import CpuStepper
from .data import MAX_CHANNELS, SimulatedEEG, electrode_positions, simulate_eeg, source_kinds
from .quiz import QUIZ
from .reference import (MIN_SAMPLES_PER_CHANNEL, ConvergenceError, ConvergenceWarning, InfomaxResult, amari_index,
                        center_and_sphere, default_batch_size, default_lrate, infomax_reference, match_sources,
                        validate_data)

__all__ = [
    "GPU_METHODS",
    "KERNEL_METHODS",
    "MAX_CHANNELS",
    "METHODS",
    "MIN_SAMPLES_PER_CHANNEL",
    "PEERS",
    "QUIZ",
    "ConvergenceError",
    "ConvergenceWarning",
    "CpuStepper",
    "InfomaxResult",
    "SimulatedEEG",
    "amari_index",
    "center_and_sphere",
    "default_batch_size",
    "default_block",
    "default_lrate",
    "electrode_positions",
    "ica_peer",
    "infomax",
    "infomax_reference",
    "kernels",
    "match_sources",
    "model",
    "profiling",
    "simulate_eeg",
    "source_kinds",
    "validate_data",
]


# plots and widgets import matplotlib and ipywidgets: they load on first use only.
__getattr__, __dir__ = lazy_submodules(__name__, ("plots", "widgets"), globals())
