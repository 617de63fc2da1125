"""The README is the door and the manual is the site: a short README with the two commands and a map, the
manual's pages in ``docs/``, each on the course site (``course_lib.site.MANUAL``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from course_lib import site

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()

#: The README's two commands, verbatim: open the course, and install and test it (``.ci/run`` runs the second).
OPEN_THE_COURSE = 'python -m pip install -e ".[cu13]" && python -m jupyter lab'
RUN_THE_TESTS = ('python -m pip install -c requirements/lock.txt -e ".[cu13,test]" && '
                 "python -m pytest -n 2 --dist loadfile --durations=30")


def test_the_readme_is_short_and_holds_the_two_commands():
    assert len(README.splitlines()) <= 200, "the README is the door: the manual goes to docs/ (the course site)"
    blocks = re.findall(r"```bash\n(.*?)\n```", README, flags=re.S)
    assert OPEN_THE_COURSE in blocks and RUN_THE_TESTS in blocks
    assert README.split("<!-- test-command", 1)[1].splitlines()[2] == RUN_THE_TESTS


def test_the_readme_links_every_page_of_the_manual_and_the_site_lists_them():
    pages = site.find_manual()
    assert [p.stem for p in pages] == list(site.MANUAL)
    linked = re.findall(r"\]\((docs/[a-z_]+\.md)\)", README)
    assert sorted(linked) == sorted(f"docs/{p.name}" for p in pages)
    for page in pages:
        assert page.read_text().startswith("# "), f"{page.name}: a page starts with its title"


def test_a_page_missing_from_the_sites_list_is_an_error(tmp_path):
    for name in site.MANUAL:
        (tmp_path / f"{name}.md").write_text(f"# {name}\n")
    assert [p.stem for p in site.find_manual(tmp_path)] == list(site.MANUAL)
    (tmp_path / "extra.md").write_text("# Extra\n")
    with pytest.raises(ValueError, match="extra"):
        site.find_manual(tmp_path)
    assert site.find_manual(tmp_path / "absent") == []


def test_every_path_the_readme_and_the_manual_name_exists():
    """A lesson, problem set or file named in backticks (``lessons/03_bfs.ipynb``) is there."""
    texts = {"README.md": README} | {f"docs/{p.name}": p.read_text() for p in site.find_manual()}
    missing = []
    for name, text in texts.items():
        for path in re.findall(r"`((?:lessons|problem_sets|solutions|docs|benchmarks)/[A-Za-z0-9_./-]+\.(?:ipynb|md|py|sh))`",
                               text):
            if not (ROOT / path).exists():
                missing.append(f"{name}: {path}")
    assert not missing, missing


def test_lessons_are_numbered_once_each_and_the_site_keeps_the_teaching_order():
    from course_lib import UNITS

    lessons = site.find_lessons()
    numbers = [p.name[:2] for p in lessons]
    assert len(set(numbers)) == len(numbers), f"two lessons share a number: {sorted(numbers)}"
    assert [f"lessons/{p.name}" for p in lessons] == [path for path in UNITS.values()]
    # Each lesson's title carries its file's number ("# Lesson 9: ..." in 09_primitives.ipynb).
    import nbformat

    for path in lessons:
        title = site.lesson_title(nbformat.read(path, as_version=4))
        assert re.match(rf"Lesson {int(path.name[:2])}\b", title), (path.name, title)


def test_printed_paragraphs_wrap_to_the_sites_column_and_tables_keep_their_layout():
    import nbformat

    sentence = " ".join(["word"] * 1200)  # a paragraph printed on one line: about 6,000 characters
    table = "  name          1.23 ms   4.56 GB/s"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(...)")])
    nb.cells[0].outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"{sentence}\n{table}\n"),
                           nbformat.v4.new_output("execute_result", data={"text/plain": "  " + sentence})]
    assert site.wrap_printed_text(nb) == 2
    printed = nb.cells[0].outputs[0]["text"].split("\n")
    assert max(map(len, printed)) <= site.PRINTED_LINE_WIDTH and table in printed
    assert " ".join(printed).split() == (sentence + " " + table).split()  # nothing lost, nothing added
    result = nb.cells[0].outputs[1]["data"]["text/plain"].split("\n")
    assert all(line.startswith("  ") and len(line) <= site.PRINTED_LINE_WIDTH for line in result)
