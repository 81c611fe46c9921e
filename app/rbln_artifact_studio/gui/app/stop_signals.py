"""SIGTERM and SIGINT close the window as its close button does: jobs cancelled (their staging folders removed),
settings and window state saved, then the app exits with 128 + the signal's number.

Qt's event loop runs no Python while it waits, so a Python signal handler would only run at the next slot (SIGINT
seemed ignored, SIGTERM killed the process at once). The signal's number is written to a socket instead
(signal.set_wakeup_fd), and a QSocketNotifier wakes the event loop to close the window.
"""

from __future__ import annotations

import signal
import socket
from types import FrameType

from PySide6.QtCore import QObject, QSocketNotifier, Slot
from PySide6.QtWidgets import QApplication, QWidget

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)

_received: list[int] = []


def stop_requested() -> int | None:
    """The stop signal received, if any: closing then asks nothing (the session, or the user at a terminal, decided)."""
    return _received[0] if _received else None


def _noted(_signum: int, _frame: FrameType | None) -> None:
    """The Python-level handler: the wakeup socket already carries the signal; nothing else to do here."""


class StopSignals(QObject):
    """While it lives, SIGTERM and SIGINT close `window` (and so end the app); restore() puts the old handlers back."""

    def __init__(self, window: QWidget, quit_app: bool = True) -> None:
        super().__init__(window)
        self.window = window
        self._quit_app = quit_app  # also quit when a dialog kept the app alive (tests keep their own event loop)
        self._reader, self._writer = socket.socketpair()
        for end in (self._reader, self._writer):
            end.setblocking(False)
        self._previous_fd = signal.set_wakeup_fd(self._writer.fileno(), warn_on_full_buffer=False)
        self._previous = {sig: signal.signal(sig, _noted) for sig in STOP_SIGNALS}
        self._notifier = QSocketNotifier(self._reader.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._on_wakeup)

    @Slot()
    def _on_wakeup(self) -> None:
        try:
            data = self._reader.recv(64)
        except BlockingIOError:
            return
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
        self._reader.close()
        self._writer.close()
        _received.clear()
