"""The one path for error dialogs, and an excepthook that shows unexpected errors instead of dying."""

from __future__ import annotations

import sys
import traceback
from types import TracebackType

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.gui.app.remedies import said


def show_error(parent: QWidget | None, title: str, reason: str, details: str = "") -> QMessageBox:
    """A non-blocking error box: the one-line reason, and the details behind 'Show Details…'."""
    box = QMessageBox(parent)
    box.setObjectName("errorDialog")
    box.setIcon(QMessageBox.Icon.Critical)
    box.setWindowTitle(title)
    box.setText(reason)
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if details:
        box.setDetailedText(details)
    box.setStandardButtons(QMessageBox.StandardButton.Close)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box


def _parent() -> QWidget | None:
    app = QApplication.instance()
    window = app.property("mainWindow") if app is not None else None
    return window if isinstance(window, QWidget) else None


def excepthook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    """Show an exception that escaped a slot; the app keeps running."""
    if issubclass(kind, KeyboardInterrupt):
        sys.__excepthook__(kind, exc, tb)
        return
    details = "".join(traceback.format_exception(kind, exc, tb))
    sys.stderr.write(details)
    if isinstance(exc, StudioError):
        reason, details = said(exc), exc.hint or ""
    else:
        reason = f"Unexpected error: {kind.__name__}: {exc}"
    if QApplication.instance() is not None:
        show_error(_parent(), "RBLN Artifact Studio: unexpected error", reason, details)


def install_excepthook() -> None:
    sys.excepthook = excepthook
