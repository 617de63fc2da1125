"""The instructor grader on PS6 submissions written at test time from the solution notebook.

Solution: full marks; untouched problem set: 0; W read per sample (wrong technique): at most
half of q1; the second sample unguarded: partial, with the bounds hint.
"""

import csv
import subprocess
import sys

import nbformat

from course_lib.grading.release import solution_path, student_path

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
    assert "out of bounds" in rows["even_only", "ps6.q1"]["reason"]
