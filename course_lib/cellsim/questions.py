"""Problem set 7 (``solutions/ps7_cellsim.ipynb``), on the shared harness (:mod:`course_lib.grading.harness`).

- ``ps7.q1`` (6 points): **compact the recorded cells**. The lesson's scatter kernel writes
  two daughters per dividing cell at positions from a prefix sum; here the student writes
  the adjacent step: one output per recorded cell. Answer: ``check("ps7.q1",
  compact_recorded_kernel)``, a kernel ``(flags, offsets, phis, types, out_phis, out_types)``
  launched as ``kernel[ceil(n / 32), 32]``, with ``offsets`` the exclusive prefix sum of
  ``flags``. Graded on results (guarded buffers), the race checker, and the profiler: each
  cell's data loaded once (the position comes from the prefix sum, not from recounting).
- ``ps7.q2`` (4 points): **memory per level and when to batch**: a formula for the bytes of
  the fixed-slot tree, the first level that breaks a budget, and two transfers measured with
  ``course_lib.sim.record``.
"""

from __future__ import annotations

import numpy as np

from ..grading.harness import (Launch, calls_test, function, integer, kernel, question, race_test, result_test,
                               technique_test, value_test)
from .model import TREE_SLOT_BYTES

PROBLEM_SET = "ps7"
BLOCK = 32

# The run measured in q2 (small: it runs in the simulator in a few seconds).
Q2_RUN = {"n_cells": 100, "hist_seed": 3, "median": 300.0, "tau_max": 200.0, "phi_min": 11.0, "seed": 5}
Q2_BUDGET = 8000
Q2_BLOCK = 32
#: What record() measures for the q2 runs (the same on every backend: the block size is fixed);
#: tests/cellsim/test_questions.py measures them again. Constants, so that no judge runs kernels
#: in the grader, whose threads grade several submissions at once.
Q2_TREE_DTOH_BYTES = 406_400
Q2_COMPACT_DTOH_BYTES = 1_192


# ----------------------------------------------------------------------------- q1
def cells_case(n, p_recorded, seed):
    """``inputs`` data: n cells, each recorded with probability p, and the exclusive prefix sum of the flags."""
    rng = np.random.default_rng(seed)
    flags = (rng.random(n) < p_recorded).astype(np.int32)
    offsets = (np.cumsum(flags) - flags).astype(np.int32)
    phis = np.round(rng.uniform(11.0, 2000.0, n), 3)
    types = rng.integers(0, 3, n).astype(np.int32)
    return {"flags": flags, "offsets": offsets, "phis": phis, "types": types}


def case(n, p):
    return lambda rng, info: cells_case(n, p, int(rng.integers(1 << 30)))


def random_case(rng, info):
    return cells_case(int(rng.integers(2, 300)), float(rng.uniform(0.2, 0.8)), int(rng.integers(1 << 30)))


def launch_compact(answer, data):
    """ceil(n / 32) blocks of 32 threads; the outputs start as NaN / -1 so unwritten slots show."""
    flags = np.asarray(data["flags"], np.int32)
    total = int(flags.sum())
    args = {"flags": flags, "offsets": np.asarray(data["offsets"], np.int32),
            "phis": np.asarray(data["phis"], np.float64), "types": np.asarray(data["types"], np.int32),
            "out_phis": np.full(total, np.nan), "out_types": np.full(total, -1, np.int32)}
    return Launch(answer.kernel(), max(1, -(-flags.size // BLOCK)), BLOCK, args, outputs=("out_phis", "out_types"))


def expected_compact(data):
    keep = np.asarray(data["flags"]) == 1
    return {"out_phis": np.asarray(data["phis"], np.float64)[keep],
            "out_types": np.asarray(data["types"], np.int32)[keep]}


def bytes_per_cell(metrics, data):
    """Global bytes the threads load per cell (the profiler's count of what the code asks for)."""
    return metrics["global_load_bytes"] / max(1, len(data["flags"]))


def one_pass(data):
    """Each cell's flag (4 bytes), and for a recorded cell its offset (read once or twice: up to 8 bytes),
    fluorescence (8) and type (4); 25% slack."""
    flags = np.asarray(data["flags"])
    return 0.0, 1.25 * (4 * flags.size + 24 * int(flags.sum())) / flags.size


def _label(data):
    flags = np.asarray(data["flags"])
    return f"for n = {flags.size} cells, {int(flags.sum())} recorded"


_Q1 = dict(launch=launch_compact, expect=expected_compact, label=_label)

Q1 = question(
    "ps7.q1", "compacting the recorded cells with a prefix sum", 6, answer=kernel("compact_recorded_kernel"),
    tolerance="exact (values are copied, not computed)",
    hints={"bounds": "guard i < n (the last block is partly idle) and write only where flags[i] == 1: "
                     "out_phis has one slot per recorded cell",
           "unwritten": "every recorded cell i goes to out_phis[offsets[i]] and out_types[offsets[i]]",
           "value": "offsets is the exclusive prefix sum: cell i's slot is offsets[i], not offsets[i] - 1 or "
                    "offsets[i] + 1; copy phis[i] and types[i] of the same cell",
           "technique": "take the position from offsets[i]: counting the flags before i gives the same slot but "
                        "makes every thread read up to n flags (quadratic work); the prefix sum did that count once"},
    tests=[
        result_test("n = 1, not recorded (no points: a kernel doing nothing passes)", 0, inputs=case(1, 0.0), **_Q1),
        result_test("n = 31 (one block, the last thread idle)", 1, inputs=case(31, 0.5), **_Q1),
        result_test("n = 33 (a second block with one cell)", 1, inputs=case(33, 0.5), **_Q1),
        result_test("every cell recorded (n = 70)", 0.5, inputs=case(70, 1.0), **_Q1),
        result_test("no cell recorded (n = 40): nothing may be written", 0.5, inputs=case(40, 0.0), **_Q1),
        result_test("hidden: random n and share of recorded cells", 1, hidden=True, inputs=random_case, **_Q1),
        race_test("race and bounds check (n = 77)", 0.5, inputs=case(77, 0.4), launch=launch_compact,
                  expect=expected_compact),
        technique_test("positions read from the prefix sum: each cell loaded once (profiler)", 1.5,
                       inputs=case(77, 0.4), launch=launch_compact, expect=expected_compact, measure=bytes_per_cell,
                       limit=one_pass, unit="bytes loaded per cell",
                       technique="each recorded cell written at offsets[i], the exclusive prefix sum of the flags "
                                 "(no counting of the flags before i)"),
    ])


# ----------------------------------------------------------------------------- q2
def tree_step_bytes(n_initial, level):
    """The model: going from level g to g + 1 the tree holds L 2**g + L 2**(g + 1) slots of 24 bytes."""
    return 3 * n_initial * 2**level * TREE_SLOT_BYTES


def first_level_over(n_initial, budget):
    """The first level g whose step to g + 1 needs more than ``budget`` bytes."""
    level = 0
    while tree_step_bytes(n_initial, level) <= budget:
        level += 1
    return level


def _q2_inputs():
    from .data import THESIS_TYPES, lognormal_histogram

    h0 = lognormal_histogram(Q2_RUN["n_cells"], seed=Q2_RUN["hist_seed"], median=Q2_RUN["median"])
    return h0, THESIS_TYPES, {"tau_max": Q2_RUN["tau_max"], "phi_min": Q2_RUN["phi_min"], "seed": Q2_RUN["seed"]}


def measured_dtoh_bytes(method, memory_budget=None):
    """Bytes copied device -> host by the q2 run with ``method``, measured with ``record()``."""
    from ..sim import record
    from .api import simulate

    h0, types, kwargs = _q2_inputs()
    options = {} if memory_budget is None else {"memory_budget": memory_budget, "block": Q2_BLOCK}
    with record() as log:
        simulate(h0, types, method=method, **options, **kwargs)
    return log.summary()["DtoH_bytes"]


def _pairs(rng, info):
    return [(1, 0), (1000, 3), (50_000, 10), (7, 1), (int(rng.integers(1, 10**6)), int(rng.integers(0, 12)))]


def _budgets(rng, info):
    return [(1_000_000, 10**9), (50_000, 4 * 10**9), (1, 100), (100, 71), (int(rng.integers(1, 10**6)), 10**8)]


Q2 = question(
    "ps7.q2", "memory per level and when to batch", 4,
    answer={"tree_step_bytes": function("tree_step_bytes"), "first_level_over": function("first_level_over"),
            "tree_dtoh_bytes": integer("tree_dtoh_bytes", minimum=0),
            "compact_dtoh_bytes": integer("compact_dtoh_bytes", minimum=0)},
    tolerance="exact integers",
    hints={"value": "a slot of the tree is 24 bytes (state int32, fluorescence and birth time float64, type "
                    "int32); level g has L * 2**g slots and the step to g + 1 needs both levels"},
    tests=[
        calls_test("bytes of the tree while level g makes level g + 1", 1, key="tree_step_bytes", args=_pairs,
                   expect=tree_step_bytes,
                   explain=lambda a, want: "count both levels: L 2**g slots read, 2 L 2**g slots written"),
        calls_test("the first level that does not fit a budget", 1, key="first_level_over", args=_budgets,
                   expect=first_level_over,
                   explain=lambda a, want: "the smallest g whose step (levels g and g + 1) needs more than the "
                                           "budget"),
        value_test("device-to-host bytes of the tree run (measured with record)", 1, key="tree_dtoh_bytes",
                   expect=lambda info: Q2_TREE_DTOH_BYTES,
                   explain=lambda got, want: "run the simulation given in the question inside "
                                             "`with record() as log:` and read log.summary()['DtoH_bytes']"),
        value_test(f"device-to-host bytes of the compact run, budget {Q2_BUDGET} (measured with record)", 1,
                   key="compact_dtoh_bytes", expect=lambda info: Q2_COMPACT_DTOH_BYTES,
                   explain=lambda got, want: "method='compact' with memory_budget=Q2_BUDGET and block=32, inside "
                                             "record()"),
    ])

QUESTIONS = (Q1, Q2)
