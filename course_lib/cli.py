"""The ``course`` command: ``course bench UNIT``, ``course compile-check``, ``course grading ...``."""

from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "bench": ("course_lib.bench.__main__", "benchmark a unit (python -m course_lib.bench)"),
    "compile-check": ("course_lib.compile_check", "compile every kernel to PTX (no GPU needed)"),
    "grading": ("course_lib.grading.__main__", "release problem sets, grade submissions"),
}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in COMMANDS:
        print("usage: course {" + ",".join(COMMANDS) + "} ...\n")
        for name, (_, text) in COMMANDS.items():
            print(f"  {name:<14} {text}")
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    module = importlib.import_module(COMMANDS[argv[0]][0])
    return module.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
