"""The simulator's checker and profiler, bound when the question modules are imported.

Hidden tests call :func:`trusted_check` and :func:`trusted_profile` instead of looking
up ``course_lib.sim.check`` when they run: the grader imports every question module
before any student code runs, so a notebook that rebinds ``course_lib.sim.check`` (to
report a racy kernel as clean, say) does not change which checker the tests use.
"""

from ...sim import check as trusted_check
from ...sim import profile as trusted_profile

__all__ = ["trusted_check", "trusted_profile"]
