"""The grader judges what launches: an object that shows one kernel and launches another is not a kernel, and a
measuring function cannot tell the student's kernel from the grader's decoys by identity or by position.

Written as families over any kernel factory (built from the ps1 fixtures, the cheapest problem set), not as a
list of known submissions.
"""

import dataclasses
import functools
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import cuda, float32

from course_lib import nbody
from course_lib.grading import get_question, run_tests

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_fixtures  # noqa: E402


def _namespace(fixture, grade_id="ps1_q1_answer"):
    from course_lib.sim import profile

    namespace = {"cuda": cuda, "float32": float32, "nbody": nbody, "np": np, "math": math, "profile": profile}
    if grade_id != "ps1_q1_answer":
        make_fixtures.run_cell(make_fixtures.answer_cell("ps1", fixture, "ps1_q1_answer"), namespace)
    make_fixtures.run_cell(make_fixtures.answer_cell("ps1", fixture, grade_id), namespace)
    return namespace


def grade(question_id, answer):
    return run_tests(get_question(question_id), answer, hidden=True, seed=7)


#: Ways of showing one kernel (``good``, what the profiler and checker read) while launching another (``bad``).
SHOWN_NOT_LAUNCHED = {
    "an object of its own class": '''
class Shown:
    def __init__(self, good, bad):
        self.py_func, self._bad = good.py_func, bad
    def __getitem__(self, configuration):
        return self._bad[configuration]
def disguise(good, bad):
    return Shown(good, bad)
''',
    "a subclass of the dispatcher": '''
def disguise(good, bad):
    class Shown(type(good)):
        def __getitem__(self, configuration):
            return bad[configuration]
    shown = Shown.__new__(Shown)
    shown.__dict__.update(good.__dict__)
    return shown
''',
    "an object claiming the dispatcher's class": '''
def disguise(good, bad):
    class Shown:
        __class__ = property(lambda self: type(good))
        py_func = good.py_func
        def __getitem__(self, configuration):
            return bad[configuration]
    return Shown()
''',
}


def _disguised(how):
    namespace = _namespace("right")
    good_factory = namespace["make_split_kernel"]
    bad_factory = _namespace("naive")["make_split_kernel"]
    make_fixtures.run_cell(SHOWN_NOT_LAUNCHED[how], namespace)
    namespace.update(good=good_factory, bad=bad_factory)
    make_fixtures.run_cell("def make_split_kernel(tile, q):\n    return disguise(good(tile, q), bad(tile, q))\n",
                           namespace)
    return namespace["make_split_kernel"]


def test_a_factory_whose_kernels_show_one_function_and_launch_another_is_refused():
    """Refused when the kernel is made: every test of the question fails (0 points)."""
    from course_lib.grading.core import TestFailure

    for how in SHOWN_NOT_LAUNCHED:
        prepared = get_question("ps1.q1").prepare(_disguised(how))
        with pytest.raises(TestFailure, match="must be the kernel @cuda.jit returns"):
            prepared.kernel(8, 2)


@functools.lru_cache(maxsize=None)
def _q2_parts():
    namespace = _namespace("right", "ps1_q2_answer")
    return namespace["make_split_kernel"], namespace["predicted_bytes"], namespace["measure"]


def _measure_only(answer):
    """ps1.q2's measuring test alone (the prediction's test costs nothing to skip)."""
    question = get_question("ps1.q2")
    test = next(t for t in question.tests if t.name.startswith("your measure()"))
    return run_tests(dataclasses.replace(question, tests=(test,), points=test.points), answer, hidden=True, seed=7)


def _recognises(make):
    """Whether a call's object is the student's factory, by the tests of identity a measuring function could use:
    the factory itself, its kernels' code object, or the same object as one seen before."""
    own_code = make(8, 2).py_func.__code__
    seen = set()

    def recognise(given):
        again = id(given) in seen
        seen.add(id(given))
        return given is make or again or given(8, 2).py_func.__code__ is own_code

    return recognise


def test_measure_cannot_recognise_the_students_kernel_by_identity():
    """A measure that answers 0 for what it takes to be its own kernel and measures the rest honestly: no handed
    object is recognisable, so it measures everything and keeps the test's point."""
    make, predict, measure = _q2_parts()
    recognise, calls = _recognises(make), []

    def cheat(given, n, tile, q):
        calls.append(recognise(given))
        return 0.0 if calls[-1] else measure(given, n, tile, q)

    result = _measure_only({"kernel": make, "predicted_bytes": predict, "measure": cheat})
    assert calls and not any(calls) and result.points == 1, str(result)


def test_measure_cannot_recognise_the_students_kernel_by_the_order_of_calls():
    """The kernels of each configuration come in an order drawn by the grader: a measure returning the model's
    figure at a fixed position among its calls answers for a decoy too."""
    make, predict, measure = _q2_parts()
    count = [0]

    def cheat(given, n, tile, q):
        count[0] += 1
        return predict(n, tile, q) / n**2 if count[0] % 3 == 1 else measure(given, n, tile, q)

    result = _measure_only({"kernel": make, "predicted_bytes": predict, "measure": cheat})
    assert result.points == 0, str(result)


# ----------------------------------------------------------------------------- code the grader never runs
#: Conditions a kernel could switch technique on, each false on every configuration the question draws and true
#: on some a GPU run would choose: a size, a block shape, a grid, the order of the data, a stride.
SWITCHES = {
    "a size past the drawn ones": "bodies.shape[0] > 4096",
    "a block of 128 threads or more": "cuda.blockDim.x >= 128",
    "a grid of more than 64 blocks": "cuda.gridDim.x > 64",
    "data in decreasing x order": "bodies.shape[0] > 2 and bodies[0, 0] > bodies[bodies.shape[0] - 1, 0] + 100",
    "a row stride other than the packed one": "bodies.strides[0] != 16",
}


def _body(source, header):
    """The body of the function defined at ``header`` in ``source`` (up to its ``return``), dedented to 0."""
    import textwrap

    lines = source.splitlines()
    start = next(k for k, line in enumerate(lines) if line.strip().startswith(header)) + 1
    indent = len(lines[start]) - len(lines[start].lstrip())
    body = []
    for line in lines[start:]:
        if line.strip() and len(line) - len(line.lstrip()) < indent:
            break
        body.append(line)
    return textwrap.dedent("\n".join(body))


#: The right kernel's read of a staged body, and the same read from global memory (no tile).
STAGED_READ = "sx, sy, sz, sm = staged[s, 0], staged[s, 1], staged[s, 2], staged[s, 3]"
GLOBAL_READ = "(bodies[base + s, 0], bodies[base + s, 1], bodies[base + s, 2], bodies[base + s, 3])"
#: Forms of one switch inside one line, which runs whichever way it goes: the arm that reads global memory is an
#: arm of a conditional expression (``{condition}`` true only where the grader never looks).
ONE_LINE_FORMS = {
    "a conditional expression": f"sx, sy, sz, sm = {GLOBAL_READ} if {{condition}} else "
                                "(staged[s, 0], staged[s, 1], staged[s, 2], staged[s, 3])",
    "an and/or short circuit": "sx = ({condition}) and bodies[base + s, 0] or staged[s, 0]\n"
                               "sy, sz, sm = staged[s, 1], staged[s, 2], staged[s, 3]",
    "a nested conditional expression": f"sx, sy, sz, sm = (staged[s, 0], staged[s, 1], staged[s, 2], staged[s, 3]) "
                                       f"if not ({{condition}}) else ({GLOBAL_READ} if s >= 0 else {GLOBAL_READ})",
}


#: The right kernel's guards written as short circuits and nested conditional expressions (same results).
GUARDS_WRITTEN_OTHERWISE = {
    "staged[lane, c] = bodies[src, c] if src < count else float32(0.0)":
        "staged[lane, c] = float32(0.0) if src >= count else (bodies[src, c] if c < 3 else bodies[src, 3])",
    "if part == 0 and body < count:": "if part == 0 and body >= 0 and body < count:",
    "if part % (2 * step) == 0:": "if not (part % (2 * step) != 0 or part < 0):",
}


def _switched(condition, form=None):
    """The right kernel, with the naive kernel's body first under ``condition`` (an ``if`` statement), or with its
    read of the staged tile switched to global memory under ``condition`` in one line (``form`` of
    :data:`ONE_LINE_FORMS`)."""
    import textwrap

    right = make_fixtures.answer_cell("ps1", "right", "ps1_q1_answer")
    if form is not None:
        line = next(line for line in right.splitlines() if line.strip() == STAGED_READ)
        indent = line[:len(line) - len(line.lstrip())]
        switched = textwrap.indent(ONE_LINE_FORMS[form].format(condition=condition), indent)
        return right.replace(line, switched)
    naive = _body(make_fixtures.answer_cell("ps1", "naive", "ps1_q1_answer"), "def kernel(")
    header = "def split(bodies, softening_sq, acc):"
    at = right.index(header) + len(header) + 1
    indent = " " * 8
    branch = f"{indent}if {condition}:\n" + textwrap.indent(naive.rstrip() + "\nreturn\n", indent + "    ")
    return right[:at] + branch + right[at:]


def _factory_of(source, namespace=None):
    namespace = namespace if namespace is not None else _namespace("right")
    make_fixtures.run_cell(source, namespace)
    return namespace["make_split_kernel"]


def _small_question():
    """ps1.q1 reduced to one small result test and the coverage test: the coverage test runs that launch under the
    profiler when the question's profiles left statements out. (N = 3 blocks + 1: a partial block, where the right
    kernel's guards evaluate both their arms.)"""
    from course_lib.grading.authoring.launches import coverage_test

    question = get_question("ps1.q1")
    small = next(t for t in question.tests if t.name.startswith("N = 3 blocks + 1"))
    cover = coverage_test("coverage", [small])
    return dataclasses.replace(question, tests=(small, cover), points=small.points)


def test_a_technique_switched_off_where_the_grader_never_looks_caps_the_question():
    small = _small_question()
    # Each condition once, as an if statement or inside one line (every form at least once).
    forms = [None, *ONE_LINE_FORMS]
    for k, (what, condition) in enumerate(SWITCHES.items()):
        form = forms[k % len(forms)]
        result = run_tests(small, _factory_of(_switched(condition, form)), hidden=True, seed=7)
        assert result.capped and result.points <= small.points / 2, (what, form, str(result))
        assert "never ran under the grader's runs" in str(result), (what, form)
    # A factory returning another kernel for tiles the grader never asks for: that kernel's code never ran.
    namespace = _namespace("naive")
    namespace["naive_factory"] = namespace["make_split_kernel"]
    make_fixtures.run_cell(make_fixtures.answer_cell("ps1", "right", "ps1_q1_answer"), namespace)
    right = namespace["right_factory"] = namespace["make_split_kernel"]
    source = ("def make_split_kernel(tile, q):\n"
              "    return right_factory(tile, q) if tile < 128 else naive_factory(tile, q)\n")
    result = run_tests(small, _factory_of(source, namespace), hidden=True, seed=7)
    assert result.capped, str(result)
    # The right kernel keeps its point, and so does one whose guards are short circuits and nested conditional
    # expressions: every arm of them is evaluated on the partial block.
    assert run_tests(small, right, hidden=True, seed=7).points == small.points
    source = make_fixtures.answer_cell("ps1", "right", "ps1_q1_answer")
    for before, after in GUARDS_WRITTEN_OTHERWISE.items():
        assert before in source, before
        source = source.replace(before, after)
    result = run_tests(small, _factory_of(source), hidden=True, seed=7)
    assert result.points == small.points, str(result)


# ----------------------------------------------------------------------------- host code the grader never runs
#: Costs a host loop could pay only where the grader never looks: past the step counts or sizes it draws, or for an
#: input layout it never passes. ``{first}`` is the first argument of the program, ``{step}`` its loop variable.
LATE_COSTS = {
    "a copy past the drawn step counts": "if {step} >= 1000:\n    cuda.to_device({first})",
    "an allocation past the drawn sizes": "if len({first}) > 100_000:\n    cuda.device_array(8)",
    "a copy for a strided input": "if not {first}.flags.c_contiguous:\n    cuda.to_device({first})",
}


def _with_late_cost(function, cost):
    """``function``'s source with ``cost`` as the first statement of its first loop, run in a copy of its module's
    namespace (its helpers are still found)."""
    import ast
    import inspect
    import textwrap

    source = textwrap.dedent(inspect.getsource(function))
    tree = ast.parse(source)
    definition = tree.body[0]
    loop = next(node for node in ast.walk(definition) if isinstance(node, ast.For))
    first, step = definition.args.args[0].arg, loop.target.id
    statement = ast.parse(cost.format(first=first, step=step)).body
    loop.body[:0] = statement
    namespace = dict(function.__globals__)
    make_fixtures.run_cell(ast.unparse(tree), namespace)
    return namespace[function.__name__]


def test_a_host_loop_paying_per_step_only_where_the_grader_never_looks_caps_the_question():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cellsim"))
    import submissions  # noqa: E402  (tests/cellsim: the ps7.q3 host programs)

    question = get_question("ps7.q3")
    # The smallest run (one level, three cells) and the coverage test.
    tests = (question.tests[0], next(t for t in question.tests if "host program ran" in t.name))
    small = dataclasses.replace(question, tests=tests, points=sum(t.points for t in tests))
    assert run_tests(small, submissions.levels_solution, hidden=True, seed=7).points == small.points
    for what, cost in LATE_COSTS.items():
        result = run_tests(small, _with_late_cost(submissions.levels_solution, cost), hidden=True, seed=7)
        assert result.capped and result.points <= small.points / 2, (what, str(result))
        assert "host program never ran" in " ".join(str(result).split()), what
    # A copy per step from a step the grader reaches on: under any bound fixed for one run, but it grows.
    growth = next(t for t in question.tests if t.name.startswith("launches, copies and allocations"))
    counted = dataclasses.replace(question, tests=(growth,), points=growth.points)
    late = _with_late_cost(submissions.levels_solution, "if {step} >= 5:\n    cuda.to_device({first})")
    result = run_tests(counted, late, hidden=True, seed=7)
    assert result.points <= counted.points / 2 and "copies between host and device more" in " ".join(
        str(result).split()), str(result)


# ----------------------------------------------------------------------------- host programs that use threads
#: A pool whose worker is started before any graded call (a notebook's module-level pool).
_EARLY_POOL = """
from concurrent.futures import ThreadPoolExecutor
import threading
POOL = ThreadPoolExecutor(1)
POOL.submit(int).result()


def copied_in_a_thread(array):
    box = []
    worker = threading.Thread(target=lambda: box.append(array.copy_to_host()))
    worker.start()
    worker.join()
    return box[0]
"""
#: The ps7.q3 program run in another thread: the statements it runs there count (right, full marks).
IN_ANOTHER_THREAD = {
    "a new pool's worker": """
def program(phis, levels, phi_min, capacity, block, sm_count):
    with ThreadPoolExecutor(2) as pool:
        return pool.submit(levels_solution, phis, levels, phi_min, capacity, block, sm_count).result()
""",
    "a pool's worker started before the call": """
def program(phis, levels, phi_min, capacity, block, sm_count):
    return POOL.submit(levels_solution, phis, levels, phi_min, capacity, block, sm_count).result()
""",
    "a thread": """
def program(phis, levels, phi_min, capacity, block, sm_count):
    box = []
    worker = threading.Thread(
        target=lambda: box.append(levels_solution(phis, levels, phi_min, capacity, block, sm_count)))
    worker.start()
    worker.join()
    return box[0]
""",
}
#: The level's total copied back every level by another thread (counted as the driver counts it: capped).
COPY_IN_ANOTHER_THREAD = {
    "a pool's worker started before the call": "POOL.submit(totals.copy_to_host).result()",
    "a new thread each level": "copied_in_a_thread(totals)",
}


def _program(function, source, name):
    """``source`` run in a copy of ``function``'s module namespace, with ``function``'s own source and a pool started
    before the call (so the student's notebook holds all of them); its function ``name``."""
    import inspect
    import textwrap

    namespace = dict(function.__globals__)
    make_fixtures.run_cell(_EARLY_POOL + textwrap.dedent(inspect.getsource(function)) + source, namespace)
    return namespace[name]


def test_a_host_program_run_in_threads_is_covered_and_its_copies_there_are_counted():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cellsim"))
    import submissions  # noqa: E402  (tests/cellsim: the ps7.q3 host programs)

    question = get_question("ps7.q3")
    tests = (question.tests[0], next(t for t in question.tests if "host program ran" in t.name))
    small = dataclasses.replace(question, tests=tests, points=sum(t.points for t in tests))
    for how, source in IN_ANOTHER_THREAD.items():
        result = run_tests(small, _program(submissions.levels_solution, source, "program"), hidden=True, seed=7)
        assert result.points == small.points, (how, str(result))
    growth = next(t for t in question.tests if t.name.startswith("launches, copies and allocations"))
    counted = dataclasses.replace(question, tests=(growth,), points=growth.points)
    for how, copy in COPY_IN_ANOTHER_THREAD.items():
        import inspect

        source = inspect.getsource(submissions.levels_copy_per_level).replace("totals.copy_to_host()[g]", f"{copy}[g]")
        assert copy in source
        late = _program(submissions.levels_solution, source, "levels_copy_per_level")
        result = run_tests(counted, late, hidden=True, seed=7)
        assert result.points <= counted.points / 2 and "copies between host and device" in " ".join(
            str(result).split()), (how, str(result))
