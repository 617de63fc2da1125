"""The grader on the PS1 submissions written by make_submissions.py, and its parts."""

import csv
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import numpy as np
import pytest

from course_lib.grading.results import report
from course_lib.grading.results.details import outcomes_path, read_outcomes
from course_lib.grading.running import grader, manifest, sandbox
from course_lib.grading.core import HIDDEN_FAILURE, QuestionResult, questions_of
from course_lib.grading.protocol import ProtocolError, Unsupported, decode, encode

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hostile  # noqa: E402
import make_submissions  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = "20"  # seconds per step: the infinite loops cost this much each; a right ps1.q1 technique test, with its
# statement coverage, takes several seconds on two loaded cores


def _rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return {(r["student"], r["question"]): r for r in csv.DictReader(f)}


def _bwrap_problem():
    return sandbox.resolve("auto").note if sandbox.resolve("auto").kind != "bwrap" else ""


def _course_fingerprint():
    """Hashes of the course files, the solutions and the site-packages path files (no caches)."""
    return {label: hashlib.sha256(path.read_bytes()).hexdigest() for label, path in manifest.watched_files().items()}


def _survivors():
    """Processes started by the escaping daemon fixture that are still alive."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if hostile.DAEMON_MARK.encode() in f.read():
                    found.append(int(entry))
        except (OSError, ValueError):
            continue
    return found


def _forged_bytecode():
    return [p for p in (ROOT / "course_lib").rglob("*.pyc") if hostile.PERSIST_MARK.encode() in p.read_bytes()]


def _assert_classic_rows(rows, feedback, points, reason, tests_of):
    """The grader's ordinary failures (the submissions of make_submissions.py)."""
    for student in ("solution", "different"):
        assert points(student) == [6, 2, 2], [reason(student, q) for q in ("ps1.q1", "ps1.q2", "ps1.q3")]
    assert points("untouched") == [0, 0, 0]
    assert all("not answered yet" in reason("untouched", q) for q in ("ps1.q1", "ps1.q2", "ps1.q3"))

    wrong = points("wrong")
    assert wrong[0] < 6 and wrong[1:] == [0, 0]
    assert "values are wrong" in reason("wrong", "ps1.q1")
    wrong_feedback = " ".join((feedback / "wrong.md").read_text().split())
    assert "predicted_bytes(64, 16, 1) = 65536" in wrong_feedback
    assert re.search(r"measure\(<[^>]+>, 64, \d+, \d\) = 16", wrong_feedback), wrong_feedback

    race = points("race")
    assert race[0] < 6 and race[1:] == [2, 2]
    race_feedback = (feedback / "race.md").read_text()  # the checker's report names the lines, hidden or not
    assert "[race] read-write race on shared array staged" in race_feedback and "<cell 3>:27:" in race_feedback, \
        race_feedback

    # A kernel in which no block can progress is stopped by the simulator (HangError, naming the blocks and
    # lines, after course_lib.sim._engine.HANG_SECONDS) or, on a loaded machine, by the grader's timeout first;
    # Python that never ends times out.
    for student, question in (("infinite_kernel", "ps1.q1"), ("deadlock", "ps1.q1")):
        why = reason(student, question)
        assert rows[student, question]["points"] == "0"
        assert "HangError: no thread of any block" in why or f"timed out after {TIMEOUT} s" in why, why
    # On a GPU the hung kernel never returns and the time limit stops it; either way q1's later tests are not run.
    for student in ("infinite_kernel", "deadlock"):
        messages = [r["message"] for r in tests_of(student, "ps1.q1")]
        assert messages[1:] and all(m.startswith("not run: ") for m in messages[1:]), messages
    assert rows["infinite_python", "ps1.q3"]["points"] == "0"
    assert f"timed out after {TIMEOUT} s" in reason("infinite_python", "ps1.q3")
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
    assert "name 'choose_split' is not defined" in reason("missing_function", "ps1.q3")

    # Patching NumPy, the grading package, the references or the judges in the notebook is refused.
    assert points("monkeypatch") == [0, 0, 0]
    assert all(reason("monkeypatch", q).startswith(grader.TAMPERED) for q in ("ps1.q1", "ps1.q2", "ps1.q3"))
    assert "course_lib.nbody.questions" in reason("monkeypatch", "ps1.q1")
    assert points("snoop") == [0, 2, 2]  # found nothing on disk, nor the grader's environment

    for student in ("corrupted", "not_a_notebook"):
        assert points(student) == [0, 0, 0]
        assert all(rows[student, q]["status"] == "error" for q in ("ps1.q1", "ps1.q2", "ps1.q3"))
    assert "not a readable .ipynb notebook" in reason("corrupted", "ps1.q1")
    assert "not a notebook" in reason("not_a_notebook", "ps1.q1")

    text = (feedback / "wrong.md").read_text()
    assert "0 / 2 points" in text and "Results compared with |error| <= 0.0001 x max|a|" in text
    assert HIDDEN_FAILURE in text


def _assert_hostile_rows(rows, feedback, points, reason, mode):
    """Every attack of hostile.py, one row per question (see its docstring for what each does)."""
    # Other students' files overwritten or replaced by named pipes, the grades and feedback rewritten by a
    # daemon, the grader signalled: nothing of it reaches anyone's grade.
    for student in ("destroys_other_submissions", "daemon_escapes_and_rewrites_grades", "kills_the_grader",
                    "leaves_answers_and_fills_tmp", "overwrites_earlier_feedback", "uses_cell_magics"):
        assert points(student) == [6, 2, 2], (student, [reason(student, q) for q in ("ps1.q1", "ps1.q2", "ps1.q3")])

    # Persistence: without namespaces the course files were changed, then put back, and the notebook refused;
    # under bubblewrap they are read-only. Either way a later student gains nothing from it.
    assert points("persists_in_course_files") == [0, 0, 0]
    if mode == "none":
        assert all(reason("persists_in_course_files", q).startswith(grader.TAMPERED) for q in ("ps1.q1", "ps1.q2"))
        assert "course_lib/nbody/questions.py" in reason("persists_in_course_files", "ps1.q1")
    else:
        assert "not answered yet" in reason("persists_in_course_files", "ps1.q3")
    assert points("accomplice_of_persistence") == [0, 0, 0]
    assert "not answered yet" in reason("accomplice_of_persistence", "ps1.q3")

    # Producing for the judge: the course's reference put in place of produce, another student's notebook
    # found on the grader's command line, answers left in /tmp, a kernel that calls the float64 reference.
    assert points("substitutes_produce_with_reference") == [0, 0, 0]
    for q in ("ps1.q1", "ps1.q2", "ps1.q3"):
        assert reason("substitutes_produce_with_reference", q).startswith(grader.TAMPERED)
        assert rows["substitutes_produce_with_reference", q]["status"] == "error"
    assert "course_lib.nbody.questions" in reason("substitutes_produce_with_reference", "ps1.q1")
    tampered = (feedback / "substitutes_produce_with_reference.md").read_text()
    assert "refused for tampering" in tampered and "Not graded" in tampered
    assert points("execs_notebook_from_grader_cmdline") == [0, 0, 0]
    assert "name 'choose_split' is not defined" in reason("execs_notebook_from_grader_cmdline", "ps1.q3")
    assert points("reuses_answers_left_in_tmp") == [0, 0, 0]
    assert "name 'choose_split' is not defined" in reason("reuses_answers_left_in_tmp", "ps1.q3")
    # (q2 measures the q1 kernel: its prediction still counts)
    assert points("kernel_calls_float64_reference") == [0, 1, 2]
    assert "accelerations_reference" in reason("kernel_calls_float64_reference", "ps1.q1")

    # Text that would break a file or run in a spreadsheet: cleaned and neutralised, in that student's rows only.
    formula = "'=HYPERLINK(\"x\")"
    assert points(formula) == [0, 1, 2]  # q2 measures the q1 kernel; its prediction, a part of its own, still counts
    assert rows[formula, "ps1.q1"]["status"] == "error"
    assert reason(formula, "ps1.q1").startswith("'=HYPERLINK(\"http://example.invalid\",\"click\"): \\udcff")
    assert "\\x1b[2J" in reason(formula, "ps1.q1")
    odd = "caf\\udce9_\\udcff"  # a file name that is not UTF-8
    assert points(odd) == [6, 2, 2]
    assert points("symlinked") == [0, 0, 0]
    assert "a symbolic link is not graded" in reason("symlinked", "ps1.q1")

    # Feedback: written from the grader's memory, whatever a submission wrote over it.
    assert "**Total: 10 / 10 points**" in (feedback / "destroys_other_submissions.md").read_text()
    assert "forged" not in "".join(p.read_text() for p in feedback.iterdir())
    assert (feedback / report.feedback_name(odd)).exists() and (feedback / report.feedback_name(formula[1:])).exists()


@pytest.fixture(scope="module")
def course_manifest(tmp_path_factory):
    """The course's manifest, built once for both modes' runs (each asserts that its run left the course as it was)."""
    manifest_file = tmp_path_factory.mktemp("manifest") / "manifest.json"
    env = dict(os.environ, GRADER_SECRET_TOKEN="not for students")
    built = subprocess.run([sys.executable, "-m", "course_lib.grading", "manifest", "--out", str(manifest_file)],
                           capture_output=True, text=True, timeout=120, env=env)
    assert built.returncode == 0, built.stderr
    return manifest_file


@pytest.mark.skipif(__import__("course_lib").device.is_gpu(),
                    reason="asserts the simulator's answers to the attacks (an out-of-bounds read raises IndexError "
                           "there; on a GPU it reads adjacent memory, and hung kernels spin on the shared device "
                           "until the worker is killed): the grader is tested on the CPU, in the simulator")
@pytest.mark.parametrize("mode", ["auto", "off"])
def test_every_submission_and_every_attack_in_one_run(tmp_path, mode, course_manifest):
    """One grading run per mode: the ordinary fixtures (with bubblewrap) and every hostile one, each row asserted;
    then nothing outside the grading folder changed, no process outlived the run, and the next run works."""
    box = sandbox.resolve("auto" if mode == "auto" else "off")
    if mode == "off" and sandbox.resolve("auto").kind == "none":
        pytest.skip(f"the auto run already graded without a sandbox ({_bwrap_problem()})")
    folder = tmp_path / "grading"
    submissions = folder / "submissions"
    hostile_files = hostile.write(submissions)
    classic = []
    if mode == "auto":
        classic += sorted(make_submissions.write(submissions))
        classic += make_submissions.write_broken(submissions)
    files = hostile_files[:1] + classic + hostile_files[1:]  # the destroyer first: everyone else is its victim
    out, feedback = folder / "grades.csv", folder / "feedback"
    manifest_file = course_manifest
    env = dict(os.environ, GRADER_SECRET_TOKEN="not for students")
    course_before = _course_fingerprint()
    originals = {p: p.read_bytes() for p in files if not p.is_symlink()}
    command = [sys.executable, "-m", "course_lib.grading", "grade", "ps1", *map(str, files), "--out", str(out),
               "--feedback", str(feedback), "--jobs", "2" if box.kind == "bwrap" else "1", "--timeout", TIMEOUT,
               "--quiet", "--sandbox", mode, "--manifest", str(manifest_file)]
    try:
        done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=900, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        assert box.note in done.stdout
        rows = _rows(out)
        students = {report.csv_cell(grader.student_ids(files)[p]) for p in files}
        assert {s for s, _ in rows} == students and len(rows) == 3 * len(students)

        def points(student):
            return [float(rows[student, q]["points"]) for q in ("ps1.q1", "ps1.q2", "ps1.q3")]

        def reason(student, question):
            return rows[student, question]["reason"]

        _assert_hostile_rows(rows, feedback, points, reason, box.kind)
        if classic:
            outcomes = read_outcomes(outcomes_path(out))

            def tests_of(student, question):
                return [r for r in outcomes if r["student"] == student and r["question"] == question]

            _assert_classic_rows(rows, feedback, points, reason, tests_of)
        assert len(list(feedback.iterdir())) == len(students)
        for path in feedback.iterdir():
            for block in path.read_text().split("- "):
                if block.startswith("FAIL: hidden"):
                    assert "expected" not in block and "N = " not in block.split("\n", 1)[1], (path.name, block)

        # Nothing outside the grading folder changed; the students' files are as they were handed in.
        assert _course_fingerprint() == course_before
        assert not _forged_bytecode()
        assert {p: p.read_bytes() for p in originals} == originals
        if box.kind == "bwrap":
            assert not os.path.exists(hostile.SYSTEM_TMP_FILE)
        assert not _survivors()
        assert not list(folder.glob(".*.tmp")) and not list(feedback.glob(".*.tmp"))

        # The next run works: the lock is free, the course matches its manifest, grades are right.
        again = subprocess.run([*command[:5], str(submissions / "kills_the_grader.ipynb"),
                                str(submissions / "accomplice_of_persistence.ipynb"), *command[5 + len(files):],
                                "--force"], cwd=folder, capture_output=True, text=True, timeout=300, env=env)
        assert again.returncode == 0, again.stdout + again.stderr
        rows = _rows(out)
        assert points("kills_the_grader") == [6, 2, 2] and points("accomplice_of_persistence") == [0, 0, 0]
    finally:
        # Without namespaces a submission can leave files at fixed paths in /tmp (README, "For instructors").
        if os.path.exists(hostile.SYSTEM_TMP_FILE):
            os.unlink(hostile.SYSTEM_TMP_FILE)
        for pid in _survivors():
            os.kill(pid, signal.SIGKILL)


def _fake_results(problem_set, points):
    return [QuestionResult(q.id, q.title, points, q.points) for q in questions_of(problem_set)]


class Interrupted(BaseException):
    """Stands for Ctrl-C or a kill in the middle of a run."""


def test_results_finished_with_an_interrupt_are_all_kept(tmp_path, monkeypatch):
    """Submissions finishing within the same wait as an interrupted one are recorded before it is raised."""
    files = [tmp_path / f"s{i}.ipynb" for i in range(3)]
    for f in files:
        f.write_text("{}")

    def fake(submission, problem_set, seed, options, specs, sandbox, bytecode=None):
        if submission.student == "s1":
            raise Interrupted
        return _fake_results(problem_set, 1.0)

    real_wait = grader.concurrent.futures.wait

    def wait_for_all(pending, timeout, return_when):  # every future done in one wait: the set's order decides
        return real_wait(pending, return_when=grader.concurrent.futures.ALL_COMPLETED)

    monkeypatch.setattr(grader, "grade_submission", fake)
    monkeypatch.setattr(grader.concurrent.futures, "wait", wait_for_all)
    for attempt in range(8):  # futures are hashed by address: several runs see several orders
        out = tmp_path / f"grades{attempt}.csv"
        with pytest.raises(Interrupted):
            grader.grade("ps1", files, out, progress=False)
        assert {r["student"] for r in grader.read_grades(out)} == {"s0", "s2"}


def test_interrupted_run_keeps_what_was_graded(tmp_path, monkeypatch):
    files = [tmp_path / f"s{i}.ipynb" for i in range(3)]
    for f in files:
        f.write_text("{}")
    calls, interrupt = [], [True]

    def fake(submission, problem_set, seed, options, specs, sandbox, bytecode=None):
        calls.append(submission.student)
        if len(calls) == 2 and interrupt.pop():
            raise Interrupted
        return _fake_results(problem_set, 1.0)

    monkeypatch.setattr(grader, "grade_submission", fake)
    out = tmp_path / "grades.csv"
    with pytest.raises(Interrupted):
        grader.grade("ps1", files, out, progress=False)
    kept = {r["student"] for r in grader.read_grades(out)}
    assert "s0" in kept and "s1" not in kept  # s2 too, if it was graded before the interrupt was seen
    interrupt.append(False)
    calls.clear()
    rows = grader.grade("ps1", files, out, progress=False)
    assert calls == [s for s in ("s1", "s2") if s not in kept] and len(rows) == 9  # s0 is not graded again
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
    # Shapes arrive as sent: a 0-d array stays 0-d, a strided view arrives with its values in order.
    for array in (np.array(6), np.arange(12).reshape(3, 4).T, np.arange(10)[::3], np.zeros((0, 3))):
        again = decode(encode(array))
        assert again.shape == array.shape and np.array_equal(again, array)

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
        "huge": "def choose_split(*args):\n    print('x' * 10**7)\n    return np.zeros(3 * 10**6)\n",
        "hog": "def choose_split(*args):\n    return np.ones(10**10).sum()\n",
    }
    # The other questions must still earn their points on a loaded two-core machine: a generous timeout.
    options = grader.GradeOptions(timeout=120, memory_mb=3072, max_reply_mb=16)
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
    # q1's checks must pass in full: 5 s per check is too tight on a loaded two-core machine.
    results = grader.grade_submission(tmp_path / "segfault.ipynb", "ps1", seed=1,
                                      options=grader.GradeOptions(timeout=120))
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
          "def choose_split(n, tile, sm_count, max_threads_per_sm, warps_wanted):\n"
          "    ones = np.zeros(1024)\n    fill[1, 1024](ones)\n"
          "    per_block = math.ceil(tile / 32)\n"
          "    reached = []\n"
          "    for q in (1, 2, 4, 8, 16, 32):\n"
          "        if q > tile or tile % q or ones.sum() != 1024:\n"
          "            break\n"
          "        blocks = math.ceil(n * q / tile)\n"
          "        busy = min(blocks, sm_count)\n"
          "        warps = min(blocks, sm_count * (max_threads_per_sm // (32 * per_block))) * per_block / busy\n"
          "        if busy == sm_count and warps >= warps_wanted:\n"
          "            return q\n"
          "        reached.append(((busy, warps), q))\n"
          "    return min(q for s, q in reached if s == max(s for s, _ in reached))\n")
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


def test_ctrl_c_stops_the_run_cleanly_and_the_next_run_resumes(tmp_path):
    """SIGINT from outside the grader (the instructor's Ctrl-C): the run stops at once, keeps its rows, leaves no
    worker behind; the same command then grades the rest."""
    # Alice's and Carol's notebooks are the untouched student version (a row within a worker's start-up), Bob's
    # the solution: the interrupt comes while his is graded, and the next run grades it in full.
    from course_lib.grading.reporting.release import student_path

    files = []
    for name, notebook in (("alice", student_path("ps1")), ("bob", ROOT / "solutions" / "ps1_nbody.ipynb"),
                           ("carol", student_path("ps1"))):
        shutil.copy(notebook, tmp_path / f"{name}.ipynb")
        files.append(tmp_path / f"{name}.ipynb")
    out = tmp_path / "grades.csv"
    command = [sys.executable, "-m", "course_lib.grading", "grade", "ps1", *map(str, files), "--out", str(out),
               "--quiet", "--timeout", "120", "--seed", "1"]
    run = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while not (out.exists() and grader.read_grades(out)) and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.2)
        assert run.poll() is None, "the run ended before it could be interrupted"
        with open(f"/proc/{run.pid}/cmdline", "rb") as f:
            assert b"alice" not in f.read()  # the command line names no student's file
        workers = sandbox.descendants([run.pid])
        run.send_signal(signal.SIGINT)
        stdout, stderr = run.communicate(timeout=30)
    finally:
        run.kill()
    assert run.returncode == 130, stdout + stderr
    assert "interrupted: the students graded so far are in" in stderr
    kept = {r["student"] for r in grader.read_grades(out)}
    assert "alice" in kept and len(kept) < 3
    assert workers and not [pid for pid in workers if os.path.exists(f"/proc/{pid}")]
    again = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert f"grading {3 - len(kept)} of 3" in again.stdout
    rows = grader.read_grades(out)
    assert {r["student"] for r in rows} == {"alice", "bob", "carol"}
    assert {r["student"]: r for r in rows if r["question"] == "ps1.q1"}["bob"]["points"] == "6"
