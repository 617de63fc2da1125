"""Test files on pytest-xdist's processes, the longest first (a pytest plugin, loaded by the root conftest).

Under ``--dist loadfile`` (the README's test command) each test file runs whole on one process.
pytest-xdist hands the files out in order of their number of tests, so a file of a few long tests
(a grading run, the lessons, the compile check) can start last and keep one process busy long after
the other has run out of work. :class:`LongestFileFirst` hands out the file expected to take longest
first (the "longest processing time first" rule): the run then ends on short files, and both
processes finish within about one short file of each other.

The expected seconds of a file come from a recorded run (:data:`RECORD`, ``tests/file_seconds.json``,
or the file ``--file-seconds`` names);
a file not recorded there counts :data:`SECONDS_PER_UNRECORDED_TEST` per test. The order changes
only when the files run, never what runs. Refresh the record from a run of the whole suite::

    python -m pytest -n 2 --dist loadfile --record-file-seconds tests/file_seconds.json

(it keeps the entries of files that did not run and drops those of files that no longer exist).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Seconds per test file (setup, call and teardown of its tests, summed) of a recorded run.
RECORD = ROOT / "tests" / "file_seconds.json"
#: Expected seconds of a test in a file the record does not list (most tests take well under a second).
SECONDS_PER_UNRECORDED_TEST = 0.05


def file_of(nodeid: str) -> str:
    """The file of a test id, as pytest-xdist's ``loadfile`` groups them (``tests/x/test_y.py``)."""
    return nodeid.split("::", 1)[0]


def read_record(path: Path = RECORD) -> dict:
    """``{test file: seconds}`` of the recorded run at ``path``; empty when there is none."""
    try:
        return {str(k): float(v) for k, v in json.loads(Path(path).read_text())["seconds"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def expected_seconds(path: str, tests: int, record: dict) -> float:
    """Seconds the test file ``path`` (with ``tests`` tests) is expected to take."""
    return record.get(path, tests * SECONDS_PER_UNRECORDED_TEST)


def longest_first(files: dict, record: dict) -> list:
    """The files of ``files`` (``{test file: number of tests}``) in the order they are handed out:
    the longest expected first; files expected to take as long keep their order in ``files``."""
    order = list(files)
    return sorted(order, key=lambda f: (-expected_seconds(f, files[f], record), order.index(f)))


try:
    from xdist.scheduler import LoadFileScheduling
except ImportError:  # pragma: no cover - pytest-xdist is in the test extra; without it the hooks stay unused
    LoadFileScheduling = object


class LongestFileFirst(LoadFileScheduling):
    """pytest-xdist's ``loadfile`` scheduling, with the longest file of those left handed out next.

    Parameters
    ----------
    config : pytest.Config
    log : execnet Producer, optional
    record : dict, optional
        ``{test file: seconds}``; by default :func:`read_record` of ``--file-seconds`` (:data:`RECORD`).
    """

    def __init__(self, config, log=None, record=None):
        super().__init__(config, log)
        self.record = read_record(config.getoption("--file-seconds")) if record is None else record

    def _assign_work_unit(self, node) -> None:
        # pytest-xdist gives ``node`` the first file of its queue (an OrderedDict): move the longest there.
        # (A release that changes this keeps its own order; tests/test_scheduling.py then fails.)
        if self.workqueue and hasattr(self.workqueue, "move_to_end"):
            files = {path: len(tests) for path, tests in self.workqueue.items()}
            self.workqueue.move_to_end(longest_first(files, self.record)[0], last=False)
        super()._assign_work_unit(node)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") == "loadfile":
        return LongestFileFirst(config, log)
    return None  # the other modes as pytest-xdist schedules them


def pytest_report_header(config):
    if config.getoption("dist", None) == "loadfile" and not hasattr(config, "workerinput"):
        path = Path(config.getoption("--file-seconds")).resolve()
        shown = path.relative_to(config.rootpath) if path.is_relative_to(config.rootpath) else path
        return (f"test files handed out longest first: {len(read_record(path))} files' seconds in {shown}, "
                f"{SECONDS_PER_UNRECORDED_TEST} s per test of the others")
    return None


def pytest_addoption(parser):
    parser.addoption("--file-seconds", metavar="PATH", default=str(RECORD),
                     help="the recorded seconds of each test file, read by `--dist loadfile` to hand out the "
                          "longest first (default: tests/file_seconds.json)")
    parser.addoption("--record-file-seconds", metavar="PATH", default=None,
                     help="write the seconds each test file took to PATH (JSON), for the order in which "
                          "`--dist loadfile` hands out files (tests/scheduling.py)")


class FileSeconds:
    """Sums the durations of each file's test reports and writes them at the end of the run (in the
    main process only: under pytest-xdist it receives every process's reports)."""

    def __init__(self, path: Path):
        self.path, self.seconds = Path(path), defaultdict(float)

    def pytest_runtest_logreport(self, report):
        self.seconds[file_of(report.nodeid)] += report.duration

    def pytest_sessionfinish(self, session):
        kept = {f: s for f, s in read_record(self.path).items() if (session.config.rootpath / f).exists()}
        kept.update(self.seconds)
        self.path.write_text(json.dumps({
            "about": "seconds per test file of the last recorded run (tests/scheduling.py); "
                     "`--dist loadfile` hands out the longest first",
            "seconds": {f: round(s, 1) for f, s in sorted(kept.items())}}, indent=1) + "\n")


def pytest_configure(config):
    path = config.getoption("--record-file-seconds")
    if path and not hasattr(config, "workerinput"):  # the main process (or a run without xdist)
        config.pluginmanager.register(FileSeconds(path), "course-file-seconds")
