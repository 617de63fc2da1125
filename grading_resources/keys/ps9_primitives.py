"""The grader's answer keys of ps9 (``course_lib/primitives/questions.py`` judges with them): read by
``course_lib.grading.resources.answer_key`` in the grader's process, never importable from the library."""

import functools

import numpy as np

from course_lib.primitives.questions import staged_words


def _conflict_free(per_thread, block, period, gap):
    """Whether every warp-wide access of :func:`staging_kernel` under the layout hits 32 distinct banks (its
    words are distinct, so that is one wavefront each)."""
    lanes = np.arange(block).reshape(-1, 32)
    stores = np.arange(per_thread)[:, None, None] * block + lanes  # (row, warp, lane)
    reads = per_thread * lanes + np.arange(per_thread)[:, None, None]  # (step, warp, lane)
    for logical in (reads[:, :1], stores, reads):  # the first warp's reads reject most layouts, cheaply
        banks = np.sort((logical + gap * (logical // period)) % 32, axis=-1)
        if (np.diff(banks, axis=-1) == 0).any():
            return False
    return True


@functools.lru_cache(maxsize=None)
def least_staged_words(per_thread, block):
    """The fewest shared words of a layout ``i + gap * (i // period)`` (any period; a gap of 1 or 2 words, as 3
    takes no fewer in the range graded) under which the accesses of :func:`staging_kernel` are all conflict-free:
    found by trying them (the grader's reference)."""
    tile = per_thread * block
    if _conflict_free(per_thread, block, 1, 0):
        return tile
    least = None
    for gap in (1, 2):
        # For one gap, the longest period that works takes the fewest words.
        for period in range(tile, 0, -1):
            if _conflict_free(per_thread, block, period, gap):
                words = staged_words(per_thread, block, period, gap)
                least = words if least is None else min(least, words)
                break
    return least
