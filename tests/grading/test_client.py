"""The grader's side of a worker: starting workers while others end, and what the processes may read."""

import ctypes
import threading

from course_lib.grading import client
from course_lib.grading.client import GradeOptions, Worker
from course_lib.grading.sandbox import Sandbox, become_subreaper


def test_a_worker_being_started_is_not_killed_as_another_ones_orphan(monkeypatch):
    """jobs > 1: one worker ends (killing the orphans its submission left) while another starts."""
    become_subreaper()
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
