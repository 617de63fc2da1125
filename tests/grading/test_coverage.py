"""Does the coverage of a kernel count the arms of its conditional expressions, as the profiler evaluates them, and
the coverage of a host program the statements its other threads run?

A line runs whichever way its conditional expression goes; the profiler notes each arm evaluated
(``ProfileReport.arms``) and the coverage enumerates the arms of the student's kernel code with the same keys, for a
kernel at the top of a cell and for one indented inside its factory alike.
"""

import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from numba import cuda, float32

from course_lib import device
from course_lib.grading.authoring.coverage import kernel_statements
from course_lib.sim import profile

pytestmark = pytest.mark.skipif(not device.is_simulator(), reason="runs the profiler in this process")


@cuda.jit(device=True)
def doubled(a, i):
    return a[i] * float32(2.0) if i >= 0 else float32(0.0)


def make_kernel(limit):
    """A kernel (indented in its factory, as a student's tile-size factory makes it) whose every line runs at small
    sizes while two arms do not: the global read past ``limit`` and the ``or`` operand after a true comparison."""
    @cuda.jit
    def kernel(a, out):
        i = cuda.grid(1)
        if i < a.shape[0] and i >= 0:
            x = doubled(a, i) if a.shape[0] <= limit else a[i] + a[i]
            keep = a.shape[0] > 0 or doubled(a, 0) > 0
            out[i] = x if keep else float32(0.0)

    return kernel


def _arm_text(key):
    import linecache

    _, line, column, end_line, end_column = key
    assert end_line == line  # the arms below are one line each
    return linecache.getline(__file__, line)[column:end_column].strip()


def test_the_profiler_notes_every_arm_evaluated_under_the_keys_the_coverage_reads():
    arms = set()
    kernel_statements([make_kernel], arms=arms)  # the factory's kernel and the device function it calls
    a = np.arange(40, dtype=np.float32)
    out = np.zeros_like(a)
    report = profile(make_kernel(4096), 2, 32, a, out)
    np.testing.assert_array_equal(out, 2 * a)
    assert report.arms <= arms, sorted(report.arms - arms)
    never = sorted(_arm_text(key) for key in arms - report.arms)
    assert never == ["a[i] + a[i]", "doubled(a, 0) > 0", "float32(0.0)", "float32(0.0)"], never
    # Past the limit the other arm is evaluated: between the two launches only the dead ones are left.
    both = report.arms | profile(make_kernel(8), 2, 32, a, out).arms
    np.testing.assert_array_equal(out, 2 * a)
    assert sorted(_arm_text(key) for key in arms - both) == ["doubled(a, 0) > 0", "float32(0.0)", "float32(0.0)"]


# ----------------------------------------------------------------------------- host code in other threads
def _appended(box, value):
    box.append(value)
    return len(box)


#: A pool whose worker started before any traced call (a notebook's module-level pool).
EARLY_POOL = ThreadPoolExecutor(1)
EARLY_POOL.submit(int).result()


def _threaded_program():
    box = []
    worker = threading.Thread(target=_appended, args=(box, 1))
    worker.start()
    worker.join()
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(_appended, [box, box], [2, 3]))
    return EARLY_POOL.submit(_appended, box, 4).result()


def test_host_statements_count_in_the_threads_a_program_starts_and_in_a_pool_started_before():
    from course_lib.grading.authoring.coverage import _has_run, reset, traced_host

    reset()
    with traced_host(_threaded_program):
        assert _threaded_program() == 4
    statements = kernel_statements([_threaded_program], host=True)
    assert {first for _, first, _ in statements} > {_appended.__code__.co_firstlineno + 1}
    assert [s for s in statements if not _has_run(s)] == []
    assert sys.gettrace() is None and threading.gettrace() is None  # nothing left behind
    reset()


@cuda.jit
def nested_and_inline(a, out):
    """Arms that start where another arm starts (a conditional expression as an arm), and bodies on their header's
    line: at these sizes the staged-looking arms and the one-line body past 4096 never run."""
    i = cuda.grid(1)
    big = a.shape[0] > 4096
    if i >= a.shape[0]: return
    x = (doubled(a, i) if big else a[i]) if i % 2 == 0 else (doubled(a, i) if big else a[i])
    y = i >= 0 and (doubled(a, i) if big else a[i])
    if big: x = doubled(a, i)
    out[i] = x + y


def test_an_arm_is_told_from_the_arm_it_starts_with_and_a_body_on_its_header_line_is_an_arm():
    arms = set()
    kernel_statements([nested_and_inline], arms=arms)
    a = np.arange(40, dtype=np.float32)
    out = np.zeros_like(a)
    report = profile(nested_and_inline, 2, 32, a, out)
    np.testing.assert_array_equal(out, 2 * a)
    assert report.arms <= arms, sorted(report.arms - arms)
    never = sorted(_arm_text(key) for key in arms - report.arms)
    # The three staged-looking arms (two of them starting where the arm holding them starts), the one-line body,
    # and both arms of ``doubled``, which nothing called.
    assert never == ["a[i] * float32(2.0)"] + ["doubled(a, i)"] * 3 + ["float32(0.0)", "x = doubled(a, i)"], never
