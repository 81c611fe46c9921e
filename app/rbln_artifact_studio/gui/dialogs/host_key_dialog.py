"""The host-key decision: the server's fingerprint, shown before anything is trusted; a changed key is refused."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from rbln_artifact_studio.gui.widgets.screen_fit import resize_to_fit
from rbln_artifact_studio.remote.transport import HostKeyCheck


class HostKeyDialog(QDialog):
    """Accepted only through "Trust and Connect", which a changed key does not offer."""

    def __init__(self, check: HostKeyCheck, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("hostKeyDialog")
        self.check = check
        self.setWindowTitle("Host key CHANGED" if check.changed else "Unknown host key")
        summary = QLabel(
            f"<b>{check.host}</b>: the host key has <b>changed</b>. Do not connect unless you know why."
            if check.changed
            else f"<b>{check.host}</b> is not in your known_hosts. Check its fingerprint before trusting it."
        )
        summary.setTextFormat(Qt.TextFormat.RichText)
        summary.setWordWrap(True)
        self.details = QPlainTextEdit(check.message())
        self.details.setObjectName("hostKeyDetails")
        self.details.setReadOnly(True)
        self.details.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.buttons = QDialogButtonBox()
        if check.changed:
            self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        else:
            trust = self.buttons.addButton("&Trust and Connect", QDialogButtonBox.ButtonRole.AcceptRole)
            trust.setObjectName("hostKeyTrust")
            self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel).setDefault(True)  # the safe default
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(summary)
        layout.addWidget(self.details, 1)
        layout.addWidget(self.buttons)
        resize_to_fit(self, 640, 320)
