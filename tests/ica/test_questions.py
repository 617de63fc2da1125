"""Problem set 6: right answers get full marks, typical wrong ones partial or 0 with the cause named.

At the end, the instructor grader on PS6 submissions written at test time from the solution notebook.

Solution: full marks; untouched problem set: 0; W read per sample (wrong technique): at most
half of q1; the second sample unguarded: partial, with the bounds hint.
"""

import csv
import subprocess
import sys

import nbformat
import numpy as np
from numba import cuda, float64

from course_lib.grading import get_question, run_tests
from course_lib.grading.release import solution_path, student_path
from course_lib.ica import kernels, questions

MAXC = 256


@cuda.jit
def two_sample_gemv(Wt, Xt, perm, start, U):
    first = cuda.shared.array(MAXC, float64)
    second = cuda.shared.array(MAXC, float64)
    c = cuda.threadIdx.x
    b = 2 * cuda.blockIdx.x
    n_channels = Wt.shape[0]
    has_second = b + 1 < U.shape[0]
    if c < n_channels:
        first[c] = Xt[perm[start + b], c]
        if has_second:
            second[c] = Xt[perm[start + b + 1], c]
    cuda.syncthreads()
    if c < n_channels:
        total0 = 0.0
        total1 = 0.0
        for k in range(n_channels):
            w = Wt[k, c]
            total0 += w * first[k]
            if has_second:
                total1 += w * second[k]
        U[b, c] = total0
        if has_second:
            U[b + 1, c] = total1


@cuda.jit
def one_sample_twice(Wt, Xt, perm, start, U):
    """Right result, wrong technique: W read again for the second sample."""
    sample = cuda.shared.array(MAXC, float64)
    c = cuda.threadIdx.x
    n_channels = Wt.shape[0]
    for b in range(2 * cuda.blockIdx.x, min(2 * cuda.blockIdx.x + 2, U.shape[0])):
        if c < n_channels:
            sample[c] = Xt[perm[start + b], c]
        cuda.syncthreads()
        if c < n_channels:
            total = 0.0
            for k in range(n_channels):
                total += Wt[k, c] * sample[k]
            U[b, c] = total
        cuda.syncthreads()


@cuda.jit
def unguarded_second(Wt, Xt, perm, start, U):
    """Wrong: assumes an even B (the last block of an odd B reads and writes one sample too far)."""
    first = cuda.shared.array(MAXC, float64)
    second = cuda.shared.array(MAXC, float64)
    c = cuda.threadIdx.x
    b = 2 * cuda.blockIdx.x
    first[c] = Xt[perm[start + b], c]
    second[c] = Xt[perm[start + b + 1], c]
    cuda.syncthreads()
    total0 = 0.0
    total1 = 0.0
    for k in range(Wt.shape[0]):
        w = Wt[k, c]
        total0 += w * first[k]
        total1 += w * second[k]
    U[b, c] = total0
    U[b + 1, c] = total1


@cuda.jit
def no_permutation(Wt, Xt, perm, start, U):
    """Wrong: forgets the permutation (reads samples start + b in order)."""
    first = cuda.shared.array(MAXC, float64)
    second = cuda.shared.array(MAXC, float64)
    c = cuda.threadIdx.x
    b = 2 * cuda.blockIdx.x
    has_second = b + 1 < U.shape[0]
    if c < Wt.shape[0]:
        first[c] = Xt[start + b, c]
        if has_second:
            second[c] = Xt[start + b + 1, c]
    cuda.syncthreads()
    if c < Wt.shape[0]:
        total0 = 0.0
        total1 = 0.0
        for k in range(Wt.shape[0]):
            total0 += Wt[k, c] * first[k]
            total1 += Wt[k, c] * second[k]
        U[b, c] = total0
        if has_second:
            U[b + 1, c] = total1


def grade(question_id, answer):
    return run_tests(get_question(question_id), answer, hidden=True, seed=7)


def test_solution_gets_full_marks():
    result = grade("ps6.q1", two_sample_gemv)
    assert result.passed and result.points == 6, str(result)


def test_reading_w_per_sample_is_capped_at_half():
    result = grade("ps6.q1", one_sample_twice)
    assert 0 < result.points <= 3, str(result)
    assert "expected technique" in str(result) and "Wt loaded once per block" in str(result)


def test_unguarded_odd_batch_fails_with_the_bounds_hint():
    result = grade("ps6.q1", unguarded_second)
    assert result.points < 6 and not result.outcomes[1].passed, str(result)
    assert "second sample" in str(result)


def test_forgotten_permutation_scores_nothing_but_hints():
    result = grade("ps6.q1", no_permutation)
    assert result.points <= 1, str(result)
    assert "permutation" in str(result)


def test_the_lessons_kernel_is_not_an_answer():
    result = grade("ps6.q1", kernels.permuted_gemv_kernel)
    assert result.points < 6


def occupancy(threads_per_block, registers_per_thread, shared_bytes_per_block, limits):
    warps = -(-threads_per_block // 32)
    unit = limits["register_unit"]
    regs = -(-registers_per_thread * 32 // unit) * unit * warps
    shared = -(-(shared_bytes_per_block + limits["shared_reserved"]) // limits["shared_unit"]) * limits["shared_unit"]
    blocks = min(limits["max_blocks"], limits["max_warps"] // warps, limits["registers"] // regs,
                 limits["shared_bytes"] // shared)
    return blocks * warps / limits["max_warps"]


def launches_per_step(method, n_samples, batch):
    per = {"blas": batch + 5, "custom": 6, "fused": 2}[method]
    return (n_samples // batch) * per


def simt():
    from course_lib.sim import profile

    out = {}
    for c in questions.SIMT_CHANNELS:
        d = questions.gemv_case(c, 2, 0, seed=1)
        report = profile(kernels.permuted_gemv_kernel, 2, c, d["Wt"], d["Xt"], d["perm"], 0, np.zeros((2, c)))
        out[c] = report.total.simt_efficiency
    return out


def test_q2_right_answers():
    result = grade("ps6.q2", {"launches_per_step": launches_per_step, "occupancy": occupancy, "simt": simt()})
    assert result.passed and result.points == 4, str(result)


def test_q2_occupancy_without_the_block_limit_loses_its_points():
    def no_block_limit(t, r, s, limits):
        return occupancy(t, r, s, {**limits, "max_blocks": 10**6})

    result = grade("ps6.q2", {"launches_per_step": launches_per_step, "occupancy": no_block_limit, "simt": simt()})
    assert result.points == 2, str(result)
    assert "block limit" in str(result)


def test_q2_guessed_simt_fails():
    result = grade("ps6.q2", {"launches_per_step": launches_per_step, "occupancy": occupancy,
                              "simt": {20: 1.0, 32: 1.0, 40: 1.0}})
    assert result.points == 3, str(result)


def test_q2_wrong_form():
    result = grade("ps6.q2", {"launches_per_step": 3, "occupancy": occupancy, "simt": simt()})
    assert result.points == 0 or not result.passed


# --------------------------------------------------------------------------- the instructor grader
QUESTIONS = ("ps6.q1", "ps6.q2")

ONE_SAMPLE_AT_A_TIME = '''MAX_CHANNELS = 256


@cuda.jit
def two_sample_gemv(Wt, Xt, perm, start, U):
    sample = cuda.shared.array(MAX_CHANNELS, float64)
    c = cuda.threadIdx.x
    for b in range(2 * cuda.blockIdx.x, min(2 * cuda.blockIdx.x + 2, U.shape[0])):
        if c < Wt.shape[0]:
            sample[c] = Xt[perm[start + b], c]
        cuda.syncthreads()
        if c < Wt.shape[0]:
            total = 0.0
            for k in range(Wt.shape[0]):
                total += Wt[k, c] * sample[k]
            U[b, c] = total
        cuda.syncthreads()
'''

EVEN_BATCH_ONLY = '''MAX_CHANNELS = 256


@cuda.jit
def two_sample_gemv(Wt, Xt, perm, start, U):
    first = cuda.shared.array(MAX_CHANNELS, float64)
    second = cuda.shared.array(MAX_CHANNELS, float64)
    c = cuda.threadIdx.x
    b = 2 * cuda.blockIdx.x
    if c < Wt.shape[0]:
        first[c] = Xt[perm[start + b], c]
        second[c] = Xt[perm[start + b + 1], c]
    cuda.syncthreads()
    if c < Wt.shape[0]:
        total0 = 0.0
        total1 = 0.0
        for k in range(Wt.shape[0]):
            total0 += Wt[k, c] * first[k]
            total1 += Wt[k, c] * second[k]
        U[b, c] = total0
        U[b + 1, c] = total1
'''


def _write(path, q1_source=None):
    nb = nbformat.read(solution_path("ps6"), as_version=4)
    if q1_source is not None:
        cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "ps6_q1_answer")
        cell.source = q1_source
    nbformat.write(nb, path)


def test_grader_scores_right_and_wrong_submissions(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    _write(subs / "solution.ipynb")
    _write(subs / "one_sample.ipynb", ONE_SAMPLE_AT_A_TIME)
    _write(subs / "even_only.ipynb", EVEN_BATCH_ONLY)
    (subs / "untouched.ipynb").write_bytes(student_path("ps6").read_bytes())
    out = tmp_path / "grades.csv"
    command = [sys.executable, "-m", "course_lib.grading", "grade", "ps6", *sorted(map(str, subs.iterdir())),
               "--out", str(out), "--jobs", "2", "--timeout", "120", "--quiet"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    with open(out, newline="") as f:
        rows = {(r["student"], r["question"]): r for r in csv.DictReader(f)}

    def points(student):
        return [float(rows[student, q]["points"]) for q in QUESTIONS]

    assert points("solution") == [6, 4], [rows["solution", q]["reason"] for q in QUESTIONS]
    assert points("untouched") == [0, 0]
    assert 0 < points("one_sample")[0] <= 3 and points("one_sample")[1] == 4
    assert "technique" in rows["one_sample", "ps6.q1"]["reason"]
    assert 0 < points("even_only")[0] < 6
    assert "out-of-bounds" in rows["even_only", "ps6.q1"]["reason"]  # the checker names the problem
