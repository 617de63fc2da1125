"""Problem set 2: right answers get full marks, typical wrong ones partial or 0 with a reason."""

from pathlib import Path

import numpy as np
import pytest
from numba import cuda, float32, int32

from course_lib import device, spmv
from course_lib.grading import TestFailure, get_question, run_tests
from course_lib.spmv import kernels

ROOT = Path(__file__).resolve().parents[2]
BLOCK = 16


@cuda.jit
def csr_row_kernel(indptr, indices, data, x, y):
    """Correct, written differently: a while loop and float32 accumulator."""
    row = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < y.size:
        k = indptr[row]
        total = float32(0.0)
        while k < indptr[row + 1]:
            total += data[k] * x[indices[k]]
            k += 1
        y[row] = total


@cuda.jit
def csr_off_by_one_kernel(indptr, indices, data, x, y):
    """Wrong: drops the last entry of every row."""
    row = cuda.grid(1)
    if row < y.size:
        total = float32(0.0)
        for k in range(indptr[row], indptr[row + 1] - 1):
            total += data[k] * x[indices[k]]
        y[row] = total


@cuda.jit
def csr_unguarded_kernel(indptr, indices, data, x, y):
    """Wrong: no guard for threads past the last row."""
    row = cuda.grid(1)
    total = float32(0.0)
    for k in range(indptr[row], indptr[row + 1]):
        total += data[k] * x[indices[k]]
    y[row] = total


@cuda.jit
def csr_writes_past_the_end_kernel(indptr, indices, data, x, y):
    """Wrong: reads stay in bounds (rows clamped), but threads past the last row still write y[row]."""
    row = cuda.grid(1)
    clamped = min(row, y.size - 1)
    total = float32(0.0)
    for k in range(indptr[clamped], indptr[clamped + 1]):
        total += data[k] * x[indices[k]]
    y[row] = total


@cuda.jit
def coo_atomics_only_kernel(rows, cols, data, x, y):
    """Right values, but no segmented reduction: one atomic add per non-zero."""
    k = cuda.grid(1)
    if k < data.size:
        cuda.atomic.add(y, rows[k], data[k] * x[cols[k]])


@cuda.jit
def coo_scan_kernel(rows, cols, data, x, y):
    """Correct: Hillis-Steele segmented scan, atomics at the end of each run."""
    vals = cuda.shared.array(BLOCK, float32)
    keys = cuda.shared.array(BLOCK, int32)
    t = cuda.threadIdx.x
    k = cuda.blockIdx.x * BLOCK + t
    if k < data.size:
        vals[t] = data[k] * x[cols[k]]
        keys[t] = rows[k]
    else:
        vals[t] = 0.0
        keys[t] = -1
    cuda.syncthreads()
    step = 1
    while step < BLOCK:
        add = float32(0.0)
        if t >= step and keys[t - step] == keys[t]:
            add = vals[t - step]
        cuda.syncthreads()
        vals[t] += add
        cuda.syncthreads()
        step *= 2
    if keys[t] >= 0 and (t == BLOCK - 1 or keys[t + 1] != keys[t]):
        cuda.atomic.add(y, keys[t], vals[t])


@cuda.jit
def coo_plain_store_kernel(rows, cols, data, x, y):
    """Wrong: stores the run's sum instead of adding it (rows crossing blocks lose a part)."""
    vals = cuda.shared.array(BLOCK, float32)
    keys = cuda.shared.array(BLOCK, int32)
    t = cuda.threadIdx.x
    k = cuda.blockIdx.x * BLOCK + t
    if k < data.size:
        vals[t] = data[k] * x[cols[k]]
        keys[t] = rows[k]
    else:
        vals[t] = 0.0
        keys[t] = -1
    cuda.syncthreads()
    step = 1
    while step < BLOCK:
        add = float32(0.0)
        if t >= step and keys[t - step] == keys[t]:
            add = vals[t - step]
        cuda.syncthreads()
        vals[t] += add
        cuda.syncthreads()
        step *= 2
    if keys[t] >= 0 and (t == BLOCK - 1 or keys[t + 1] != keys[t]):
        y[keys[t]] = vals[t]


@cuda.jit
def coo_missing_barrier_kernel(rows, cols, data, x, y):
    """Wrong: reads the neighbour and writes in the same barrier interval (a race)."""
    vals = cuda.shared.array(BLOCK, float32)
    keys = cuda.shared.array(BLOCK, int32)
    t = cuda.threadIdx.x
    k = cuda.blockIdx.x * BLOCK + t
    if k < data.size:
        vals[t] = data[k] * x[cols[k]]
        keys[t] = rows[k]
    else:
        vals[t] = 0.0
        keys[t] = -1
    cuda.syncthreads()
    step = 1
    while step < BLOCK:
        if t >= step and keys[t - step] == keys[t]:
            vals[t] += vals[t - step]
        cuda.syncthreads()
        step *= 2
    if keys[t] >= 0 and (t == BLOCK - 1 or keys[t + 1] != keys[t]):
        cuda.atomic.add(y, keys[t], vals[t])


def grade(question_id, answer, **options):
    return run_tests(get_question(question_id), answer, hidden=True, seed=7, options=options)


def test_correct_csr_kernel_gets_full_marks():
    result = grade("ps2.q1", csr_row_kernel)
    assert result.passed and result.points == 4, str(result)


def test_off_by_one_csr_kernel_gets_zero_with_a_helpful_message():
    result = grade("ps2.q1", csr_off_by_one_kernel)
    assert result.points < 1, str(result)
    first = next(o for o in result.outcomes if not o.passed)
    assert "values are wrong" in first.message and "indptr[row + 1] (excluded)" in first.message


def test_unguarded_csr_kernel_fails_the_awkward_sizes():
    # 1 x 1 launched with a block of 32: threads past the row read indptr out of bounds (an IndexError in
    # the simulator, garbage on a GPU) and write y past its end (into the guard on a GPU).
    result = grade("ps2.q1", csr_unguarded_kernel)
    assert 0 <= result.points < 4, str(result)
    assert result.outcomes[0].passed is False


def test_writes_past_the_end_of_y_fail_on_both_backends():
    result = grade("ps2.q1", csr_writes_past_the_end_kernel)
    assert result.points < 4 and not result.outcomes[0].passed, str(result)
    if device.is_gpu():  # the simulator raises IndexError at the write itself
        assert "wrote past the end of y" in result.outcomes[0].message


def test_judge_sees_a_write_into_the_guard():
    test = get_question("ps2.q1").tests[1]
    data = test.inputs(np.random.default_rng(0), {})
    n_rows = data["shape"][0]
    good = np.concatenate([spmv.spmv_reference(spmv.as_csr(_csr_of(data)), data["x"]).astype(np.float32),
                           np.full(data["block"], np.nan, np.float32)])
    test.judge(data, good, {})
    bad = good.copy()
    bad[n_rows + 3] = 0.0
    with pytest.raises(TestFailure, match=f"wrote past the end of y: index {n_rows + 3}"):
        test.judge(data, bad, {})


def _csr_of(data):
    import scipy.sparse as sp

    return sp.csr_matrix((data["data"], data["indices"], data["indptr"]), shape=tuple(data["shape"]))


def test_reference_kernels_are_rejected():
    assert "course's own reference kernel" in grade("ps2.q1", kernels.csr_scalar_kernel).error
    result = grade("ps2.q2", kernels.coo_segmented_kernel(BLOCK), block=BLOCK)
    assert result.points == 0 and "course's own reference kernel" in result.error


def test_correct_coo_kernel_gets_full_marks():
    result = grade("ps2.q2", coo_scan_kernel, block=BLOCK)
    assert result.passed and result.points == 4, str(result)


def test_plain_store_coo_kernel_loses_points_with_a_hint_about_atomics():
    result = grade("ps2.q2", coo_plain_store_kernel, block=BLOCK)
    assert 0 < result.points < 4, str(result)
    failed = [o for o in result.outcomes if not o.passed]
    assert any("rows longer than two blocks" in o.name for o in failed)
    assert "cuda.atomic.add" in failed[0].message


@pytest.mark.skipif(device.is_gpu(), reason="the race checker runs in the simulator")
def test_missing_barrier_is_caught_by_the_hidden_race_check():
    result = grade("ps2.q2", coo_missing_barrier_kernel, block=BLOCK)
    race = next(o for o in result.outcomes if "race" in o.name)
    assert not race.passed and "barrier" in race.message
    assert result.points < 4


@pytest.mark.skipif(device.is_gpu(), reason="the profiler counts atomics in the simulator")
def test_atomics_only_coo_kernel_fails_the_hidden_atomic_count():
    result = grade("ps2.q2", coo_atomics_only_kernel, block=BLOCK)
    failed = [o for o in result.outcomes if not o.passed]
    assert [o.name for o in failed] == ["hidden: one atomic per row segment, not per non-zero"], str(result)
    assert result.points < 4 and "atomic add per non-zero is not a segmented reduction" in failed[0].message
    # The message gives ratios only (nothing of the hidden matrix), so it is shown for the hidden test.
    assert "1.00 atomic additions per non-zero on a matrix with long rows" in failed[0].message
    assert grade("ps2.q2", coo_scan_kernel, block=BLOCK).passed  # one atomic per segment passes


def test_missing_block_or_non_kernel_answers():
    assert "pass the block size" in grade("ps2.q2", coo_scan_kernel).error
    assert "must be a @cuda.jit kernel" in grade("ps2.q1", lambda *a: None).error


def _bg_cost(lengths, K):
    return lengths.size * K + 3 * np.maximum(lengths - K, 0).sum()


def _bg_k(lengths):
    return int(np.sort(lengths)[::-1][max(int(np.ceil(lengths.size / 3)), 1) - 1])


def test_k_choice_right_answers():
    assert grade("ps2.q3", {"hyb_cost": _bg_cost, "choose_k": _bg_k}).passed
    # Any minimiser of the cost is right, not only the rule's K.
    argmin = {"hyb_cost": _bg_cost, "choose_k": lambda L: int(np.argmin([_bg_cost(L, k) for k in range(L.max() + 1)]))}
    assert grade("ps2.q3", argmin).passed


def test_k_choice_library_answers_are_rejected():
    library = grade("ps2.q3", {"hyb_cost": _bg_cost, "choose_k": spmv.bell_garland_k})
    assert library.points == 0 and "choose_k uses the course's own bell_garland_k" in library.error
    sweep = {"hyb_cost": lambda L, K: float(spmv.k_sweep(L, [K])["cost"][0]), "choose_k": _bg_k}
    result = grade("ps2.q3", sweep)
    assert result.points == 0 and "hyb_cost uses the course's own k_sweep" in result.error


def test_k_choice_wrong_answers_say_why():
    longest = grade("ps2.q3", {"hyb_cost": _bg_cost, "choose_k": lambda L: int(L.max())})
    assert longest.points == 1 and "a third of the rows" in str(longest)
    mean = grade("ps2.q3", {"hyb_cost": lambda L, K: L.size * K + np.maximum(L - K, 0).sum(), "choose_k": _bg_k})
    assert mean.points == 1 and "R x K slots" in str(mean)
    assert "answer with a dict" in grade("ps2.q3", _bg_k).error


PS2_MONKEYPATCH = '''
import course_lib.grading.core
import course_lib.spmv.questions as questions_module


def _never_fails(*args, **kwargs):
    return None


questions_module._check_result = _never_fails
questions_module._check_guard = _never_fails
questions_module.compare_arrays = _never_fails
questions_module.spmv_reference = lambda A, x: np.zeros(A.shape[0])
questions_module.k_sweep = lambda lengths, Ks=None: {"cost": np.zeros(1), "best_K": 0}
questions_module.atomics_allowed = lambda *args: 10**9
course_lib.grading.core.compare_arrays = _never_fails
course_lib.grading.core.run_tests = _never_fails
for question in questions_module.QUESTIONS:
    for test in question.tests:
        object.__setattr__(test, "judge", _never_fails)
'''

PS2_ZERO_ANSWERS = {
    "ps2_q1_answer": "@cuda.jit\ndef csr_scalar(indptr, indices, data, x, y):\n    row = cuda.grid(1)\n"
                     "    if row < y.shape[0]:\n        y[row] = 0.0\n",
    "ps2_q2_answer": "BLOCK = 16\n\n\n@cuda.jit\ndef coo_segmented(rows, cols, data, x, y):\n    pass\n",
    "ps2_q3_answer": "def hyb_cost(row_lengths, K):\n    return 0\n\n\ndef choose_k(row_lengths):\n    return 0\n",
}


def test_patching_the_judges_in_a_submission_earns_nothing_from_the_grader(tmp_path):
    import csv
    import subprocess
    import sys

    import nbformat

    nb = nbformat.read(ROOT / "solutions" / "ps2_spmv.ipynb", as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id == "ps2_setup":
            cell.source += "\n" + PS2_MONKEYPATCH
        elif grade_id in PS2_ZERO_ANSWERS:
            cell.source = PS2_ZERO_ANSWERS[grade_id]
    submission = tmp_path / "monkeypatch.ipynb"
    nbformat.write(nb, submission)
    # In the notebook itself the patches fool check(): the grader must not be fooled.
    out = tmp_path / "grades.csv"
    command = [sys.executable, "-m", "course_lib.grading", "grade", "ps2", str(submission),
               str(ROOT / "solutions" / "ps2_spmv.ipynb"), "--out", str(out), "--timeout", "60", "--quiet"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    with open(out, newline="") as f:
        graded = list(csv.DictReader(f))
    solution = {r["question"]: r for r in graded if r["student"] == "ps2_spmv"}
    assert [float(solution[q]["points"]) for q in ("ps2.q1", "ps2.q2", "ps2.q3")] == [4, 4, 2], \
        {q: r["reason"] for q, r in solution.items()}
    rows = {r["question"]: r for r in graded if r["student"] == "monkeypatch"}
    assert {q: float(rows[q]["points"]) for q in ("ps2.q1", "ps2.q2", "ps2.q3")} == \
        {"ps2.q1": 0, "ps2.q2": 0, "ps2.q3": 0}, {q: r["reason"] for q, r in rows.items()}
    assert rows["ps2.q1"]["reason"].startswith("refused for tampering")
