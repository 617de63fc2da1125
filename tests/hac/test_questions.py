"""Problem set 5: the solution gets full marks, the wrong technique at most half, typical bugs partial with a
hint naming the cause; the instructor grader agrees on the committed submissions."""

import csv
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
from numba import cuda

from course_lib import hac
from course_lib.grading import get_question, run_tests
from course_lib.hac.questions import QUESTIONS, amdahl_overall

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_ps5_submissions  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SUBMISSIONS = Path(__file__).resolve().parent / "submissions"


def _answers(source):
    """The functions an answer cell defines, run as the notebook runs them."""
    namespace = {"cuda": cuda, "np": np, "hac": hac}
    exec("from numba import float32, int64\n" + source, namespace)
    return namespace


def _solution_cell(grade_id):
    nb = nbformat.read(ROOT / "solutions" / "ps5_hac.ipynb", as_version=4)
    return next(c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def grade(question_id, answer, **options):
    return run_tests(get_question(question_id), answer, hidden=True, seed=7, options=options)


def text(result):
    """The feedback on one line (it is wrapped for the notebook)."""
    return " ".join(str(result).split())


def test_every_test_is_judged_in_the_grader():
    assert [f"{q.id} {t.name}" for q in QUESTIONS for t in q.tests
            if not (callable(t.inputs) and callable(t.produce) and callable(t.judge))] == []
    assert sum(q.points for q in QUESTIONS) == 10


def test_solution_gets_full_marks():
    q1 = _answers(_solution_cell("ps5_q1_answer"))
    assert grade("ps5.q1", q1["make_fusion_kernel"]).points == 6
    q2 = _answers(_solution_cell("ps5_q2_answer").replace("from course_lib", "#"))
    q2["record"] = __import__("course_lib.sim", fromlist=["record"]).record
    result = grade("ps5.q2", {"amdahl": q2["amdahl"], "copies": q2["copies"]})
    assert result.points == 4, str(result)


def test_atomics_give_right_sums_but_at_most_half():
    result = grade("ps5.q1", _answers(make_ps5_submissions.ATOMIC_KERNEL)["make_fusion_kernel"])
    assert result.points == 3, str(result)
    assert "no atomics" in text(result) and "measured -1" in text(result)


def test_serial_loop_in_one_thread_is_the_wrong_technique():
    source = '''def make_fusion_kernel(block):
    @cuda.jit
    def fusion(keys, weights, src, dst):
        if cuda.threadIdx.x != 0:
            return
        n = keys.shape[0]
        p = 0
        while p < n:
            head = keys[p] & 0xFFFFFFFF
            total = weights[head]
            q = p + 1
            while q < n and (keys[q] >> 32) == (keys[p] >> 32):
                e = keys[q] & 0xFFFFFFFF
                total += weights[e]
                weights[e] = -np.inf
                src[e] = -1
                dst[e] = -1
                q += 1
            weights[head] = total
            p = q

    return fusion
'''
    result = grade("ps5.q1", _answers(source)["make_fusion_kernel"])
    assert result.points == 3 and "active lanes" in text(result), str(result)


def test_missing_carry_loses_points_with_the_chunk_hint():
    result = grade("ps5.q1", _answers(make_ps5_submissions.NO_CARRY_KERNEL)["make_fusion_kernel"])
    assert 0 < result.points < 3, str(result)
    assert "Likely cause: chunk" in text(result) and "carry the running sum" in text(result)


def test_forgetting_the_tombstones_is_named():
    source = make_ps5_submissions.NO_CARRY_KERNEL.replace("weights[entry] = -np.inf", "pass")
    result = grade("ps5.q1", _answers(source)["make_fusion_kernel"])
    assert result.points < 3 and "tombstone" in text(result), str(result)


def test_the_course_kernel_and_functions_are_rejected():
    result = grade("ps5.q1", hac.kernels.fusion_segmented_kernel)
    assert result.points == 0 and "course's own" in result.error
    lib = _answers(make_ps5_submissions.LIBRARY_ANSWERS)
    result = grade("ps5.q2", {"amdahl": lib["amdahl"], "copies": lib["copies"]})
    assert result.points == 0 and "course's own" in result.error


def test_amdahl_with_the_limit_formula_instead_of_the_speedup_fails():
    solution = _answers(_solution_cell("ps5_q2_answer").replace("from course_lib", "#"))

    def limit_only(stage_seconds, accelerated, speedup):
        f = sum(stage_seconds[s] for s in accelerated) / sum(stage_seconds.values())
        return 1 / (1 - f) if f < 1 else float("inf")

    result = grade("ps5.q2", {"amdahl": limit_only, "copies": solution["copies"]})
    assert result.points < 4 and "take time / speedup" in text(result), str(result)
    assert amdahl_overall({"a": 1.0, "b": 1.0}, ["a"], 2.0) == 2 / 1.5


def test_committed_submissions_are_up_to_date(tmp_path):
    make_ps5_submissions.write(tmp_path)
    for fresh in sorted(tmp_path.iterdir()):
        committed = SUBMISSIONS / fresh.name
        assert committed.exists(), f"run python tests/hac/make_ps5_submissions.py ({fresh.name} missing)"
        sources = [[c.source for c in nbformat.read(p, as_version=4).cells] for p in (fresh, committed)]
        assert sources[0] == sources[1], f"run python tests/hac/make_ps5_submissions.py ({fresh.name} is stale)"


def test_instructor_grader_on_the_submissions(tmp_path):
    out, feedback = tmp_path / "grades.csv", tmp_path / "feedback"
    command = [sys.executable, "-m", "course_lib.grading", "grade", "ps5", str(SUBMISSIONS), "--out", str(out),
               "--feedback", str(feedback), "--jobs", "2", "--timeout", "300", "--quiet"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr
    with open(out, newline="") as f:
        rows = {(r["student"], r["question"]): r for r in csv.DictReader(f)}

    def points(student):
        return [float(rows[student, q]["points"]) for q in ("ps5.q1", "ps5.q2")]

    assert points("solution") == [6, 4], [rows["solution", q]["reason"] for q in ("ps5.q1", "ps5.q2")]
    assert points("untouched") == [0, 0]
    assert points("atomic") == [3, 4]  # right sums, wrong technique: capped at half
    # the reason names the first failed test (here the checker's, a technique test); the feedback has the hint
    assert points("no_carry")[0] == 2 and "race and barrier check" in rows["no_carry", "ps5.q1"]["reason"]
    assert "Likely cause: chunk" in (feedback / "no_carry.md").read_text()
    assert points("library") == [0, 0] and "course's own" in rows["library", "ps5.q2"]["reason"]
