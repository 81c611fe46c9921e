"""Work a window does not show in its first paint, run after that paint, one piece per event-loop turn."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget


class AfterFirstPaint(QObject):
    """Runs each step in its own event-loop turn once `widget` has painted for the first time.

    Start-up is measured to the first painted window (docs/performance.md row 7): what that paint does not show
    (hidden sections, their modules) is built after it. One step a turn, so none of it is one long stall while the
    first rows come in (row 6). A step that is needed sooner builds on demand; running it again does nothing.
    """

    def __init__(self, widget: QWidget, steps: Iterable[Callable[[], object]]) -> None:
        super().__init__(widget)
        self._steps = deque(steps)
        self._widget = widget
        widget.installEventFilter(self)

    def first(self, steps: Iterable[Callable[[], object]]) -> None:
        """Run these steps before the ones given so far (each in its own turn, like them)."""
        self._steps.extendleft(reversed(list(steps)))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._widget and event.type() == QEvent.Type.Paint:
            self._widget.removeEventFilter(self)
            QTimer.singleShot(0, self._next)
        return False

    def _next(self) -> None:
        if self._steps:
            self._steps.popleft()()
        if self._steps:
            QTimer.singleShot(0, self._next)
