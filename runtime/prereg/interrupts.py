"""SIGTERM ended as an interrupt is: a command stopped by ``kill``, a timeout or a CI's cancel
raises KeyboardInterrupt where it stands, so that whatever it was writing is removed on the
way out (files.py writes a unit's files all or none on an exception; score's spill folder is
removed in a ``finally``), and it exits 130 saying ``interrupted``. The signal's default ends
the process where it stands: between the links of a unit it left SCORE.json without SCORE.md
(with a journal and staged files), and a bucketed score left its spill folder, a copy of the
inputs' ids and records."""

from __future__ import annotations

import contextlib
import os


@contextlib.contextmanager
def terminate_as_interrupt():
    """Within the block, SIGTERM raises KeyboardInterrupt in the main thread of this process;
    the caller's handler is back when the block ends. Only the process that set it takes the
    handler: a forked worker that inherits it stops as the default would. From another thread
    (where a handler cannot be set) the block runs as it is."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    owner = os.getpid()

    def interrupt(signum, frame):
        if os.getpid() != owner:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
