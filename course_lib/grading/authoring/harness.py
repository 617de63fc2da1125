"""The shared question harness: a problem set's questions as declarative lists of tests with points.

A question module (``course_lib/<unit>/questions.py``) defines ``PROBLEM_SET = "psN"`` and
``QUESTIONS``, a tuple of :func:`question` objects. Each question names the form of its
answer (:func:`kernel`, :func:`kernel_factory`, :func:`function`, :func:`number`, or a dict of
them), its options, the hints for each likely cause of failure, and a list of tests, each with
its points. Every test is *split* (see :mod:`course_lib.grading.core`): it draws its inputs and
judges the outputs in the grader, and only runs the student's code in the student's process.

Declaring a kernel question
---------------------------
Write ``inputs(rng, info) -> data`` (plain data: arrays, numbers, lists, dicts; ``info`` holds
the answer's options), ``launch(answer, data) -> Launch`` (the kernel call on host arrays,
naming the arrays it writes), and ``expect(data) -> {name: expected array}`` (the trusted
reference; it runs in the grader only)::

    def launch(answer, data):
        n = len(data["x"])
        out = np.full(n, np.nan, np.float32)          # unwritten elements show up as NaN
        return Launch(answer.kernel(), -(-n // 64), 64, {"x": data["x"], "out": out}, outputs=("out",))

    Q1 = question("ps9.q1", "double every element", 4, answer=kernel("double kernel"),
                  hints={"bounds": "guard i < n"}, tolerance="exact",
                  tests=[
                      result_test("n = 1 (no free points)", 0, inputs=sized(1), launch=launch, expect=doubled),
                      result_test("n = block + 1", 1, inputs=sized(65), launch=launch, expect=doubled),
                      result_test("hidden: random n", 1, inputs=random_size, launch=launch, expect=doubled,
                                  hidden=True),
                      race_test("race and bounds check", 1, inputs=sized(70), launch=launch, expect=doubled),
                      technique_test("one load per element", 1, inputs=sized(70), launch=launch, expect=doubled,
                                     measure=lambda m, data: m["global_load_bytes"] / 4 / len(data["x"]),
                                     limit=lambda data: (0.9, 1.1), technique="each element read once",
                                     unit="loads per element"),
                  ])

:func:`result_test` launches the kernel on a GPU or in the simulator with every array inside a
guard of ``GUARD`` extra elements (:func:`guarded`): a write past the end, which a GPU does not
fault on, changes the guard and fails with the cause ``bounds``; a read past the end reads NaN.
:func:`race_test` runs the same launch under the course's race, barrier and bounds checker
(:func:`course_lib.sim.check`) and :func:`technique_test` under its profiler
(:func:`course_lib.sim.profile`); on a GPU grader both run in the simulator in a child process
(:mod:`course_lib.sim.remote`), so a submission gets the same score on every grader. Their
inputs must therefore not depend on the backend. Both also require the right result, so a
kernel that does nothing never passes them. For kernels run by a host loop (one launch per
level or iteration), give ``run(answer, data) -> {name: padded array}`` instead of ``launch``
and build the buffers with :func:`guarded` / :func:`inner`.

Points and the technique
------------------------
Every test declares its points (0 for a sanity test that any kernel could pass); they add up
to the question's points. Tests with ``technique=True`` (every :func:`technique_test`) grade the
technique the question teaches: when one fails, the question scores at most
``technique_cap`` (one half) of its points, with a message naming the expected technique and
what was measured.

Failures and hints
------------------
A judge raises :func:`fail` ``(message, cause)``; the feedback then shows the hint the question
gives for that cause (``hints={"sign": ..., "barrier": ...}``, on top of :data:`DEFAULT_HINTS`).
A hint tells how to answer, so a problem set's hints are not written here but in the grader's
resources (``grading_resources/hints/psN_<unit>.json``, :mod:`course_lib.grading.resources`): the
question's per cause, a test's own by its name, and the sentence a calls or value test adds to a
wrong value (``explain=STORED``). The grader reads them when it reports; a submission's process never
sees them. ``hints=`` and ``hint=`` in a question module still work (the harness's own tests use them).
The trusted value a formula question is judged against lives there too, as Python
(``grading_resources/keys/psN_<unit>.py``): ``expect=answer_key("psN", "name")``
(:func:`course_lib.grading.resources.answer_key`).
:func:`result_test` finds the cause itself: ``bounds`` for a guard that changed or an
IndexError, ``unwritten`` for outputs never written, and the question's ``diagnose`` rules
(e.g. :func:`sign_flipped`) for a wrong value. The checker's problems map to ``barrier``,
``race`` or ``bounds``. Hidden tests show only their name and result.

Declaring a measure-and-explain question
----------------------------------------
The student predicts a number with a formula and writes ``measure(kernel, ...)``, which
measures any kernel it is given with ``course_lib.sim.profile`` (or ``check``/``record``). The
grader checks the prediction (:func:`calls_test`) and calls the student's ``measure`` on their
kernel, on decoy kernels of known traffic and at sizes drawn at grading time
(:func:`course_lib.grading.authoring.measuring.kernel_measurement_test`), so that a pasted number or the
model's own value cannot pass::

    Q3 = question("ps9.q3", "predict, then measure", 2,
                  answer={"kernel": kernel_factory("make_kernel"), "predicted": function(),
                          "measure": measurement("measure")},
                  tests=[
                      calls_test("the prediction", 1, key="predicted", args=lambda rng, info: [(64, 8)],
                                 expect=lambda n, p: model(n, p), rtol=0.02),
                      kernel_measurement_test("the measurement", 1, key="measure", kernel_key="kernel",
                                              decoys=..., configs=..., launch=..., measure=...),
                  ])

Analysis questions use :func:`function` answers (rejected when they call the course's own code,
see :mod:`course_lib.grading.authoring.ownwork`) and :func:`calls_test` / :func:`value_test`.

Where each piece lives
----------------------
This module declares :func:`question` and :data:`DEFAULT_HINTS` and re-exports the rest, so that
question modules import everything from here: :mod:`~course_lib.grading.authoring.buffers` (:func:`fail`,
:func:`guarded`, :func:`inner`, :func:`unguard`), :mod:`~course_lib.grading.authoring.launches`
(:class:`Launch` and how it runs), :mod:`~course_lib.grading.authoring.answers` (the answer specs) and
:mod:`~course_lib.grading.authoring.testkinds` (the kinds of test, comparisons and diagnoses).
"""

from __future__ import annotations

import dataclasses

# Re-exported: question modules, the measuring and signature tests and the course's tests import these from here.
from .answers import (Answer, _prepare, _Spec, choice, function, integer, kernel, kernel_factory, measurement,
                      number, number_map)
from .buffers import GUARD, fail, guarded, inner, part_failure, sentinel, unguard
from ..core import Question, Test, TestFailure
from .launches import Launch, check_launch, coverage_test, profile_launch, run_launch
from .testkinds import (CHECKER_CAUSES, STORED, _judge_outputs, _matches, _test, calls_test, close, exact, race_test,
                        result_test, sign_flipped, technique_test, value_test)

__all__ = [
    "DEFAULT_HINTS",
    "GUARD",
    "Answer",
    "Launch",
    "STORED",
    "calls_test",
    "choice",
    "close",
    "fail",
    "function",
    "guarded",
    "inner",
    "integer",
    "kernel",
    "kernel_factory",
    "measurement",
    "number",
    "number_map",
    "part_failure",
    "question",
    "race_test",
    "result_test",
    "sign_flipped",
    "technique_test",
    "unguard",
    "value_test",
]

#: Hints for the usual causes of a failure; a question's ``hints`` override and extend them.
DEFAULT_HINTS = {
    "bounds": "guard every index: threads past the end of the data must neither read nor write outside the "
              "arrays (on a GPU such a write corrupts other data silently)",
    "unwritten": "some outputs were never written: every element needs a thread that stores it, the last "
                 "ones too",
    "barrier": "every thread of a block must reach every cuda.syncthreads() (no early return before a barrier), "
               "and a barrier must separate writing shared memory from other threads reading it, and reading "
               "it from overwriting it",
    "race": "two threads access one element with nothing ordering them: give every element a single writer, "
            "or make the update atomic (cuda.atomic.*)",
    "warp": "every lane named in a warp primitive's mask must reach the same call",
    "sign": "the result has the right size but the wrong sign: check the direction of every difference",
    "technique": "the result is right, but not computed with the technique the question asks for",
    "value": "the values are wrong: compare your kernel with the reference on the smallest failing size",
    "answer": "check the form of your answer against the question",
}


# ----------------------------------------------------------------------------- the question
def question(id: str, title: str, points: float, *, answer, tests, options=None, hints=None, diagnose=(),
             tolerance: str = "", technique_cap: float = 0.5) -> Question:
    """A graded question: the answer's form, its options and its tests with points.

    Parameters
    ----------
    id : str
        ``"psN.qM"``, stable.
    title : str
    points : float
        The tests' points must add up to it.
    answer : spec or dict of specs
        :func:`kernel`, :func:`kernel_factory`, :func:`function`, :func:`number`,
        :func:`integer`, :func:`choice`, :func:`number_map`; a dict means a dict answer
        with those fields.
    tests : sequence of Test
    options : dict, optional
        ``name -> spec`` of the keyword options of ``check`` (e.g. ``{"block": integer(...)}``);
        the tests' ``inputs`` find them, validated again in the grader, in ``info``.
    hints : dict, optional
        ``cause -> hint`` for this question, on top of :data:`DEFAULT_HINTS`.
    diagnose : sequence of (cause, rule)
        ``rule(got, expected, data) -> bool`` tried, in order, when a result is wrong; the first
        that holds names the cause (e.g. ``("sign", sign_flipped)``).
    tolerance : str
        How results are compared, shown in feedback.
    technique_cap : float
        At most this fraction of the points when a technique test fails.
    """
    options = dict(options or {})
    merged = {**DEFAULT_HINTS, **(hints or {})}
    built = []
    for test in tests:
        if not isinstance(test, Test):
            raise ValueError(f"{id}: every test must be built with the harness, got {test!r}")
        if test.points is None:
            raise ValueError(f"{id}: test {test.name!r} declares no points")
        judge = test.judge
        if hasattr(judge, "rules"):
            judge.rules = tuple(diagnose)
        if hasattr(judge, "stored_for"):  # explain=STORED: the grader's sentence for this test
            judge.stored_for = (id, test.name)
        built.append(dataclasses.replace(test, inputs=_checked_inputs(test.inputs, options),
                                         hints=tuple({**merged, **dict(test.hints)}.items()), hint_key=id))
    if not any(t.points > 0 for t in built if not t.hidden):
        raise ValueError(f"{id}: the visible tests carry no points")
    specs = answer.values() if isinstance(answer, dict) else [answer]
    if any(getattr(spec, "kernel", False) for spec in specs) and any(t.technique for t in built):
        # Last, after every launch: each statement of the kernels must have run under one of them.
        built.append(dataclasses.replace(
            coverage_test("hidden: every statement of your kernels ran under the grader's launches", built),
            hints=tuple(merged.items()), hint_key=id))

    def describe(prepared):
        return dict(prepared.options)

    return Question(id, title, points, tuple(built), prepare=_prepare(answer, options), describe=describe,
                    tolerance=tolerance, technique_cap=technique_cap)


def _checked_inputs(inputs, options):
    """``inputs`` after validating ``info`` again in the grader (it comes from the student's process)."""
    if not options:
        return inputs

    def checked(rng, info):
        info = dict(info or {})
        for key, spec in options.items():
            info[key] = spec.validate(info.get(key), f"option {key}")
        return inputs(rng, info)

    return checked
