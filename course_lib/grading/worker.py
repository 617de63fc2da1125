"""The process a submission's code runs in, started by :mod:`course_lib.grading.grader`.

It speaks a line-based JSON protocol (:mod:`course_lib.grading.protocol`) on private copies
of its standard input and output; the student's code gets ``/dev/null`` for the real file
descriptors 0-2 and a bounded sink for ``sys.stdout``/``sys.stderr``, so printing cannot
corrupt the protocol or fill the disk. Requests:

Started as ``python -m course_lib.grading.worker PS MEMORY_MB``, it imports the problem set's
questions, then says ``{"event": "ready"}``.

- ``{"cmd": "load", "cells": [[index, source], ...], "answers": {qid: {"args", "kwargs"}}}``:
  run the notebook's code cells in a fresh namespace, then evaluate each question's answer
  expressions (taken by the grader from the solution's ``check(...)`` cells) and prepare
  them. Reply: ``{"event": "loaded", "cell_errors", "answers": {qid: {"info"} or {"error"}}}``,
  preceded by ``{"event": "cell", "index"}`` as each cell starts (for timeout messages).
- ``{"cmd": "produce", "question", "test", "inputs"}``: run a split test's ``produce`` step on
  the prepared answer. Reply: ``produced`` with ``outputs``, ``failed`` with ``message``, or
  ``raised`` with ``exception`` and ``message``.
- ``{"cmd": "run", "question", "test", "seed"}``: run a test that is not split, whole (its
  verdict is then the student process's word). Reply: ``ran`` with ``passed`` and ``message``.

The worker never receives expected outputs: the grader judges ``produce``'s outputs itself.
"""

from __future__ import annotations

import builtins
import io
import linecache
import os
import resource
import sys
import threading


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


#: Stack of each new thread. The simulator runs a thread per CUDA thread: with the default 8 MB of
#: address space each, a block of 1024 threads alone would exceed the address-space limit.
THREAD_STACK = 1 << 20


def _set_limits(memory_mb: int) -> None:
    threading.stack_size(THREAD_STACK)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a segfault must not leave a core file
    if memory_mb > 0:
        limit = memory_mb * 1024 * 1024
        try:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ValueError, OSError):  # not every system limits address space (macOS); the grader watches RSS
            pass


def _transform(source: str) -> str:
    """IPython syntax (``%magic``, ``!cmd``) as plain Python, when a cell uses it."""
    if not any(line.lstrip().startswith(("%", "!")) for line in source.splitlines()):
        return source
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:
        return source
    return TransformerManager().transform_cell(source)


class _NoIPython:
    """``get_ipython()`` in a graded notebook: magics do nothing."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def main() -> int:
    problem_set, memory_mb = sys.argv[1], int(sys.argv[2])
    _set_limits(memory_mb)
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb", buffering=0)
    devnull = os.open(os.devnull, os.O_RDWR)
    if not os.environ.get("COURSE_GRADING_DEBUG"):
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
    else:
        for fd in (0, 1):
            os.dup2(devnull, fd)
    sys.stdin = io.StringIO("")
    sys.stdout = _Sink()
    if not os.environ.get("COURSE_GRADING_DEBUG"):
        sys.stderr = _Sink()

    # Everything trusted is imported before the student's code runs.
    import course_lib  # noqa: F401  (chooses the backend)
    from .core import NOT_ANSWERED, TestFailure, _student_error, questions_of, quiet_floats, test_rng
    from .protocol import decode, dumps, encode, loads

    def send(message):
        replies.write(dumps(message))

    questions, prepared = {q.id: q for q in questions_of(problem_set)}, {}
    send({"event": "ready"})
    for line in requests:
        request = loads(line)
        command = request.get("cmd")
        if command == "load":
            namespace = {"__name__": "__main__", "__builtins__": builtins,
                         "display": lambda *args, **kwargs: None, "get_ipython": _NoIPython}
            cell_errors = []
            for index, source in request["cells"]:
                send({"event": "cell", "index": index})
                filename = f"<cell {index}>"
                try:
                    code = _transform(source)
                    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
                    exec(compile(code, filename, "exec"), namespace)
                except BaseException as exc:  # noqa: BLE001  (SystemExit too: the notebook goes on)
                    cell_errors.append(f"cell {index}: {_student_error(exc)}")
            answers = {}
            for qid, spec in request["answers"].items():
                question = questions[qid]
                try:
                    args = [eval(src, namespace) for src in spec["args"]]
                    kwargs = {key: eval(src, namespace) for key, src in spec["kwargs"].items()}
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
            send({"event": "loaded", "cell_errors": cell_errors, "answers": answers})
        elif command in ("produce", "run"):
            qid = request["question"]
            test = questions[qid].tests[request["test"]]
            try:
                with quiet_floats():
                    if command == "produce":
                        outputs = test.produce(prepared[qid], decode(request["inputs"]))
                        send({"event": "produced", "outputs": encode(outputs)})
                    else:
                        test.run(prepared[qid], test_rng(test, request["seed"]))
                        send({"event": "ran", "passed": True, "message": ""})
            except TestFailure as exc:
                send({"event": "failed", "message": str(exc)})
            except NotImplementedError:
                send({"event": "failed", "message": NOT_ANSWERED})
            except BaseException as exc:  # noqa: BLE001
                send({"event": "raised", "exception": type(exc).__name__, "message": _student_error(exc)})
        elif command == "exit":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
