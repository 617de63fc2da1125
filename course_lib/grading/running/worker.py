"""The process a submission's code runs in, started by :mod:`course_lib.grading.running.client`.

It speaks a line-based JSON protocol (:mod:`course_lib.grading.protocol`) on private copies
of its standard input and output; the student's code gets ``/dev/null`` for the real file
descriptors 0-2 and a bounded sink for ``sys.stdout``/``sys.stderr``, so printing cannot
corrupt the protocol or fill the disk.

Started as ``python -B -m course_lib.grading.running.worker PS MEMORY_MB``, it limits itself
(:mod:`course_lib.grading.running.confine`), imports the problem set's questions, takes a snapshot
of the grading machinery (:mod:`course_lib.grading.running.tamper`), then says ``{"event": "ready",
"notes": [...]}``. Requests:

- ``{"cmd": "load", "cells": [[index, source], ...], "answers": {qid: {"args", "kwargs"}}}``:
  run the notebook's code cells in a fresh namespace (cell magics that run their body in
  Jupyter, ``%%time``, ``%%capture``..., run it here too), then evaluate each question's answer
  expressions (taken by the grader from the solution's ``check(...)`` cells) and prepare them.
  Reply: ``{"event": "loaded", "cell_errors", "answers": {qid: {"info"} or {"error"}}}``, or
  ``{"event": "tampered", "changed": [...]}`` when the notebook changed the grading machinery;
  preceded by ``{"event": "cell", "index"}`` as each cell starts (for timeout messages).
- ``{"cmd": "produce", "question", "test", "inputs"}``: run a test's ``produce`` step on the
  prepared answer. Reply: ``produced`` with ``outputs``, ``failed`` with ``message``, ``raised``
  with ``exception`` and ``message``, or ``tampered``.

The worker never receives expected outputs: the grader judges ``produce``'s outputs itself.
"""

from __future__ import annotations

import builtins
import getopt
import io
import linecache
import os
import re
import signal
import sys


class _Sink(io.TextIOBase):
    """A text stream that keeps the first ``limit`` characters and drops the rest."""

    def __init__(self, limit: int = 100_000):
        self.kept, self.limit, self.dropped = [], limit, 0

    def writable(self) -> bool:
        return True

    def write(self, text) -> int:
        text = str(text)
        room = self.limit - sum(map(len, self.kept))
        if room > 0:
            self.kept.append(text[:room])
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def getvalue(self) -> str:
        return "".join(self.kept)


def _transform(source: str) -> str:
    """IPython syntax (``%magic``, ``!cmd``) as plain Python, when a cell uses it."""
    if not any(line.lstrip().startswith(("%", "!")) for line in source.splitlines()):
        return source
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:
        return source
    return TransformerManager().transform_cell(source)


class _Captured:
    """What ``%%capture name`` binds: the text the body printed."""

    def __init__(self, stdout: str, stderr: str):
        self.stdout, self.stderr, self.outputs = stdout, stderr, []

    def show(self) -> None:
        print(self.stdout, end="")

    __call__ = show


#: Cell and line magics whose body (or statement) is Python that Jupyter runs.
BODY_MAGICS = {"time", "timeit", "capture", "prun", "debug", "memit", "mprun"}
#: The options IPython's %timeit and %prun take (getopt specifications): the statement follows them.
_OPTION_SPECS = {"timeit": "n:r:tcp:qo", "prun": "D:l:rs:T:q"}
_TOKEN = re.compile(r"\s*\S+")


def _statement(name: str, line: str) -> str:
    """What follows a magic's options on its line (``%timeit -n1 -r 3 f(x)`` -> ``f(x)``)."""
    line = str(line)
    if name not in _OPTION_SPECS:
        return line
    tokens = line.split()
    try:
        _, rest = getopt.getopt(tokens, _OPTION_SPECS[name])
    except getopt.GetoptError:
        return line
    position = 0
    for _ in range(len(tokens) - len(rest)):
        position = _TOKEN.match(line, position).end()
    return line[position:].strip()


class _Shell:
    """``get_ipython()`` in a graded notebook: magics that run Python run it, the others do nothing."""

    def __init__(self, notebook: "_Notebook"):
        self._notebook = notebook

    def run_cell_magic(self, name, line, cell):
        if name not in BODY_MAGICS:
            return None
        if name == "capture":
            words = [w for w in str(line).split() if not w.startswith("-")]
            out, err = _Sink(), _Sink()
            saved = sys.stdout, sys.stderr
            sys.stdout, sys.stderr = out, err
            try:
                self._notebook.run_source(cell, first_line=2)
            finally:
                sys.stdout, sys.stderr = saved
            if words:
                self._notebook.namespace[words[0]] = _Captured(out.getvalue(), err.getvalue())
            return None
        if name == "timeit":
            # IPython times the body in a function of its own: its names do not stay; ``%%timeit setup``
            # runs its line first, in that scope too.
            setup = _statement(name, line)
            scope = dict(self._notebook.namespace)
            if setup.strip():
                self._notebook.run_source(setup, first_line=1, namespace=scope)
            self._notebook.run_source(cell, first_line=2, namespace=scope)
            return None
        self._notebook.run_source(cell, first_line=2)
        return None

    def run_line_magic(self, name, line):
        if name in BODY_MAGICS and name != "capture":
            statement = _statement(name, line)
            scope = dict(self._notebook.namespace) if name == "timeit" else None
            self._notebook.run_source(statement, first_line=1, namespace=scope)
        return None

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


class _Notebook:
    """The student's namespace and the running of its cells."""

    def __init__(self):
        self.shell = _Shell(self)
        self.namespace = {"__name__": "__main__", "__builtins__": builtins,
                          "display": lambda *args, **kwargs: None, "get_ipython": lambda: self.shell}
        self.filename = "<cell>"

    def run_source(self, source: str, first_line: int = 1, namespace: dict | None = None) -> None:
        code = _transform(str(source))
        padded = "\n" * (first_line - 1) + code  # line numbers as in the notebook's cell
        exec(compile(padded, self.filename, "exec"), self.namespace if namespace is None else namespace)

    def run_cell(self, index: int, source: str) -> None:
        self.filename = f"<cell {index}>"
        code = _transform(source)
        linecache.cache[self.filename] = (len(source), None, source.splitlines(True), self.filename)
        exec(compile(code, self.filename, "exec"), self.namespace)


def _is_kernel(obj) -> bool:
    return hasattr(obj, "py_func") and hasattr(obj, "__getitem__")


def _host_call_failure(host: list, failure):
    return failure(f"the kernel calls host code that a GPU cannot run ({', '.join(host)}): a kernel may call only "
                   "device functions, math and cuda functions", public=True)


def _guard_launches(failure):
    """In the simulator, check every launch of a kernel that is not the course's for host calls (a kernel
    made by the answer, a factory's, is seen only when it is launched); returns what to watch, or None."""
    from ... import device

    if not device.is_simulator():
        return None  # on a GPU such a kernel does not compile
    from numba.cuda.simulator.kernel import FakeCUDAKernel

    from .tamper import kernel_host_calls

    launch, checked = FakeCUDAKernel.__call__, {}

    def guarded_launch(self, *args, **kwargs):
        fn = getattr(self, "fn", None)
        if not getattr(self, "_device", False) and fn is not None and \
                not str(getattr(fn, "__module__", "")).startswith("course_lib"):
            code = getattr(fn, "__code__", None)
            if code not in checked:
                checked[code] = kernel_host_calls(self)
            if checked[code]:
                raise _host_call_failure(checked[code], failure)
        return launch(self, *args, **kwargs)

    FakeCUDAKernel.__call__ = guarded_launch
    return FakeCUDAKernel, guarded_launch


def main() -> int:
    problem_set, memory_mb = sys.argv[1], int(sys.argv[2])
    signal.pthread_sigmask(signal.SIG_SETMASK, set())  # the grader blocks some signals in its threads
    from .confine import apply

    notes = apply(memory_mb)
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb", buffering=0)
    devnull = os.open(os.devnull, os.O_RDWR)
    debug = bool(os.environ.get("COURSE_GRADING_DEBUG"))
    for fd in ((0, 1) if debug else (0, 1, 2)):
        os.dup2(devnull, fd)
    sys.stdin = io.StringIO("")
    sys.stdout = _Sink()
    if not debug:
        sys.stderr = _Sink()

    # Everything trusted is imported before the student's code runs.
    import course_lib  # noqa: F401  (chooses the backend)
    from ..core import NOT_ANSWERED, TestFailure, _student_error, questions_of, quiet_floats
    from ..protocol import decode, dumps, encode, loads
    from .tamper import Snapshot, fingerprint, kernel_host_calls

    def send(message):
        replies.write(dumps(message))

    questions, prepared = {q.id: q for q in questions_of(problem_set)}, {}
    guarded = _guard_launches(TestFailure)
    snapshot = Snapshot()
    if guarded:
        snapshot.watch("the simulator's kernel launch", lambda: guarded[0].__dict__.get("__call__") is guarded[1])
    # The simulator's typing process loads numba-cuda's compiler now, within the start-up time,
    # not within the first question's time limit (course_lib.sim._typing).
    from ... import device

    reseed = None
    if device.is_simulator():
        from ...sim import _engine, _typing

        # The block and warp order the grader drew for this run (COURSE_SIM_SEED): restored before
        # every test, so that a notebook that calls set_seed cannot choose the order it is graded in.
        run_seed = _engine.get_seed()

        def reseed():
            _engine.set_seed(run_seed)

        if not _typing.wait_ready() and _typing.enabled():
            notes.append("kernels run without numba's static typing (its process could not start)")
        # Graded kernels are typed as a GPU types them, or refused; switching that off is tampering.
        if _typing.enabled():
            _typing.require()
        snapshot.watch("numba's static typing of kernels", lambda: (_typing.enabled(), _typing.required()))
    # The snapshot's own record, kept here, where a notebook cannot rebind it (see tamper.fingerprint).
    sealed, sealed_code = fingerprint(snapshot.entries), fingerprint.__code__

    def changes():
        changed = snapshot.changes()
        if fingerprint.__code__ is not sealed_code or fingerprint(snapshot.entries) != sealed:
            changed = [*changed, "the grader's record of the grading machinery"]
        return changed

    send({"event": "ready", "notes": notes})
    for line in requests:
        request = loads(line)
        command = request.get("cmd")
        if command == "load":
            notebook = _Notebook()
            cell_errors = []
            for index, source in request["cells"]:
                send({"event": "cell", "index": index})
                try:
                    notebook.run_cell(index, source)
                except BaseException as exc:  # noqa: BLE001  (SystemExit too: the notebook goes on)
                    cell_errors.append(f"cell {index}: {_student_error(exc)}")
            answers = {}
            for qid, spec in request["answers"].items():
                question = questions[qid]
                try:
                    args = [eval(src, notebook.namespace) for src in spec["args"]]
                    kwargs = {key: eval(src, notebook.namespace) for key, src in spec["kwargs"].items()}
                    for arg in args:
                        host = kernel_host_calls(arg) if _is_kernel(arg) else []
                        if host:
                            raise _host_call_failure(host, TestFailure)
                    answer = question.prepare(*args, **kwargs) if question.prepare else args[0]
                    prepared[qid] = answer
                    info = question.describe(answer) if question.describe else {}
                    answers[qid] = {"info": encode(info)}
                except TestFailure as exc:
                    answers[qid] = {"error": str(exc)}
                except NotImplementedError:
                    answers[qid] = {"error": NOT_ANSWERED}
                except BaseException as exc:  # noqa: BLE001
                    answers[qid] = {"error": _student_error(exc)}
            changed = changes()
            if changed:
                send({"event": "tampered", "changed": changed})
            else:
                send({"event": "loaded", "cell_errors": cell_errors, "answers": answers})
        elif command == "produce":
            qid = request["question"]
            test = questions[qid].tests[request["test"]]
            try:
                if reseed is not None:
                    reseed()
                with quiet_floats():
                    outputs = test.produce(prepared[qid], decode(request["inputs"]))
                reply = {"event": "produced", "outputs": encode(outputs)}
            except TestFailure as exc:
                reply = {"event": "failed", "message": str(exc)}
            except NotImplementedError:
                reply = {"event": "failed", "message": NOT_ANSWERED}
            except BaseException as exc:  # noqa: BLE001
                reply = {"event": "raised", "exception": type(exc).__name__, "message": _student_error(exc)}
            changed = changes()
            send({"event": "tampered", "changed": changed} if changed else reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
