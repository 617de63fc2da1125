"""Read-only attributes that stand for an attribute of what an object holds (a simulated thread's index, an
array's dtype).

The simulator's stand-ins answer many such questions on every simulated statement; ``operator.attrgetter``
answers them without a Python frame, and one line per attribute says where each answer comes from.
"""

from __future__ import annotations

from operator import attrgetter

__all__ = ["forwarded"]


def forwarded(path: str, doc: str | None = None) -> property:
    """A read-only property whose value is ``self.<path>``.

    Parameters
    ----------
    path : str
        An attribute name, or a dotted path through what the object holds (``"v.threadIdx"``).
    doc : str, optional
        The property's docstring.

    Returns
    -------
    property
    """
    return property(attrgetter(path), doc=doc)
