"""Every lesson runs top to bottom, and the course site builds from those runs and works in a browser.

Each lesson is executed once here (``test_lesson_runs``, one test per ``lessons/NN_*.ipynb``:
any failing cell, such as an ``assert`` keeping a claim true, fails it), and the site is
built from those executed notebooks, so CI does not run the lessons twice: ``lessons`` is
not among pytest's testpaths (pyproject.toml). The tests below keep that safe: every
notebook of lessons/ is run, a raising cell fails its lesson, and no lesson relies on an
nbval marker (which only nbval would honour). What the site
adds to a CI run: the Sphinx build (about 10-20 s for five lessons) and the browser check
(about 5-10 s), on top of executing the lessons.

The browser check needs a Chromium executable (Debian's ``chromium`` package; ``.ci/run``
installs it when it runs as root) and the ``playwright`` Python package, which drives that
browser (no browser is downloaded).
"""

from __future__ import annotations

import html
import os
import re
import shutil
from pathlib import Path

import pytest

from course_lib import site

LESSONS = site.find_lessons()


@pytest.fixture(scope="session")
def executed_dir(tmp_path_factory):
    """Where the executed lessons go; ``COURSE_EXECUTED_LESSONS=DIR`` reuses a folder of lessons executed
    earlier (``python -m course_lib.site build --executed DIR`` takes the same), to check the site alone."""
    reuse = os.environ.get("COURSE_EXECUTED_LESSONS")
    return Path(reuse) if reuse else tmp_path_factory.mktemp("executed_lessons")


@pytest.mark.timeout(600)
@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem for p in LESSONS])
def test_lesson_runs(lesson, executed_dir):
    """Does the lesson run top to bottom, every claim's assert holding, in this backend?"""
    import nbformat

    # A cell's own limit, under the test's: a cell that hangs is named (nbclient's CellTimeoutError) instead of
    # the whole test stopping at pytest-timeout's limit with only the kernel client's threads to show.
    nb = site.execute_lesson(lesson, backend="auto", timeout=300)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
    nbformat.write(nb, executed_dir / lesson.name)


def test_a_message_whose_wake_up_was_missed_is_read_within_a_slice():
    """A kernel's reply that arrived while the wait missed its wake-up is read within a slice of the wait,
    not at the end of the cell's whole limit (the stall that hung lesson 4 under pytest-xdist)."""
    import asyncio
    import time
    from queue import Empty

    class MissedWakeUp:
        """A channel whose waits started before the message arrives see it only at their own time limit,
        as the asyncio client's edge-triggered wait does when its wake-up is missed."""

        def __init__(self, arrives_after):
            self.arrives = time.monotonic() + arrives_after
            self.waits = []

        async def get_msg(self, timeout=None):
            self.waits.append(timeout)
            if time.monotonic() < self.arrives:
                if timeout is None:
                    await asyncio.sleep(3600)  # no limit: a missed wake-up is a hang
                await asyncio.sleep(timeout)
            if time.monotonic() >= self.arrives:
                return {"msg_type": "execute_reply"}
            raise Empty

    async def wait(channel, timeout, limit=20):
        start = time.monotonic()
        reply = await asyncio.wait_for(channel.get_msg(timeout=timeout), limit)
        return reply, time.monotonic() - start

    unsliced = MissedWakeUp(arrives_after=0.2)
    with pytest.raises(asyncio.TimeoutError):
        asyncio.run(wait(unsliced, None, limit=2))  # the stall: the message is never read
    for timeout in (300, None):
        channel = MissedWakeUp(arrives_after=0.3)
        site.wait_in_slices(channel, step=0.1)
        reply, seconds = asyncio.run(wait(channel, timeout))
        assert reply == {"msg_type": "execute_reply"} and seconds < 5
        assert all(w is not None and w <= 0.1 for w in channel.waits) and len(channel.waits) >= 3
    # The caller's own limit still holds: no message within it is Empty, after about that long.
    silent = MissedWakeUp(arrives_after=3600)
    site.wait_in_slices(silent, step=0.1)
    start = time.monotonic()
    with pytest.raises(Empty):
        asyncio.run(silent.get_msg(timeout=0.35))
    assert 0.3 <= time.monotonic() - start < 5


def test_lessons_and_problem_sets_run_with_sliced_waits():
    """Every notebook the tests execute goes through the client whose waits are sliced."""
    import inspect

    from tests import conftest

    assert "notebook_client(" in inspect.getsource(site.execute_lesson)
    assert "notebook_client(" in inspect.getsource(conftest.NotebookRunner.execute)


def test_every_lesson_notebook_is_run():
    """lessons/ is not among pytest's testpaths: a notebook there that find_lessons missed would run nowhere."""
    notebooks = sorted((site.ROOT / "lessons").glob("*.ipynb"))
    assert notebooks and sorted(LESSONS) == notebooks, (
        f"lessons not named NN_name.ipynb are not run: {sorted(set(notebooks) - set(LESSONS))}")


def test_a_failing_cell_fails_the_lesson(tmp_path):
    """A cell that raises (a broken claim's assert) stops the run with an error naming it."""
    import nbformat
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# A lesson"),
                                         nbformat.v4.new_code_cell("measured = 3"),
                                         nbformat.v4.new_code_cell("assert measured == 4, 'the claim no longer holds'"),
                                         nbformat.v4.new_code_cell("print('never reached')")])
    path = tmp_path / "09_broken.ipynb"
    nbformat.write(nb, path)
    with pytest.raises(CellExecutionError, match="the claim no longer holds"):
        site.execute_lesson(path, backend="sim", timeout=120)


def test_lessons_keep_claims_with_asserts_not_nbval_markers():
    """nbval's markers are not honoured here (lessons run through nbclient): a claim must be an assert."""
    import nbformat

    for lesson in LESSONS:
        nb = nbformat.read(lesson, as_version=4)
        marked = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"
                  and ("NBVAL_" in c.source or any(t.startswith("nbval") or t == "raises-exception"
                                                    for t in c.metadata.get("tags", [])))]
        assert not marked, f"{lesson.name}: cells {marked} use nbval markers; keep the claim with an assert instead"


def test_lessons_are_committed_without_outputs():
    import nbformat

    for lesson in LESSONS:
        nb = nbformat.read(lesson, as_version=4)
        with_outputs = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and (c.outputs or c.execution_count)]
        assert not with_outputs, f"{lesson.name}: cells {with_outputs} carry outputs (clear them before committing)"


@pytest.fixture(scope="session")
def built_site(executed_dir, tmp_path_factory):
    missing = [p.name for p in LESSONS if not (executed_dir / p.name).exists()]
    if missing and len(missing) < len(LESSONS):
        pytest.skip(f"lessons that did not run (see test_lesson_runs): {missing}")
    # Alone (-k site), the build executes the lessons itself.
    return site.build(tmp_path_factory.mktemp("site"), executed=executed_dir, backend="auto")


def _pages(html_dir):
    return {p.stem: p for p in html_dir.glob("*.html")}


def test_site_has_a_page_per_lesson_and_every_figure(built_site):
    """Is every lesson a page, linked from the index, with all of its figures?"""
    import nbformat

    pages = _pages(built_site)
    index = pages["index"].read_text()
    for lesson in LESSONS:
        assert lesson.stem in pages, f"no page for {lesson.name}"
        assert f'href="{lesson.stem}.html"' in index, f"the index does not link {lesson.stem}"
        nb = nbformat.read(lesson, as_version=4)
        page = pages[lesson.stem].read_text()
        assert site.lesson_title(nb) in page
        executed = nbformat.read(built_site.parent / "src" / lesson.name, as_version=4)
        figures = sum(1 for c in executed.cells if c.cell_type == "code" for o in c.outputs
                      if "image/png" in o.get("data", {}))
        inline = sum(o.get("data", {}).get("text/html", "").count("data:image/png") for c in executed.cells
                     if c.cell_type == "code" for o in c.outputs)
        assert page.count("<img") >= figures + inline, f"{lesson.stem}: figures missing from the page"
        assert "widget-view+json" not in page and "cdn.jsdelivr" not in page and "unpkg.com" not in page
    # Each image file the pages point to exists (viewable offline).
    for page in pages.values():
        for src in re.findall(r'<img[^>]+src="([^"]+)"', page.read_text()):
            if not src.startswith("data:"):
                assert (page.parent / src).exists(), f"{page.name}: missing image {src}"


def test_site_has_a_page_per_page_of_the_manual(built_site):
    """Is every page of the manual (docs/) on the site, linked from the index, titled as its Markdown?"""
    pages = _pages(built_site)
    index = pages["index"].read_text()
    for page in site.find_manual():
        assert page.stem in pages, f"no page for docs/{page.name}"
        assert f'href="{page.stem}.html"' in index, f"the index does not link {page.stem}"
        title = page.read_text().splitlines()[0][2:]
        # Sphinx's smartquotes turn an apostrophe into a typographic one.
        text = pages[page.stem].read_text().replace("\u2019", "'").replace("&#8217;", "'")
        assert html.escape(title, quote=False) in text, f"docs/{page.name}: its page lacks the title {title!r}"


def test_widgets_become_static_snapshots(built_site):
    pages = _pages(built_site)
    snapshots = sum(p.read_text().count("course-widget-snapshot") for p in pages.values())
    assert snapshots >= 1


def _snapshot(widget):
    """The static snapshot the site makes of ``widget``, from its saved state as a notebook stores it."""
    import nbformat
    from ipywidgets.embed import dependency_state

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# A lesson"), nbformat.v4.new_code_cell("w")])
    nb.metadata["widgets"] = {site.WIDGET_STATE: {"state": dependency_state([widget])}}
    nb.cells[1].outputs = [nbformat.v4.new_output("display_data", data={site.WIDGET_VIEW: {"model_id": widget.model_id}})]
    assert site.staticize_widgets(nb) == 1
    return nb.cells[1].outputs[0].data["text/html"]


def test_a_quiz_snapshot_reveals_its_answer_and_explanation_on_click():
    """Without a kernel the Check button does nothing: the snapshot drops it and offers a <details> box."""
    from course_lib.quiz import Quiz, show

    quiz = Quiz("Work of all-pairs N-body?", ("N", "N^2"), "N^2", "N(N - 1) pairs interact.")
    page = _snapshot(show(quiz))
    assert "Work of all-pairs N-body?" in page and "<li>N</li>" in page
    assert "Check" not in page
    assert re.search(r"<details[^>]*><summary>Show the answer</summary><p><b>N\^2</b>\. N\(N - 1\) pairs interact\.</p>"
                     r"</details>", page)


def test_log_slider_ranges_are_numbers_not_exponents():
    import ipywidgets as widgets

    page = _snapshot(widgets.FloatLogSlider(value=0.5, base=2, min=-3, max=3, description="B / default"))
    assert "B / default" in page and "0.5" in page and "from 0.125 to 8" in page and "^" not in page


def test_explorer_sliders_share_one_description_width_and_one_width():
    import ipywidgets as widgets

    from course_lib.controls import aligned

    controls = aligned(widgets.IntSlider(description="channels"), widgets.FloatLogSlider(description="lrate / default"),
                       widgets.Checkbox(description="K by the 1/3 rule"))
    assert len({c.style.description_width for c in controls}) == 1 and len({c.layout.width for c in controls}) == 1
    # The longest description fits: about 0.6 em per character, plus a margin.
    assert float(controls[0].style.description_width.removesuffix("em")) >= 0.6 * len("K by the 1/3 rule")


def test_lessons_run_without_kernel_warnings(tmp_path, capfd):
    """The kernel is reached over local sockets: no "running over TCP without encryption" warning per lesson."""
    import nbformat

    path = tmp_path / "09_quiet.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Quiet"),
                                                   nbformat.v4.new_code_cell("print(6 * 7)")]), path)
    nb = site.execute_lesson(path, backend="sim", timeout=120)
    assert nb.cells[1].outputs[0]["text"] == "42\n"
    captured = capfd.readouterr()
    assert "WARNING" not in captured.err and "without encryption" not in captured.err, captured.err


def _chromium():
    for name in (os.environ.get("COURSE_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def test_site_in_a_headless_browser(built_site):
    """Does every page load in Chromium, with every image decoded and no console error?"""
    chromium = _chromium()
    if chromium is None:
        pytest.skip("no Chromium executable (apt-get install chromium; .ci/run does it as root)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package drives the browser")
    problems = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            for name, path in sorted(_pages(built_site).items()):
                if name in ("genindex", "search"):
                    continue
                page = browser.new_page()
                messages = []
                page.on("console", lambda m: messages.append(m.text) if m.type == "error" else None)
                page.on("pageerror", lambda e: messages.append(str(e)))
                page.goto(Path(path).as_uri(), wait_until="load")
                page.wait_for_timeout(300)  # MathJax typesets after load
                broken = page.eval_on_selector_all(
                    "img", "els => els.filter(e => !(e.complete && e.naturalWidth > 0)).map(e => e.src.slice(0, 80))")
                if broken:
                    problems.append(f"{name}: images not displayed: {broken}")
                if messages:
                    problems.append(f"{name}: console errors: {messages}")
                if not page.title() or not page.eval_on_selector("h1", "e => e.textContent.length > 0"):
                    problems.append(f"{name}: no title")
                raw_math = page.eval_on_selector_all(
                    ".math", "els => els.filter(e => !e.querySelector('mjx-container')).length")
                if raw_math:
                    problems.append(f"{name}: {raw_math} formulas not typeset by MathJax")
                page.close()
        finally:
            browser.close()
    assert not problems, "\n".join(problems)


#: What on a page is wider than the lesson's column (``article``), at the window's width: the first few
#: elements whose content box reaches past the column's, and any box that scrolls sideways. Exempt, and only
#: these: the inside of code and printed text (``pre``, a highlighted block), whose own box must fit and scroll,
#: and a printed report's table in a cell's output, which scrolls inside that output (a 15-column profile
#: cannot fit a phone). A widget snapshot, a figure, a formula or a table of the text must fit outright.
_WIDER_THAN_THE_COLUMN = """() => {
  const column = document.querySelector('article');
  if (!column) return ['no article element'];
  const c = column.getBoundingClientRect(), cs = getComputedStyle(column);
  const left = c.left + parseFloat(cs.paddingLeft), right = c.right - parseFloat(cs.paddingRight);
  const textBox = e => e.closest('pre, div.highlight');
  const reportTable = e => { const t = e.closest('table');
    return t && t.closest('.cell_output') && !t.closest('.course-widget-snapshot'); };
  const name = e => e.tagName.toLowerCase() + (typeof e.className === 'string' && e.className ? '.'
    + e.className.trim().split(/\\s+/).join('.') : '');
  const found = [];
  for (const e of column.querySelectorAll('*')) {
    const r = e.getBoundingClientRect();
    if (r.width === 0) continue;
    const box = textBox(e);
    // The MathML copy of a formula, for screen readers, is clipped out of sight.
    if ((box && box !== e) || reportTable(e) || e.closest('mjx-assistive-mml')) continue;
    const s = getComputedStyle(e);
    const l = r.left + parseFloat(s.paddingLeft) + parseFloat(s.borderLeftWidth);
    const rr = r.right - parseFloat(s.paddingRight) - parseFloat(s.borderRightWidth);
    if (rr > right + 1 || l < left - 1) {
      found.push(`${name(e)} reaches ${Math.round(l - left)} to ${Math.round(rr - left)} px of a ${Math.round(right - left)} px column`);
    } else if (!box && s.overflowX !== 'visible' && e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1
               && ![...e.querySelectorAll('table')].some(t => reportTable(t) && t.scrollWidth > e.clientWidth)) {
      found.push(`${name(e)} holds ${e.scrollWidth} px in ${e.clientWidth} px (it scrolls)`);
    }
  }
  return found.slice(0, 4);
}"""

#: Viewport widths a page must fit without scrolling sideways: a laptop and a phone (CSS pixels).
VIEWPORTS = {"laptop": (1280, 800), "phone": (390, 844)}


def test_every_page_fits_its_column_on_a_laptop_and_a_phone(built_site):
    """Is anything on any page (the lessons, the index, search) wider than the text's column, at 1280 and 390 px?"""
    chromium = _chromium()
    if chromium is None:
        pytest.skip("no Chromium executable (apt-get install chromium; .ci/run does it as root)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package drives the browser")
    pages = sorted(_pages(built_site).items())
    assert {lesson.stem for lesson in LESSONS} <= {name for name, _ in pages}
    problems = []
    measured = 0
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            for device, (width, height) in VIEWPORTS.items():
                page = browser.new_page(viewport={"width": width, "height": height})
                for name, path in pages:
                    page.goto(path.as_uri(), wait_until="load")
                    page.wait_for_timeout(200)  # MathJax typesets after load
                    page_width = page.evaluate("document.documentElement.scrollWidth")
                    wide = page.evaluate(_WIDER_THAN_THE_COLUMN)
                    measured += page.evaluate("document.querySelectorAll('article *').length") > 0
                    if page_width > width or wide:
                        problems.append(f"{name} at {width} px ({device}): page {page_width} px wide; {wide}")
                page.close()
        finally:
            browser.close()
    assert measured == 2 * len(pages)
    assert not problems, "\n".join(problems)


def test_the_column_check_finds_what_is_too_wide(tmp_path):
    """The measure above is not blind: a table, a snapshot and a figure wider than the column are each named,
    a long code line and a wide report table scrolling in their own boxes are not."""
    chromium = _chromium()
    if chromium is None:
        pytest.skip("no Chromium executable (apt-get install chromium; .ci/run does it as root)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package drives the browser")
    cells = "".join(f"<td>cell{i}</td>" for i in range(40))
    wide = {
        "table": "<div class='table-wrapper' style='width:100%;padding:0 4px'><table><tr><td>x</td></tr></table></div>",
        "snapshot": "<div class='cell_output' style='overflow-x:auto'><div class='course-widget-snapshot' "
                    "style='max-width:100%;overflow-x:auto'><div style='width:900px'>controls</div></div></div>",
        "figure": "<img src='data:image/gif;base64,R0lGODlhAQABAAAAACw=' style='width:900px;height:10px'>",
    }
    fine = ("<div class='highlight' style='overflow-x:auto'><pre>" + "x = 1  # " + "long " * 200 + "</pre></div>"
            f"<div class='cell_output' style='overflow-x:auto'><table>{cells}</table></div>")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 390, "height": 844})
            for label, body in {**wide, "fine": ""}.items():
                path = tmp_path / f"{label}.html"
                path.write_text(f"<html><body style='margin:0'><article style='width:358px;margin-left:16px'>"
                                f"<p>text</p>{body}{fine}</article></body></html>")
                page.goto(path.as_uri(), wait_until="load")
                found = page.evaluate(_WIDER_THAN_THE_COLUMN)
                assert bool(found) == (label != "fine"), (label, found)
        finally:
            browser.close()


def _quiz_shows(source):
    """The calls ``show(...)`` (the course's quiz form) in a code cell's source, and those of them displayed
    nowhere: neither the cell's last expression nor an argument of ``display``."""
    import ast

    body = ast.parse("\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))).body
    tree = ast.Module(body=body, type_ignores=[])
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "show"]
    shown = {id(body[-1].value)} if body and isinstance(body[-1], ast.Expr) else set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "display":
            shown.update(id(a) for a in node.args)
    return calls, [ast.unparse(c) for c in calls if id(c) not in shown]


def test_every_quiz_a_lesson_shows_is_its_cells_last_expression():
    """A quiz form that is not its cell's last expression (nor passed to display) is shown nowhere: not in
    Jupyter, not on the site."""
    import nbformat

    hidden = []
    for lesson in LESSONS:
        nb = nbformat.read(lesson, as_version=4)
        hidden += [f"{lesson.name} cell {i}: {call}" for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
                   for call in _quiz_shows(cell.source)[1]]
    assert not hidden, "quizzes displayed nowhere:\n" + "\n".join(hidden)


def test_a_quiz_displayed_nowhere_is_caught():
    assert _quiz_shows("show(QUIZ['a'])\nx = 1")[1] == ["show(QUIZ['a'])"]
    assert _quiz_shows("show(QUIZ['a'])\nshow(QUIZ['b'])")[1] == ["show(QUIZ['a'])"]
    assert _quiz_shows("if True:\n    show(QUIZ['a'])")[1] == ["show(QUIZ['a'])"]
    assert _quiz_shows("x = 1\nshow(QUIZ['a'])")[1] == [] and len(_quiz_shows("x = 1\nshow(QUIZ['a'])")[0]) == 1
    assert _quiz_shows("display(show(QUIZ['a']))\nplt.show()")[1] == []


def test_every_quiz_a_lesson_shows_is_on_its_page(built_site):
    """Each lesson page holds one answer box per quiz its notebook shows."""
    import nbformat

    pages = _pages(built_site)
    for lesson in LESSONS:
        nb = nbformat.read(lesson, as_version=4)
        quizzes = sum(len(_quiz_shows(c.source)[0]) for c in nb.cells if c.cell_type == "code")
        assert pages[lesson.stem].read_text().count("course-quiz-answer") == quizzes, lesson.stem


def test_quizzes_reveal_their_answer_on_a_click(built_site):
    """On the static site a quiz's answer opens on a click, with its explanation; no kernel is involved."""
    chromium = _chromium()
    if chromium is None:
        pytest.skip("no Chromium executable (apt-get install chromium; .ci/run does it as root)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package drives the browser")
    pages = [p for p in sorted(_pages(built_site).values()) if "course-quiz-answer" in p.read_text()]
    assert pages, "no lesson page shows a quiz"
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            for path in pages:
                page.goto(path.as_uri(), wait_until="load")
                answer = page.locator("details.course-quiz-answer").first
                explanation = answer.locator("p")
                assert not explanation.is_visible(), f"{path.name}: the answer shows before a click"
                answer.locator("summary").click()
                assert explanation.is_visible() and len(explanation.inner_text()) > 20, path.name
        finally:
            browser.close()
