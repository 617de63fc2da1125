"""The lesson's self-check questions: each right answer is acknowledged, a wrong one explained."""

import pytest

from course_lib import cellsim as cs


def test_quiz_answers():
    for quiz in cs.QUIZ.values():
        assert quiz.answer(quiz.correct).startswith("Right.")


def test_a_wrong_answer_is_explained_and_a_bad_choice_refused():
    quiz = cs.QUIZ["tree_memory"]
    assert quiz.answer(0).startswith("Not quite")
    with pytest.raises(ValueError):
        quiz.answer(7)


def _lesson_markdown():
    import json
    from pathlib import Path

    notebook = json.loads((Path(__file__).parents[2] / "lessons" / "07_cellsim.ipynb").read_text())
    text = " ".join("".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "markdown")
    return " ".join(text.split())


def test_the_record_discard_rule_is_one_sentence_quoted_verbatim():
    """Do the lesson, the quiz and the predictions state the rule in the library's words, not their own?"""
    from course_lib.cellsim.quiz import PREDICTIONS

    assert cs.FATE_RULE in _lesson_markdown()
    assert cs.FATE_RULE in cs.QUIZ["depth"].explanation
    for name in ("deepest_generation", "deepest_recorded"):
        assert cs.FATE_RULE in PREDICTIONS[name].why
    assert "which the course calls discarding the cell" in cs.THESIS_FATE_RULE and "Remove" in cs.THESIS_FATE_RULE


@pytest.mark.parametrize("method", ["reference", "cpu", "compact"])
def test_the_rule_checks_time_first(method):
    """A cell whose daughters would fall below phi_min but whose division comes after tau_max: recorded?"""
    low = cs.InitialHistogram.from_arrays([15.0], [5])
    kwargs = dict(tau_max=0.0, phi_min=11.0, seed=3)
    result = (cs.simulate_reference(low, cs.THESIS_TYPES, **kwargs) if method == "reference"
              else cs.simulate(low, cs.THESIS_TYPES, method=method, **kwargs))
    assert (result.recorded, result.discarded, result.divisions) == (5, 0, 0)
    late = dict(kwargs, tau_max=10_000.0)
    result = (cs.simulate_reference(low, cs.THESIS_TYPES, **late) if method == "reference"
              else cs.simulate(low, cs.THESIS_TYPES, method=method, **late))
    # dividing types are discarded (their daughters would have 7.5 < 11), quiescent cells recorded
    assert result.divisions == 0 and result.recorded + result.discarded == 5
    assert result.recorded == result.by_type[-1]
