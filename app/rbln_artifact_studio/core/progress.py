"""Qt-free progress reporting and cancellation shared by the CLI, the GUI's workers and the core."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from rbln_artifact_studio.core.errors import CancelledError

ProgressCallback = Callable[[int, int, str], None]
"""Called with (done, total, message); total 0 means the amount of work is unknown."""


class CancelToken:
    """Set from any thread; long operations check it between chunks and stop cleanly."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def raise_if_cancelled(self) -> None:
        if self._event.is_set():
            raise CancelledError("Cancelled", unchanged=True)


@dataclass
class Progress:
    """A byte or step counter that forwards to a callback and checks for cancellation on every update."""

    callback: ProgressCallback | None = None
    cancel: CancelToken | None = None
    total: int = 0
    done: int = 0
    message: str = ""

    def start(self, total: int, message: str) -> None:
        self.total, self.done, self.message = total, 0, message
        self._emit()

    def advance(self, amount: int) -> None:
        self.done += amount
        self._emit()

    def say(self, message: str) -> None:
        self.message = message
        self._emit()

    def check(self) -> None:
        if self.cancel is not None:
            self.cancel.raise_if_cancelled()

    def _emit(self) -> None:
        self.check()
        if self.callback is not None:
            self.callback(self.done, self.total, self.message)
