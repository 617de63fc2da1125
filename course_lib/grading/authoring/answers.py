"""The expected form of an answer: the specs a question declares and the prepared :class:`Answer`.

:func:`kernel`, :func:`kernel_factory`, :func:`function`, :func:`number`, :func:`integer`,
:func:`choice`, :func:`number_map` and :func:`measurement` describe an answer (or one field of
a dict answer, or an option); :func:`_prepare` turns them into a question's ``prepare``. Part
of :mod:`course_lib.grading.authoring.harness`, which re-exports every name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .buffers import fail, part_failure
from .coverage import reset as reset_coverage
from .dispatch import launched_function
from ..core import CAUSE_PREFIX, TestFailure, as_student_kernel
from .ownwork import as_student_function, library_uses, model_uses

__all__ = ["Answer", "choice", "function", "integer", "kernel", "kernel_factory", "measurement", "number",
           "number_map"]


class Answer:
    """A prepared answer, as ``launch``/``produce`` functions receive it.

    Attributes
    ----------
    value : object
        What the student passed (a kernel, a kernel factory, a function, or a dict of them).
    options : dict
        The keyword options passed to ``check`` (validated).
    """

    def __init__(self, value, options, make=None, problems=None):
        self.value, self.options, self._make, self._kernels = value, options, make, {}
        #: ``field -> (message, library)`` for the fields of a dict answer that are missing or in the wrong
        #: form: the tests that use such a field fail with its message, the others are graded as usual
        #: (``library``: the field uses the course's own code, which caps the question).
        self.problems = dict(problems or {})

    def kernel(self, *args, **params):
        """The kernel: the answer itself, or what the answer's factory returns for these parameters (cached)."""
        if self._make is None:
            return self.value
        key = (args, tuple(sorted(params.items())))
        if key not in self._kernels:
            self._kernels[key] = self._make(self.value, *args, **params)
        return self._kernels[key]

    def __getitem__(self, key):
        """One field of a dict answer (a kernel field comes back as an :class:`Answer` of its own).

        Raises
        ------
        TestFailure
            The field is missing or not in the form the question asks for (the cause names the field).
        """
        if key in self.problems:
            message, library = self.problems[key]
            raise part_failure(key, message, library=library)
        return self.value[key]


@dataclass(frozen=True)
class _Spec:
    """The expected form of an answer (or of one field of a dict answer)."""

    what: str
    validate: Callable  # validate(value, what) -> value to keep, or raise TestFailure
    example: str = ""
    #: The answer is kernel code (a kernel or a kernel factory): its statements must all run under the
    #: question's launches (:mod:`course_lib.grading.authoring.coverage`).
    kernel: bool = False


def _own_kernel(kernel_obj, what, allowed):
    as_student_kernel(kernel_obj, what)
    # What launches, not what the object shows: exactly a dispatcher numba (or its simulator) made.
    found = library_uses(launched_function(kernel_obj, what), allowed=allowed)
    if found:
        raise fail(f"the {what} uses the course's own {', '.join(sorted(found))}; write your own", "library")
    return kernel_obj


def kernel(what: str = "kernel", *, allowed=()) -> _Spec:
    """The answer is a ``@cuda.jit`` kernel written by the student.

    Parameters
    ----------
    what : str
        Its name in messages.
    allowed : sequence
        Course objects the kernel may call (device functions the question offers).
    """
    return _Spec(what, lambda value, name: Answer(_own_kernel(value, name, allowed), {}), kernel=True)


def kernel_factory(what: str = "kernel factory", *, probe: dict | None = None, allowed=()) -> _Spec:
    """The answer is a function returning a ``@cuda.jit`` kernel for the given parameters (``make(tile)``).

    The grader chooses the parameters of every test (the same on every backend), so that the
    checker and the profiler run small launches. ``probe`` are parameters the answer is tried
    with when it is checked (default: none, the factory is only checked to be the student's).
    """
    def validate(value, name):
        if not callable(value) or hasattr(value, "py_func"):
            raise fail(f"{name} must be a function returning a @cuda.jit kernel, got {type(value).__name__}",
                       "answer")
        as_student_function(value, name, allowed=allowed)

        def make(factory, *args, **params):
            return _own_kernel(factory(*args, **params), f"kernel returned by {name}", allowed)

        answer = Answer(value, {}, make)
        if probe is not None:
            answer.kernel(**probe)
        return answer

    return _Spec(what, validate, kernel=True)


def function(what: str = "function", *, forbidden_names=(), allowed=()) -> _Spec:
    """The answer is the student's own function (not one that calls the course's code)."""
    return _Spec(what, lambda value, name: as_student_function(value, name, forbidden_names, allowed=allowed))


def _number_validator(integral, minimum, maximum):
    def validate(value, name):
        kinds = (int, np.integer) if integral else (int, float, np.integer, np.floating)
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, kinds) or not math.isfinite(value):
            raise fail(f"{name} must be {'an integer' if integral else 'a finite number'}, got {value!r}"[:300],
                       "answer")
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            raise fail(f"{name} must be in [{minimum}, {maximum}], got {value!r}", "answer")
        return int(value) if integral else float(value)

    return validate


def number(what: str = "number", *, minimum=None, maximum=None) -> _Spec:
    """The answer (or a field) is a finite real number."""
    return _Spec(what, _number_validator(False, minimum, maximum))


def integer(what: str = "integer", *, minimum=None, maximum=None) -> _Spec:
    """The answer (or a field, or an option) is an integer (``bool`` and ``3.0`` are refused)."""
    return _Spec(what, _number_validator(True, minimum, maximum))


def choice(what: str, choices) -> _Spec:
    """The answer (or a field) is one of a few strings."""
    choices = tuple(choices)

    def validate(value, name):
        if type(value) is not str or value not in choices:
            raise fail(f"{name} must be one of {choices}, got {value!r}"[:300], "answer")
        return value

    return _Spec(what, validate)


def number_map(what: str = "measurements", *, keys=None) -> _Spec:
    """The answer (or a field) is a dict from integers to finite numbers (``{tile: value}``)."""
    def validate(value, name):
        if not isinstance(value, dict):
            raise fail(f"{name} must be a dict {{key: number}}, got {type(value).__name__}", "answer")
        out = {}
        for k, v in value.items():
            k = _number_validator(True, None, None)(k, f"a key of {name}")
            out[k] = _number_validator(False, None, None)(v, f"{name}[{k}]")
        if keys is not None and set(out) != set(keys):
            raise fail(f"{name} must have the keys {sorted(keys)}, got {sorted(out)}", "answer")
        return out

    return _Spec(what, validate)


def measurement(what: str = "measure") -> _Spec:
    """The answer (or a field) is the student's measuring function, ``measure(kernel, *config) -> number``.

    It may (and should) call the course's tools (``course_lib.sim.profile``...): the grader calls
    it and compares its numbers with its own measurement
    (:func:`course_lib.grading.authoring.measuring.kernel_measurement_test`). It may not reach the
    course's cost models (``course_lib.<unit>.model``), the questions' own code (``course_lib.<unit>.questions``)
    or the grading package, imported anywhere in its code: a model predicts and the grader's figure is the
    answer; neither measures (cause ``"library"``: the question counts at most half).
    """
    def validate(value, name):
        if not callable(value) or isinstance(value, type):
            raise fail(f"{name} must be a function of the parameter measured, e.g. def {name}(tile): ...", "answer")
        models = model_uses(value)
        if models:
            raise fail(f"{name} uses {', '.join(models)}: a model's prediction or the grader's own figure, not a "
                       "measurement; measure it (with the profiler or record())", "library")
        return value

    return _Spec(what, validate)


def _prepare(answer_spec, options):
    """The question's ``prepare``: validate the answer (a spec, or a dict of field specs) and the options."""
    def prepare(value=None, **given):
        reset_coverage()  # a new answer: the statements that ran are those of its own launches
        unknown = sorted(set(given) - set(options))
        if unknown:
            raise fail(f"check() got unexpected option(s) {unknown}; this question takes "
                       f"{sorted(options) or 'none'}", "answer")
        checked = {}
        for key, spec in options.items():
            if key not in given:
                raise fail(f"pass {key}=... to check() ({spec.example or spec.what})", "answer")
            checked[key] = spec.validate(given[key], f"option {key}")
        if isinstance(answer_spec, dict):
            if not isinstance(value, dict):
                raise fail("answer with a dict: {" + ", ".join(f"{k!r}: ..." for k in answer_spec) + "}", "answer")
            # Each part on its own: a missing or malformed part fails the tests that use it, not the others.
            fields, problems = {}, {}
            for key, spec in answer_spec.items():
                if key not in value:
                    problems[key] = (f"{key} is missing: the answer dict has no key {key!r} (pass {{..., {key!r}: {key}}})",
                                     False)
                    continue
                try:
                    fields[key] = spec.validate(value[key], key)
                except TestFailure as exc:
                    problems[key] = (str(exc).rsplit(f"\n{CAUSE_PREFIX}", 1)[0], exc.cause == "library")
            return Answer(fields, checked, problems=problems)
        prepared = answer_spec.validate(value, answer_spec.what)
        if isinstance(prepared, Answer):
            prepared.options = checked
            return prepared
        return Answer(prepared, checked)

    return prepare
