"""Self-check quiz questions for lessons: multiple choice with an explanation.

Each unit writes its quiz questions in ``course_lib/<unit>/quiz.md`` (prose, in the format
of :func:`parse_quiz`), which ``course_lib/<unit>/quiz.py`` reads into ``QUIZ`` with
:func:`quiz_file`; :func:`quiz_dict` checks every question once, for every unit. In a
notebook, ``show(nbody.QUIZ["work"])`` displays the question with buttons;
:meth:`Quiz.answer` checks an answer in code.

>>> QUIZ = quiz_dict({"work": Quiz("Work of all-pairs N-body?", ("N", "N^2"), "N^2", "N(N - 1) pairs.")})
>>> QUIZ["work"].correct
1
>>> QUIZ["work"].answer("N")
"Not quite: the answer is 'N^2'. N(N - 1) pairs."
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType

from ._validate import check_id_table

__all__ = ["Quiz", "parse_quiz", "quiz_dict", "quiz_file", "show", "static_answer"]


@dataclass(frozen=True)
class Quiz:
    """A multiple-choice question.

    Attributes
    ----------
    prompt : str
    choices : tuple of str
    correct : int or str
        Index of the right choice, or its text (stored as the index).
    explanation : str
        Shown once answered.
    """

    prompt: str
    choices: tuple
    correct: int
    explanation: str

    def __post_init__(self):
        object.__setattr__(self, "choices", tuple(self.choices))
        if len(set(self.choices)) != len(self.choices) or len(self.choices) < 2:
            raise ValueError(f"choices must be at least two different answers, got {self.choices}")
        if isinstance(self.correct, str):
            if self.correct not in self.choices:
                raise ValueError(f"correct must be one of the choices {list(self.choices)}, got {self.correct!r}")
            object.__setattr__(self, "correct", self.choices.index(self.correct))
        if not 0 <= self.correct < len(self.choices):
            raise ValueError(f"correct={self.correct} is not an index of the {len(self.choices)} choices")
        if not self.prompt.strip() or not self.explanation.strip():
            raise ValueError("a quiz question needs a prompt and an explanation")

    def answer(self, choice) -> str:
        """Feedback for a choice given by index or by its text."""
        index = self.choices.index(choice) if isinstance(choice, str) else int(choice)
        if not 0 <= index < len(self.choices):
            raise ValueError(f"choice must be one of {list(self.choices)} or an index below {len(self.choices)}")
        verdict = "Right." if index == self.correct else f"Not quite: the answer is {self.choices[self.correct]!r}."
        return f"{verdict} {self.explanation}"

    def _repr_html_(self) -> str:
        items = "".join(f"<li>{html.escape(c)}</li>" for c in self.choices)
        return f"<p><b>Quiz.</b> {html.escape(self.prompt)}</p><ol type='a'>{items}</ol>"


def quiz_dict(questions: dict) -> MappingProxyType:
    """A unit's ``QUIZ``: its questions by id, checked and read-only.

    Parameters
    ----------
    questions : dict of str -> Quiz
        Ids are identifiers (``"tile_fetches"``), used by the lessons as ``QUIZ["tile_fetches"]``.
    """
    return check_id_table(questions, "quiz", "QUIZ", Quiz)


_HEADING = re.compile(r"^## +(\w+) *$")
_CHOICE = re.compile(r"^- (\[x\] )?(.*)$")


def parse_quiz(text: str, **values) -> dict:
    """Quiz questions written in Markdown, by id.

    Each question is a ``## id`` heading, the prompt, the choices as a list (the right one
    marked ``[x]``), then the explanation. A paragraph may be wrapped over several lines
    (joined with single spaces); ``{NAME}`` in a prompt or explanation is replaced by
    ``values["NAME"]`` (a sentence the library defines once, such as a rule quoted verbatim).

    Parameters
    ----------
    text : str
        The Markdown; anything before the first heading (a title, a note) is ignored.
    **values : str
        Texts to put in place of ``{NAME}``.

    Returns
    -------
    dict of str -> Quiz

    Raises
    ------
    ValueError
        A question without a prompt, choices or explanation, or without exactly one ``[x]``.

    Examples
    --------
    >>> quiz = parse_quiz('''
    ... ## work
    ... Work of all-pairs
    ... N-body?
    ...
    ... - N
    ... - [x] N^2
    ...
    ... {PAIRS} pairs.
    ... ''', PAIRS="N(N - 1)")
    >>> quiz["work"]
    Quiz(prompt='Work of all-pairs N-body?', choices=('N', 'N^2'), correct=1, explanation='N(N - 1) pairs.')
    """
    sections, current = {}, None
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            current = sections.setdefault(heading.group(1), [])
        elif current is not None:
            current.append(line.rstrip())

    def fill(lines):
        paragraph = " ".join(line.strip() for line in lines if line.strip())
        for name, value in values.items():
            paragraph = paragraph.replace("{" + name + "}", value)
        return paragraph

    questions = {}
    for qid, lines in sections.items():
        items = [i for i, line in enumerate(lines) if _CHOICE.match(line)]
        if not items or items != list(range(items[0], items[-1] + 1)):
            raise ValueError(f"quiz question {qid!r}: its choices must be one list of '- ' items")
        choices = [_CHOICE.match(lines[i]).groups() for i in items]
        right = [k for k, (mark, _) in enumerate(choices) if mark]
        if len(right) != 1:
            raise ValueError(f"quiz question {qid!r}: mark exactly one choice with [x], got {len(right)}")
        questions[qid] = Quiz(fill(lines[:items[0]]), tuple(c for _, c in choices), right[0],
                              fill(lines[items[-1] + 1:]))
    return questions


def quiz_file(package: str, **values) -> MappingProxyType:
    """A unit's ``QUIZ``, read from the ``quiz.md`` of its package (see :func:`parse_quiz`).

    Parameters
    ----------
    package : str
        The unit's package (``"course_lib.nbody"``; a unit's ``quiz.py`` passes ``__package__``).
    **values : str
        As for :func:`parse_quiz`.

    Returns
    -------
    types.MappingProxyType
        As :func:`quiz_dict`.
    """
    text = resources.files(package).joinpath("quiz.md").read_text(encoding="utf-8")
    return quiz_dict(parse_quiz(text, **values))


def show(quiz: Quiz):
    """An ipywidgets form for the question: choose, press Check, read the explanation."""
    import ipywidgets as widgets

    options = widgets.RadioButtons(options=list(quiz.choices), value=None, layout={"width": "max-content"})
    button = widgets.Button(description="Check", button_style="info")
    feedback = widgets.HTML()

    def on_click(_):
        if options.value is None:
            feedback.value = "<i>Pick an answer first.</i>"
        else:
            feedback.value = html.escape(quiz.answer(options.value))

    button.on_click(on_click)
    # Without a kernel (the course site, a notebook viewer) the button does nothing: these classes tell the
    # site's snapshot to leave the button out and to show this answer, hidden in a running notebook, instead.
    button.add_class("course-live-only")
    revealed = widgets.HTML(static_answer(quiz), layout={"display": "none"})
    revealed.add_class("course-static-only")
    return widgets.VBox([widgets.HTML(f"<b>Quiz.</b> {html.escape(quiz.prompt)}"), options, button, feedback, revealed])


def static_answer(quiz: Quiz) -> str:
    """The answer and its explanation in an HTML ``<details>`` box that opens on a click (no kernel needed)."""
    answer = html.escape(quiz.choices[quiz.correct])
    return (f"<details class='course-quiz-answer'><summary>Show the answer</summary>"
            f"<p><b>{answer}</b>. {html.escape(quiz.explanation)}</p></details>")
