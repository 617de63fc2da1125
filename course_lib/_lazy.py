"""Submodules loaded on first access, so that importing a unit stays light.

A unit's ``plots`` and ``widgets`` import matplotlib and ipywidgets, which a grading
worker or a script never needs. The unit's ``__init__`` declares them lazy::

    from .._lazy import lazy_submodules

    __getattr__, __dir__ = lazy_submodules(__name__, ("plots", "widgets"), globals())

and ``course_lib.nbody.plots`` is imported the first time it is used.
"""

from __future__ import annotations

import importlib

__all__ = ["lazy_submodules"]


def lazy_submodules(package: str, names, namespace: dict):
    """``(__getattr__, __dir__)`` for a package whose submodules ``names`` load on first access.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    names : iterable of str
        Submodules to load lazily.
    namespace : dict
        The package's ``globals()`` (``dir()`` lists them with the lazy names).
    """
    names = tuple(names)

    def __getattr__(name):
        if name in names:
            return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__
