"""A page of text inside the app (Help ▸ Getting Started, Keyboard Shortcuts); its action: links trigger the
window's actions. Loaded with the first page opened, not with the Help menu (docs/performance.md, row 7)."""

from __future__ import annotations

from PySide6.QtCore import QUrl, Signal, Slot
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

from rbln_artifact_studio.gui.widgets.screen_fit import resize_to_fit


class HelpPage(QDialog):
    """A page of text inside the app; its action: links trigger the window's actions."""

    actionRequested = Signal(str)  # an action's object name

    def __init__(self, title: str, object_name: str, body: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(object_name)
        self.setWindowTitle(title)
        self.browser = QTextBrowser()
        self.browser.setObjectName(f"{object_name}Text")
        self.browser.setOpenLinks(False)  # action: links are the window's; others open in the browser
        self.browser.anchorClicked.connect(self._on_link)
        self.browser.setHtml(body)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser, 1)
        layout.addWidget(buttons)
        resize_to_fit(self, 640, 560)

    @Slot(QUrl)
    def _on_link(self, url: QUrl) -> None:
        if url.scheme() == "action":
            self.actionRequested.emit(url.path())
            self.accept()
        else:
            QDesktopServices.openUrl(url)
