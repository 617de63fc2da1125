"""The technique census on a synthetic problem set 1 class: the share meeting each technique feature, the
wrong techniques named from the missed features, and the hidden configurations' failures, in the class report."""

from course_lib.cli import main as course_main
from course_lib.grading.core import QuestionResult, TestOutcome, get_question
from course_lib.grading.reporting.census import census, missed_features, wrong_technique
from course_lib.grading.results.details import outcome_rows, outcomes_path, read_outcomes, write_outcomes
from course_lib.grading.results.report import rows_of, write_grades

Q1 = get_question("ps1.q1")
(SIGNATURE,) = [t for t in Q1.tests if t.technique and getattr(t.judge, "features", None)]
(HIDDEN,) = [t for t in Q1.tests if t.hidden]
FEATURES = [f.name for f in SIGNATURE.judge.features]
LOADS, SHARED, PER_REQUEST, BARRIERS, SPAN, ATOMICS = FEATURES


def _miss(*lines):
    """A signature failure's message as the grader words it (feature lines, then the likely cause)."""
    return ("the course's profiler (course_lib.sim.profile) (for 100 bodies, tile 64): " + "\n".join(lines)
            + "\nLikely cause: technique\nHint: stage a tile")


NAIVE = _miss(f"{LOADS}: measured 2, the technique gives at most 1.1 here. The technique: one load per tile",
              f"{SHARED}: measured 0, the technique gives in [1, 2.05e+03] here. The technique: a tile in shared",
              f"{BARRIERS}: measured 0, the technique gives in [2, 8] here. The technique: two barriers per tile")
ATOMIC = _miss(f"{ATOMICS}: measured 640, the technique gives in [0, 0] here. The technique: one owner")
ONE_THREAD = _miss(f"{SPAN}: measured 31.5, the technique gives at most 2.2 here. The technique: every thread")
SCATTERED = _miss(f"{PER_REQUEST}: measured 4, the technique gives at least 32 here. The technique: coalesced")


def _student(technique_message=None, technique_cause_value=False, hidden_passes=True):
    """One student's ps1.q1: the signature test passed (``None``), failed with ``technique_message``, or
    failed on a wrong result under the profiler (``technique_cause_value``); the hidden test as given."""
    outcomes = [TestOutcome(HIDDEN.name, hidden_passes, "" if hidden_passes else
                            "result: 3 of 90 values are wrong\nLikely cause: bounds", hidden=True)]
    if technique_cause_value:
        outcomes.append(TestOutcome(SIGNATURE.name, False, "under the profiler: 5 of 100 values are wrong\n"
                                    "Likely cause: sign", technique=True))
    else:
        outcomes.append(TestOutcome(SIGNATURE.name, technique_message is None, technique_message or "",
                                    technique=True))
    result = QuestionResult("ps1.q1", "two-body kernel", 6.0 if technique_message is None else 3.0, 6.0)
    result.outcomes = outcomes
    return [result]


def _class():
    students = {f"right{i}": _student() for i in range(4)}
    students.update({"naive1": _student(NAIVE), "naive2": _student(NAIVE, hidden_passes=False),
                     "atomics": _student(ATOMIC), "one_thread": _student(ONE_THREAD, hidden_passes=False),
                     "scattered": _student(SCATTERED), "wrong": _student(technique_cause_value=True,
                                                                           hidden_passes=False)})
    return students


def _write(tmp_path, students):
    grades = tmp_path / "grades.csv"
    write_grades(grades, [r for s, results in students.items() for r in rows_of(s, results)])
    write_outcomes(outcomes_path(grades), [r for s, results in students.items() for r in outcome_rows(s, results)])
    return grades


def test_missed_features_and_their_names():
    assert missed_features(NAIVE, FEATURES) == {LOADS: "above", SHARED: "below", BARRIERS: "below"}
    assert wrong_technique(ATOMICS, "above").startswith("atomics instead of")
    assert wrong_technique(SPAN, "above") == "one thread doing the work of its block or group"
    assert wrong_technique(PER_REQUEST, "below").startswith("uncoalesced loads")
    assert wrong_technique("warp shuffles", "below").startswith("no warp shuffles")
    assert wrong_technique("a new feature", "below") == "a new feature too low"


def test_census_of_a_synthetic_class(tmp_path):
    grades = _write(tmp_path, _class())
    (entry,) = census(read_outcomes(outcomes_path(grades)))
    assert entry.question == "ps1.q1"
    (technique,) = entry.techniques
    test, measured, passed, features = technique
    assert (test, measured, passed) == (SIGNATURE.name, 9, 4)  # "wrong" did not get to the measurement
    assert dict(features) == {LOADS: 7, SHARED: 7, PER_REQUEST: 8, BARRIERS: 7, SPAN: 8, ATOMICS: 8}
    assert dict(entry.wrong) == {
        "no reuse: inputs loaded again from global memory": 2,
        "no shared-memory staging: every thread reads its inputs from global memory": 2,
        "no block barrier: the block does not stage together": 2,
        "atomics instead of one owner per output (or a reduction)": 1,
        "one thread doing the work of its block or group": 1,
        "uncoalesced loads: consecutive lanes read far-apart addresses (as thread per row does)": 1}
    assert entry.hidden == [(HIDDEN.name, 10, 3)]
    # in the class report
    out = tmp_path / "report.html"
    assert course_main(["grading", "report", str(grades), "--out", str(out)]) == 0
    text = out.read_text()
    section = text[text.index("<h2 id='census'>"):text.index("<h2 id='errors'>")]
    assert "4 of 9 (44%)" in section and "7 of 9 (78%)" in section
    assert "<b>no reuse: inputs loaded again from global memory</b> &times; 2" in section
    assert "3 of 10 (30%)" in section and HIDDEN.name in section
