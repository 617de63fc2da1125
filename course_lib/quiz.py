"""Self-check quiz questions for lessons: multiple choice with an explanation.

Each unit keeps its quiz questions in ``course_lib/<unit>/quiz.py`` as ``QUIZ``, built
with :func:`quiz_dict` (which checks every question once, for every unit). In a notebook,
``show(nbody.QUIZ["work"])`` displays the question with buttons; :meth:`Quiz.answer`
checks an answer in code.

>>> QUIZ = quiz_dict({"work": Quiz("Work of all-pairs N-body?", ("N", "N^2"), "N^2", "N(N - 1) pairs.")})
>>> QUIZ["work"].correct
1
>>> QUIZ["work"].answer("N")
"Not quite: the answer is 'N^2'. N(N - 1) pairs."
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from types import MappingProxyType

from ._validate import check_id_table

__all__ = ["Quiz", "quiz_dict", "show", "static_answer"]


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
