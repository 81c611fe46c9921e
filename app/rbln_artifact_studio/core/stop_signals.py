"""SIGTERM (a logout, `kill`, a service manager) stops a command as Ctrl-C does: cleanly, nothing left half-done.

Python's default for SIGTERM ends the process at once: no `finally`, so a staging folder of a copy in progress
stayed behind (641 MB in issue 28). While terminate_raises() is active, SIGTERM raises Terminated, a
KeyboardInterrupt, in the main thread: every `with StagingDir`, lock and temporary file cleans up on the way out.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType


class Terminated(KeyboardInterrupt):
    """Raised in the main thread by a stop signal; exit with 128 + signum, as a shell reports it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def exit_status(exc: KeyboardInterrupt) -> int:
    """128 + the signal's number: 143 for SIGTERM, 130 for SIGINT (Ctrl-C)."""
    return 128 + (exc.signum if isinstance(exc, Terminated) else signal.SIGINT)


_LEFT = "rbln_studio_left"


def say_left(exc: BaseException, text: str) -> None:
    """Record on a cancel what the stopped work left, or that it removed what it wrote: the CLI's `cancelled:`
    line says this instead of its general words (a copy into a bucket cannot always remove its objects)."""
    setattr(exc, _LEFT, text)


def left_by(exc: BaseException) -> str | None:
    """What say_left recorded on the cancel, if anything."""
    text = getattr(exc, _LEFT, None)
    return text if isinstance(text, str) else None


def _raise(signum: int, _frame: FrameType | None) -> None:
    raise Terminated(signum)


@contextlib.contextmanager
def terminate_raises() -> Iterator[None]:
    """SIGTERM raises Terminated while inside (main thread only; elsewhere nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
