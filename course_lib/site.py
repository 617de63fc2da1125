"""The course website: every lesson, with its outputs from a simulator run, as static HTML.

One command builds it (Sphinx with MyST-NB; no network needed, MathJax ships with
``sphinx-mathjax-offline``)::

    python -m course_lib.site build            # writes _site/html/index.html
    python -m course_lib.site build --out DIR --executed DIR_OF_EXECUTED_NOTEBOOKS

Every ``lessons/NN_*.ipynb`` is picked up automatically, in teaching order (:func:`find_lessons`), and the
manual's pages (``docs/*.md``: for students, for instructors, the simulator, benchmarks and GPU
runs, testing) follow them, in the order of :data:`MANUAL`.
Lessons are executed first (with nbclient, in Numba's CUDA simulator unless
``--backend gpu``), or taken already executed from ``--executed``, which the test suite
uses so that each lesson runs once. Widgets cannot run without a kernel: each one is
replaced by a static snapshot of its controls and of the output it showed (figures
included), with a note saying so; the page then needs no JavaScript from the internet.
Snapshots and figures are scaled to the page's column (a stylesheet, ``course.css``), so no
page is wider than the window, on a laptop or a phone. A quiz (:func:`course_lib.quiz.show`)
becomes its question, its choices and a "Show the answer" box (HTML ``<details>``) that opens
on a click, with the explanation, since its Check button needs a running kernel.
The build treats every Sphinx warning as an error. Lessons run in a kernel reached over
local (IPC) sockets, not TCP: nothing listens on the network, and the kernel has nothing
to warn about.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import html
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

__all__ = ["MANUAL", "PRINTED_LINE_WIDTH", "build", "execute_lesson", "find_lessons", "find_manual", "lesson_title",
           "main", "notebook_client", "staticize_widgets", "wait_in_slices", "wrap_printed_text"]

ROOT = Path(__file__).resolve().parent.parent
_LESSON = re.compile(r"^\d\d_[A-Za-z0-9_]+\.ipynb$")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def find_lessons(lessons_dir: str | os.PathLike | None = None) -> list[Path]:
    """Every lesson notebook ``NN_name.ipynb`` of ``lessons_dir`` (default: the repository's), in teaching order.

    The course's lessons come in the order of :data:`course_lib.UNITS` (the primitives, lesson 09, are taught
    right after lesson 01); any other lesson follows, in the order of its number.
    """
    from course_lib._units import UNITS

    folder = Path(lessons_dir) if lessons_dir is not None else ROOT / "lessons"
    if not folder.is_dir():
        raise ValueError(f"lessons_dir: {folder} is not a folder")
    teaching = [Path(path).name for path in UNITS.values()]
    found = [p for p in folder.iterdir() if _LESSON.match(p.name)]
    return sorted(found, key=lambda p: (teaching.index(p.name) if p.name in teaching else len(teaching), p.name))


#: The manual's pages (``docs/NAME.md``), in the site's order.
MANUAL = ("students", "instructors", "simulator", "benchmarks", "testing")


def find_manual(docs_dir: str | os.PathLike | None = None) -> list[Path]:
    """The manual's pages ``docs/NAME.md`` of :data:`MANUAL`, in order; an empty list where ``docs_dir`` is absent
    (an installed package without the repository). A page of the folder missing from :data:`MANUAL`, or the
    reverse, is an error: the site would lose it silently."""
    folder = Path(docs_dir) if docs_dir is not None else ROOT / "docs"
    if not folder.is_dir():
        return []
    present = {p.stem for p in folder.glob("*.md")}
    if present != set(MANUAL):
        raise ValueError(f"{folder}: the manual's pages are {sorted(present)}, the site lists {list(MANUAL)} "
                         "(course_lib.site.MANUAL)")
    return [folder / f"{name}.md" for name in MANUAL]


def lesson_title(nb) -> str:
    """The text of the notebook's first level-1 heading (the page title)."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    raise ValueError("the notebook has no level-1 heading ('# Title') to use as its page title")


#: Longest single wait for a kernel message, in seconds (see :func:`wait_in_slices`).
MESSAGE_WAIT_SLICE = 1.0


def wait_in_slices(channel, step: float = MESSAGE_WAIT_SLICE) -> None:
    """Make ``channel.get_msg`` (a kernel client's asyncio channel) wait in slices of ``step`` seconds.

    The asyncio kernel client waits for a message by watching the socket's ZMQ file descriptor,
    which signals only on a change (edge-triggered): a wake-up missed in a race leaves a message that
    has arrived unread until the wait's own time limit, where one last look finds it. nbclient waits
    for a cell's reply with the cell's whole limit (300 s in the lesson tests) and for its outputs with
    none, so a missed wake-up stalled a lesson for the full limit, then let it pass (or hung it, with no
    limit); it happened under load, with two test processes. Waiting in short slices, each ending in that
    last look, bounds a missed wake-up to ``step`` and keeps the caller's limit as it was.

    Parameters
    ----------
    channel : jupyter_client.channels.AsyncZMQSocketChannel
        ``kc.shell_channel`` or ``kc.iopub_channel`` of a started asyncio kernel client.
    step : float
        Seconds of the longest single wait.
    """
    import time
    from queue import Empty

    get_msg = channel.get_msg

    async def get_msg_in_slices(timeout: float | None = None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = step if deadline is None else max(0.0, min(step, deadline - time.monotonic()))
            try:
                return await get_msg(timeout=left)
            except Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    channel.get_msg = get_msg_in_slices


def notebook_client(nb, **options):
    """An ``nbclient.NotebookClient`` for ``nb`` whose waits for the kernel's messages are sliced
    (:func:`wait_in_slices`); ``options`` are the client's (timeout, kernel_name, config, ...)."""
    from nbclient import NotebookClient

    class SlicedWaitsClient(NotebookClient):
        async def async_start_new_kernel_client(self):
            client = await super().async_start_new_kernel_client()
            wait_in_slices(client.shell_channel)
            wait_in_slices(client.iopub_channel)
            return client

    return SlicedWaitsClient(nb, **options)


def execute_lesson(path: str | os.PathLike, *, backend: str = "sim", timeout: int = 600):
    """Run a lesson top to bottom as a student would and return the executed notebook.

    Parameters
    ----------
    path : path of the .ipynb
    backend : {"sim", "gpu", "auto"}
        ``COURSE_BACKEND`` for the notebook's kernel; "auto" lets course_lib detect a GPU.
    timeout : int
        Seconds allowed per cell.

    Raises
    ------
    nbclient.exceptions.CellExecutionError
        If a cell fails (an assert about the lesson's evidence, for instance).
    """
    import nbformat

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    env_backup = {k: os.environ.get(k) for k in ("COURSE_BACKEND", "PYTHONPATH")}
    try:
        if backend != "auto":
            os.environ["COURSE_BACKEND"] = backend
        # The notebook's kernel imports this checkout's course_lib, installed or not.
        others = [p for p in (env_backup["PYTHONPATH"] or "").split(os.pathsep) if p and p != str(ROOT)]
        os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *others])
        from traitlets.config import Config

        # Local sockets in a private folder instead of TCP ports: no other user of the machine can reach the
        # kernel (with TCP, ipykernel warns that code and outputs travel unencrypted, once per lesson).
        with tempfile.TemporaryDirectory(prefix="course-kernel-") as sockets:
            local = Config({"KernelManager": {"transport": "ipc", "ip": os.path.join(sockets, "kernel")}})
            notebook_client(nb, timeout=timeout, kernel_name="python3", store_widget_state=True, config=local,
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    finally:
        for key, value in env_backup.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return nb


# ----------------------------------------------------------------------------- widgets, statically
def _model_id(ref) -> str | None:
    return ref[len("IPY_MODEL_"):] if isinstance(ref, str) and ref.startswith("IPY_MODEL_") else None


def _output_html(output) -> str:
    """One nbformat output as HTML (what an Output widget showed)."""
    kind = output.get("output_type")
    if kind == "stream":
        return f"<pre style='overflow-x:auto'>{html.escape(output.get('text', ''))}</pre>"
    data = output.get("data", {})
    for mime in ("image/png", "image/jpeg"):
        if mime in data:
            payload = data[mime] if isinstance(data[mime], str) else "".join(data[mime])
            return f"<img alt='figure' style='max-width:100%;height:auto' src='data:{mime};base64,{payload.strip()}'/>"
    if "text/html" in data:
        value = data["text/html"]
        return value if isinstance(value, str) else "".join(value)
    if "text/plain" in data:
        value = data["text/plain"]
        return f"<pre style='overflow-x:auto'>{html.escape(value if isinstance(value, str) else ''.join(value))}</pre>"
    return ""


def _widget_html(model_id: str, state: dict, depth: int = 0) -> str:
    """A static picture of a widget and its children, from the saved widget state."""
    model = state.get(model_id)
    if model is None or depth > 20:
        return ""
    name = model.get("model_name", "")
    st = model.get("state", {})
    classes = st.get("_dom_classes", [])
    if "course-live-only" in classes:  # a control that does something only with a kernel (a quiz's Check)
        return ""
    desc = html.escape(str(st.get("description", "")))
    label = f"<b>{desc}</b> " if desc else ""
    if name in ("VBoxModel", "HBoxModel", "BoxModel", "GridBoxModel", "TabModel", "AccordionModel"):
        flow = "row" if name == "HBoxModel" else "column"
        inner = "".join(_widget_html(_model_id(c), state, depth + 1) for c in st.get("children", []) if _model_id(c))
        return (f"<div style='display:flex;flex-direction:{flow};gap:0.8em;flex-wrap:wrap;max-width:100%;"
                f"min-width:0'>{inner}</div>")
    if name == "OutputModel":
        return "<div>" + "".join(_output_html(o) for o in st.get("outputs", [])) + "</div>"
    if name in ("HTMLModel", "HTMLMathModel"):
        # A "course-static-only" HTML (a quiz's answer) is hidden in a running notebook but shown here.
        return f"<div style='max-width:100%;overflow-x:auto'>{label}{st.get('value', '')}</div>"
    if name == "LabelModel":
        return f"<div>{label}{html.escape(str(st.get('value', '')))}</div>"
    if name in ("ButtonModel",):
        return f"<div><span style='border:1px solid #999;border-radius:3px;padding:0 0.5em'>{desc}</span></div>"
    if "_options_labels" in st:
        options = [html.escape(str(o)) for o in st["_options_labels"]]
        index = st.get("index")
        chosen = options[index] if isinstance(index, int) and 0 <= index < len(options) else "(none chosen)"
        if "Slider" in name:
            return f"<div>{label}{chosen} <small>(from {options[0]} to {options[-1]})</small></div>"
        items = "".join(f"<li>{o}</li>" for o in options)
        return f"<div>{label}<ul style='margin:0'>{items}</ul></div>"
    if "Slider" in name or name.endswith("TextModel") or name in ("CheckboxModel", "ToggleButtonModel"):
        value = st.get("value")
        if "Log" in name:
            # The slider's ends as numbers (0.125 to 8), not as the exponents the model stores; a saved
            # state leaves out values at their defaults (FloatLogSlider: base 10, value 1, exponents 0 to 4).
            base, value = st.get("base", 10.0), st.get("value", 1.0)
            shown = f"{value:g}" if isinstance(value, (int, float)) else html.escape(str(value))
            bounds = f"{base ** st.get('min', 0.0):g} to {base ** st.get('max', 4.0):g}"
        else:
            shown = html.escape(str(value))
            bounds = f"{st.get('min')} to {st.get('max')}" if "min" in st else ""
        extra = f" <small>(from {bounds})</small>" if bounds else ""
        return f"<div>{label}{shown}{extra}</div>"
    return f"<div>{label}</div>" if label else ""


#: Longest printed line the site keeps as it is, in characters: the column holds about 110 of its monospace font.
PRINTED_LINE_WIDTH = 110


def wrap_printed_text(nb, width: int = PRINTED_LINE_WIDTH) -> int:
    """Wrap every line a cell printed (stream outputs, plain-text results) that is longer than ``width``, at spaces,
    keeping its indentation; return how many lines were wrapped.

    A sentence printed on one line would otherwise be one scrolling line thousands of pixels long on a page; tables
    and aligned figures, shorter than ``width``, keep their layout. A word longer than ``width`` (a path, a long
    number) is left whole rather than broken.
    """
    import textwrap

    def wrap(text: str) -> tuple[str, int]:
        lines, wrapped = [], 0
        for line in text.split("\n"):
            if len(line) <= width:
                lines.append(line)
                continue
            indent = line[:len(line) - len(line.lstrip(" "))]
            lines.extend(textwrap.wrap(line, width=width, subsequent_indent=indent + "  ", break_long_words=False,
                                       break_on_hyphens=False) or [line])
            wrapped += 1
        return "\n".join(lines), wrapped

    total = 0
    for cell in nb.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if output.get("output_type") == "stream":
                output["text"], n = wrap("".join(output["text"]))
                total += n
            elif "text/plain" in output.get("data", {}) and "text/html" not in output["data"] \
                    and not any(key.startswith("image/") for key in output["data"]):
                output["data"]["text/plain"], n = wrap("".join(output["data"]["text/plain"]))
                total += n
    return total


def staticize_widgets(nb) -> int:
    """Replace every widget output of an executed notebook by a static HTML snapshot.

    The snapshot shows the controls with their values and what the widget displayed
    (figures as inline images), under a note that the controls need a running notebook.
    The notebook's saved widget state is removed afterwards, so no widget JavaScript is
    loaded. Returns the number of widgets replaced.
    """
    import nbformat

    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    replaced = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        outputs = []
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW) if output.get("output_type") in ("display_data",
                                                                                             "execute_result") else None
            if view is None:
                outputs.append(output)
                continue
            body = _widget_html(view.get("model_id", ""), state)
            note = ("<p style='font-size:85%;color:#555;margin:0 0 0.4em'>Interactive in a running notebook; "
                    "here, a snapshot of the controls and of what they showed.</p>")
            snapshot = (f"<div class='course-widget-snapshot' style='border:1px solid #ccc;border-radius:4px;"
                        f"padding:0.6em;max-width:100%;box-sizing:border-box;overflow-x:auto'>{note}{body}</div>")
            outputs.append(nbformat.v4.new_output("display_data", data={"text/html": snapshot,
                                                                        "text/plain": "(widget snapshot)"}))
            replaced += 1
        cell.outputs = outputs
    nb.metadata.pop("widgets", None)
    return replaced


# ----------------------------------------------------------------------------- the Sphinx project
_CONF = '''\
project = "GPU computing, one notebook at a time"
author = "the course's authors"
copyright = "the course's authors"
extensions = ["myst_nb", "sphinx-mathjax-offline"]
html_theme = "furo"
html_title = project
html_static_path = ["_static"]
html_css_files = ["course.css"]
exclude_patterns = ["_build"]
nb_execution_mode = "off"
nb_ipywidgets_js = {{}}
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]
# The lessons print tracebacks nowhere and use plain Python highlighting.
suppress_warnings = ["mystnb.unknown_mime_type"]
html_last_updated_fmt = None
html_show_sourcelink = False
html_copy_source = False
'''

#: Everything on a page fits its column: figures and tables shrink or scroll inside their output, never the page.
_CSS = """\
.cell_output img, .course-widget-snapshot img { max-width: 100%; height: auto; }
.cell_output, .course-widget-snapshot { max-width: 100%; overflow-x: auto; }
.cell_output pre, .cell_output table { max-width: 100%; }
/* A report's code lines wrap inside their table cell instead of widening the table. */
.cell_output td pre, .cell_output td code { white-space: pre-wrap; overflow-wrap: anywhere; }
.course-widget-snapshot details { margin-top: 0.4em; }
/* A snapshot's boxes (flex items among them) shrink to the column; long printed lines scroll in their own box. */
.course-widget-snapshot div, .course-widget-snapshot pre { min-width: 0; max-width: 100%; }
/* The theme sizes a table's wrapper at 100 % of the column plus its padding: count the padding inside. */
[role=main] .table-wrapper.container { box-sizing: border-box; }
/* A table of the text (the manual's tables of runs and commands) wraps its words, code included, to the column. */
article table.docutils:not(.cell_output table) { width: 100%; }
article table.docutils:not(.cell_output table) td, article table.docutils:not(.cell_output table) th {
  overflow-wrap: anywhere; }
article table.docutils:not(.cell_output table) code { white-space: normal; overflow-wrap: anywhere; }
/* A display formula a few pixels wider than a phone's column: set it smaller rather than scroll it. */
@media (max-width: 480px) {
  .math-wrapper { font-size: 90%; }
  /* A widget's table (an explorer's counts) fits a phone's column in a smaller type, its words wrapping. */
  .course-widget-snapshot table { font-size: 80%; }
  .course-widget-snapshot th, .course-widget-snapshot td { padding: 0.1em 0.25em; overflow-wrap: anywhere; }
}
.course-widget-snapshot summary { cursor: pointer; font-weight: bold; }
"""

_INDEX = '''\
# GPU computing, one notebook at a time

A course on GPU computing with `numba.cuda`: each unit is a lesson notebook, a problem set that grades itself,
and the companion library `course_lib`. These pages are the lessons **with the outputs of one run in Numba's
CUDA simulator** ({date}, {backend}). The simulator shows what kernels *do* (results, races, memory sectors,
bank conflicts, divergence), not how fast they run: no figure in a lesson's simulator output is a GPU timing;
GPU figures come from committed runs on a real GPU, labelled with device and date. To run the lessons yourself, or
on a GPU, see the manual's page for students; instructors will find grading in the manual too.

Widgets (explorers) appear here as static snapshots; they are interactive in a running notebook. A quiz shows
its choices and a "Show the answer" box to open once you have chosen.

```{{toctree}}
:maxdepth: 1
:caption: Lessons

{entries}
```

```{{toctree}}
:maxdepth: 1
:caption: Manual

{manual}
```
'''


def build(out: str | os.PathLike = "_site", *, executed: str | os.PathLike | None = None,
          lessons_dir: str | os.PathLike | None = None, docs_dir: str | os.PathLike | None = None,
          backend: str = "sim", quiet: bool = True) -> Path:
    """Build the site and return the folder holding ``index.html``.

    Parameters
    ----------
    out : path
        Output folder; the HTML goes to ``out/html`` (replaced), the Sphinx sources to
        ``out/src``.
    executed : path, optional
        A folder holding the lessons already executed (same file names); lessons missing
        there are executed now.
    lessons_dir : path, optional
        Where the lessons are (default: the repository's ``lessons/``).
    docs_dir : path, optional
        Where the manual's pages are (default: the repository's ``docs/``; none where it is absent).
    backend : {"sim", "gpu", "auto"}
        Backend for lessons executed now.
    quiet : bool
        Only warnings and errors from Sphinx.

    Raises
    ------
    RuntimeError
        If Sphinx reports a warning or an error (the build uses ``-W``).
    """
    import nbformat
    from sphinx.cmd.build import build_main

    out = Path(out)
    src = out / "src"
    html_dir = out / "html"
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    lessons = find_lessons(lessons_dir)
    if not lessons:
        raise ValueError("no lesson notebooks (NN_name.ipynb) found")
    entries = []
    for path in lessons:
        ready = Path(executed) / path.name if executed is not None else None
        if ready is not None and ready.exists():
            nb = nbformat.read(ready, as_version=4)
        else:
            print(f"executing {path.name} ...", file=sys.stderr)
            nb = execute_lesson(path, backend=backend)
        lesson_title(nb)  # every page needs a title
        staticize_widgets(nb)
        wrap_printed_text(nb)
        nbformat.write(nb, src / path.name)
        entries.append(path.stem)
    manual = []
    for page in find_manual(docs_dir):
        shutil.copyfile(page, src / page.name)
        manual.append(page.stem)
    (src / "conf.py").write_text(_CONF.format())
    (src / "_static").mkdir()
    (src / "_static" / "course.css").write_text(_CSS)
    stamp = datetime.date.today().isoformat()
    (src / "index.md").write_text(_INDEX.format(date=stamp, backend="simulator" if backend == "sim" else backend,
                                                entries="\n".join(entries), manual="\n".join(manual)))
    if html_dir.exists():
        shutil.rmtree(html_dir)
    args = ["-W", "--keep-going", "-b", "html", "-d", str(out / "doctrees"), str(src), str(html_dir)]
    if quiet:
        args.insert(0, "-q")
    status = build_main(args)
    if status != 0:
        raise RuntimeError(f"sphinx-build failed (exit {status}); see the warnings above")
    return html_dir


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_lib.site", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="execute the lessons (in the simulator) and build the static site")
    b.add_argument("--out", default="_site", help="output folder (default _site; the pages go to OUT/html)")
    b.add_argument("--executed", help="folder of already executed lessons to reuse")
    b.add_argument("--backend", default="sim", choices=("sim", "gpu", "auto"),
                   help="where lessons executed now run (default: the simulator)")
    ns = parser.parse_args(argv)
    html_dir = build(ns.out, executed=ns.executed, backend=ns.backend)
    print(f"site built: {html_dir / 'index.html'}  (open it in a browser; no server or network needed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
