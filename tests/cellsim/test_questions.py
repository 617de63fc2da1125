"""Problem set 7: the solution gets full marks, typical wrong answers partial or 0 with the cause named.

The instructor grader's rows for whole notebooks are the ps7 fixtures of tests/grading/make_fixtures.py.
"""


import numpy as np
import pytest

from course_lib.cellsim import model, profiling, questions
from course_lib.grading import get_question, run_tests
from course_lib.sim import profile

from . import submissions as subs


def grade(question_id, answer):
    return run_tests(get_question(question_id), answer, hidden=True, seed=7)


def failures(result):
    return " | ".join(" ".join(o.message.split()) for o in result.outcomes if not o.passed)


def test_every_test_is_split_and_points_add_up():
    for q in questions.QUESTIONS:
        assert all(callable(t.inputs) and callable(t.produce) and callable(t.judge) for t in q.tests)
        assert sum(t.points for t in q.tests) == q.points


@pytest.mark.parametrize("factory", [subs.make_solution, subs.make_shuffle_exclusive])
def test_right_answers_get_full_marks_however_the_warp_scan_is_written(factory):
    result = grade("ps7.q1", factory)
    assert result.points == 6, failures(result)


@pytest.mark.parametrize("factory, feature", [
    (subs.make_atomic_per_cell, "one global atomic per block (atomics per block): measured"),
    (subs.make_serial_scan, "a parallel scan (SIMT efficiency): measured"),
    (subs.make_recount, "each cell's data loaded once (global bytes loaded per cell): measured"),
    (subs.make_hillis_steele, "a warp scan in registers (warp shuffles per warp): measured"),
    (subs.make_blelloch, "shared memory for the warps' totals only (shared requests per warp): measured"),
    (subs.make_double_buffer, "a warp scan in registers (warp shuffles per warp): measured"),
])
def test_a_wrong_technique_earns_half_and_is_named_with_its_measure(factory, feature):
    result = grade("ps7.q1", factory)
    assert result.points == 3, failures(result)
    assert feature in failures(result) and "the technique gives" in failures(result)


def test_the_technique_bounds_follow_the_cost_model():
    """The solution sits inside every bound and each wrong technique outside its own, by a margin."""
    from course_lib.grading.authoring.harness import Answer
    from course_lib.grading.authoring.signature import profile_signature

    assert any(block == 32 for block, _, _ in questions.TECHNIQUE_CASES)  # one warp: its own cheats, in the variants
    for block, n, p in questions.TECHNIQUE_CASES:
        assert n % block != 0  # a partial last block
        if block < 64:
            continue
        data = questions.cells_case(n, p, block, seed=3)
        measured = {}
        for factory in (subs.make_solution, subs.make_atomic_per_cell, subs.make_serial_scan, subs.make_recount,
                        subs.make_hillis_steele):
            launch = questions.launch_compact(Answer(factory, {}, lambda f, b: f(b)), data)
            metrics = profile_signature(launch)["metrics"]
            measured[factory.__name__] = {f.name: f.measure(metrics, data) for f in questions.COMPACT_SIGNATURE}
        atomics, loads, simt, barriers, shuffles, shared, share = (f.name for f in questions.COMPACT_SIGNATURE)
        blocks = -(-n // block)
        assert measured["make_solution"][atomics] == 1
        assert measured["make_atomic_per_cell"][atomics] == data["flags"].sum() / blocks > 10
        assert measured["make_solution"][loads] == pytest.approx(4 + 8 * data["flags"].sum() / n)
        assert measured["make_recount"][loads] > 3 * questions.load_bytes_bound(data)[1]
        assert measured["make_solution"][simt] > 0.9
        assert measured["make_serial_scan"][simt] < questions.MIN_SIMT / 2
        assert measured["make_solution"][barriers] >= 1 and measured["make_atomic_per_cell"][barriers] == 0
        assert measured["make_solution"][shuffles] == 5 and measured["make_hillis_steele"][shuffles] == 0
        assert measured["make_solution"][shared] < 4 < 2 * questions.MAX_SHARED_PER_WARP < \
            measured["make_hillis_steele"][shared]
        assert measured["make_solution"][share] < 1.2 < questions.MAX_WARP_SHARE < measured["make_serial_scan"][share]


def test_the_inclusive_scan_used_as_exclusive_writes_past_the_end():
    result = grade("ps7.q1", subs.make_shifted)
    assert result.points < 1
    assert "EXCLUSIVE prefix" in failures(result) or "bounds" in failures(result)


def test_a_missing_barrier_is_a_shared_memory_race():
    result = grade("ps7.q1", subs.make_missing_barrier)
    assert result.points < 1
    assert "write-read race on shared array" in failures(result)


def test_the_course_kernel_is_not_an_answer():
    from course_lib.cellsim.kernels import scan_block_kernel

    assert "course" in grade("ps7.q1", lambda block: scan_block_kernel(block)).error


def dtoh_measured(run):
    """A student's ``dtoh_bytes(run)``: record() around the run it is given."""
    from course_lib.sim import record

    with record() as log:
        run()
    return log.summary()["DtoH_bytes"]


@pytest.fixture(scope="module")
def measured():
    return {"dtoh_bytes": dtoh_measured}


def measure_with(factory=None, extra=0):
    """A student's ``measure_load_bytes(make_kernel, n)``: the profiler's global load bytes of the kernel of the
    factory it is given (+ extra), or of ``factory``'s kernel whatever it is given."""
    def measure_load_bytes(make_kernel, n):
        cells = profiling.measure_case(n)
        flags, block = cells["flags"], cells["block"]
        recorded = int(flags.sum())
        report = profile((factory or make_kernel)(block), -(-n // block), block, flags, cells["phis"],
                         np.zeros(1, np.int32), np.zeros(recorded, np.int32), np.zeros(recorded))
        return report.total.global_load_bytes + extra

    return measure_load_bytes


def tree_by_levels(depth, budget):
    """A student's tree_largest_population written as a loop: the fewest cells any step allows."""
    most = budget // 24  # level 0 alone
    for g in range(1, depth + 1):
        most = min(most, budget // (24 * (2 ** (g - 1) + 2**g)))
    return most


def batch_by_bisection(n_initial, depth, budget):
    """A student's cells_per_batch written as a bisection on c over the buffers' bytes."""
    def fits(c):
        root = min(c, n_initial)
        return 44 * sum(min(c, root * 2**g) for g in range(depth + 1)) <= budget

    low, high = 0, n_initial * 2**depth
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if fits(mid) else (low, mid - 1)
    return low


def batch_by_ranges(n_initial, depth, budget):
    """A student's cells_per_batch in closed form over the ranges of c (the solution's way)."""
    cells = budget // 44
    if cells // (depth + 1) < n_initial:
        return cells // (depth + 1)
    for k in range(1, depth + 1):
        c = (cells - n_initial * (2**k - 1)) // (depth + 1 - k)
        if c < n_initial * 2**k:
            return c
    return n_initial * 2**depth


def _q2(measured, **changes):
    answer = {"tree_largest_population": lambda depth, budget: budget // (24 * (3 * 2 ** (depth - 1) if depth else 1)),
              "cells_per_batch": batch_by_bisection, **measured,
              "make_compact_kernel": subs.make_solution, "predicted_load_bytes": lambda n, r: 4 * n + 8 * r,
              "measure_load_bytes": measure_with()}
    answer.update(changes)
    return grade("ps7.q2", answer)


def test_q2_right_answers_get_full_marks(measured):
    result = _q2(measured)
    assert result.points == 4, failures(result)
    # the measured transfers: the tree copies every level back, compaction a few bytes per batch
    assert questions.measured_dtoh_bytes("tree", 30, 4) > 100 * questions.measured_dtoh_bytes("compact", 30, 4)


def test_q2_decisions_written_as_loops_or_in_closed_form_get_full_marks(measured):
    result = _q2(measured, tree_largest_population=tree_by_levels, cells_per_batch=batch_by_ranges)
    assert result.points == 4, failures(result)


def test_q2_keys_agree_with_a_search_over_every_candidate():
    """The grader's keys against brute force on small sizes: every L (tree) and every c (batches) tried."""
    for depth in range(5):
        for budget in range(0, 24 * 3 * 2**depth * 4, 11):
            best = max([0] + [n for n in range(1, budget // 24 + 1)
                              if 24 * n * (2 ** (depth - 1) + 2**depth if depth else 1) <= budget])
            assert questions.tree_population_key(depth, budget) == tree_by_levels(depth, budget) == best
        for n_initial in range(1, 5):
            for budget in range(0, 44 * n_initial * 2 ** (depth + 1) + 50, 13):
                best = max([0] + [c for c in range(1, n_initial * 2**depth + 1)
                                  if questions.batch_buffer_bytes(c, n_initial, depth) <= budget])
                assert questions.cells_per_batch_key(n_initial, depth, budget) == best == \
                    batch_by_ranges(n_initial, depth, budget)


def test_q2_drawn_decisions_cover_the_stated_ranges():
    cases = [questions._batch_cases(np.random.default_rng(seed), {}) for seed in range(20)]
    drawn = [case for per_seed in cases for case in per_seed[8:]]
    answers = [questions.cells_per_batch_key(*case) for case in drawn]
    assert all(1 <= n <= questions.Q2_MAX_CELLS and 0 <= d <= 30 and 0 <= b <= questions.Q2_MAX_BUDGET
               for n, d, b in drawn)
    assert max(d for _, d, _ in drawn) >= 25 and min(d for _, d, _ in drawn) <= 5
    # batches smaller than L, between L and the whole tree, and the whole tree, all drawn
    regimes = {("below L" if c < n else "whole tree" if c == n * 2**d else "past L") for (n, d, _), c in
               zip(drawn, answers) if c}
    assert regimes >= {"below L", "past L"}, regimes
    trees = [case for seed in range(20) for case in questions._tree_cases(np.random.default_rng(seed), {})[7:]]
    assert sum(questions.tree_population_key(*case) > 0 for case in trees) > len(trees) // 3


@pytest.mark.parametrize("part, wrong, said", [
    ("tree_largest_population", lambda depth, budget: budget // (24 * 2**depth), "when does the tree hold the most slots"),
    ("tree_largest_population", lambda depth, budget: budget // (72 * 2 ** max(depth - 1, 0)),
     "when does the tree hold the most slots"),
    ("cells_per_batch", lambda n, depth, budget: budget // (44 * (depth + 1)), "the first generations hold"),
    ("cells_per_batch", lambda n, depth, budget: min(n, budget // (44 * (depth + 1))), "the first generations hold"),
    ("cells_per_batch", lambda n, depth, budget: batch_by_bisection(n, depth, budget + 44),
     "the first generations hold"),
], ids=["tree_last_level_only", "tree_depth_0_two_levels", "batch_full_batches", "batch_at_most_L",
        "batch_one_cell_over"])
def test_q2_each_wrong_decision_loses_its_part(measured, part, wrong, said):
    result = _q2(measured, **{part: wrong})
    lost = 0.5 if part == "tree_largest_population" else 1
    assert result.points == 4 - lost, failures(result)
    assert part in failures(result) and said in failures(result), failures(result)


def test_q2_calling_the_course_model_caps_the_question_at_half(measured):
    # The tests of that part earn nothing, and the question at most half: not the student's work.
    result = _q2(measured, tree_largest_population=lambda depth, budget: budget // model.tree_peak_bytes(1, depth))
    failed = [o for o in result.outcomes if not o.passed]
    assert failed and result.points == 2 and result.capped and not result.error
    assert all("course's own" in o.message and "the part `tree_largest_population`" in o.message for o in failed)


def test_q2_the_graders_key_imported_inside_a_function_caps_the_question_at_half(measured):
    def cells_per_batch(n_initial, depth, budget):
        from course_lib.cellsim.questions import cells_per_batch_key

        return cells_per_batch_key(n_initial, depth, budget)

    result = _q2(measured, cells_per_batch=cells_per_batch)
    assert result.points == 2 and "course's own" in failures(result), failures(result)


PASTED_DTOH = {"tree": 406_400, "compact": 784}  # the notebook's runs (100 cells, seed 3), from a scratch run


@pytest.mark.parametrize("dtoh_bytes", [
    lambda run: PASTED_DTOH[run.method],
    lambda run: 4064 * run.n_cells if run.method == "tree" else 784,  # a model of the tree's copies
    lambda run: dtoh_measured(questions.SimulationRun(run.method, 100, 3)),  # always the notebook's problem
    lambda run: dtoh_measured(run) + 8,
], ids=["pasted", "modelled", "always_the_same_problem", "off_by_a_copy"])
def test_q2_transfers_not_measured_on_the_run_given_score_nothing_and_cap_the_question(measured, dtoh_bytes):
    result = _q2(measured, dtoh_bytes=dtoh_bytes)
    said = failures(result)
    assert result.points <= 2 and ("record() measures" in said or "never ran the run it was given" in said or
                                   "not a measurement" in said), said


def test_q2_a_missing_measurement_is_named(measured):
    result = _q2(measured, dtoh_bytes=None)
    assert result.points <= 2 and "the part `dtoh_bytes`" in failures(result), failures(result)


def test_q2_measurements_are_compared_with_the_graders_own_at_drawn_sizes(measured):
    """The student's kernel is measured at sizes drawn at grading time: another seed, other sizes."""
    sizes = [questions._measure_configs(np.random.default_rng(seed), {}) for seed in (7, 8)]
    assert sizes[0] != sizes[1] and all(n % questions.MEASURE_BLOCK for pair in sizes for (n,) in pair)
    # a wasteful kernel measured honestly keeps the points of the measurement (its prediction is the model's)
    assert _q2(measured, make_compact_kernel=subs.make_recount).points == 4
    # numbers that are not the measurement of the kernel given lose them
    # numbers that are not the measurement of the kernel given score 0 for it, and the question at most half
    result = _q2(measured, measure_load_bytes=measure_with(extra=64))
    assert result.points == 2 and "the course's profiler measures" in failures(result)
    result = _q2(measured, measure_load_bytes=measure_with(subs.make_recount))
    assert result.points == 2
    result = _q2(measured, measure_load_bytes=measure_with(subs.make_solution))  # the own kernel, whatever is given
    assert result.points == 2 and "one of its own kernels" in failures(result)


@pytest.mark.parametrize("measure", [
    lambda make_kernel, n: questions.predicted_load_bytes(n, int(profiling.measure_case(n)["flags"].sum())),
    lambda make_kernel, n: {131: 908, 197: 1564}.get(n, 6 * n),  # numbers pasted from a run
], ids=["prediction", "pasted"])
def test_q2_a_measurement_that_does_not_run_the_kernel_it_is_given_fails(measured, measure):
    result = _q2(measured, measure_load_bytes=measure)
    said = failures(result)  # a function reaching the course's questions or model is refused before it runs
    assert result.points == 2 and ("the course's profiler measures" in said or "not a measurement" in said), said


def test_q2_the_decoys_load_other_amounts_than_the_model():
    measure, n = measure_with(), 151
    model = questions.predicted_load_bytes(n, int(profiling.measure_case(n)["flags"].sum()))
    assert measure(subs.make_solution, n) == model
    loads = [measure(decoy, n) for decoy in questions.MEASURE_DECOYS.values()]
    assert all(abs(x - model) > 0.1 * model for x in loads) and abs(loads[0] - loads[1]) > 0.1 * model


def test_q2_prediction_is_the_cost_model():
    assert questions.predicted_load_bytes(197, 97) == 4 * 197 + 8 * 97
    data = profiling.measure_case(197)
    from course_lib.grading.authoring.harness import Answer, profile_launch

    metrics = profile_launch(questions.launch_compact(Answer(subs.make_solution, {}, lambda f, b: f(b)), data))
    assert metrics["metrics"]["global_load_bytes"] == questions.predicted_load_bytes(197, int(data["flags"].sum()))


@pytest.mark.parametrize("answer", [subs.levels_solution, subs.levels_capped_grid])
def test_q3_the_host_loop_keeping_totals_on_the_device_with_a_device_grid_gets_full_marks(answer):
    result = grade("ps7.q3", answer)
    assert result.points == 4, failures(result)


@pytest.mark.parametrize("answer, measured", [(subs.levels_copy_per_level, "copies between host and device"),
                                              (subs.levels_allocating_per_level, "device allocations"),
                                              (subs.levels_capacity_grid, "a grid sized for the capacity"),
                                              (subs.levels_one_block, "most of them would stay idle")])
def test_q3_a_loop_that_copies_allocates_or_sizes_its_grid_badly_is_capped_at_half(answer, measured):
    result = grade("ps7.q3", answer)
    assert result.points == 2 and measured in failures(result), failures(result)


def test_q3_never_swapping_the_buffers_passes_only_the_one_level_case():
    result = grade("ps7.q3", subs.levels_no_swap)
    assert result.points == 1 and "expected [40, 80, 159" in failures(result), failures(result)


def test_q3_the_grid_bounds_follow_the_device_and_a_capacity_grid_exceeds_them():
    assert questions.device_grid_bounds(1, 128) == (8, 32)  # 16 blocks of 128 threads fill an SM's 2048
    assert questions.device_grid_bounds(3, 32) == (48, 192)  # at most 32 blocks per SM
    data = questions.grid_runs(np.random.default_rng(7), {})
    small, big, several = data["runs"]
    for run in (big, several):  # the capacity-sized grid of the daughters passes the bound
        assert -(-2 * run["capacity"] // run["block"]) > questions.device_grid_bounds(run["sm_count"], run["block"])[1]
    assert small["sm_count"] == big["sm_count"] == 1 and several["sm_count"] in (2, 3)
    assert small["capacity"] < big["capacity"] and small["phis"] is big["phis"]


def test_q3_the_reference_divides_every_cell_and_drops_the_dim_daughters():
    totals, final = questions.levels_reference(np.array([100.0, 12.0]), 2, 10.0)
    # 12 gives 4.5 and 7.5 (both dropped); 100 gives 37.5 and 62.5, then 14.06, 23.44, 23.44 and 39.06
    assert totals.tolist() == [2, 2, 4]
    assert final.tolist() == sorted([37.5 * 0.375, 37.5 * 0.625, 62.5 * 0.375, 62.5 * 0.625])
