"""The worker's side: cell magics run their body as in Jupyter; tampering with the machinery is seen."""

import numpy as np
import pytest
from numba import cuda

from course_lib.grading.running.tamper import Snapshot, kernel_host_calls
from course_lib.grading.running.worker import _Notebook


def test_cell_magics_that_run_their_body_run_it():
    nb = _Notebook()
    nb.run_cell(0, "%%time\nx = 1\n")
    nb.run_cell(1, "%%capture out\nprint('hi')\ny = 2\n")
    nb.run_cell(2, "%time z = x + y\n")
    nb.run_cell(3, "%%timeit -n1 -r1 setup = 4\nw = setup + 1\n")
    nb.run_cell(4, "%matplotlib inline\n%config InlineBackend.figure_format = 'svg'\nv = 6\n")
    nb.run_cell(5, "%%html\n<b>not Python</b>\n")
    nb.run_cell(6, "%prun u = 7\n")
    ns = nb.namespace
    assert (ns["x"], ns["y"], ns["z"], ns["v"], ns["u"]) == (1, 2, 3, 6, 7)
    assert ns["out"].stdout == "hi\n"
    assert "w" not in ns and "setup" not in ns  # %%timeit runs its body in a scope of its own, as in IPython
    with pytest.raises(ZeroDivisionError) as error:
        nb.run_cell(7, "%%time\n\n1 / 0\n")
    assert error.traceback[-1].lineno + 1 == 3  # the cell's own line numbers


def test_snapshot_sees_a_replaced_produce_and_patched_numpy():
    import numpy as np

    from course_lib.nbody import questions

    snapshot = Snapshot()
    assert snapshot.changes() == []
    test = questions.Q1.tests[0]
    original = test.produce
    object.__setattr__(test, "produce", lambda answer, data: None)
    try:
        assert any("course_lib.nbody.questions" in label for label in snapshot.changes())
    finally:
        object.__setattr__(test, "produce", original)
    assert snapshot.changes() == []
    allclose = np.allclose
    np.allclose = lambda *args, **kwargs: True
    try:
        assert snapshot.changes() == ["numpy (its names)"]
    finally:
        np.allclose = allclose


@pytest.mark.parametrize("module, name", [("authoring.harness", "unguard"), ("authoring.buffers", "unguard"),
                                          ("authoring.harness", "_judge_outputs"),
                                          ("authoring.testkinds", "_judge_outputs"),
                                          ("authoring.launches", "run_launch"), ("authoring.answers", "_prepare"),
                                          ("core", "wrap"), ("model", "wrap")])
def test_snapshot_sees_a_harness_function_patched_where_it_is_defined_or_re_exported(module, name):
    """The harness and the core are split over modules: callers look a function up where it is
    defined, a notebook may patch either name, and both are seen."""
    import importlib

    import course_lib.grading.authoring.harness  # noqa: F401  (imports every part of the harness)

    target = importlib.import_module(f"course_lib.grading.{module}")
    snapshot = Snapshot()
    original = getattr(target, name)
    setattr(target, name, lambda *args, **kwargs: None)
    try:
        assert f"course_lib.grading.{module} (its names)" in snapshot.changes(limit=50)
    finally:
        setattr(target, name, original)
    assert snapshot.changes() == []
    code = original.__code__
    original.__code__ = (lambda *args, **kwargs: None).__code__
    try:
        assert snapshot.changes() != []
    finally:
        original.__code__ = code
    assert snapshot.changes() == []


@pytest.mark.parametrize("module", ["core", "model", "authoring.harness"])
def test_snapshot_sees_the_data_model_replaced_or_patched(module):
    """``TestFailure`` is defined in the model and re-exported by the core and the harness."""
    import importlib

    import course_lib.grading.authoring.harness  # noqa: F401
    from course_lib.grading.model import TestFailure

    target = importlib.import_module(f"course_lib.grading.{module}")
    snapshot = Snapshot()
    setattr(target, "TestFailure", AssertionError)
    try:
        assert f"course_lib.grading.{module} (its names)" in snapshot.changes(limit=50)
    finally:
        setattr(target, "TestFailure", TestFailure)
    original = TestFailure.__init__
    TestFailure.__init__ = lambda self, *args, **kwargs: None
    try:
        assert "course_lib.grading.model.TestFailure" in snapshot.changes(limit=50)
    finally:
        TestFailure.__init__ = original
    assert snapshot.changes() == []


def test_snapshot_sees_a_test_whose_class_was_swapped():
    """Assigning ``__class__`` changes every method of an object without touching its ``vars()``."""
    from course_lib.grading.authoring.harness import Test
    from course_lib.nbody import questions

    class Forged(Test):
        produce = property(lambda self: (lambda answer, data: None))

    snapshot = Snapshot()
    test = questions.Q1.tests[-1]
    original = type(test)
    object.__setattr__(test, "__class__", Forged)
    try:
        assert any("course_lib.nbody.questions" in label for label in snapshot.changes())
    finally:
        object.__setattr__(test, "__class__", original)
    assert snapshot.changes() == []


def test_the_fingerprint_sees_an_emptied_or_edited_snapshot():
    """A notebook can reach the snapshot object (``gc.get_objects()``): emptying it, replacing an entry
    or editing a recorded value must change the fingerprint the worker keeps."""
    from course_lib.grading.running.tamper import fingerprint

    snapshot = Snapshot()
    sealed = fingerprint(snapshot.entries)
    assert fingerprint(snapshot.entries) == sealed
    saved = list(snapshot.entries)
    try:
        snapshot.entries.clear()
        assert fingerprint(snapshot.entries) != sealed
        snapshot.entries[:] = saved
        label, getter, value, keep = saved[0]
        snapshot.entries[0] = (label, lambda: value, value, keep)
        assert fingerprint(snapshot.entries) != sealed
        snapshot.entries[:] = saved
        recorded = next(e[2] for e in saved if isinstance(e[2], dict) and e[2])
        key = next(iter(recorded))
        old = recorded[key]
        recorded[key] = -1
        assert fingerprint(snapshot.entries) != sealed
        recorded[key] = old
    finally:
        snapshot.entries[:] = saved
    assert fingerprint(snapshot.entries) == sealed and snapshot.changes() == []


def test_kernels_may_call_device_functions_only():
    from numba import cuda

    from course_lib.nbody.reference import accelerations_reference

    @cuda.jit(device=True)
    def helper(x):
        return x * 2

    @cuda.jit
    def fine(a):
        i = cuda.grid(1)
        if i < a.shape[0]:
            a[i] = helper(a[i])

    @cuda.jit
    def cheats(a):
        if cuda.grid(1) == 0:
            a[:] = accelerations_reference(a, a, 0.1)

    @cuda.jit(device=True)
    def sneaky(a):
        return __import__("os").getpid()

    @cuda.jit
    def cheats_deeper(a):
        a[0] = sneaky(a)

    assert kernel_host_calls(fine) == []
    assert kernel_host_calls(cheats) == ["accelerations_reference"]
    assert kernel_host_calls(cheats_deeper) == ["__import__"]


def test_a_kernel_made_by_an_answer_is_checked_when_launched():
    from course_lib import device
    from course_lib.grading.core import TestFailure
    from course_lib.grading.running.worker import _guard_launches

    if not device.is_simulator():
        pytest.skip("on a GPU a kernel calling host code does not compile")
    from numba.cuda.simulator.kernel import FakeCUDAKernel

    original = FakeCUDAKernel.__call__
    try:
        assert _guard_launches(TestFailure)[1] is FakeCUDAKernel.__call__

        def make(cheat):  # a factory, as an answer may be
            @cuda.jit
            def fair(a):
                if cuda.grid(1) == 0:
                    a[0] = 1.0

            @cuda.jit
            def cheats(a):
                if cuda.grid(1) == 0:
                    a[0] = np.sum(a)
            return cheats if cheat else fair

        a = np.zeros(4)
        make(False)[1, 4](a)
        assert a[0] == 1.0
        with pytest.raises(TestFailure, match=r"host code that a GPU cannot run \(np.sum\)") as error:
            make(True)[1, 4](a)
        assert error.value.public
    finally:
        FakeCUDAKernel.__call__ = original
