"""The About box: versions, the backends found here (detected in a job), and where settings and data live."""

from __future__ import annotations

import platform
from dataclasses import dataclass

import PySide6
from PySide6.QtCore import Slot, qVersion
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from rbln_artifact_studio import __version__
from rbln_artifact_studio.gui.app.application import DISPLAY_NAME
from rbln_artifact_studio.gui.models.backend_status import BackendStatus


@dataclass(frozen=True)
class Locations:
    settings_file: str
    demo_workspace: str


def about_text(locations: Locations, backends: BackendStatus) -> str:
    """Plain text a user can paste into a bug report."""
    lines = [
        f"{DISPLAY_NAME} {__version__}",
        f"Qt {qVersion()} · PySide6 {PySide6.__version__} · Python {platform.python_version()} "
        f"({platform.python_implementation()}) on {platform.system()} {platform.machine()}",
        "",
        "Backends:",
        *(f"  {line}" for line in backends.lines()),
        "",
        f"Settings: {locations.settings_file}",
        f"Demo workspace: {locations.demo_workspace}",
    ]
    return "\n".join(lines)


class AboutDialog(QDialog):
    """Opened window-modal (open(), never exec()); the backend lines fill in when detection answers."""

    def __init__(self, locations: Locations, backends: BackendStatus, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("aboutDialog")
        self.setWindowTitle(f"About {DISPLAY_NAME}")
        self.locations = locations
        self.backends = backends
        icon = QLabel()
        icon.setPixmap(QGuiApplication.windowIcon().pixmap(64, 64))
        title = QLabel(
            f"<b>{DISPLAY_NAME}</b> {__version__}<br>KV cache sizing, memory budgets and resizing for compiled "
            "Rebellions NPU artifacts."
        )
        title.setWordWrap(True)
        header = QHBoxLayout()
        header.addWidget(icon)
        header.addWidget(title, 1)
        self.text = QPlainTextEdit()
        self.text.setObjectName("aboutText")
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)  # long paths and details wrap, never cut
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setMinimumSize(720, 240)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.copy_button = QPushButton("Copy")
        self.copy_button.setObjectName("aboutCopyButton")
        buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.copy_button.clicked.connect(self.copy)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(header)
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)
        backends.changed.connect(self.refresh)
        self.refresh()
        backends.detect()

    @Slot()
    def refresh(self) -> None:
        self.text.setPlainText(about_text(self.locations, self.backends))

    @Slot()
    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.text.toPlainText())
