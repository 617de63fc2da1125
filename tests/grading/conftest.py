"""Grading runs shared by the tests of a test run: each set of submissions is graded once.

A run of ``python -m course_lib.grading grade`` starts the grader, builds its trusted bytecode and
starts its workers: seconds of CPU before the first submission. Tests that assert different things
about the same submissions read one run, cached by the problem set, the seed, the options and the
submissions' content, in the test run's own temporary folder (under pytest-xdist each worker has
its own; ``--dist loadfile`` keeps a file's tests, so the tests sharing a run, in one worker).

Every grading run of a test process uses one trusted bytecode folder, built for all problem sets
when the first test of this folder starts (``COURSE_GRADING_BYTECODE``,
:mod:`course_lib.grading.running.bytecode`), instead of compiling its own: seconds of CPU per run.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest


@dataclass(frozen=True)
class GradedRun:
    """One run of the instructor grader on a set of submissions.

    Attributes
    ----------
    done : subprocess.CompletedProcess
        The grader's exit status and output (text).
    rows : dict
        ``(student, question id) -> CSV row`` (dict of str) of the grades file.
    feedback : Path
        The folder of Markdown feedback, ``<student>.md`` each.
    """

    done: subprocess.CompletedProcess
    rows: dict
    feedback: Path


@pytest.fixture(scope="session", autouse=True)
def shared_bytecode():
    """The trusted bytecode of every grading run of this test process (their own build is tested in
    test_bytecode.py, with this variable unset)."""
    from course_lib.grading.core import _problem_set_modules
    from course_lib.grading.running.bytecode import SHARED_ENV, Bytecode

    built = Bytecode.build(sorted(m.PROBLEM_SET for m in _problem_set_modules()))
    assert built is not None, "the trusted bytecode could not be built"
    saved = os.environ.get(SHARED_ENV)
    os.environ[SHARED_ENV] = built.share()
    yield built
    if saved is None:
        os.environ.pop(SHARED_ENV, None)
    else:
        os.environ[SHARED_ENV] = saved
    built.close()


#: How many grading runs this test process started (the tests of the cache read it).
RUNS_STARTED = []


@pytest.fixture(scope="session")
def graded_once(tmp_path_factory):
    """``grade(problem_set, submissions, *options, seed=11) -> GradedRun``: submissions
    (``{name: notebook}``) graded by ``python -m course_lib.grading grade``, once per test run for the
    same problem set, seed, options and notebooks (compared by their JSON text)."""
    runs = {}

    def grade(problem_set, submissions, *options, seed=11):
        texts = {name: nbformat.writes(nb) for name, nb in submissions.items()}
        key = hashlib.sha256(json.dumps([problem_set, seed, list(options), sorted(texts.items())]).encode()).hexdigest()
        if key not in runs:
            folder = tmp_path_factory.mktemp(f"graded-{problem_set}-")
            (folder / "submitted").mkdir()
            paths = []
            for name, text in texts.items():
                paths.append(folder / "submitted" / f"{name}.ipynb")
                paths[-1].write_text(text)
            out, feedback = folder / "grades.csv", folder / "feedback"
            command = [sys.executable, "-m", "course_lib.grading", "grade", problem_set, *map(str, paths),
                       "--out", str(out), "--feedback", str(feedback), "--seed", str(seed), *options]
            RUNS_STARTED.append(key)
            done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=900)
            rows = {}
            if out.exists():
                with open(out, newline="") as f:
                    rows = {(r["student"], r["question"]): r for r in csv.DictReader(f)}
            runs[key] = GradedRun(done, rows, feedback)
        return runs[key]

    return grade
