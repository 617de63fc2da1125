"""Attribute names under which the simulator keeps its copies of a function on the function itself.

:mod:`course_lib.sim._lines` and :mod:`course_lib.sim._engine` make the copies;
:mod:`course_lib.sim._typing` and both of them recognise or drop them.
"""

__all__ = ["REWRITTEN"]

#: Attribute set on rewritten functions (value: the original function).
REWRITTEN = "__course_rewritten__"
#: Attribute holding a function's copy that ticks at loop back-edges (see :func:`course_lib.sim._engine.fair`).
_FAIR = "__course_fair__"
