"""Only the instructor's signals interrupt a grading run."""

import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_SCRIPT = textwrap.dedent('''
    import os, signal, subprocess, time
    # As the grading command starts: blocked before any thread exists (importing course_lib starts one).
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
    from course_lib.grading.running.interrupts import instructor_interrupts
    with instructor_interrupts() as state:
        # A descendant (as a worker's process would be) sends SIGINT and SIGTERM: ignored.
        subprocess.run(["sh", "-c", f"kill -INT {os.getpid()}; kill -TERM {os.getpid()}; sleep 1"])
        time.sleep(0.5)
        print("ignored", state["ignored"], flush=True)
        try:
            os.kill(os.getpid(), signal.SIGINT)  # not from a descendant: the instructor's
            time.sleep(5)
            print("not interrupted")
        except KeyboardInterrupt:
            print("interrupted")
''')


#: A grader started in the background by a non-interactive shell (``grade ... &``, a CI job) inherits SIGINT ignored.
_STARTED_IGNORING_SIGINT = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"


@pytest.mark.parametrize("start", ["default", "sigint_ignored"])
def test_signals_from_descendants_are_ignored_and_others_interrupt(start):
    script = (_STARTED_IGNORING_SIGINT if start == "sigint_ignored" else "") + _SCRIPT
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["ignored 2", "interrupted"]
