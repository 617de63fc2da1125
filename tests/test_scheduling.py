"""The order in which ``--dist loadfile`` hands out test files (tests/scheduling.py), and the record it reads."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.scheduling import SECONDS_PER_UNRECORDED_TEST, expected_seconds, file_of, longest_first, read_record

ROOT = Path(__file__).resolve().parents[1]

#: A test that notes which file it is in, on which process, in the order the tests start.
NOTING_TEST = '''
import os

def test_{n}():
    with open(os.environ["STARTED_LOG"], "a") as log:
        log.write(os.environ.get("PYTEST_XDIST_WORKER", "main") + " " + __name__ + "\\n")
'''


def _project(folder, tests_per_file):
    for name, count in tests_per_file.items():
        (folder / f"{name}.py").write_text("".join(NOTING_TEST.format(n=n) for n in range(count)))


def _pytest(folder, *args):
    # Only the plugins these runs need (the others' imports take seconds in each process).
    env = dict(os.environ, PYTHONPATH=str(ROOT), STARTED_LOG=str(folder / "started.log"),
               PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "xdist", "-p", "tests.scheduling",
                           "-p", "no:cacheprovider", *args], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=300)


def test_recorded_seconds_first_then_the_number_of_tests():
    record = {"tests/slow.py": 120.0, "tests/medium.py": 30.0}
    files = {"tests/many.py": 3000, "tests/slow.py": 2, "tests/few.py": 4, "tests/medium.py": 40, "tests/tie.py": 4}
    assert expected_seconds("tests/many.py", 3000, record) == 3000 * SECONDS_PER_UNRECORDED_TEST
    assert longest_first(files, record)[:3] == ["tests/many.py", "tests/slow.py", "tests/medium.py"]
    assert longest_first(files, record)[3:] == ["tests/few.py", "tests/tie.py"]  # equal: as pytest-xdist had them
    assert longest_first(files, {}) == ["tests/many.py", "tests/medium.py", "tests/few.py", "tests/tie.py",
                                        "tests/slow.py"]


def test_a_test_id_groups_by_its_file():
    assert file_of("tests/grading/test_grader.py::test_x[auto]") == "tests/grading/test_grader.py"
    assert file_of("solutions/ps1_nbody.ipynb::Cell 3") == "solutions/ps1_nbody.ipynb"


def test_a_missing_or_broken_record_is_an_empty_one(tmp_path):
    assert read_record(tmp_path / "none.json") == {}
    (tmp_path / "broken.json").write_text("{not json")
    assert read_record(tmp_path / "broken.json") == {}
    (tmp_path / "list.json").write_text("[1, 2]")
    assert read_record(tmp_path / "list.json") == {}


@pytest.mark.drift  # it relies on pytest-xdist's queue of files (LongestFileFirst)
def test_two_processes_start_with_the_two_longest_recorded_files(tmp_path):
    """pytest-xdist alone would start with the files of most tests (many and more); the record says that
    the one-test files take longest."""
    _project(tmp_path, {"test_many": 12, "test_more": 10, "test_long": 1, "test_longer": 1, "test_short": 2})
    record = tmp_path / "seconds.json"
    record.write_text(json.dumps({"seconds": {"test_long.py": 50.0, "test_longer.py": 80.0}}))
    done = _pytest(tmp_path, "-n", "2", "--dist", "loadfile", "--file-seconds", str(record))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 files' seconds in seconds.json" in done.stdout
    started = [line.split() for line in (tmp_path / "started.log").read_text().splitlines()]
    assert len(started) == 26
    first = {}
    for worker, module in started:
        first.setdefault(worker, module)
    assert sorted(first.values()) == ["test_long", "test_longer"], started
    # Which file runs last depends on which process frees first (timing): not asserted.


def test_a_run_records_the_seconds_of_each_file_and_keeps_older_entries(tmp_path):
    _project(tmp_path, {"test_a": 2, "test_b": 1})
    (tmp_path / "test_slow.py").write_text("import time\n\ndef test_sleeps():\n    time.sleep(0.3)\n")
    out = tmp_path / "seconds.json"
    out.write_text(json.dumps({"seconds": {"test_a.py": 7.0, "test_kept.py": 9.0, "test_gone.py": 5.0}}))
    (tmp_path / "test_kept.py").write_text("")
    for args in ((), ("-n", "2", "--dist", "loadfile")):
        done = _pytest(tmp_path, "test_a.py", "test_slow.py", "--record-file-seconds", str(out), *args)
        assert done.returncode == 0, done.stdout + done.stderr
        seconds = json.loads(out.read_text())["seconds"]
        assert set(seconds) == {"test_a.py", "test_slow.py", "test_kept.py"}  # test_gone.py no longer exists
        assert 0.3 <= seconds["test_slow.py"] < 30 and seconds["test_a.py"] < 7.0 and seconds["test_kept.py"] == 9.0
        out.write_text(json.dumps({"seconds": {"test_a.py": 7.0, "test_kept.py": 9.0, "test_gone.py": 5.0}}))
