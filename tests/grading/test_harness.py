"""The shared question harness: a small kernel question declared as the usage guide shows, graded in one process."""

import numpy as np
import pytest
from numba import cuda

from course_lib.grading import run_tests
from course_lib.grading.core import HIDDEN_FAILURE, Question, cause_of
from course_lib.grading.authoring.harness import (GUARD, Launch, calls_test, close, fail, function, guarded, inner,
                                                  integer, kernel, question, race_test, result_test, sentinel,
                                                  sign_flipped, technique_test, unguard)


def _sized(n):
    return lambda rng, info: {"x": np.arange(1, n + 1, dtype=np.float32), "block": info["block"]}


def _launch(answer, data):
    x = np.asarray(data["x"])
    out = np.full(len(x), np.nan, np.float32)
    return Launch(answer.kernel(), -(-len(x) // data["block"]), data["block"], {"x": x, "out": out}, outputs=("out",))


def _doubled(data):
    return {"out": 2 * np.asarray(data["x"])}


def _loads_per_element(metrics, data):
    return metrics["global_load_bytes"] / 4 / len(data["x"])


DOUBLE = question(
    "ps0.q1", "double every element", 6, answer=kernel("double kernel"), options={"block": integer(minimum=1)},
    hints={"bounds": "guard i < n"}, diagnose=[("sign", sign_flipped)], tolerance="1e-6 relative",
    tests=[
        result_test("n = 1 (no points)", 0, inputs=_sized(1), launch=_launch, expect=_doubled, compare=close(1e-6)),
        result_test("n = block + 1", 2, inputs=_sized(33), launch=_launch, expect=_doubled, compare=close(1e-6),
                    label=lambda data: f"for n = {len(data['x'])}"),
        result_test("hidden: n = 70", 1, inputs=_sized(70), launch=_launch, expect=_doubled, compare=close(1e-6),
                    hidden=True),
        race_test("race and bounds check", 1, inputs=_sized(40), launch=_launch, expect=_doubled, compare=close(1e-6)),
        technique_test("one load per element", 2, inputs=_sized(40), launch=_launch, expect=_doubled,
                       compare=close(1e-6), measure=_loads_per_element, limit=lambda data: (0.9, 1.1),
                       technique="each element read once", unit="loads per element"),
    ])


@cuda.jit
def double_kernel(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = 2 * x[i]


@cuda.jit
def negated_kernel(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = -2 * x[i]


@cuda.jit
def rereading_kernel(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = x[i] + x[i]


@cuda.jit
def unguarded_kernel(x, out):
    i = cuda.grid(1)
    out[i] = 2 * x[min(i, x.shape[0] - 1)]


def grade(answer, **options):
    return run_tests(DOUBLE, answer, hidden=True, seed=1, options=options)


def test_right_kernel_full_marks_and_declared_points():
    result = grade(double_kernel, block=32)
    assert result.points == 6 and [o.max_points for o in result.outcomes] == [0, 2, 1, 2, 1, 0]  # last: coverage
    assert "[PASS] one load per element (technique)  [2/2]" in str(result)


def test_wrong_technique_is_capped_at_half_with_the_measurement():
    result = grade(rereading_kernel, block=32)
    assert result.capped and result.points == 3
    message = next(o.message for o in result.outcomes if not o.passed)
    assert "expected technique: each element read once" in message and "measured 2" in message
    assert "Likely cause: technique" in message


def test_causes_pick_their_hints_and_hidden_tests_show_only_their_result():
    sign = grade(negated_kernel, block=32)
    visible = next(o for o in sign.outcomes if o.name == "n = block + 1")
    assert "Likely cause: sign" in visible.message and "Hint: the result has the right size but the wrong sign" \
        in visible.message and "for n = 33" in visible.message
    hidden = next(o for o in sign.outcomes if o.hidden)
    assert hidden.message == HIDDEN_FAILURE
    bounds = grade(unguarded_kernel, block=32)
    messages = "\n".join(o.message for o in bounds.outcomes)
    assert "Hint: guard i < n" in messages and "out-of-bounds" in messages


def test_options_and_answers_are_validated():
    assert "pass block=" in grade(double_kernel).error
    assert "option block must be an integer" in grade(double_kernel, block=True).error
    assert "unexpected option" in grade(double_kernel, block=32, tile=3).error
    assert "must be a @cuda.jit kernel" in grade(lambda x, out: None, block=32).error


def test_guards_catch_writes_past_the_end():
    padded = guarded(np.zeros((3, 2), np.float32), axes=(0,))
    assert padded.shape == (3 + 2 * GUARD, 2) and inner(padded).shape == (3, 2)
    assert np.array_equal(unguard(padded, (3, 2), name="acc"), np.zeros((3, 2)))
    padded[3 + GUARD] = 1.0
    with pytest.raises(AssertionError, match=r"wrote outside acc: 2 elements beyond its shape \(3, 2\)") as info:
        unguard(padded, (3, 2), name="acc")
    assert info.value.cause == "bounds" and cause_of(str(info.value)) == "bounds"
    frame = guarded(np.zeros((3, 4, 5), np.uint8), axes=(1, 2))
    assert frame.shape == (3, 4 + 2 * GUARD, 5 + 2 * GUARD) and frame[0, 0, 0] == sentinel(np.uint8)


def test_points_must_add_up_and_every_test_declares_them():
    with pytest.raises(ValueError, match="add up to 2, not the question's 3"):
        question("ps0.q2", "t", 3, answer=function(), tests=[
            calls_test("a", 2, args=lambda rng, info: [(1,)], expect=lambda n: n)])
    with pytest.raises(ValueError, match="give points to every test or to none"):
        from course_lib.grading.core import Test

        steps = {"inputs": lambda rng, info: {}, "produce": lambda answer, data: None, "judge": lambda *args: None}
        Question("ps0.q3", "t", 1, (Test("a", points=1, **steps), Test("b", **steps)))


def test_calls_test_refuses_the_course_code_and_names_the_call():
    square = question("ps0.q4", "square", 1, answer=function("square"), tests=[
        calls_test("squares", 1, what="square", args=lambda rng, info: [(3,), (4,)], expect=lambda n: n * n)])
    assert run_tests(square, lambda n: n * n).points == 1
    wrong = run_tests(square, lambda n: 2 * n)
    assert "square(3) = 6, expected 9" in str(wrong)
    assert "course's own" in run_tests(square, fail).error
    # NumPy expressions may return 0-d arrays (np.prod, np.ceil of an array): the number they hold is the answer.
    assert run_tests(square, lambda n: np.array(n) * np.array(n)).points == 1
    assert "square(3) = 6, expected 9" in str(run_tests(square, lambda n: np.array(2 * n)))
    assert run_tests(square, lambda n: np.array([n * n])).points == 0  # a 1-element array is not a number


def test_feedback_block_is_full_width_left_aligned_and_never_breaks_words():
    html = grade(rereading_kernel, block=32)._repr_html_()
    assert "width:100%" in html and "text-align:left" in html and "word-break:normal" in html
    assert "<table" not in html  # JupyterLab right-aligns table cells
    for line in str(grade(rereading_kernel, block=32)).splitlines():
        assert len(line) <= 110 or line.lstrip().startswith("Capped")
