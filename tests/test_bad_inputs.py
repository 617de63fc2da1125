"""Every public function of every unit refuses bad arguments with a ValueError naming the argument.

Units come from :data:`course_lib.UNITS`, functions from each unit's ``__all__``; what each
argument is comes from the unit's table ``tests/<unit>/arguments.py`` (see
``tests/bad_inputs.py`` for the kinds and their bad values). A public function missing
from its unit's table fails :func:`test_every_public_function_is_declared`, so a new unit
or function is covered as soon as it is exported.
"""

from __future__ import annotations

import importlib
import inspect
import re

import pytest

import course_lib
from tests.bad_inputs import bad_values

#: Units whose public API is not argument-checked here, and why.
EXEMPT_UNITS = {
    "sim": "the simulator tools take kernels and launch configurations; tests/sim checks their errors",
}


def _units():
    return [u for u in course_lib.UNITS if u not in EXEMPT_UNITS]


def _public_functions(unit):
    module = importlib.import_module(f"course_lib.{unit}")
    return {name: getattr(module, name) for name in module.__all__
            if inspect.isfunction(getattr(module, name, None))}


def _table(unit):
    try:
        return importlib.import_module(f"tests.{unit}.arguments").ARGUMENTS
    except ModuleNotFoundError as exc:
        if exc.name != f"tests.{unit}.arguments":
            raise
        return None


@pytest.mark.parametrize("unit", _units())
def test_every_public_function_is_declared(unit):
    table = _table(unit)
    assert table is not None, f"tests/{unit}/arguments.py with ARGUMENTS is missing (see tests/bad_inputs.py)"
    functions = _public_functions(unit)
    assert sorted(set(functions) - set(table)) == [], f"public functions of {unit} missing from its ARGUMENTS"
    assert sorted(set(table) - set(functions)) == [], f"ARGUMENTS of {unit} names functions it does not export"
    for name, call in table.items():
        parameters = inspect.signature(functions[name]).parameters
        unknown = set(call.kinds) - set(parameters)
        assert not unknown, f"{unit}.{name} has no argument(s) {sorted(unknown)}"


def _labels(kind):
    """The labels of a kind's bad values (they do not depend on the valid value, only on its kind)."""
    import numpy as np
    import scipy.sparse as sp

    samples = {"sparse": sp.csr_matrix(np.eye(2, dtype=np.float32)), "bool_mask": np.ones((2, 2), bool), "bool_array": np.ones((2, 2), bool),
               "uint8_image": np.zeros((2, 2, 3), np.uint8), "index_array": np.arange(2), "int_array": np.arange(2),
               "float_array": np.zeros(2, np.float32), "real_array": np.zeros(2)}
    return [label for label, _ in bad_values(kind, samples.get(kind.rstrip("?").replace("+empty", "").replace("+nan", "")))]


def _cases():
    for unit in _units():
        for name, call in (_table(unit) or {}).items():
            for argument, kind in call.kinds.items():
                for label in _labels(kind):
                    yield pytest.param(unit, name, argument, label, id=f"{unit}.{name}-{argument}-{label}")


_VALID = {}


def _valid_call(unit, name):
    """The valid keyword arguments of ``unit.name`` (made once; the call itself must succeed)."""
    key = (unit, name)
    if key not in _VALID:
        call = _table(unit)[name]
        kwargs = call.make()
        _invoke(_public_functions(unit)[name], call, kwargs)
        _VALID[key] = kwargs
    return _VALID[key]


def _invoke(function, call, kwargs):
    args = [kwargs[p] for p in call.positional]
    return function(*args, **{k: v for k, v in kwargs.items() if k not in call.positional})


@pytest.mark.parametrize("unit,name,argument,label", list(_cases()))
def test_bad_argument_is_a_value_error_naming_it(unit, name, argument, label):
    call = _table(unit)[name]
    kwargs = dict(_valid_call(unit, name))
    bad = dict(bad_values(call.kinds[argument], kwargs.get(argument)))[label]
    kwargs[argument] = bad
    with pytest.raises(ValueError) as info:
        _invoke(_public_functions(unit)[name], call, kwargs)
    assert re.search(rf"\b{re.escape(argument)}\b", str(info.value)), \
        f"{unit}.{name}({argument}={label}) raised ValueError without naming {argument!r}: {info.value}"
