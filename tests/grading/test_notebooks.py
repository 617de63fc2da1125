"""Submissions are read once, into memory: regular files only, size-capped, links refused."""

import os

import nbformat
import pytest

from course_lib.grading.running.notebooks import (SubmissionFiles, code_cells, parse_notebook, read_file,
                                                  read_submissions, student_ids)


def test_only_regular_files_of_bounded_size_are_read(tmp_path):
    good = tmp_path / "alice.ipynb"
    good.write_bytes(b"{}")
    assert read_file(good, 100) == b"{}"
    link = tmp_path / "link.ipynb"
    link.symlink_to(good)
    with pytest.raises(ValueError, match="a symbolic link is not graded"):
        read_file(link, 100)
    fifo = tmp_path / "pipe.ipynb"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="a named pipe"):
        read_file(fifo, 100)  # refused without opening it: opening a pipe would block
    with pytest.raises(ValueError, match="a folder"):
        read_file(tmp_path, 100)
    big = tmp_path / "big.ipynb"
    big.write_bytes(b"x" * 101)
    with pytest.raises(ValueError, match="more than"):
        read_file(big, 100)
    with pytest.raises(ValueError, match="cannot read the file"):
        read_file(tmp_path / "missing.ipynb", 100)


def test_files_changed_after_reading_are_written_back(tmp_path):
    paths = [tmp_path / f"s{i}.ipynb" for i in range(3)]
    for i, path in enumerate(paths):
        path.write_text(f"notebook {i}")
    submissions = read_submissions(paths, {p: p.stem for p in paths}, 100)
    files = SubmissionFiles(submissions)
    paths[0].write_text("{}")
    paths[1].unlink()
    os.mkfifo(paths[1])
    assert sorted(files.restore()) == paths[:2]
    assert [p.read_text() for p in paths] == ["notebook 0", "notebook 1", "notebook 2"]
    assert files.restore() == []


def test_odd_file_names_become_printable_student_names(tmp_path):
    odd = os.fsdecode(os.fsencode(str(tmp_path)) + b"/caf\xe9.ipynb")
    ids = student_ids([odd, tmp_path / "=1+1.ipynb"])
    assert list(ids.values()) == ["caf\\udce9", "=1+1"]
    "".join(ids.values()).encode("utf-8")  # no surrogate left


def test_notebook_parsing_and_cells(tmp_path):
    with pytest.raises(ValueError, match="not UTF-8"):
        parse_notebook(b"\xff\xfe")
    with pytest.raises(ValueError, match="not a readable .ipynb notebook"):
        parse_notebook(b'{"cells": [')
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('x = "SURROGATE"'),
                                         nbformat.v4.new_markdown_cell("text"),
                                         nbformat.v4.new_code_cell("check()", metadata={"nbgrader": {"grade_id": "c"}})])
    # A JSON escape of a lone surrogate: valid JSON, but no valid UTF-8 string.
    parsed = parse_notebook(nbformat.writes(nb).replace("SURROGATE", "\\udcff").encode())
    assert code_cells(parsed, {"c"}) == [[0, 'x = "\\udcff"']]  # the escape still means the same string
