"""Does ps6.q2 grade its two decisions rather than one solution?

Parts 1 and 2, written from the problem statement: ``smallest_batch(method, n_samples, max_launches)``, the smallest
minibatch size whose step launches at most a budget, and ``register_budget(threads_per_block, shared_bytes_per_block,
warps_wanted, limits)``, the most registers per thread that still reach a warp target. Right answers written
differently (every B tried, runs of equal minibatch counts, NumPy, a bisection where it is valid, every register
count tried with one's own forward rule) get every point of their part on every grading seed; typical mistakes
lose points, on the visible cases or on the hidden ones drawn over the whole range; an answer that reaches the
course's model is refused and caps the question. Only these parts' tests run here (the measurement of part 3 is
graded in test_questions.py).
"""

import dataclasses
import math

import numpy as np
import pytest

from course_lib.grading import get_question, run_tests

PER_MINIBATCH = {"blas": lambda b: b + 5, "custom": lambda b: 6, "fused": lambda b: 2}
BATCH_TESTS = ("the smallest batch size within a launch budget, for each method",
               "hidden: batch sizes for methods, sample counts and budgets drawn at grading time")
REGISTER_TESTS = ("the most registers per thread that still reach a warp target",
                  "hidden: register caps for blocks, shared memory, warp targets and SM limits drawn at grading time")


def _parts():
    """ps6.q2 with the tests of parts 1 and 2 only (their points: 1 and 1.5)."""
    q2 = get_question("ps6.q2")
    tests = [t for t in q2.tests if t.name in BATCH_TESTS + REGISTER_TESTS]
    return dataclasses.replace(q2, tests=tests, points=sum(t.points for t in tests))


def grade(seed, smallest_batch=None, register_budget=None):
    answer = {"smallest_batch": smallest_batch or solution_batch, "register_budget": register_budget or solution_regs}
    return run_tests(_parts(), answer, hidden=True, seed=seed)


def earned(result, names):
    return sum(o.points for o in result.outcomes if o.name in names)


def failures(result):
    return " | ".join(" ".join(o.message.split()) for o in result.outcomes if not o.passed)


# ----------------------------------------------------------------------------- part 1: right, written differently
def solution_batch(method, n_samples, max_launches):
    """A closed form for a fixed count per minibatch; every B for the drop-in method."""
    if method != "blas":
        allowed = max_launches // (6 if method == "custom" else 2)
        batch = n_samples // (allowed + 1) + 1
        return batch if batch <= n_samples else 0
    return next((b for b in range(1, n_samples + 1) if (n_samples // b) * (b + 5) <= max_launches), 0)


def every_batch_tried(method, n_samples, max_launches):
    per = PER_MINIBATCH[method]
    for batch in range(1, n_samples + 1):
        if n_samples // batch * per(batch) <= max_launches:
            return batch
    return 0


def runs_of_equal_minibatch_counts(method, n_samples, max_launches):
    """For each count m of minibatches, the smallest B giving it; the first that fits."""
    per = PER_MINIBATCH[method]
    for minibatches in range(n_samples, 0, -1):
        batch = n_samples // (minibatches + 1) + 1
        if batch > n_samples // minibatches:
            continue  # no B gives exactly m minibatches
        if minibatches * per(batch) <= max_launches:
            return batch
    return 0


def with_numpy(method, n_samples, max_launches):
    batches = np.arange(1, n_samples + 1)
    launches = (n_samples // batches) * (batches + 5 if method == "blas" else {"custom": 6, "fused": 2}[method])
    fits = np.flatnonzero(launches <= max_launches)
    return int(batches[fits[0]]) if fits.size else 0


def float_closed_form_and_a_smarter_scan(method, n_samples, max_launches):
    """math.floor of a float division; for the drop-in method, no B below the one that gives floor(L / (B + 5))
    minibatches can fit, so the scan starts at the smallest B whose minibatches times B + 5 could."""
    if method in ("custom", "fused"):
        most = math.floor(max_launches / {"custom": 6, "fused": 2}[method])
        if most >= n_samples:
            return 1
        smallest = math.floor(n_samples / (most + 1)) + 1
        return smallest if smallest <= n_samples else 0
    batch = 1
    while batch <= n_samples:
        count = n_samples // batch
        if count * (batch + 5) <= max_launches:
            return batch
        batch += 1
    return 0


RIGHT_BATCH = [every_batch_tried, runs_of_equal_minibatch_counts, with_numpy, float_closed_form_and_a_smarter_scan]


# ----------------------------------------------------------------------------- part 1: wrong
def bisection(method, n_samples, max_launches):
    """Assumes the launches fall as B grows: wrong for the drop-in method (one minibatch of N / 2 + 1 samples
    launches fewer than two of N / 3)."""
    per = PER_MINIBATCH[method]
    low, high = 1, n_samples
    if n_samples // high * per(high) > max_launches:
        return 0
    while low < high:
        mid = (low + high) // 2
        if n_samples // mid * per(mid) <= max_launches:
            high = mid
        else:
            low = mid + 1
    return low


def ceil_minibatches(method, n_samples, max_launches):
    """Counts the last, partial minibatch too (ceil(N / B)): the lesson's steps leave it out."""
    per = PER_MINIBATCH[method]
    return next((b for b in range(1, n_samples + 1) if -(-n_samples // b) * per(b) <= max_launches), 0)


def drop_in_without_the_five(method, n_samples, max_launches):
    """The drop-in method's minibatch as B launches (its GEMVs), forgetting the other five."""
    per = {"blas": lambda b: b, "custom": lambda b: 6, "fused": lambda b: 2}[method]
    return next((b for b in range(1, n_samples + 1) if n_samples // b * per(b) <= max_launches), 0)


def n_samples_when_none_fits(method, n_samples, max_launches):
    """The largest B instead of 0 when the budget is too small for every B."""
    return solution_batch(method, n_samples, max_launches) or n_samples


def one_minibatch_more(method, n_samples, max_launches):
    """The closed form off by one: the smallest B with floor(N / B) <= allowed taken as N // allowed."""
    if method == "blas":
        return solution_batch(method, n_samples, max_launches)
    allowed = max_launches // (6 if method == "custom" else 2)
    return max(1, n_samples // allowed) if allowed else 0


VISIBLE_BATCHES = {("fused", 180_000, 1474): 244, ("custom", 180_000, 4422): 244, ("blas", 180_000, 95_000): 90_001,
                   ("blas", 100, 80): 34, ("custom", 1000, 59): 101, ("fused", 1000, 2000): 1, ("fused", 1000, 1): 0,
                   ("blas", 1000, 505): 0, ("blas", 7, 12): 4}


def the_visible_cases_pasted(method, n_samples, max_launches):
    """Right on every case check() shows, a guess elsewhere: only the hidden cases tell."""
    return VISIBLE_BATCHES.get((method, n_samples, max_launches), max(1, n_samples // 100))


WRONG_BATCH = [bisection, ceil_minibatches, drop_in_without_the_five, n_samples_when_none_fits, one_minibatch_more,
               the_visible_cases_pasted]


# ----------------------------------------------------------------------------- part 2: right, written differently
def solution_regs(threads_per_block, shared_bytes_per_block, warps_wanted, limits):
    warps = -(-threads_per_block // 32)
    blocks = -(-warps_wanted // warps)
    unit = limits["shared_unit"]
    shared = -(-(shared_bytes_per_block + limits["shared_reserved"]) // unit) * unit
    by_shared = limits["shared_bytes"] // shared if shared else limits["max_blocks"]
    if blocks > min(limits["max_blocks"], limits["max_warps"] // warps, by_shared):
        return 0
    per_warp = limits["registers"] // (blocks * warps)
    per_warp -= per_warp % limits["register_unit"]
    return min(per_warp // 32, limits["max_thread_registers"])


def _resident_warps(threads, registers, shared_bytes, limits):
    """One's own forward rule: the warps an SM holds."""
    warps = math.ceil(threads / 32)
    per_warp = math.ceil(registers * 32 / limits["register_unit"]) * limits["register_unit"]
    shared = math.ceil((shared_bytes + limits["shared_reserved"]) / limits["shared_unit"]) * limits["shared_unit"]
    blocks = min(limits["max_blocks"], limits["max_warps"] // warps, limits["registers"] // (per_warp * warps),
                 limits["shared_bytes"] // shared if shared else limits["max_blocks"])
    return blocks * warps


def every_register_count_tried(threads_per_block, shared_bytes_per_block, warps_wanted, limits):
    for registers in range(limits["max_thread_registers"], 0, -1):
        if _resident_warps(threads_per_block, registers, shared_bytes_per_block, limits) >= warps_wanted:
            return registers
    return 0


def bisection_on_registers(threads_per_block, shared_bytes_per_block, warps_wanted, limits):
    """Valid here: the warps an SM holds never grow with the registers."""
    def fits(registers):
        return _resident_warps(threads_per_block, registers, shared_bytes_per_block, limits) >= warps_wanted

    if not fits(1):
        return 0
    low, high = 1, limits["max_thread_registers"]
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if fits(mid) else (low, mid - 1)
    return low


def closed_form_in_floats(threads_per_block, shared_bytes_per_block, warps_wanted, limits):
    """The closed form with math.ceil and a divisibility test, the shared memory's blocks first."""
    warps = math.ceil(threads_per_block / 32)
    need = math.ceil(warps_wanted / warps)
    reserved = shared_bytes_per_block + limits["shared_reserved"]
    if reserved:
        rounded = math.ceil(reserved / limits["shared_unit"]) * limits["shared_unit"]
        if limits["shared_bytes"] // rounded < need:
            return 0
    if need > limits["max_blocks"] or need * warps > limits["max_warps"]:
        return 0
    registers_per_warp = limits["registers"] // (need * warps) // limits["register_unit"] * limits["register_unit"]
    return min(limits["max_thread_registers"], registers_per_warp // 32)


RIGHT_REGS = [every_register_count_tried, bisection_on_registers, closed_form_in_floats]


# ----------------------------------------------------------------------------- part 2: wrong
def _variant(**changes):
    """The solution's rule with one limit or rounding changed."""
    def register_budget(threads_per_block, shared_bytes_per_block, warps_wanted, limits):
        warps = changes.get("warps", lambda t: -(-t // 32))(threads_per_block)
        blocks = changes.get("blocks", lambda w, per: -(-w // per))(warps_wanted, warps)
        unit = limits["shared_unit"]
        reserved = 0 if changes.get("no_reserved") else limits["shared_reserved"]
        shared = -(-(shared_bytes_per_block + reserved) // unit) * unit
        by_shared = limits["shared_bytes"] // shared if shared else limits["max_blocks"]
        room = [limits["max_warps"] // max(warps, 1), by_shared]
        if not changes.get("no_block_limit"):
            room.append(limits["max_blocks"])
        if blocks > min(room) and not changes.get("never_zero"):
            return 0
        per_warp = limits["registers"] // (max(blocks, 1) * max(warps, 1))
        if not changes.get("no_unit"):
            per_warp -= per_warp % limits["register_unit"]
        cap = 10**9 if changes.get("no_thread_cap") else limits["max_thread_registers"]
        return min(per_warp // 32, cap)

    return register_budget


WRONG_REGS = {
    "no_block_limit": _variant(no_block_limit=True),
    "registers_not_rounded_to_their_unit": _variant(no_unit=True),
    "no_per_thread_maximum": _variant(no_thread_cap=True),
    "threads_not_rounded_up_to_warps": _variant(warps=lambda t: t // 32),
    "shared_reserved_forgotten": _variant(no_reserved=True),
    "never_zero_when_another_limit_stops_it": _variant(never_zero=True),
    "blocks_rounded_down": _variant(blocks=lambda w, per: w // per),
}


# ----------------------------------------------------------------------------- tests
@pytest.mark.parametrize("seed", [11, 12])
@pytest.mark.parametrize("answer", RIGHT_BATCH, ids=lambda f: f.__name__)
def test_a_batch_size_written_differently_earns_every_point(answer, seed):
    result = grade(seed, smallest_batch=answer)
    assert earned(result, BATCH_TESTS) == 1 and result.points == 2.5, failures(result)


@pytest.mark.parametrize("seed", [11, 12])
@pytest.mark.parametrize("answer", WRONG_BATCH, ids=lambda f: f.__name__)
def test_a_wrong_batch_size_loses_points(answer, seed):
    result = grade(seed, smallest_batch=answer)
    assert earned(result, BATCH_TESTS) < 1 and earned(result, REGISTER_TESTS) == 1.5, failures(result)


def test_only_the_hidden_cases_catch_an_answer_pasted_from_the_visible_ones():
    for seed in (11, 12, 13):
        by_name = {o.name: o.passed for o in grade(seed, smallest_batch=the_visible_cases_pasted).outcomes}
        assert by_name[BATCH_TESTS[0]] and not by_name[BATCH_TESTS[1]]


@pytest.mark.parametrize("seed", [11, 12])
@pytest.mark.parametrize("answer", RIGHT_REGS, ids=lambda f: f.__name__)
def test_a_register_cap_written_differently_earns_every_point(answer, seed):
    result = grade(seed, register_budget=answer)
    assert earned(result, REGISTER_TESTS) == 1.5 and result.points == 2.5, failures(result)


@pytest.mark.parametrize("seed", [11, 12])
@pytest.mark.parametrize("name", WRONG_REGS)
def test_a_wrong_register_cap_loses_points(name, seed):
    result = grade(seed, register_budget=WRONG_REGS[name])
    assert earned(result, REGISTER_TESTS) < 1.5 and earned(result, BATCH_TESTS) == 1, failures(result)


def test_a_wrong_value_is_explained_after_the_student_code_ran():
    result = grade(11, register_budget=WRONG_REGS["no_block_limit"])
    said = failures(result)
    assert "register_budget(32, 2048, 9, " in said and "expected 0" in said and "the block, warp or shared-memory limit" in said


def smallest_batch_from_the_course_model(method, n_samples, max_launches):
    """The course's model, imported inside the function (not at the top of the cell)."""
    from course_lib.ica.model import launches_per_step

    return next((b for b in range(1, n_samples + 1) if launches_per_step(method, n_samples, b) <= max_launches), 0)


def register_budget_from_the_course_model(threads_per_block, shared_bytes_per_block, warps_wanted, limits):
    from course_lib.ica import model

    arch = model.Arch("given", **{k: v for k, v in limits.items() if k != "max_thread_registers"})
    return next((r for r in range(limits["max_thread_registers"], 0, -1)
                 if model.occupancy(threads_per_block, r, shared_bytes_per_block, arch)["warps_per_sm"]
                 >= warps_wanted), 0)


def smallest_batch_from_the_graders_key(method, n_samples, max_launches):
    """The grader's own key, which a student can import but not hand in."""
    from course_lib.ica._questions_q2 import smallest_batch_key

    return smallest_batch_key(method, n_samples, max_launches)


@pytest.mark.parametrize("replaced", [{"smallest_batch": smallest_batch_from_the_course_model},
                                      {"register_budget": register_budget_from_the_course_model},
                                      {"smallest_batch": smallest_batch_from_the_graders_key}],
                         ids=["smallest_batch", "register_budget", "the_graders_key"])
def test_the_course_model_or_key_imported_inside_a_function_is_refused_and_caps_the_question_at_half(replaced):
    result = grade(11, **replaced)
    assert result.points <= 2.5 / 2 and "course's own" in failures(result), str(result)
