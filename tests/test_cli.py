"""The `course` command dispatches to the library's tools."""

import subprocess
import sys

from course_lib.cli import main


def test_usage_lists_commands(capsys):
    assert main([]) == 2
    out = capsys.readouterr().out
    assert "bench" in out and "compile-check" in out and "grading" in out


def test_grading_release_through_course_command(tmp_path, capsys):
    assert main(["grading", "release", "ps1", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "ps1_nbody.ipynb").exists()


def test_grading_commands_start_without_the_iri_grammar():
    """A grading command reads notebooks (nbformat, hence jsonschema) without building rfc3987_syntax's grammar,
    about a second of each command's start; nbformat still validates."""
    code = ("import sys\n"
            "import course_lib.grading.__main__\n"
            "import nbformat\n"
            "nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('x = 1')])\n"
            "nbformat.validate(nbformat.reads(nbformat.writes(nb), as_version=4))\n"
            "print(sys.modules.get('rfc3987_syntax'))\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "None"
