"""Installs course_lib's simulator hooks in every Python process of a numba-suite run.

``tests/numba_suite/runner.py`` puts this directory first on ``PYTHONPATH`` and sets
``COURSE_SIM_HOOKS=1`` for the "course" run: the test process and every process its
tests spawn (``subprocess``, ``multiprocessing``) then run kernels on course_lib's block
scheduler. Without that variable (the "stock" run, or any other use) it does nothing.
"""

import os

if os.environ.get("COURSE_SIM_HOOKS") == "1" and os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
    import course_lib  # noqa: F401  (simulator mode: installs the hooks)
    from course_lib.sim import _hooks

    _hooks.install()
