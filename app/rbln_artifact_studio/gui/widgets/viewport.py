"""A scroll area's viewport without PySide's type discovery, which builds every QtWidgets class the first time."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractScrollArea, QWidget

VIEWPORT_NAME = "qt_scrollarea_viewport"  # the name QAbstractScrollArea gives the viewport it makes itself


def viewport_of(view: QAbstractScrollArea) -> QWidget:
    """view.viewport(), found as the named child it is.

    PySide wraps the QWidget that viewport() returns by searching every QtWidgets class for its type, and the
    first such search builds all of them (~40 enum classes, ~10 ms) before the window's first paint (row 7 of
    docs/performance.md); findChild names the type, so it wraps the same widget in well under a millisecond.
    A viewport set with setViewport() has no such name and comes from viewport() itself.
    """
    found = view.findChild(QWidget, VIEWPORT_NAME, Qt.FindChildOption.FindDirectChildrenOnly)
    return found if found is not None else view.viewport()
