"""Self-check quiz questions for lessons: multiple choice with an explanation.

Each unit keeps its quiz questions in ``course_lib/<unit>/quiz.py`` as a dict
``QUIZ`` of :class:`Quiz`. In a notebook, ``show(nbody.QUIZ["work"])`` displays the
question with buttons; :meth:`Quiz.answer` checks an answer in code.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

__all__ = ["Quiz", "show"]


@dataclass(frozen=True)
class Quiz:
    """A multiple-choice question.

    Attributes
    ----------
    prompt : str
    choices : tuple of str
    correct : int
        Index of the right choice.
    explanation : str
        Shown once answered.
    """

    prompt: str
    choices: tuple
    correct: int
    explanation: str

    def __post_init__(self):
        if not 0 <= self.correct < len(self.choices):
            raise ValueError(f"correct={self.correct} is not an index of the {len(self.choices)} choices")

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
    return widgets.VBox([widgets.HTML(f"<b>Quiz.</b> {html.escape(quiz.prompt)}"), options, button, feedback])
