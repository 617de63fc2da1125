"""The technique census on a synthetic problem set 1 class: the share meeting each technique feature, the
wrong techniques named from the missed features, the hidden tests' failures and the results per configuration
drawn, in the class report."""

import csv

import numpy as np

from course_lib.cli import main as course_main
from course_lib.grading.core import NOT_ANSWERED, QuestionResult, TestOutcome, get_question
from course_lib.grading.reporting.census import census, config_parameters, missed_features, wrong_technique
from course_lib.grading.results.details import (OLDER_OUTCOME_FIELDS, OUTCOME_FIELDS, configuration_of, outcome_rows,
                                                outcomes_path, read_outcomes, write_outcomes)
from course_lib.grading.results.report import rows_of, write_grades

Q1 = get_question("ps1.q1")
SIGNATURE = [t for t in Q1.tests if t.technique and getattr(t.judge, "features", None)][0]  # the visible one
(HIDDEN,) = [t for t in Q1.tests if t.hidden and not t.technique]  # the hidden result test
FEATURES = [f.name for f in SIGNATURE.judge.features]
LOADS, SHARED, READS, PER_REQUEST, BARRIERS, SPAN, WARP_SHARE, ATOMICS = FEATURES


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


#: What the signature test draws for everyone (its configurations come from the visible seed).
SIGNATURE_CONFIG = "(bodies[201x4], tile=64, q=4); (bodies[101x4], tile=24, q=8)"


def _hidden_config(n):
    return configuration_of({"bodies": np.zeros((n, 4), np.float32), "tile": 16})


def _student(technique_message=None, technique_cause_value=False, hidden_n=50, hidden_passes=True):
    """One student's ps1.q1: the signature test passed (``None``), failed with ``technique_message``, or
    failed on a wrong result under the profiler (``technique_cause_value``); the hidden test, drawn with
    ``hidden_n`` bodies, as given."""
    outcomes = [TestOutcome(HIDDEN.name, hidden_passes, "" if hidden_passes else
                            "result: 3 of 90 values are wrong\nLikely cause: bounds", hidden=True,
                            config=_hidden_config(hidden_n))]
    if technique_cause_value:
        outcomes.append(TestOutcome(SIGNATURE.name, False, "under the profiler: 5 of 100 values are wrong\n"
                                    "Likely cause: sign", technique=True, config=SIGNATURE_CONFIG))
    else:
        outcomes.append(TestOutcome(SIGNATURE.name, technique_message is None, technique_message or "",
                                    technique=True, config=SIGNATURE_CONFIG))
    result = QuestionResult("ps1.q1", "two-body kernel", 6.0 if technique_message is None else 3.0, 6.0)
    result.outcomes = outcomes
    return [result]


def _class():
    """Ten students; the three whose hidden test failed drew more than 64 bodies."""
    students = {f"right{i}": _student(hidden_n=n) for i, n in enumerate((5, 9, 20, 40))}
    students.update({"naive1": _student(NAIVE, hidden_n=7), "naive2": _student(NAIVE, hidden_n=70, hidden_passes=False),
                     "atomics": _student(ATOMIC, hidden_n=3),
                     "one_thread": _student(ONE_THREAD, hidden_n=75, hidden_passes=False),
                     "scattered": _student(SCATTERED, hidden_n=12),
                     "wrong": _student(technique_cause_value=True, hidden_n=66, hidden_passes=False)})
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
    assert wrong_technique(READS, "above").startswith("redundant work")


def test_census_of_a_synthetic_class(tmp_path):
    grades = _write(tmp_path, _class())
    (entry,) = census(read_outcomes(outcomes_path(grades)))
    assert entry.question == "ps1.q1"
    (technique,) = entry.techniques
    test, measured, passed, features = technique
    assert (test, measured, passed) == (SIGNATURE.name, 9, 4)  # "wrong" did not get to the measurement
    assert dict(features) == {LOADS: 7, SHARED: 7, READS: 9, PER_REQUEST: 8, BARRIERS: 7, SPAN: 8, WARP_SHARE: 9,
                              ATOMICS: 8}
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
    assert "<code>bodies[65-128x4]</code></td><td class='num'>3 of 3 (100%)" in section
    assert f"<code>{SIGNATURE_CONFIG}</code></td><td class='num'>6 of 10 (60%)" in section


def test_configuration_of_drawn_inputs():
    assert _hidden_config(54) == "bodies[54x4], tile=16"
    sparse = {"indptr": np.zeros(42, np.int32), "indices": np.zeros(205, np.int32), "data": np.zeros(205, np.float32),
              "shape": [41, 41], "x": np.zeros(41, np.float32), "lanes": 2, "block": np.int64(64), "directed": False}
    # data has the shape of indices: left out; numpy scalars read as numbers
    assert configuration_of(sparse) == ("indptr[42], indices[205], shape=(41, 41), x[41], lanes=2, block=64, "
                                        "directed=False")
    assert configuration_of({"configs": [{"n": 3, "w": 0.25}, {"n": 5, "w": 0.5}]}) == "(n=3, w=0.25); (n=5, w=0.5)"
    assert configuration_of({"args": [(np.zeros((8, 9)),)]}) == "args=(([8x9]))"
    assert configuration_of({"cases": list(range(9))}) == "cases[9]"
    assert len(configuration_of({f"p{i}": i for i in range(100)})) == 160
    assert configuration_of(object()) == "object"
    assert config_parameters("bodies[54x4], tile=16") == [("bodies", "54", "x4"), ("tile", "16", None)]
    assert config_parameters("indptr[42], shape=(41, 41), x[41]") == [("indptr", "42", ""), ("x", "41", "")]
    assert config_parameters(SIGNATURE_CONFIG) == []


def test_results_per_configuration(tmp_path):
    (entry,) = census(read_outcomes(outcomes_path(_write(tmp_path, _class()))))
    # the hidden test drew a configuration per student: each failed one (1 of 1) first, in order
    assert entry.configurations[:4] == [(HIDDEN.name, _hidden_config(n), 1, 1) for n in (66, 70, 75)] + [
        (SIGNATURE.name, SIGNATURE_CONFIG, 10, 6)]
    assert entry.configurations[4:] == [(HIDDEN.name, _hidden_config(n), 1, 0) for n in (3, 5, 7, 9, 12, 20, 40)]
    # each parameter on its own: ten sizes, in ranges of powers of two; the tile, one value
    assert entry.parameters == [(HIDDEN.name, "bodies[65-128x4]", 3, 3), (HIDDEN.name, "tile=16", 10, 3)] + [
        (HIDDEN.name, f"bodies[{r}x4]", ran, 0) for r, ran in (("3-4", 1), ("5-8", 2), ("9-16", 2), ("17-32", 1),
                                                               ("33-64", 1))]
    # sizes of another shape: the range is of the first dimension
    students = _class()
    students["wide"] = _student(hidden_n=100)
    students["wide"][0].outcomes[0].config = "bodies[100x7], tile=16"
    # a student who left the question unanswered failed every configuration, which says nothing about them
    students["untouched"] = _student(hidden_n=300)
    for outcome in students["untouched"][0].outcomes:
        outcome.passed, outcome.message = False, NOT_ANSWERED
    (entry,) = census(read_outcomes(outcomes_path(_write(tmp_path, students))))
    assert (HIDDEN.name, "bodies[65-128x...]", 4, 3) in entry.parameters
    assert (SIGNATURE.name, SIGNATURE_CONFIG, 11, 6) in entry.configurations
    assert not [c for c in entry.configurations if "300" in c[1]] and entry.hidden == [(HIDDEN.name, 12, 4)]


def test_a_tests_csv_without_configurations(tmp_path):
    """A tests CSV written before the configuration was recorded: read with it empty, the census says so."""
    grades = _write(tmp_path, _class())
    path = outcomes_path(grades)
    rows = read_outcomes(path)
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=OLDER_OUTCOME_FIELDS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    older = read_outcomes(path)
    assert [list(r) for r in older] == [OUTCOME_FIELDS] * len(rows) and {r["config"] for r in older} == {""}
    (entry,) = census(older)
    assert entry.configurations == entry.parameters == [] and entry.hidden == [(HIDDEN.name, 10, 3)]
    out = tmp_path / "report.html"
    assert course_main(["grading", "report", str(grades), "--out", str(out)]) == 0
    assert "No configuration recorded" in out.read_text()
