"""The grader's answer keys of ps8 (``course_lib/colocation/questions.py`` judges with them): read by
``course_lib.grading.resources.answer_key`` in the grader's process, never importable from the library."""

import numpy as np

from course_lib.colocation.questions import WARP


def _expected_global_atomics(n, block, n_features):
    """Expected prediction, counted: the distinct features ``i % F`` of each warp of consecutive instances."""
    features = np.arange(int(n)) % int(n_features)
    return sum(len(np.unique(features[start:start + WARP])) for start in range(0, int(n), WARP))
