"""Is every released stub kernel recognised as a stub, and no course kernel? (That a launch on the real CUDA target
refuses a stub is checked in the same process as record()'s GPU hooks: tests/sim/test_record.py.)"""

import json
import types
from pathlib import Path

import pytest

from course_lib.stub_kernels import is_stub

ROOT = Path(__file__).resolve().parents[1]


def _stub_functions():
    """The code of the functions (and factories' inner functions) of the released problem sets' stub cells."""
    found = []
    for path in sorted((ROOT / "problem_sets").glob("ps*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            source = "".join(cell["source"])
            if cell["cell_type"] != "code" or "raise NotImplementedError()" not in source:
                continue
            code = compile("\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))),
                           str(path), "exec")
            for const in code.co_consts:  # the cell's top-level functions (and factories' inner kernels)
                if isinstance(const, types.CodeType):
                    found.append((path.stem, const))
                    found += [(path.stem, c) for c in const.co_consts if isinstance(c, types.CodeType)]
    return found


def test_every_released_stub_kernel_is_a_stub():
    stubs = [(ps, code.co_name) for ps, code in _stub_functions()
             if "NotImplementedError" in code.co_names and is_stub(types.SimpleNamespace(__code__=code))]
    names = {ps for ps, _ in stubs}
    # ps5, ps7 (inside its factory) and ps8 are the sets whose untouched kernels could otherwise score on a GPU
    assert {"ps5_hac", "ps7_cellsim", "ps8_colocation"} <= names, stubs


def test_no_course_kernel_is_a_stub():
    from course_lib.registry import all_kernels

    assert [s.name for s in all_kernels() if is_stub(s.get_pyfunc())] == []


@pytest.mark.parametrize("body, stub", [
    ("raise NotImplementedError", True),
    ("i = 1\n    raise NotImplementedError('later')", True),
    ("for i in range(2):\n        pass\n    raise NotImplementedError()", False),
    ("return 1", False),
    ("raise ValueError()", False),
])
def test_only_an_unconditional_raise_is_a_stub(body, stub):
    namespace = {}
    exec(f"def f(x):\n    {body}\n", namespace)
    assert is_stub(namespace["f"]) is stub
