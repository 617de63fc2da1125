"""The grader's own resources: the hints shown with a failure and the answer keys of the formula questions,
kept out of the library a student imports.

A failed test's feedback ends with a hint for its likely cause (``Hint: guard v < V ...``). Those texts
say how to answer, so they are not in the questions modules (which every student's process imports)
but in data files read by the grader when it reports, after the student's code has run::

    grading_resources/hints/psN_<unit>.json      in a checkout of the course
    course_lib/_shipped/grading_resources/...    the copy setup.py puts in a built package

or the folder ``$COURSE_GRADING_RESOURCES`` names. One file per problem set::

    {"problem_set": "ps3",
     "questions": {"ps3.q1": {"hints": {"race": "...", "bounds": "..."}},
                   "ps3.q2": {"tests": {"<test name>": {"hint": "...", "hints": {"measure": "..."}}}},
                   "ps3.q3": {"tests": {"<test name>": {"explain": "..."}}}}}

The answer keys (the trusted value of a formula or a decision a question asks for: ``split_rule``, a chain's
edge counts, the least conflict-free layout...) are Python, one module per problem set beside the hints::

    grading_resources/keys/psN_<unit>.py

read by :func:`answer_key` when a test judges a value, in the grader's process (or in :func:`check`'s, in a
checkout), never in the worker that runs a submission. A key module may import the library (its models); the
library never imports a key module. Its functions count as the course's code for the own-work check
(:mod:`course_lib.grading.authoring.ownwork`): an answer that reaches them is refused like one calling the
library. A course without its keys cannot judge those values, and says so.

``hints`` of a question apply to all its tests (on top of the harness's ``DEFAULT_HINTS``); a test's
``hint`` is its general hint and its ``hints`` its hints per cause, over the question's; a test's
``explain`` is the sentence a :func:`~course_lib.grading.authoring.testkinds.calls_test` or
:func:`~course_lib.grading.authoring.testkinds.value_test` adds to a wrong value's message
(:func:`explanation`). A question's tests find theirs by the question's id and their own name
(:attr:`course_lib.grading.model.Test.hint_key`), both stable.

Who can read them: the grader's process, and :func:`course_lib.grading.check` in a checkout (an
instructor's, or a student's clone, which holds the solutions as well). The worker that runs a
submission under bubblewrap cannot: it sees only the ``course_lib`` package, and the shipped copy
is hidden under an empty tmpfs (:mod:`course_lib.grading.running.sandbox`). Without bubblewrap (mode
*none*) a process reads whatever the grader's user can; the Gradescope and PrairieLearn graders
therefore read the hints and keys into memory (:func:`preload`) and delete them, with the solutions, before
any student code runs. A course without the hint files grades the same, with no hints in its feedback.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
from pathlib import Path

__all__ = ["ENV", "MissingKey", "answer_key", "explanation", "folders", "hide", "hint_files", "key_files", "preload",
           "stored_hints"]

#: Environment variable naming a folder holding ``hints/psN_<unit>.json`` (an installed grader's resources).
ENV = "COURSE_GRADING_RESOURCES"
_PACKAGE = Path(__file__).resolve().parents[1]
#: The checkout's folder, when course_lib runs from a checkout (editable install or PYTHONPATH).
CHECKOUT = _PACKAGE.parent / "grading_resources"
#: The copy inside a built package (written by setup.py's build step, next to the shipped solutions).
SHIPPED = _PACKAGE / "_shipped" / "grading_resources"

_loaded: dict = {}
#: Key modules read, by problem set.
_keys: dict = {}
#: The package name a key module is loaded under: ``course_lib...``, so that the own-work check counts its
#: functions as the course's code (no such package is importable).
KEY_PACKAGE = "course_lib.grading._keys"


class MissingKey(LookupError):
    """A problem set's answer key is not among the grader's resources."""


def folders() -> list:
    """The folders searched for ``hints/``, first found first: ``$COURSE_GRADING_RESOURCES``, the checkout's,
    the shipped copy."""
    named = [Path(os.environ[ENV])] if os.environ.get(ENV) else []
    return named + [CHECKOUT, SHIPPED]


def _found(kind: str, suffix: str, problem_set: str | None) -> list:
    """The files ``<kind>/psN_<unit><suffix>`` (of one problem set, or all), from the first folder that has any."""
    for folder in folders():
        found = sorted((folder / kind).glob(f"{problem_set or 'ps*'}_*{suffix}"))
        if found:
            return found
    return []


def hint_files(problem_set: str | None = None) -> list:
    """The hint files found (of one problem set, or all), from the first folder that has any."""
    return _found("hints", ".json", problem_set)


def key_files(problem_set: str | None = None) -> list:
    """The answer-key modules found (of one problem set, or all), from the first folder that has any."""
    return _found("keys", ".py", problem_set)


def _key_module(problem_set: str):
    """The problem set's key module, read once (:data:`KEY_PACKAGE`.psN_<unit>)."""
    if problem_set not in _keys:
        found = key_files(problem_set)
        if not found:
            raise MissingKey(f"the answer keys of {problem_set} (grading_resources/keys/{problem_set}_<unit>.py) are "
                             "not here: judging its formula questions needs the course's grading resources (a "
                             "checkout of the course, or a package built from one)")
        spec = importlib.util.spec_from_file_location(f"{KEY_PACKAGE}.{found[0].stem}", found[0])
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _keys[problem_set] = module
    return _keys[problem_set]


class _StoredKey:
    """A key read when first called (see :func:`answer_key`)."""

    def __init__(self, problem_set: str, name: str):
        # key_name: also what the own-work check names when an answer reaches the key
        self.problem_set, self.key_name = problem_set, name

    def __call__(self, *args, **kwargs):
        key = getattr(_key_module(self.problem_set), self.key_name, None)
        if not callable(key):
            raise MissingKey(f"{self.problem_set}'s answer keys have no {self.key_name!r}")
        return key(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<answer key {self.problem_set}:{self.key_name}>"


def answer_key(problem_set: str, name: str):
    """The grader's key ``name`` of a problem set (a function in ``keys/psN_<unit>.py``), read when first called.

    Parameters
    ----------
    problem_set : str
        ``"ps7"``.
    name : str
        The key function's name in the problem set's key module.

    Returns
    -------
    callable
        Calls the key with the same arguments; raises :class:`MissingKey` when the key module (or the name in it)
        is not among the resources.
    """
    return _StoredKey(problem_set, name)


def _read(problem_set: str) -> dict:
    """``{question id: {...}}`` of a problem set, from its file; ``{}`` when there is none (or it cannot be read)."""
    if problem_set not in _loaded:
        questions = {}
        for path in hint_files(problem_set):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(data, dict) and data.get("problem_set") == problem_set:
                questions.update(data.get("questions") or {})
        _loaded[problem_set] = questions
    return _loaded[problem_set]


def preload(problem_set: str) -> int:
    """Read a problem set's hints and answer keys into this process now (before they are deleted); returns the
    questions with hints found."""
    _loaded.pop(problem_set, None)
    _keys.pop(problem_set, None)
    if key_files(problem_set):
        _key_module(problem_set)
    return len(_read(problem_set))


def _entry(question_id: str, test_name: str | None = None) -> dict:
    question = _read(question_id.split(".", 1)[0]).get(question_id) or {}
    if test_name is None:
        return question
    return (question.get("tests") or {}).get(test_name) or {}


def stored_hints(question_id: str, test_name: str) -> tuple:
    """``(hints per cause, general hint)`` stored for a test: the question's hints, then the test's own over them."""
    question, test = _entry(question_id), _entry(question_id, test_name)
    return {**(question.get("hints") or {}), **(test.get("hints") or {})}, test.get("hint") or ""


@functools.lru_cache(maxsize=None)
def explanation(question_id: str, test_name: str):
    """``explain(arguments, expected) -> str`` for a calls or value test: the sentence stored for it, read when a
    wrong value is reported (empty when there is none)."""
    def explain(*_):
        return _entry(question_id, test_name).get("explain") or ""

    return explain


def hide(root: Path) -> int:
    """Delete the hint and key files under ``root`` (a grader's single-use copy of the course, after
    :func:`preload`); returns how many. Folders outside ``root`` are never touched."""
    removed = 0
    for folder in folders():
        for kind, pattern in (("hints", "*.json"), ("keys", "*.py")):
            files = folder / kind
            if not files.is_dir() or not files.resolve().is_relative_to(Path(root).resolve()):
                continue
            for path in files.glob(pattern):
                path.unlink()
                removed += 1
    return removed
