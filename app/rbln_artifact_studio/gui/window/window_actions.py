"""The window's own actions, made one way: named (tests and the start panel find them by name), on the window (their
shortcuts work wherever its focus is), each triggering one slot."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget

Shortcut = QKeySequence | QKeySequence.StandardKey | str | None


def add_action(
    window: QWidget, name: str, text: str, slot: Callable[..., object], shortcut: Shortcut = None
) -> QAction:
    """An action named name on window, its text and shortcut, triggering slot."""
    action = QAction(text, window)
    action.setObjectName(name)
    if shortcut is not None:
        action.setShortcut(QKeySequence(shortcut))
    action.triggered.connect(slot)
    window.addAction(action)
    return action
