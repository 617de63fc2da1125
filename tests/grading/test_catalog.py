"""Problem sets are addressed by id or unit name, and grading works from an installed package."""

import csv
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course_lib.grading import catalog
from course_lib.grading.__main__ import main
from course_lib.grading.reporting.release import release

ROOT = Path(__file__).resolve().parents[2]


def test_every_unit_name_and_id_names_its_problem_set():
    known = catalog.manifest()
    assert known["ps1"] == "nbody" and known["ps2"] == "spmv"
    for ps, unit in known.items():
        assert catalog.problem_set_id(ps) == catalog.problem_set_id(unit) == catalog.problem_set_id(f"{ps}_{unit}") == ps
        assert catalog.solution_path(unit) == catalog.solution_path(ps) == ROOT / "solutions" / f"{ps}_{unit}.ipynb"


@pytest.mark.parametrize("name", ["ps99", "sim", "", None, 2])
def test_unknown_names_list_the_known_ones(name):
    with pytest.raises(ValueError, match=r"problem set must be .* ps2 \(spmv\)"):
        catalog.problem_set_id(name)


def test_release_by_unit_name_equals_release_by_id(tmp_path, capsys):
    assert main(["release", "spmv", "--out", str(tmp_path / "by_unit")]) == 0
    by_id = release("ps2", tmp_path / "by_id")
    by_unit = tmp_path / "by_unit" / by_id.name
    assert nbformat.read(by_unit, as_version=4) == nbformat.read(by_id, as_version=4)
    assert "wrote" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["release", "no_such_unit", "--out", str(tmp_path)])


def test_grading_from_an_installed_package_in_another_folder(tmp_path):
    """Build the package as pip does (setup.py's build step, which ships the solutions), then grade
    a submission with only the built package on the path, from a folder outside the checkout."""
    site = tmp_path / "site"
    build = subprocess.run([sys.executable, "setup.py", "-q", "egg_info", "--egg-base", str(tmp_path),
                            "build", "--build-base", str(tmp_path / "build"),
                            "build_py", "--build-lib", str(site)], cwd=ROOT, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-2000:]
    assert sorted(p.name for p in (site / "course_lib" / "_shipped" / "solutions").glob("*.ipynb")) == \
        sorted(p.name for p in (ROOT / "solutions").glob("ps*_*.ipynb"))
    elsewhere = tmp_path / "grading"
    elsewhere.mkdir()
    (elsewhere / "alice.ipynb").write_bytes((ROOT / "solutions" / "ps2_spmv.ipynb").read_bytes())
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(site)
    code = ("import course_lib, sys; from course_lib.cli import main; "
            "assert course_lib.__file__.startswith(sys.argv[1]), course_lib.__file__; "
            "sys.exit(main(['grading', 'grade', 'spmv', 'alice.ipynb', '--out', 'grades.csv', '--quiet']))")
    run = subprocess.run([sys.executable, "-c", code, str(site)], cwd=elsewhere, env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    with (elsewhere / "grades.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert {r["question"] for r in rows} == {"ps2.q1", "ps2.q2", "ps2.q3"}
    assert all(r["status"] == "passed" and r["points"] == r["max_points"] for r in rows), rows
