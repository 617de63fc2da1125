"""Does the phase clock add each phase's time, and cost nothing when disabled?"""

import time

from course_lib.clock import PhaseClock


def test_each_phase_sums_its_own_intervals():
    clock = PhaseClock(("a", "b"))
    for _ in range(2):
        mark = clock.start()
        time.sleep(0.01)
        clock.stop("a", mark)
    mark = clock.start()
    clock.stop("b", mark)
    seconds = clock.finish()
    assert set(seconds) == {"a", "b"}
    assert seconds["a"] >= 0.02 and 0 <= seconds["b"] < seconds["a"]


def test_a_disabled_clock_records_nothing():
    clock = PhaseClock(("a",), enabled=False)
    assert clock.start() is None
    clock.stop("a", None)
    assert clock.finish() == {}
