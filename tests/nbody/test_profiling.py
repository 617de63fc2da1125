"""Issue-slot budgets of the N-body inner loops in sm_90 SASS (compiled here, no GPU needed)."""

import pytest

from course_lib import sass
from course_lib.nbody import api, kernels
from course_lib.nbody.profiling import inner_loop_slots


def _tools_or_skip():
    try:
        sass.find_tool("ptxas")
        sass.find_tool("nvdisasm")
    except sass.SassToolsMissing as exc:  # the cu13 / cu12 extra brings them
        pytest.skip(str(exc))


@pytest.mark.parametrize("method,per,budget", [("lean", 1, 16.0), ("blocked", api.DEFAULT_BODIES_PER_THREAD, 14.0)])
def test_inner_loop_fits_its_issue_budget_in_sass(method, per, budget):
    _tools_or_skip()
    kernel = kernels.nbody_blocked_kernel(256, per)
    mix = sass.instruction_mix(kernel, kernels.BODY_SIG, arch="sm_90", per=4 * per)
    # 4 sources per trip (LLVM's unroll of the lean loop, the blocked loop's own), one MUFU.RSQ per interaction,
    # and the 12 FP32 instructions of the folded-softening form: nothing else is FP32.
    assert mix.counts["MUFU"] == 4 * per
    assert mix.counts["FP32"] == 12 * 4 * per
    assert mix.slots_per_unit <= budget, mix.table()
    assert inner_loop_slots(method, tile=256, bodies_per_thread=per)["slots_per_interaction"] == mix.slots_per_unit


def test_the_lesson_kernel_pays_for_range_and_wraparound_in_sass():
    _tools_or_skip()
    tiled = inner_loop_slots("tiled", tile=256)
    lean = inner_loop_slots("lean", tile=256)
    assert tiled["mix"]["integer"] >= 10 * lean["mix"].get("integer", 1)
    assert tiled["slots_per_interaction"] > 25 > 16 >= lean["slots_per_interaction"]


@pytest.mark.parametrize("method,per,budget", [("lean", 1, 16.0), ("blocked", api.DEFAULT_BODIES_PER_THREAD, 14.0)])
def test_ptx_estimate_keeps_the_budget_where_the_tools_are_missing(method, per, budget):
    slots = inner_loop_slots(method, tile=256, bodies_per_thread=per, source="ptx")
    assert slots["mix"]["mufu"] == slots["interactions"] == 4 * per
    assert slots["mix"]["fp32"] == 12 * slots["interactions"]
    assert slots["slots_per_interaction"] <= budget + 0.25, slots  # within a quarter slot of the SASS


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="method"):
        inner_loop_slots("naive")
    with pytest.raises(ValueError, match="source"):
        inner_loop_slots("lean", source="cubin")
