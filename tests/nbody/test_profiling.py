"""Issue-slot budgets of the N-body inner loops on sm_90 (compiled to PTX, no GPU needed)."""

import pytest

from course_lib.nbody import api
from course_lib.nbody.profiling import inner_loop_slots


@pytest.mark.parametrize("method,per,budget", [("lean", 1, 16.0), ("blocked", api.DEFAULT_BODIES_PER_THREAD, 14.0)])
def test_inner_loop_fits_its_issue_budget(method, per, budget):
    slots = inner_loop_slots(method, tile=256, bodies_per_thread=per)
    # One MUFU.RSQ per interaction and the 12 FP32 instructions of the folded-softening form: nothing else is FP32.
    assert slots["mix"]["mufu"] == slots["interactions"]
    assert slots["mix"]["fp32"] == 12 * slots["interactions"]
    assert slots["interactions"] == 4 * per  # 4 sources per trip (the blocked loop's explicit unroll, LLVM's for lean)
    assert slots["slots_per_interaction"] <= budget, slots


def test_the_lesson_kernel_pays_for_range_and_wraparound():
    # The committed tiled kernel: numba's 64-bit range counter and negative-index wrap-around in the loop.
    tiled = inner_loop_slots("tiled", tile=256)
    lean = inner_loop_slots("lean", tile=256)
    assert tiled["mix"]["integer"] >= 10 * lean["mix"]["integer"]
    assert tiled["slots_per_interaction"] > 25 > 16 >= lean["slots_per_interaction"]


def test_bad_method_is_refused():
    with pytest.raises(ValueError, match="method"):
        inner_loop_slots("naive")
