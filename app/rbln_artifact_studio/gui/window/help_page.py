"""Pages of text inside the app: Help ▸ Getting Started and Keyboard Shortcuts (their action: links trigger the
window's actions), and the guide (Help ▸ Documentation: the shipped docs/ rendered from Markdown, with search).
Loaded with the first page opened, not with the Help menu (docs/performance.md, row 7)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QUrl, Signal, Slot
from PySide6.QtGui import QDesktopServices, QImage, QKeySequence, QPixmap, QShortcut, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from rbln_artifact_studio.core import app_dirs
from rbln_artifact_studio.gui.widgets.screen_fit import resize_to_fit

PALETTE_CHANGES = (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange)


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
        self.body = body
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

    def changeEvent(self, event: QEvent) -> None:
        """Links take the palette's link colour when the text is set: set it again for a new palette (a theme
        switched while the page is open), or they keep the old theme's colour."""
        super().changeEvent(event)
        if event.type() in PALETTE_CHANGES:
            self.browser.setHtml(self.body)


class GuideViewer(QDialog):
    """The user guide (docs/*.md, shipped with the app) rendered inside the app: its links between pages followed
    here, a search field, and Open in Browser as an extra (the page as HTML, for a desktop that has a launcher)."""

    def __init__(self, page: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("guideViewer")
        self.setWindowTitle("RBLN Artifact Studio guide")
        self.browser = QTextBrowser()
        self.browser.setObjectName("guideText")
        self.browser.setOpenLinks(True)  # the guide's own pages here; http(s) links in the desktop's browser
        self.browser.setOpenExternalLinks(True)
        self.browser.setSearchPaths([str(page.parent)])
        self.browser.sourceChanged.connect(self._on_page)
        layout = QVBoxLayout(self)
        layout.addLayout(self._build_search())
        layout.addWidget(self.browser, 1)
        layout.addWidget(self._build_buttons())
        self.browser.setSource(QUrl.fromLocalFile(str(page)), QTextDocument.ResourceType.MarkdownResource)
        resize_to_fit(self, 900, 700)

    def _build_search(self) -> QHBoxLayout:
        """Back, the search field and what it found."""
        self.search = QLineEdit()
        self.search.setObjectName("guideSearch")
        self.search.setPlaceholderText("Search the guide (Enter: next, Shift+Enter: previous)")
        self.search.setClearButtonEnabled(True)
        self.search.textEdited.connect(lambda _text: self.find_text(from_start=True))
        self.search.returnPressed.connect(self.find_text)
        previous = QShortcut(QKeySequence("Shift+Return"), self.search)
        previous.activated.connect(lambda: self.find_text(backward=True))
        to_search = QShortcut(QKeySequence(QKeySequence.StandardKey.Find), self)
        to_search.activated.connect(self.search.setFocus)
        self.found = QLabel()
        self.found.setObjectName("guideFound")
        back = QPushButton("Back")
        back.setObjectName("guideBack")
        back.clicked.connect(self.browser.backward)
        self.browser.backwardAvailable.connect(back.setEnabled)
        back.setEnabled(False)
        top = QHBoxLayout()
        top.addWidget(back)
        top.addWidget(self.search, 1)
        top.addWidget(self.found)
        return top

    def _build_buttons(self) -> QDialogButtonBox:
        """Close, and Open in Browser as an extra."""
        outside = QPushButton("Open in Browser")
        outside.setObjectName("guideOpenInBrowser")
        outside.setToolTip("This page, as HTML, in the desktop's web browser")
        outside.clicked.connect(self.open_in_browser)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.addButton(outside, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        return buttons

    def changeEvent(self, event: QEvent) -> None:
        """The page read again for a new palette: its links keep the colour of the palette they were read with."""
        super().changeEvent(event)
        if event.type() in PALETTE_CHANGES and not self.browser.source().isEmpty():
            self.browser.reload()

    @Slot(QUrl)
    def _on_page(self, url: QUrl) -> None:
        self.setWindowTitle(f"RBLN Artifact Studio guide: {url.fileName()}")
        self.found.setText("")
        self.fit_pictures()

    def fit_pictures(self) -> None:
        """Screenshots at most as wide as the page (they are 1280 pixels: the text would scroll sideways)."""
        document = self.browser.document()
        room = max(self.browser.viewport().width(), 400) - 2 * int(document.documentMargin()) - 8
        block = document.begin()
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                fragment = it.fragment()
                picture = fragment.charFormat().toImageFormat()
                if fragment.charFormat().isImageFormat() and picture.width() <= 0:
                    image = document.resource(QTextDocument.ResourceType.ImageResource, QUrl(picture.name()))
                    width = image.width() if isinstance(image, QImage | QPixmap) else 0
                    if width > room:
                        picture.setWidth(room)
                        picture.setHeight(image.height() * room / width)
                        cursor = QTextCursor(document)
                        cursor.setPosition(fragment.position())
                        cursor.setPosition(fragment.position() + fragment.length(), QTextCursor.MoveMode.KeepAnchor)
                        cursor.setCharFormat(picture)
                it += 1
            block = block.next()

    def find_text(self, backward: bool = False, from_start: bool = False) -> bool:
        """Select the next (or previous) place the search text occurs, from the top again past the last one."""
        text = self.search.text()
        if not text:
            self.found.setText("")
            return False
        flags = QTextDocument.FindFlag.FindBackward if backward else QTextDocument.FindFlag(0)
        if from_start:
            self.browser.moveCursor(self.browser.textCursor().MoveOperation.Start)
        found = self.browser.find(text, flags)
        if not found:  # wrap around once
            end = self.browser.textCursor().MoveOperation
            self.browser.moveCursor(end.End if backward else end.Start)
            found = self.browser.find(text, flags)
        self.found.setText("" if found else "Not found")
        return found

    @Slot()
    def open_in_browser(self) -> bool:
        """The page shown, written as HTML beside the app's cache, in the desktop's browser; said when none opens."""
        name = Path(self.browser.source().toLocalFile()).stem or "guide"
        target = app_dirs.cache_dir() / "guide" / f"{name}.html"
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(self.browser.document().toHtml(), encoding="utf-8")
        except OSError as exc:
            self.found.setText(f"Could not write {target}: {exc.strerror}")
            return False
        opened = QDesktopServices.openUrl(QUrl.fromLocalFile(str(target)))
        if not opened:
            self.found.setText("No web browser could be started here: the guide stays in this window.")
        return opened
