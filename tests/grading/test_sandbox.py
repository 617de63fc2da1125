"""Where workers run: the sandbox mode, bubblewrap's isolation, and killing every process a worker started."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from course_lib.grading.running import sandbox

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_modes_and_a_missing_bubblewrap(monkeypatch):
    with pytest.raises(ValueError, match="sandbox must be one of auto, require, off"):
        sandbox.resolve("strict")
    assert sandbox.resolve("off").kind == "none"
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match=r"--sandbox=require: bubblewrap \(bwrap\) is not installed.*apt-get"):
        sandbox.resolve("require")
    fallback = sandbox.resolve("auto")
    assert fallback.kind == "none" and "\n" not in fallback.note
    assert "bubblewrap (bwrap) is not installed" in fallback.note and "apt-get install bubblewrap" in fallback.note


_INSIDE = textwrap.dedent('''
    import json, os, socket, sys
    import course_lib
    seen = {"pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()), "ppid": os.getppid(),
            "home": os.environ.get("HOME"), "cwd": os.getcwd(), "uid": os.getuid()}
    package = os.path.dirname(course_lib.__file__)
    for name, path in (("course", os.path.join(package, "x")), ("tmp", "/tmp/work/x")):
        try:
            open(path, "w").close()
            seen[name] = "writable"
        except OSError as exc:
            seen[name] = exc.strerror
    seen["solutions"] = os.path.exists(os.path.join(os.path.dirname(package), "solutions"))
    seen["shadow"] = os.path.exists("/etc/shadow")
    seen["secret"] = "GRADER_SECRET_TOKEN" in os.environ
    try:
        socket.create_connection(("127.0.0.1", 9), timeout=2)
        seen["network"] = "connected"
    except OSError as exc:
        seen["network"] = exc.strerror
    print(json.dumps(seen))
''')


def test_bubblewrap_isolates_the_worker():
    box = sandbox.resolve("auto")
    if box.kind != "bwrap":
        pytest.skip(box.note)
    env = {"PYTHONPATH": ROOT, "PATH": os.environ["PATH"], "COURSE_BACKEND": "sim"}
    argv, env, cwd = box.command(["-B", "-c", _INSIDE], env, "/")
    done = subprocess.run(argv, env=dict(env, GRADER_SECRET_TOKEN="x"), cwd=cwd, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert len(seen["pids"]) <= 3 and seen["ppid"] <= 1  # no view of the grader's processes
    assert seen["home"] == seen["cwd"] == sandbox.INSIDE_WORK and seen["tmp"] == "writable"
    assert seen["course"] == "Read-only file system" and not seen["solutions"] and not seen["shadow"]
    assert not seen["secret"] and seen["network"] != "connected" and seen["uid"] == 65534


_DAEMON = textwrap.dedent('''
    import os, subprocess, sys, time
    from course_lib.grading.running.sandbox import become_subreaper, kill_tree, orphans
    assert become_subreaper()
    # The child double-forks a daemon in a session of its own, then exits.
    child = subprocess.Popen([sys.executable, "-c",
        "import os, time\\nif os.fork() == 0:\\n    os.setsid()\\n    if os.fork() == 0:\\n        time.sleep(60)\\n"
        "    os._exit(0)\\nos.wait()"])
    child.wait()
    time.sleep(0.3)
    adopted = orphans([])
    print(len(adopted))
    kill_tree([], adopted=adopted)
    print(sum(os.path.exists(f"/proc/{pid}") for pid in adopted))
''')


def test_a_double_forked_daemon_is_adopted_and_killed():
    done = subprocess.run([sys.executable, "-c", _DAEMON], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "0"]  # adopted by the subreaper, then gone (and reaped)


def test_the_solutions_shipped_in_an_installed_package_are_hidden(tmp_path, monkeypatch):
    package = tmp_path / "course_lib"
    (package / "_shipped" / "solutions").mkdir(parents=True)
    monkeypatch.setattr(sandbox, "_course_dir", lambda: package)
    options = sandbox._bwrap_options()
    bind = options.index(str(package))
    assert options[bind - 1:bind + 2] == ["--ro-bind", str(package), str(package)]
    assert options[options.index("--tmpfs", bind) + 1] == str(package / "_shipped")
    assert options.index("--tmpfs") < options.index("/usr")  # /tmp first: binds under it stay visible
