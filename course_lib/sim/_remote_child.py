"""Child side of :mod:`course_lib.sim.remote`: ``python -m course_lib.sim._remote_child`` reads a request
on stdin, runs :func:`course_lib.sim.check` or :func:`course_lib.sim.profile` under the simulator and
answers on stdout.
"""

from __future__ import annotations

import linecache
import pickle
import sys

import numpy as np

from ._transport import _lookup


def _serve():
    """Child side: read a request on stdin, answer on stdout."""
    import course_lib  # noqa: F401  (simulator mode, hooks installed)

    request = pickle.loads(sys.stdin.buffer.read())
    for filename, lines in request["lines"].items():
        if lines and not linecache.getlines(filename):
            linecache.cache[filename] = (sum(map(len, lines)), None, lines, filename)
    kind, target = request["target"]
    kernel = _lookup(*target) if kind == "name" else target
    from ._check import check
    from ._profile import profile

    run = check if request["mode"] == "check" else profile
    args = request["args"]
    try:
        report = run(kernel, request["griddim"], request["blockdim"], *args, **request["options"])
        reply = {"report": report, "args": [a if isinstance(a, np.ndarray) else None for a in args]}
    except Exception as err:  # sent back and raised in the parent
        reply = {"error": err}
    sys.stdout.buffer.write(pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL))


if __name__ == "__main__":
    _serve()
