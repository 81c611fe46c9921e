"""Sizes that fit the screen: a window opens at most the screen's available area, saved geometry only where it fits."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QRect, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

# A window manager's title bar and borders, not part of the widget's own size: kept free below the available area.
FRAME_MARGIN = QSize(16, 40)


def available_area(widget: QWidget) -> QRect:
    """The screen area (without panels and docks) the widget is on, or the primary screen's."""
    screen = widget.screen() if widget.isVisible() else None
    screen = screen or QGuiApplication.primaryScreen()
    return screen.availableGeometry() if screen is not None else QRect(0, 0, 1280, 800)


def fitting_size(widget: QWidget, wanted: QSize) -> QSize:
    """Wanted, shrunk where the screen is smaller (with room for the window frame)."""
    room = available_area(widget).size() - FRAME_MARGIN
    return wanted.boundedTo(room).expandedTo(QSize(1, 1))


def resize_to_fit(widget: QWidget, width: int, height: int) -> None:
    """Resize to width×height, or to the screen's available area where that is smaller."""
    widget.resize(fitting_size(widget, QSize(width, height)))


def restore_if_fits(widget: QWidget, saved: QByteArray | bytes | None) -> bool:
    """Restore saved geometry only when the restored window lies inside the available area; False otherwise
    (the caller then sizes the window itself). A geometry saved on a larger screen would hang off this one."""
    if saved is None:
        return False
    before = widget.geometry()
    if not widget.restoreGeometry(QByteArray(saved)):
        return False
    if available_area(widget).contains(widget.geometry()):
        return True
    widget.setGeometry(before)
    return False
