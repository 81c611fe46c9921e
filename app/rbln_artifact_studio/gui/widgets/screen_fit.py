"""Sizes that fit the screen: a window opens at most the screen's available area, saved geometry only where it fits.

A dialog is sized against its parent window's screen when it first shows (Qt then centres it over the parent and
keeps it on that screen); its body scrolls (scrolling_body) so its buttons stay on screen however small that is.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QEvent, QObject, QRect, QSize
from PySide6.QtGui import QGuiApplication, QScreen
from PySide6.QtWidgets import QFrame, QLayout, QScrollArea, QVBoxLayout, QWidget

# A window manager's title bar and borders, not part of the widget's own size: kept free of the available area.
FRAME_MARGIN = QSize(16, 40)


def _screen(widget: QWidget) -> QScreen | None:
    parent = widget.parentWidget()
    if parent is not None:
        return parent.window().screen()
    return QGuiApplication.screenAt(widget.geometry().center()) or widget.screen()


def available_area(widget: QWidget) -> QRect:
    """The available area (without panels and docks) of the screen the widget is on, or will show on."""
    screen = _screen(widget) or QGuiApplication.primaryScreen()
    return screen.availableGeometry() if screen is not None else QRect(0, 0, 1280, 800)


def fitting_size(widget: QWidget, wanted: QSize) -> QSize:
    """Wanted, shrunk where the screen is smaller (with room for the window frame)."""
    room = available_area(widget).size() - FRAME_MARGIN
    return wanted.boundedTo(room).expandedTo(QSize(1, 1))


class _FitOnFirstShow(QObject):
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Show and isinstance(watched, QWidget):
            watched.removeEventFilter(self)
            fit_inside_screen(watched)
            self.deleteLater()
        return False


def fit_inside_screen(widget: QWidget) -> None:
    """Shrink the window to its screen's available area and move it inside, where it hangs over an edge."""
    area = available_area(widget)
    size = fitting_size(widget, widget.size())
    if size != widget.size():
        widget.resize(size)
    if widget.parentWidget() is None and not area.contains(widget.geometry()):
        x = min(max(widget.x(), area.left()), area.right() - widget.width() + 1)
        y = min(max(widget.y(), area.top()), area.bottom() - widget.height() - FRAME_MARGIN.height() + 1)
        widget.move(max(x, area.left()), max(y, area.top()))


def resize_to_fit(widget: QWidget, width: int, height: int) -> None:
    """Resize to width×height, or to the screen's available area where that is smaller (checked again when the
    window first shows, on the screen it shows on)."""
    widget.resize(fitting_size(widget, QSize(width, height)))
    widget.installEventFilter(_FitOnFirstShow(widget))


def restore_if_fits(widget: QWidget, saved: QByteArray | bytes | None) -> bool:
    """Restore saved geometry only when the restored window lies inside the available area; False otherwise
    (the caller then sizes the window itself). A geometry saved on a larger screen would hang off this one."""
    widget.installEventFilter(_FitOnFirstShow(widget))  # the screen it shows on may be smaller still
    if saved is None:
        return False
    before = widget.geometry()
    if not widget.restoreGeometry(QByteArray(saved)):
        return False
    if available_area(widget).contains(widget.geometry()):
        return True
    widget.setGeometry(before)
    return False


def scrolling_body(dialog: QWidget, body: QLayout, *below: QWidget) -> QScrollArea:
    """The dialog's layout: body in a scroll area (no frame: it looks as before), the widgets below (its buttons)
    outside it, so they stay visible when the screen is too small for the whole body."""
    inner = QWidget()
    inner.setObjectName(f"{dialog.objectName()}Body")
    inner.setLayout(body)
    body.setContentsMargins(0, 0, 0, 0)
    scroll = QScrollArea()
    scroll.setObjectName(f"{dialog.objectName()}Scroll")
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    scroll.setWidget(inner)
    outer = QVBoxLayout(dialog)
    outer.addWidget(scroll, 1)
    for widget in below:
        outer.addWidget(widget)
    return scroll
