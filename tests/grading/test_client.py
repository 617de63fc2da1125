"""The grader's side of a worker: starting workers while others end, and what the processes may read."""

import ctypes
import os
import subprocess
import sys
import textwrap
import threading

from course_lib.grading.running import client
from course_lib.grading.running.client import GradeOptions, Worker
from course_lib.grading.running.sandbox import Sandbox

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_a_worker_being_started_is_not_killed_as_another_ones_orphan(monkeypatch):
    """jobs > 1: one worker ends (killing the orphans its submission left) while another starts."""
    box = Sandbox("none", "sandbox: off")
    ending = Worker("ps1", GradeOptions(), box)
    popen, killers = client.subprocess.Popen, []

    def start_while_another_ends(*args, **kwargs):
        proc = popen(*args, **kwargs)
        # Another thread's kill() lands between the new child's start and its registration.
        killers.append(threading.Thread(target=ending.kill))
        killers[0].start()
        killers[0].join(timeout=2)
        return proc

    monkeypatch.setattr(client.subprocess, "Popen", start_while_another_ends)
    started = Worker("ps1", GradeOptions(), box)
    try:
        started.wait_ready()  # alive: not taken for an orphan
        killers[0].join()
        assert ending.proc.poll() is not None
        # Whoever starts workers (grade() called from Python too) is out of reach of their /proc/<pid>/mem.
        assert ctypes.CDLL(None).prctl(3, 0, 0, 0, 0) == 0  # PR_GET_DUMPABLE
    finally:
        started.close()
        ending.close()


_DAEMON_MARK = "course-grading-client-daemon-fixture"
_GRADE_ONE = textwrap.dedent('''
    import os, time
    from course_lib.grading.running.client import GradeOptions, Worker
    from course_lib.grading.running.sandbox import Sandbox
    daemon = ("import os, sys, time\\nif os.fork() == 0:\\n    os.setsid()\\n    if os.fork() == 0:\\n"
              "        os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(60)  # MARK'])\\n"
              "    os._exit(0)\\nos.wait()\\n")
    worker = Worker("ps1", GradeOptions(), Sandbox("none", "sandbox: off"))  # in a process not yet a subreaper
    worker.wait_ready()
    print(worker.request({"cmd": "load", "cells": [[0, daemon]], "answers": {}}, 60)["cell_errors"])
    time.sleep(0.5)
    worker.close()
    time.sleep(0.2)
    alive = []
    for pid in set(filter(str.isdigit, os.listdir("/proc"))) - {str(os.getpid())}:  # this script names it too
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                alive += [pid] if b"MARK" in f.read() else []
        except OSError:
            pass
    print(len(alive))
''').replace("MARK", _DAEMON_MARK)


def test_a_daemon_left_by_a_submission_dies_with_its_worker_whoever_starts_it():
    """Not only grade(): a worker started by grade_submission() or directly takes its daemons with it."""
    done = subprocess.run([sys.executable, "-c", _GRADE_ONE], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["[]", "0"], done.stdout


def test_a_worker_runs_the_simulator_with_the_order_seed_it_was_given():
    """The grader draws the simulator's block and warp order per grading run (course_lib.sim.set_seed)."""
    worker = Worker("ps1", GradeOptions(), Sandbox("none", "sandbox: off"), sim_seed=987654)
    try:
        worker.wait_ready()
        cells = [[0, "from course_lib import sim\nassert sim.get_seed() == 987654, sim.get_seed()"],
                 [1, "assert sim.get_seed() == 1, 'the control: a wrong seed is noticed'"]]
        errors = worker.request({"cmd": "load", "cells": cells, "answers": {}}, 120)["cell_errors"]
        assert len(errors) == 1 and "the control" in str(errors[0]), errors
    finally:
        worker.close()


def test_each_grading_seed_gives_the_workers_its_own_order_seed(monkeypatch):
    from course_lib.grading.running import grader

    seen = []

    class NoWorker:
        def __init__(self, problem_set, options, sandbox, sim_seed=None, bytecode=None):
            seen.append(sim_seed)

        def wait_ready(self):
            raise client.WorkerFault("not started in this test")

        def close(self):
            pass

        def kill(self):
            pass

    monkeypatch.setattr(grader, "Worker", NoWorker)
    specs = grader.answer_specs("ps1")
    for seed in (1, 1, 2):
        try:
            grader._grade_cells("ps1", [], seed, GradeOptions(), specs, Sandbox("none", "sandbox: off"))
        except client.MachineTrouble:
            pass
    assert seen[0] == seen[1] != seen[2] and all(isinstance(s, int) and s >= 0 for s in seen)
