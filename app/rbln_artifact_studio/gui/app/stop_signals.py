"""SIGTERM and SIGINT close the window as its close button does: jobs cancelled (their staging folders removed),
settings and window state saved, then the app exits with 128 + the signal's number.

Qt's event loop runs no Python while it waits, so a Python signal handler would only run at the next slot (SIGINT
seemed ignored, SIGTERM killed the process at once). The signal's number is written to a pipe instead (a
socket on Windows; signal.set_wakeup_fd), and a QSocketNotifier wakes the event loop to close the window.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QSocketNotifier, Slot
from PySide6.QtWidgets import QApplication, QWidget

# Run on Windows only, where set_wakeup_fd takes a socket: elsewhere a pipe spares the start the socket module (~16 M
# instructions before the window's first paint: docs/performance.md, row 7).
if TYPE_CHECKING or sys.platform == "win32":
    import socket

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)

_received: list[int] = []


def stop_requested() -> int | None:
    """The stop signal received, if any: closing then asks nothing (the session, or the user at a terminal, decided)."""
    return _received[0] if _received else None


def _noted(_signum: int, _frame: FrameType | None) -> None:
    """The Python-level handler: the wakeup channel already carries the signal; nothing else to do here."""


class WakeupChannel:
    """Two non-blocking ends the signal's number is written to and read from: a pipe, or on Windows (where
    set_wakeup_fd takes a socket only) a socket pair."""

    def __init__(self) -> None:
        self._sockets: tuple[socket.socket, socket.socket] | None = None
        if sys.platform == "win32":
            self._sockets = socket.socketpair()
            for end in self._sockets:
                end.setblocking(False)
            self.reader, self.writer = (end.fileno() for end in self._sockets)
        else:
            self.reader, self.writer = os.pipe()
            for fd in (self.reader, self.writer):
                os.set_blocking(fd, False)

    def read(self) -> bytes:
        """What was written since the last read (b"" when nothing was)."""
        try:
            return self._sockets[0].recv(64) if self._sockets is not None else os.read(self.reader, 64)
        except BlockingIOError:
            return b""

    def close(self) -> None:
        if self._sockets is not None:
            for end in self._sockets:
                end.close()
        else:
            os.close(self.reader)
            os.close(self.writer)


class StopSignals(QObject):
    """While it lives, SIGTERM and SIGINT close `window` (and so end the app); restore() puts the old handlers back."""

    def __init__(self, window: QWidget, quit_app: bool = True) -> None:
        super().__init__(window)
        self.window = window
        self._quit_app = quit_app  # also quit when a dialog kept the app alive (tests keep their own event loop)
        self._wakeup = WakeupChannel()
        self._previous_fd = signal.set_wakeup_fd(self._wakeup.writer, warn_on_full_buffer=False)
        self._previous = {sig: signal.signal(sig, _noted) for sig in STOP_SIGNALS}
        self._notifier = QSocketNotifier(self._wakeup.reader, QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._on_wakeup)

    @Slot()
    def _on_wakeup(self) -> None:
        data = self._wakeup.read()
        for signum in data:
            if signum in STOP_SIGNALS and not _received:
                _received.append(signum)
                self.window.close()
                app = QApplication.instance()
                if self._quit_app and app is not None and not self.window.isVisible():
                    app.quit()

    def restore(self) -> None:
        """Back to the handlers from before (tests; the app keeps its own until it exits)."""
        self._notifier.setEnabled(False)
        signal.set_wakeup_fd(self._previous_fd)
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._wakeup.close()
        _received.clear()
