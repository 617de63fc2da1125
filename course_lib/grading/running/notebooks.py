"""Reading students' notebooks, once, before any of their code runs.

Every submission is read into memory before the first worker starts (a submission cannot
then overwrite, replace or block another one's file), and only the grader reads files:
a worker receives the notebook's cells through its pipe. A file is read only if it is a
regular file (not a symbolic link, a named pipe or a device) of at most the allowed size;
anything else gets a reason instead of content.
"""

from __future__ import annotations

import ast
import os
import stat
from dataclasses import dataclass
from pathlib import Path

import nbformat

from ..core import questions_of
from ..catalog import solution_path
from ..results.report import clean_text, write_atomic

__all__ = ["Submission", "SubmissionFiles", "answer_specs", "code_cells", "expand", "parse_notebook", "read_submissions",
           "student_ids"]


@dataclass(frozen=True)
class Submission:
    """One student's file as read by the grader.

    Attributes
    ----------
    path : Path
        Where it was (for messages; never opened again).
    student : str
        The student's name in the grades (printable text).
    content : bytes or None
        The file's bytes, or None when it could not be read.
    problem : str
        Why it could not be read ("" when it was).
    """

    path: Path
    student: str
    content: bytes | None
    problem: str = ""


def answer_specs(problem_set: str) -> tuple[dict, set]:
    """How each question's answer is written, read from the solution's ``check(...)`` cells.

    Returns
    -------
    specs : dict
        ``question id -> {"args": [source, ...], "kwargs": {name: source}}``: the expressions
        passed to ``check`` after the question id, evaluated in the student's namespace.
    grade_ids : set of str
        nbgrader ``grade_id`` of the grade cells (the ``check`` cells), not run when grading.
    """
    nb = nbformat.read(solution_path(problem_set), as_version=4)
    specs, grade_ids = {}, set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        nbgrader = cell.metadata.get("nbgrader", {})
        if nbgrader.get("grade") and not nbgrader.get("solution"):
            grade_ids.add(nbgrader.get("grade_id"))
        for node in ast.walk(ast.parse(cell.source)):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "check"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                specs[node.args[0].value] = {"args": [ast.unparse(a) for a in node.args[1:]],
                                             "kwargs": {k.arg: ast.unparse(k.value) for k in node.keywords}}
    missing = [q.id for q in questions_of(problem_set) if q.id not in specs]
    if missing:
        raise ValueError(f"{solution_path(problem_set).name} has no check(...) call for {missing}")
    return specs, grade_ids - {None}


def expand(submissions) -> list:
    """Files as given; a folder stands for the notebooks below it (checkpoints and links left out)."""
    paths = []
    for given in map(Path, submissions):
        if given.is_dir() and not given.is_symlink():
            paths += sorted(p for p in given.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
        else:
            paths.append(given)
    return paths


def _printable_stem(path: Path) -> str:
    # A file name need not be UTF-8: its undecodable bytes (surrogates here) become escapes.
    return clean_text(path.stem, newlines=False) or "_"


def student_ids(paths) -> dict:
    """A name for each submission: its file name without suffix, or, where two files share
    a name (``submitted/<student>/ps1/ps1_nbody.ipynb``), its path from their common folder.
    Names are printable text whatever the file names' bytes."""
    paths = [Path(p) for p in paths]
    stems = [_printable_stem(p) for p in paths]
    if len(set(stems)) == len(stems):
        return dict(zip(paths, stems))
    common = Path(os.path.commonpath([str(p.absolute().parent) for p in paths]))
    ids = {p: clean_text(p.absolute().relative_to(common).with_suffix("").as_posix(), newlines=False)
           for p in paths}
    if len(set(ids.values())) != len(ids):
        raise ValueError("two submissions are the same file")
    return ids


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_file(path: Path, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; ValueError saying why not.

    Symbolic links are refused (a submission is graded as the file handed in, not as what it
    points to), and a named pipe or device is never opened for reading (it could block).
    """
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise ValueError(f"cannot read the file: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        what = _kind(info.st_mode)
        if stat.S_ISLNK(info.st_mode):
            raise ValueError("a symbolic link is not graded (hand in the notebook itself, not a link to it)")
        raise ValueError(f"not a notebook file ({what})")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as exc:
        raise ValueError(f"cannot read the file: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())  # what was opened, not what the name meant a moment ago
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"not a notebook file ({_kind(info.st_mode)})")
        if info.st_size > max_bytes:
            raise ValueError(f"the file is {info.st_size / 2**20:.0f} MB, more than the {max_bytes / 2**20:g} MB "
                             "allowed (clear the outputs and submit again)")
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ValueError(f"the file is more than the {max_bytes / 2**20:g} MB allowed")
    return data


def read_submissions(paths, ids: dict, max_bytes: int) -> list:
    """Read every submission into memory (see the module docstring); one :class:`Submission` each."""
    submissions = []
    for path in paths:
        try:
            submissions.append(Submission(Path(path), ids[path], read_file(Path(path), max_bytes)))
        except ValueError as exc:
            submissions.append(Submission(Path(path), ids[path], None, str(exc)))
    return submissions


def _signature(path: Path):
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns)


class SubmissionFiles:
    """The submissions' files as read, to put back after each submission: a submission that
    overwrites, deletes or replaces another's file (by a named pipe, say) changes nothing."""

    def __init__(self, submissions):
        self.files = {s.path: (s.content, _signature(s.path)) for s in submissions if s.content is not None}

    def restore(self) -> list:
        """Write back every file that changed on disk; returns their paths."""
        restored = []
        for path, (content, signature) in self.files.items():
            if _signature(path) == signature:
                continue
            try:
                write_atomic(path, content)  # the rename replaces a link or a named pipe left at the path too
            except OSError:
                continue
            self.files[path] = (content, _signature(path))
            restored.append(path)
        return restored


def parse_notebook(content: bytes):
    """The notebook in ``content``, or a ValueError saying why it cannot be graded."""
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not a notebook (not UTF-8 text)") from None
    try:
        nb = nbformat.reads(text, as_version=4)
    except Exception as exc:  # nbformat raises several kinds for bad JSON or a bad schema
        raise ValueError(f"not a readable .ipynb notebook ({type(exc).__name__}: {str(exc)[:120]})") from None
    if not isinstance(nb.get("cells"), list):
        raise ValueError("not a readable .ipynb notebook (no cells)")
    return nb


def code_cells(nb, grade_ids: set) -> list:
    """``[index, source]`` of the code cells to run: all but the solution's grade (check) cells."""
    cells = []
    for index, cell in enumerate(nb.cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code" or not isinstance(cell.get("source"), str):
            continue
        metadata = cell.get("metadata")
        nbgrader = metadata.get("nbgrader", {}) if isinstance(metadata, dict) else {}
        grade_id = nbgrader.get("grade_id") if isinstance(nbgrader, dict) else None
        if isinstance(grade_id, str) and grade_id in grade_ids:
            continue
        # Lone surrogates cannot cross the pipe as UTF-8: they become escapes.
        cells.append([index, clean_text(cell["source"], controls=False)])
    return cells
