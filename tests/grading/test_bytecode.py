"""The run's trusted bytecode (course_lib.grading.running.bytecode): built once, handed to workers read-only or
verified."""

import contextlib
import os

import pytest

from course_lib.grading.running import bytecode as bc
from course_lib.grading.running.client import GradeOptions, Worker
from course_lib.grading.running.sandbox import INSIDE_WORK, Sandbox


@pytest.fixture(scope="module")
def compiled():
    built = bc.Bytecode.build("ps1")
    assert built is not None
    yield built
    built.close()


def _pyc_of(built, module_file):
    """The relative path of ``module_file``'s bytecode in the folder, or None."""
    stem = os.path.splitext(os.path.basename(module_file))[0]
    folder = os.path.dirname(os.path.abspath(module_file)).lstrip(os.sep)
    found = [r for r in built.digests if os.path.dirname(r) == folder and os.path.basename(r).startswith(stem + ".")]
    return found[0] if found else None


def test_build_compiles_what_a_worker_and_its_typing_process_import(compiled):
    import numba
    import numpy

    import course_lib.grading.running.worker as worker
    import course_lib.nbody.questions as questions

    for module in (worker, questions, numba, numpy):
        assert _pyc_of(compiled, module.__file__), module.__name__
    # The typing process's compiler (numba-cuda's CUDA target) is compiled by the priming run too.
    assert any("numba/cuda/compiler" in r for r in compiled.digests)
    assert compiled.intact()


@contextlib.contextmanager
def _forged_worker_bytecode(compiled):
    """The worker module's bytecode in the folder with bytes appended, put back afterwards; yields its path
    relative to the folder."""
    import course_lib.grading.running.worker as worker

    relative = _pyc_of(compiled, worker.__file__)
    path = os.path.join(compiled.folder, relative)
    with open(path, "rb") as fh:
        original = fh.read()
    try:
        with open(path, "ab") as fh:
            fh.write(b"forged")
        yield relative
    finally:
        with open(path, "wb") as fh:
            fh.write(original)


def test_a_changed_file_is_left_out_of_a_copy(compiled, tmp_path):
    with _forged_worker_bytecode(compiled) as relative:
        assert not compiled.intact()
        copied = compiled.install(str(tmp_path))
        assert copied == len(compiled.digests) - 1
        assert not (tmp_path / relative).exists()  # that module is compiled from source in the worker
        other = next(r for r in compiled.digests if r != relative)
        with open(os.path.join(compiled.folder, other), "rb") as fh:
            assert (tmp_path / other).read_bytes() == fh.read()
    assert compiled.intact()


def test_bubblewrap_mounts_it_read_only_as_the_prefix():
    box = Sandbox("bwrap", "", "/usr/bin/bwrap")
    argv, _, _ = box.command(["-c", "pass"], {}, "/", bytecode="/grader/bytecode")
    at = argv.index("/grader/bytecode")
    assert argv[at - 1] == "--ro-bind" and argv[at + 1] == f"{INSIDE_WORK}/pycache"
    plain, _, _ = box.command(["-c", "pass"], {}, "/")
    at = plain.index(f"{INSIDE_WORK}/pycache")
    assert plain[at - 1] == "--dir"  # without it, an empty folder: the worker compiles from source


def test_a_worker_without_namespaces_gets_its_own_verified_copy(compiled):
    worker = Worker("ps1", GradeOptions(), Sandbox("none", "sandbox: off"), bytecode=compiled)
    try:
        prefix = os.path.join(worker.workdir, "pycache")
        assert sum(len(files) for _, _, files in os.walk(prefix)) == len(compiled.digests)
        worker.wait_ready()
    finally:
        worker.close()


def _seeded(built):
    """The typing cache's files in the folder (relative paths)."""
    return [r for r in built.digests if r.startswith(bc.TYPING_SEED + os.sep)]


def test_the_priming_run_types_the_course_kernels_that_workers_launch(compiled, tmp_path, monkeypatch):
    """ps1's decoys, typed by the trusted priming run under each name a worker types them by: a process that
    reads that seed (with an empty cache of its own) launches them without typing any again."""
    from course_lib.grading.core import questions_of
    from course_lib.sim import _typing

    seeded = _seeded(compiled)
    assert seeded and all(r.endswith(".pickle") for r in seeded)
    launches = [run for q in questions_of("ps1") for t in q.tests
                for run in getattr(t.produce, "typing_launches", lambda: [])()]
    assert len(launches) == len(seeded)  # each decoy and the copy a measuring function receives
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "own"))
    monkeypatch.setenv(_typing.SEED_ENV, compiled.typing_seed(compiled.folder))
    monkeypatch.setattr(_typing, "_memory", {})
    before = _typing.stats()
    for run in launches:
        _typing._memory.clear()
        run()
    after = _typing.stats()
    assert after["typed"] == before["typed"] and after["disk_hits"] - before["disk_hits"] == len(launches)
    # A changed entry is left out of a worker's copy, as a changed module's bytecode is.
    path = os.path.join(compiled.folder, seeded[0])
    with open(path, "rb") as fh:
        original = fh.read()
    try:
        with open(path, "ab") as fh:
            fh.write(b"forged")
        assert not compiled.intact()
        compiled.install(str(tmp_path / "copy"))
        assert not (tmp_path / "copy" / seeded[0]).exists() and (tmp_path / "copy" / seeded[-1]).exists()
    finally:
        with open(path, "wb") as fh:
            fh.write(original)


def test_a_worker_reads_the_seed_in_the_read_only_mount_or_in_its_own_copy(compiled, monkeypatch):
    from course_lib.grading.running import client

    started = []

    def capture(argv, **kwargs):
        started.append((argv, kwargs["env"]))
        raise OSError("not started")

    monkeypatch.setattr(client.subprocess, "Popen", capture)
    for box in (Sandbox("bwrap", "", "/usr/bin/bwrap"), Sandbox("none", "sandbox: off")):
        with pytest.raises(client.MachineTrouble):
            Worker("ps1", GradeOptions(), box, bytecode=compiled)
    (inside, _), (_, env) = started
    at = inside.index(bc.SEED_ENV)
    assert inside[at - 1] == "--setenv" and inside[at + 1] == os.path.join(f"{INSIDE_WORK}/pycache", bc.TYPING_SEED)
    assert inside[inside.index(compiled.folder) - 1] == "--ro-bind"
    assert env[bc.SEED_ENV].endswith(os.path.join("pycache", bc.TYPING_SEED))
    assert not env[bc.SEED_ENV].startswith(compiled.folder)  # the worker's own verified copy, not the shared folder


def test_lazy_bytecode_is_built_once_and_only_when_asked(monkeypatch):
    monkeypatch.delenv(bc.SHARED_ENV, raising=False)
    calls = []
    monkeypatch.setattr(bc.Bytecode, "build", classmethod(lambda cls, ps: calls.append(ps) or None))
    notes = []
    lazy = bc.LazyBytecode("ps1", notes.append)
    assert calls == []
    assert lazy.get() is None and lazy.get() is None
    assert calls == ["ps1"] and len(notes) == 1  # a failed build is said once, and workers compile from source
    lazy.close()


def test_the_solution_notebooks_imports_are_primed_too():
    names = bc.solution_imports("ps7")
    assert "course_lib.cellsim.questions" in names and "numpy" in names


def test_a_shared_folder_is_used_while_intact_and_never_once_changed(compiled, monkeypatch):
    """Runs started with FOLDER#SHA256 use that folder; a changed file or index, or a wrong digest, and a run
    compiles its own (the value came from the caller, so nothing on the disk can make a run trust a change)."""
    value = compiled.share()
    folder, _, digest = value.rpartition("#")
    assert folder == compiled.folder and len(digest) == 64
    given = bc.Bytecode.shared(value)
    assert given is not None and given.digests == compiled.digests and not given.owned
    given.close()  # a run never deletes the folder it was given
    assert os.path.isdir(compiled.folder) and compiled.intact()

    assert bc.Bytecode.shared(f"{folder}#{'0' * 64}") is None
    assert bc.Bytecode.shared(f"{folder}-missing#{digest}") is None
    with _forged_worker_bytecode(compiled):
        assert bc.Bytecode.shared(value) is None
        builds, notes = [], []
        monkeypatch.setattr(bc.Bytecode, "build", classmethod(lambda cls, ps: builds.append(ps) or None))
        monkeypatch.setenv(bc.SHARED_ENV, value)
        lazy = bc.LazyBytecode("ps1", notes.append)
        assert lazy.get() is None and builds == ["ps1"]
        assert bc.SHARED_ENV in notes[0] and "changed" in notes[0]
    # An index rewritten to match a forged file has another digest than the caller's.
    index = compiled.folder + ".json"
    with open(index, "rb") as fh:
        saved = fh.read()
    try:
        with open(index, "wb") as fh:
            fh.write(saved.replace(b'"', b'"', 1) + b" ")
        assert bc.Bytecode.shared(value) is None
    finally:
        with open(index, "wb") as fh:
            fh.write(saved)
    monkeypatch.setenv(bc.SHARED_ENV, value)
    lazy = bc.LazyBytecode("ps1")
    assert lazy.get() is not None and lazy.get().folder == compiled.folder
    lazy.close()
    assert compiled.intact()


def test_one_build_serves_several_problem_sets():
    import course_lib.cellsim.questions as ps7_questions
    import course_lib.nbody.questions as ps1_questions

    built = bc.Bytecode.build(["ps1", "ps7"])
    try:
        assert built is not None
        for module in (ps1_questions, ps7_questions):
            assert _pyc_of(built, module.__file__), module.__name__
        value = built.share()
        assert os.path.exists(built.folder + ".json")
    finally:
        built.close()
    assert not os.path.exists(built.folder) and not os.path.exists(built.folder + ".json")
    assert bc.Bytecode.shared(value) is None


def test_grade_submission_uses_the_shared_folder_when_given_none(compiled, monkeypatch):
    """One submission graded from Python (Gradescope, PrairieLearn, the tests) uses the caller's shared folder,
    while it is intact; without the variable, or with a changed folder, none (workers compile from source)."""
    from course_lib.grading.reporting.release import student_path
    from course_lib.grading.running import grader

    given = []
    monkeypatch.setattr(grader, "_grade_cells", lambda *args: given.append(args[-1]) or [])
    monkeypatch.delenv(bc.SHARED_ENV, raising=False)
    grader.grade_submission(student_path("ps1"), "ps1", 1)
    monkeypatch.setenv(bc.SHARED_ENV, compiled.share())
    grader.grade_submission(student_path("ps1"), "ps1", 1)
    monkeypatch.setenv(bc.SHARED_ENV, f"{compiled.folder}#{'0' * 64}")
    grader.grade_submission(student_path("ps1"), "ps1", 1)
    assert given[0] is None and given[1].folder == compiled.folder and not given[1].owned and given[2] is None
