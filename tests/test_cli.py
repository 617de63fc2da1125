"""The `course` command dispatches to the library's tools."""

from course_lib.cli import main


def test_usage_lists_commands(capsys):
    assert main([]) == 2
    out = capsys.readouterr().out
    assert "bench" in out and "compile-check" in out and "grading" in out


def test_grading_release_through_course_command(tmp_path, capsys):
    assert main(["grading", "release", "ps1", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "ps1_nbody.ipynb").exists()
