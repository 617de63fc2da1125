"""The grader on the PS1 submissions of ``submissions/`` (built by make_submissions.py), and its parts."""

import csv
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from course_lib.grading import grader
from course_lib.grading.core import HIDDEN_FAILURE, QuestionResult, questions_of
from course_lib.grading.protocol import ProtocolError, Unsupported, decode, encode

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_submissions  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SUBMISSIONS = Path(__file__).resolve().parent / "submissions"
TIMEOUT = "8"  # seconds per step: the infinite loops cost this much each


def test_committed_submissions_are_up_to_date(tmp_path):
    make_submissions.write(tmp_path)
    for fresh in sorted(tmp_path.iterdir()):
        committed = SUBMISSIONS / fresh.name
        assert committed.exists(), f"run python tests/grading/make_submissions.py ({fresh.name} missing)"
        sources = [[c.source for c in nbformat.read(p, as_version=4).cells] for p in (fresh, committed)]
        assert sources[0] == sources[1], f"run python tests/grading/make_submissions.py ({fresh.name} is stale)"


def _rows(path):
    with open(path, newline="") as f:
        return {(r["student"], r["question"]): r for r in csv.DictReader(f)}


def test_grade_every_submission_in_one_command(tmp_path):
    out, feedback = tmp_path / "grades.csv", tmp_path / "feedback"
    broken = make_submissions.write_broken(tmp_path / "broken")
    files = sorted(SUBMISSIONS.iterdir()) + broken
    command = [sys.executable, "-m", "course_lib.grading", "grade", "ps1", *map(str, files),
               "--out", str(out), "--feedback", str(feedback), "--jobs", "2", "--timeout", TIMEOUT, "--quiet"]
    env = dict(os.environ, GRADER_SECRET_TOKEN="not for students")
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr
    rows = _rows(out)
    students = {p.stem for p in files}
    assert {"corrupted", "not_a_notebook"} <= students
    assert {s for s, _ in rows} == students and len(rows) == 3 * len(students)

    def points(student):
        return [float(rows[student, q]["points"]) for q in ("ps1.q1", "ps1.q2", "ps1.q3")]

    def reason(student, question):
        return rows[student, question]["reason"]

    for student in ("solution", "different"):
        assert points(student) == [6, 2, 2], [reason(student, q) for q in ("ps1.q1", "ps1.q2", "ps1.q3")]
    assert points("untouched") == [0, 0, 0]
    assert all("not answered yet" in reason("untouched", q) for q in ("ps1.q1", "ps1.q2", "ps1.q3"))

    wrong = points("wrong")
    assert wrong[0] < 6 and wrong[1:] == [0, 0]
    assert "values are wrong" in reason("wrong", "ps1.q1") and "predicted_bytes(64, 4) = 65536" in reason("wrong", "ps1.q2")

    race = points("race")
    assert race[0] < 6 and race[1:] == [2, 2]
    race_feedback = (feedback / "race.md").read_text()  # the checker's report names the lines, hidden or not
    assert "[race] write-read race on shared array staged" in race_feedback and "<cell 3>:29:" in race_feedback, \
        race_feedback

    for student, question in (("infinite_kernel", "ps1.q1"), ("deadlock", "ps1.q1"), ("infinite_python", "ps1.q3")):
        assert rows[student, question]["points"] == "0" and f"timed out after {TIMEOUT} s" in reason(student, question)
    # q2 measures the q1 kernel: its measurement times out too; a fresh process grades the rest
    assert points("infinite_kernel")[1:] == [1, 2] and points("deadlock")[1:] == [1, 2]
    assert points("infinite_python")[:2] == [6, 2]  # a fresh process took over after the timeout

    assert points("raises") == [0, 2, 2]
    raised = (feedback / "raises.md").read_text()  # the reason names the checker's out-of-bounds report first
    assert "out-of-bounds" in reason("raises", "ps1.q1") and "IndexError" in raised
    assert "line 12: tile_bodies[t, c] = bodies[bodies.shape[0], c]" in raised.replace("\n   ", "")
    assert points("crash") == [6, 2, 0] and "exit code 3" in reason("crash", "ps1.q3")
    assert points("syntax_error") == [6, 0, 2]
    assert rows["syntax_error", "ps1.q2"]["status"] == "error"
    assert "SyntaxError" in reason("syntax_error", "ps1.q2") and "cell 6" in reason("syntax_error", "ps1.q2")
    assert points("missing_function") == [6, 2, 0]
    assert "name 'choose_tile' is not defined" in reason("missing_function", "ps1.q3")

    # Patching NumPy, the grading package, the references or the judges in the notebook changes nothing.
    assert points("monkeypatch") == [0, 0, 0]
    assert "= <Anything object>" in reason("monkeypatch", "ps1.q3")
    assert points("snoop") == [0, 2, 2]  # found nothing on disk, nor the grader's environment

    for student in ("corrupted", "not_a_notebook"):
        assert points(student) == [0, 0, 0]
        assert all(rows[student, q]["status"] == "error" for q in ("ps1.q1", "ps1.q2", "ps1.q3"))
    assert "not a readable .ipynb notebook" in reason("corrupted", "ps1.q1")
    assert "not a notebook" in reason("not_a_notebook", "ps1.q1")

    # Feedback: one file per student; hidden tests named, their inputs and expected values never shown.
    assert {p.stem for p in feedback.iterdir()} == students
    text = (feedback / "wrong.md").read_text()
    assert "0 / 2 points" in text and "Results compared with |error| <= 0.0001 x max|a|" in text
    for path in feedback.iterdir():
        blocks = path.read_text().split("- ")
        for block in blocks:
            if block.startswith("FAIL: hidden"):
                assert "expected" not in block and "N = " not in block.split("\n", 1)[1], (path.name, block)
    assert HIDDEN_FAILURE in text

    # A second run resumes: everyone is graded already, nothing is run again.
    before = out.read_bytes()
    again = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "grading 0 of 16" in again.stdout and out.read_bytes() == before


def _fake_results(problem_set, points):
    return [QuestionResult(q.id, q.title, points, q.points) for q in questions_of(problem_set)]


class Interrupted(BaseException):
    """Stands for Ctrl-C or a kill in the middle of a run."""


def test_interrupted_run_keeps_what_was_graded(tmp_path, monkeypatch):
    files = [tmp_path / f"s{i}.ipynb" for i in range(3)]
    for f in files:
        f.write_text("{}")
    calls, interrupt = [], [True]

    def fake(path, problem_set, seed, options, specs):
        calls.append(Path(path).stem)
        if len(calls) == 2 and interrupt.pop():
            raise Interrupted
        return _fake_results(problem_set, 1.0)

    monkeypatch.setattr(grader, "grade_submission", fake)
    out = tmp_path / "grades.csv"
    with pytest.raises(Interrupted):
        grader.grade("ps1", files, out, progress=False)
    assert {r["student"] for r in grader.read_grades(out)} == {"s0"}
    interrupt.append(False)
    calls.clear()
    rows = grader.grade("ps1", files, out, progress=False)
    assert calls == ["s1", "s2"] and len(rows) == 9  # s0 is not graded again
    calls.clear()
    grader.grade("ps1", files[:1], out, force=True, progress=False)
    assert calls == ["s0"] and len(grader.read_grades(out)) == 9
    assert not list(tmp_path.glob(".*.tmp"))


def test_grades_file_of_another_kind_is_refused(tmp_path):
    out = tmp_path / "grades.csv"
    out.write_text("name,score\nalice,3\n")
    with pytest.raises(ValueError, match="not a grades file"):
        grader.grade("ps1", [tmp_path / "x.ipynb"], out, progress=False)
    with pytest.raises(ValueError, match="jobs must be at least 1"):
        grader.grade("ps1", [tmp_path / "x.ipynb"], tmp_path / "new.csv", jobs=0, progress=False)


def test_student_names_from_files_or_folders(tmp_path):
    assert list(grader.student_ids([tmp_path / "alice.ipynb", tmp_path / "bob.ipynb"]).values()) == ["alice", "bob"]
    nested = [tmp_path / "alice" / "ps1" / "ps1_nbody.ipynb", tmp_path / "bob" / "ps1" / "ps1_nbody.ipynb"]
    assert list(grader.student_ids(nested).values()) == ["alice/ps1/ps1_nbody", "bob/ps1/ps1_nbody"]


def test_protocol_carries_plain_data_only():
    data = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": [1, 2.5, None, True, "x"], "c": np.int64(3)}
    back = decode(encode(data))
    assert back["a"].dtype == np.float32 and np.array_equal(back["a"], data["a"])
    assert back["b"] == [1, 2.5, None, True, "x"] and back["c"] == 3 and type(back["c"]) is int

    class Rigged(int):
        def __eq__(self, other):
            return True

    assert isinstance(decode(encode(Rigged(1))), Unsupported)
    assert isinstance(decode(encode(np.array([object()]))), Unsupported)
    with pytest.raises(ProtocolError):
        decode({"__ndarray__": "AAAA", "dtype": "O", "shape": [1]})
    with pytest.raises(ProtocolError):
        decode({"something": 1})


def test_huge_output_and_memory_hog_lose_only_their_question(tmp_path):
    q3 = {
        "huge": "def choose_tile(*args):\n    print('x' * 10**7)\n    return np.zeros(3 * 10**6)\n",
        "hog": "def choose_tile(*args):\n    return np.ones(10**10).sum()\n",
    }
    options = grader.GradeOptions(timeout=30, memory_mb=3072, max_reply_mb=16)
    for name, source in q3.items():
        nb = make_submissions._with({"ps1_q3_answer": source, "ps1_q1_answer": make_submissions.ZERO_KERNEL})
        path = tmp_path / f"{name}.ipynb"
        nbformat.write(nb, path)
        results = grader.grade_submission(path, "ps1", seed=1, options=options)
        assert [r.points for r in results[1:2]] == [2]
        assert results[2].points == 0
        message = results[2].outcomes[0].message
        assert ("output too large" if name == "huge" else "MemoryError") in message, message


def test_hang_at_top_level_and_segfault(tmp_path):
    options = grader.GradeOptions(timeout=5)
    nb = make_submissions._with({"ps1_q2_answer": "while True:\n    pass\n"})
    nbformat.write(nb, tmp_path / "hang.ipynb")
    results = grader.grade_submission(tmp_path / "hang.ipynb", "ps1", seed=1, options=options)
    assert all(r.points == 0 and r.status == "error" for r in results)
    assert results[0].error == "running the notebook in cell 6: timed out after 5 s (an infinite loop or a deadlock?)"

    nb = make_submissions._with({"ps1_q2_answer": "import ctypes\n\npredicted_bytes = "
                                 "measure = lambda *args: ctypes.string_at(0)\n"})
    nbformat.write(nb, tmp_path / "segfault.ipynb")
    results = grader.grade_submission(tmp_path / "segfault.ipynb", "ps1", seed=1, options=options)
    assert [r.points for r in results] == [6, 0, 2]
    assert "crashed (SIGSEGV)" in results[1].reason
    assert results[1].outcomes[1].message == "not run: the submission's process crashed (SIGSEGV)"


def test_a_worker_that_cannot_start_stops_the_run_without_rows(tmp_path, monkeypatch):
    nbformat.write(make_submissions._with({}), tmp_path / "alice.ipynb")
    out = tmp_path / "grades.csv"
    for broken in ("/bin/false", str(tmp_path / "no-python-here")):
        monkeypatch.setattr(grader.sys, "executable", broken)
        with pytest.raises(RuntimeError, match="a grading worker could not start"):
            grader.grade("ps1", [tmp_path / "alice.ipynb"], out, progress=False)
    assert not out.exists()


def test_a_block_of_1024_simulated_threads_fits_the_memory_limit(tmp_path):
    q3 = ("@cuda.jit\ndef fill(a):\n    cuda.syncthreads()  # all 1024 threads alive at once\n"
          "    a[cuda.grid(1)] = 1.0\n\n\n"
          "def choose_tile(n, sm_count, max_threads_per_block, max_threads_per_sm):\n"
          "    ones = np.zeros(1024)\n    fill[1, 1024](ones)\n"
          "    best, p = None, 1\n"
          "    while p <= max_threads_per_block and ones.sum() == 1024:\n"
          "        if math.ceil(n / (2 * p)) >= sm_count and 2 * p <= max_threads_per_sm:\n"
          "            best = p\n"
          "        p *= 2\n"
          "    return best\n")
    nbformat.write(make_submissions._with({"ps1_q3_answer": q3}), tmp_path / "big_block.ipynb")
    results = grader.grade_submission(tmp_path / "big_block.ipynb", "ps1", seed=1,
                                      options=grader.GradeOptions(timeout=60, memory_mb=4096))
    assert results[2].points == 2, results[2].reason


def test_folders_stand_for_the_notebooks_below_them(tmp_path):
    for student in ("alice", "bob"):
        (tmp_path / "submitted" / student / "ps1").mkdir(parents=True)
        (tmp_path / "submitted" / student / "ps1" / "ps1_nbody.ipynb").write_text("not json")
    (tmp_path / "submitted" / "bob" / "ps1" / ".ipynb_checkpoints").mkdir()
    (tmp_path / "submitted" / "bob" / "ps1" / ".ipynb_checkpoints" / "ps1_nbody-checkpoint.ipynb").write_text("{}")
    rows = grader.grade("ps1", [tmp_path / "submitted"], tmp_path / "grades.csv", progress=False)
    assert sorted({r["student"] for r in rows}) == ["alice/ps1/ps1_nbody", "bob/ps1/ps1_nbody"]
    assert all("not a readable .ipynb notebook" in r["reason"] for r in rows)


def test_two_runs_cannot_write_the_same_grades_file(tmp_path):
    import fcntl

    out = tmp_path / "grades.csv"
    with open(tmp_path / ".grades.csv.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with pytest.raises(ValueError, match="another grading run is writing"):
            grader.grade("ps1", [tmp_path / "x.ipynb"], out, progress=False)
