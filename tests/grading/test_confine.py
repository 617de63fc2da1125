"""A worker's own limits: no signals to other processes, no capabilities, bounded files."""

import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_CONFINED = textwrap.dedent('''
    import ctypes, os, resource, signal
    from course_lib.grading.running.confine import FILE_SIZE_MB, apply
    print(apply(0))
    results = []
    for target, sig in ((os.getppid(), 0), (os.getppid(), signal.SIGINT), (1, 0), (os.getpid(), 0)):
        try:
            os.kill(target, sig)
            results.append("sent")
        except PermissionError:
            results.append("refused")
    print(" ".join(results))
    with open("/proc/self/status") as f:
        print([line.split()[1] for line in f if line.startswith("CapEff")][0])
    print(resource.getrlimit(resource.RLIMIT_FSIZE)[0] == FILE_SIZE_MB * 2**20)
    print(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))  # PR_GET_DUMPABLE
''')


def test_a_confined_worker_cannot_signal_the_grader():
    done = subprocess.run([sys.executable, "-c", _CONFINED], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    assert done.returncode == 0, done.stderr
    notes, signals, capabilities, size, dumpable = done.stdout.splitlines()
    assert notes == "[]", notes  # every limit applied (libseccomp is part of Debian and Ubuntu)
    assert signals == "refused refused refused sent"
    assert int(capabilities, 16) == 0 and size == "True"
    assert dumpable == "0"  # another worker of the same user cannot open its /proc/<pid>/mem or its pipes
