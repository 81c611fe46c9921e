"""'Show command': the equivalent rbln-studio-cli command line, read-only and copyable."""

from __future__ import annotations

from PySide6.QtCore import Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QPushButton, QWidget

from rbln_artifact_studio.core.display.commandline import shell_text


class CommandLine(QWidget):
    """Shows argv as one shell line; Copy puts it on the clipboard."""

    def __init__(self, object_name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.edit = QLineEdit()
        self.edit.setObjectName(object_name)
        self.edit.setReadOnly(True)
        self.edit.setToolTip("The same work from a terminal (rbln-studio-cli).")
        self.copy_button = QPushButton("Copy")
        self.copy_button.setObjectName(object_name + "Copy")
        self.copy_button.clicked.connect(self.copy)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.edit, 1)
        layout.addWidget(self.copy_button)

    def set_argv(self, argv: list[str] | None) -> None:
        self.edit.setText(shell_text(argv) if argv else "")
        self.copy_button.setEnabled(bool(argv))

    def text(self) -> str:
        return self.edit.text()

    @Slot()
    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.edit.text())
