"""Telling the instructor's Ctrl-C from a signal a submission sent to the grader.

:func:`instructor_interrupts` blocks SIGINT, SIGTERM and SIGHUP in every thread of the
grading command and waits for them in a thread of its own, which reads who sent each one:
from the terminal (the kernel) or from a process that is not one of the grader's
descendants, it interrupts the run (``KeyboardInterrupt`` in the main thread: the run stops
cleanly, keeping every row written); from a worker or anything it started (or a sender
that is already gone), it is ignored and counted. A thread that existed before and does not
block them would take them first: the grading command blocks them before it starts the
interpreter that grades (``python -m course_lib.grading grade`` starts again with its
arguments hidden), so that every thread inherits the block.
"""

from __future__ import annotations

import _thread
import contextlib
import os
import signal
import threading

from .sandbox import descendants

__all__ = ["SIGNALS", "instructor_interrupts"]

SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


def _from_outside(sender: int) -> bool:
    if sender == 0:  # sent by the kernel: Ctrl-C at the terminal
        return True
    if not os.path.exists(f"/proc/{sender}"):
        return False  # gone already: a worker's child would do exactly this
    return sender not in descendants([os.getpid()])


@contextlib.contextmanager
def instructor_interrupts():
    """Context in which only the instructor's signals interrupt the run (see the module docstring).

    Yields a dict whose ``"ignored"`` counts the signals ignored. Must be entered in the main
    thread before any other thread starts (threads inherit the blocked signals).
    """
    state = {"ignored": 0}
    if not hasattr(signal, "sigtimedwait") or threading.current_thread() is not threading.main_thread():
        yield state
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    # interrupt_main() does nothing while SIGINT is ignored, and a command started in the background by a
    # non-interactive shell (`grade ... &`, a CI job) starts with SIGINT ignored: Python's own handler is
    # put in place while the signals are blocked, so the waiter, not the inherited disposition, decides.
    previous_handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    done = threading.Event()

    def wait():
        while not done.is_set():
            info = signal.sigtimedwait(SIGNALS, 0.2)
            if info is None:
                continue
            if _from_outside(info.si_pid):
                _thread.interrupt_main()
                return
            state["ignored"] += 1

    waiter = threading.Thread(target=wait, name="grading-interrupts", daemon=True)
    waiter.start()
    try:
        yield state
    finally:
        done.set()
        waiter.join()
        while signal.sigtimedwait(SIGNALS, 0) is not None:  # sent by workers as the run ended
            state["ignored"] += 1
        if previous_handler is not None:  # None: installed outside Python, which cannot put it back
            signal.signal(signal.SIGINT, previous_handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
