"""Docstring sections that several functions share, written once.

Functions that take the same parameters or return the same results (the searches of a
unit, a reference beside its compiled twin) document them alike. :func:`fill_doc`
keeps one text for such a section: a docstring line that holds only ``{name}`` is
replaced by the section ``name``, indented as that line. ``help()``, doctest and the
course site read the filled docstring.

>>> @fill_doc(params="Parameters\\n----------\\nn : int")
... def f(n):
...     '''Twice n.
...
...     {params}
...     '''
>>> print(f.__doc__.strip())
Twice n.
<BLANKLINE>
    Parameters
    ----------
    n : int
"""

from __future__ import annotations

import re
import textwrap

__all__ = ["fill_doc"]

_PLACEHOLDER = re.compile(r"^(\s*)\{(\w+)\}\s*$")


def fill_doc(**sections):
    """Decorator: fill the docstring's ``{name}`` lines with the shared ``sections``.

    Parameters
    ----------
    **sections : str
        Section texts by name, without indentation (a leading newline and the common
        indentation are removed).

    Returns
    -------
    callable
        Takes a function or class, sets its filled ``__doc__`` and returns it.

    Raises
    ------
    KeyError
        A ``{name}`` line names no section (a typo would otherwise show in ``help()``).
    """
    texts = {name: textwrap.dedent(text).strip("\n").splitlines() for name, text in sections.items()}

    def decorate(obj):
        if obj.__doc__ is None:  # python -OO drops docstrings
            return obj
        lines = []
        for line in obj.__doc__.splitlines():
            match = _PLACEHOLDER.match(line)
            if match is None:
                lines.append(line)
                continue
            indent, name = match.groups()
            lines.extend(indent + part if part.strip() else "" for part in texts[name])
        obj.__doc__ = "\n".join(lines) + ("\n" if obj.__doc__.endswith("\n") else "")
        return obj

    return decorate
