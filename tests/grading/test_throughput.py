"""The grading throughput benchmark: its synthetic class, and a tiny run through the bench CLI."""

import json

import nbformat
import pytest

from course_lib.bench.__main__ import main as bench_main
from course_lib.grading.reporting.throughput import CRASH_CELL, KINDS, synthetic_class


def test_synthetic_class_has_every_kind_in_turn(tmp_path):
    written = synthetic_class("ps1", tmp_path, 9)
    assert [kind for _, kind, _ in written] == [KINDS[i % 4] for i in range(9)]
    expected = {kind: points for _, kind, points in written}
    assert expected == {"solution": 10.0, "stub": 0.0, "wrong": 7.0, "crash": 0.0}  # ps1's naive fixture: 3+2+2
    crash = nbformat.read(written[3][0], as_version=4)
    assert crash.cells[0].source == CRASH_CELL
    assert len({p.name for p, _, _ in written}) == 9
    with pytest.raises(ValueError, match="at least 1"):
        synthetic_class("ps1", tmp_path, 0)


def test_bench_cli_grades_a_tiny_class_twice_and_writes_json(tmp_path, capsys):
    """A smoke test (4 submissions, one of each kind): the figures of such a run mean nothing."""
    assert bench_main(["grading", "--quick", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "s per submission" in out and "speed-up" in out and "not a measurement" in out
    (json_path,) = tmp_path.glob("grading_*.json")
    results = json.loads(json_path.read_text())
    assert results["unit"] == "grading" and results["cpu"] and results["cpu_cores"] and results["date"]
    rows = results["rows"]
    assert [(r["problem_set"], r["jobs"]) for r in rows] == [("ps1", 1), ("ps1", 2)]
    assert all(r["submissions"] == 4 and r["kinds"] == {k: 1 for k in KINDS} for r in rows)
    assert rows[0]["speedup"] == 1.0 and rows[1]["speedup"] == pytest.approx(rows[0]["seconds"] / rows[1]["seconds"])
    assert all(r["seconds_per_submission"] == pytest.approx(r["seconds"] / 4) for r in rows)
    assert list(tmp_path.glob("grading_*.png"))
    assert any("a reduced class: 4 submissions per problem set (ps1)" in n for n in results["notes"])


def test_class_size_options_belong_to_the_grading_benchmark(tmp_path, capsys):
    with pytest.raises(SystemExit):
        bench_main(["nbody", "--submissions", "3", "--out", str(tmp_path)])
    assert "options of the grading benchmark" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
