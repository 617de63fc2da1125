"""The grader's answer keys of ps2 (``course_lib/spmv/questions.py`` judges with them): read by
``course_lib.grading.resources.answer_key`` in the grader's process, never importable from the library."""

import numpy as np

from course_lib.spmv.questions import modelled_cost


def best_cost(lengths, ratio, launch):
    return min(modelled_cost(lengths, K, ratio, launch) for K in range(int(np.max(lengths, initial=0)) + 1))
