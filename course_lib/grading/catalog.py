"""Where grading finds a problem set, addressed by its id (``ps2``) or its unit's name (``spmv``).

Everything grading needs ships inside the installed package:

* the questions: ``course_lib/<unit>/questions.py`` (``PROBLEM_SET = "psN"``, ``QUESTIONS``);
* the solution notebooks: in a checkout, ``solutions/psN_<unit>.ipynb``; in an installed
  (non-editable) package, the copies ``setup.py`` puts in ``course_lib/_shipped/solutions/``
  when it builds the package;
* the manifest: :func:`manifest`, read from the units of :data:`course_lib.UNITS`
  that have a ``questions`` module, so a new unit is listed by registering it.

So ``pip install .`` then ``course grading grade spmv submissions/ --out grades.csv`` works
from any folder.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["SHIPPED", "manifest", "problem_set_id", "solution_path", "solutions_folder"]

#: Solution notebooks inside an installed package (written by setup.py's build step).
SHIPPED = Path(__file__).resolve().parents[1] / "_shipped" / "solutions"
#: The repository root when course_lib runs from a checkout (editable install or PYTHONPATH).
_CHECKOUT = Path(__file__).resolve().parents[2]


def manifest() -> dict:
    """``{problem set id: unit name}`` for every unit with a problem set, in teaching order.

    >>> manifest()["ps2"]
    'spmv'
    """
    from .core import _problem_set_modules, declared_problem_sets

    declared = declared_problem_sets()
    if all(declared.values()):  # read from the sources: no unit imported
        return {ps: unit for unit, ps in declared.items()}
    return {module.PROBLEM_SET: module.__name__.split(".")[1] for module in _problem_set_modules()}


def problem_set_id(name) -> str:
    """The problem set meant by ``name``: its id (``"ps2"``), its unit (``"spmv"``) or both (``"ps2_spmv"``).

    >>> problem_set_id("spmv"), problem_set_id("ps2"), problem_set_id("ps2_spmv")
    ('ps2', 'ps2', 'ps2')

    Raises
    ------
    ValueError
        An unknown name; the message lists the known ones.
    """
    known = manifest()
    if isinstance(name, str):
        if name in known:
            return name
        for ps, unit in known.items():
            if name in (unit, f"{ps}_{unit}"):
                return ps
    listed = ", ".join(f"{ps} ({unit})" for ps, unit in known.items())
    raise ValueError(f"problem set must be a problem set id or a unit's name, one of {listed}; got {name!r}")


def solutions_folder() -> Path:
    """``solutions/`` of the checkout when there is one, else the copies shipped in the package."""
    checkout = _CHECKOUT / "solutions"
    return checkout if checkout.is_dir() else SHIPPED


def solution_path(name) -> Path:
    """The solution notebook of a problem set (by id or unit name).

    Raises
    ------
    ValueError
        An unknown problem set, or not exactly one ``psN_*.ipynb`` in the solutions folder.
    """
    ps = problem_set_id(name)
    folder = solutions_folder()
    matches = sorted(folder.glob(f"{ps}_*.ipynb"))
    if len(matches) != 1:
        raise ValueError(f"expected one {ps}_*.ipynb in {folder}, found {[m.name for m in matches]}")
    return matches[0]
