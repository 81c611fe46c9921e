"""Help at hand (issue 33 item 5): Getting Started inside the app, Keyboard Shortcuts listed from the window's own
actions, Documentation (the guide) inside the app, and the version information copied for a report."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QObject, QUrl, Slot
from PySide6.QtGui import QAction, QDesktopServices, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from rbln_artifact_studio import __version__
from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.app.theme import Theme, system_palette
from rbln_artifact_studio.gui.dialogs.compile_wizard import CompileWizard
from rbln_artifact_studio.gui.window.help_menu import plain
from rbln_artifact_studio.gui.window.help_page import GuideViewer

from .conftest import type_text
from .layout_audit import audit
from .test_gui_small_screen import SMALL, on_small_screen


class _Browser(QObject):
    """Stands in for the desktop's browser: records the URLs the app asks it to open."""

    def __init__(self) -> None:
        super().__init__()
        self.opened: list[QUrl] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.opened.append(url)


@pytest.fixture
def browser() -> Iterator[_Browser]:
    catcher = _Browser()
    QDesktopServices.setUrlHandler("file", catcher, "open")  # type: ignore[arg-type]  # str at run time
    yield catcher
    QDesktopServices.unsetUrlHandler("file")


@pytest.fixture(autouse=True)
def _desktop_palette_afterwards() -> Iterator[None]:
    system_palette()
    yield
    QApplication.setPalette(system_palette())


@pytest.mark.parametrize("theme", [Theme.LIGHT, Theme.DARK])
def test_help_menu_getting_started_and_shortcuts(qtbot: QtBot, settings: Settings, theme: Theme) -> None:
    window = on_small_screen(qtbot, settings)
    window.theme.choose(theme, remember=False)
    texts = [plain(a.text()) for a in window.help_menu.actions() if not a.isSeparator()]
    assert texts == ["Getting Started", "Keyboard Shortcuts", "Documentation", "Copy Version Information", "About"]

    window.help.action_getting_started.trigger()
    page = window.help.last_page
    assert page is not None and page.isVisible() and page.parent() is window  # a page inside the app
    qtbot.waitExposed(page)
    text = page.browser.toPlainText()
    for job in ("See how an artifact fills its NPUs", "Compile with a memory budget", "Resize the KV cache"):
        assert job in text
    assert "Compile… (Ctrl+N)" in text and "Resize KV Cache… (Ctrl+R)" in text  # keys from the actions
    assert audit(page, SMALL) == []
    page.browser.anchorClicked.emit(QUrl("action:actionCompile"))  # "Compile now"
    wizard = window.findChild(CompileWizard)
    assert wizard is not None and wizard.isVisible() and not page.isVisible()
    wizard.reject()

    extra = QAction("Frobnicate", window)  # an action added later is listed: the page is built from the actions
    extra.setShortcut(QKeySequence("Ctrl+Alt+F"))
    window.addAction(extra)
    window.help.action_shortcuts.trigger()
    shortcuts = window.help.last_page
    assert shortcuts is not None and shortcuts.objectName() == "keyboardShortcuts"
    listed = shortcuts.browser.toPlainText()
    for action in window.findChildren(QAction):
        for key in action.shortcuts():
            if action.text() and not key.isEmpty():
                assert key.toString(QKeySequence.SequenceFormat.NativeText) in listed, action.text()
    assert "Frobnicate" in listed and "Ctrl+Alt+F" in listed and "Open Folder…" in listed
    assert audit(shortcuts, SMALL) == []
    shortcuts.close()


def test_documentation_shows_the_guide_inside_the_app_with_no_launcher(
    qtbot: QtBot, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no xdg-open, no browser: nothing outside the app to start
    window = on_small_screen(qtbot, settings)
    window.help.action_docs.trigger()
    viewer = window.help.last_guide
    assert viewer is not None and viewer.isVisible() and viewer.parent() is window
    qtbot.waitExposed(viewer)
    text = viewer.browser.toPlainText()
    assert text.startswith("The desktop app") and "# The desktop app" not in text  # rendered, not raw Markdown
    assert viewer.browser.source().fileName() == "desktop.md"
    assert audit(viewer, SMALL) == []
    assert viewer.browser.document().size().width() <= viewer.browser.viewport().width()  # pictures fit: no sideways

    type_text(qtbot, viewer.search, "What is remembered")  # search, as typed
    assert viewer.browser.textCursor().selectedText() == "What is remembered"
    type_text(qtbot, viewer.search, "no such words anywhere")
    assert viewer.found.text() == "Not found"

    links = [a for a in _anchors(viewer) if a.endswith(".md")]
    assert "toolchain.md" in links  # a link to another page of the guide opens here
    viewer.browser.setSource(QUrl("toolchain.md"))
    assert viewer.browser.source().fileName() == "toolchain.md" and "optimum" in viewer.browser.toPlainText()


def test_open_in_browser_is_the_page_as_html(qtbot: QtBot, settings: Settings, browser: _Browser) -> None:
    window = on_small_screen(qtbot, settings)
    viewer = window.help.open_documentation()
    assert viewer is not None and viewer.open_in_browser()
    page = Path(browser.opened[0].toLocalFile())
    assert page.suffix == ".html" and "<html" in page.read_text() and "What is remembered" in page.read_text()


def _anchors(viewer: GuideViewer) -> list[str]:
    document, found = viewer.browser.document(), []
    block = document.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            href = it.fragment().charFormat().anchorHref()
            if href:
                found.append(href)
            it += 1
        block = block.next()
    return found


def test_copy_version_information_for_a_report(qtbot: QtBot, settings: Settings) -> None:
    window = on_small_screen(qtbot, settings)
    clipboard = QGuiApplication.clipboard()
    clipboard.clear()
    window.help.action_copy_version.trigger()
    qtbot.waitUntil(lambda: clipboard.text().startswith("RBLN Artifact Studio"), timeout=20_000)
    text = clipboard.text()
    assert f"RBLN Artifact Studio {__version__}" in text and "PySide6" in text and "Backends:" in text
    assert "detecting…" not in text and "simulator" in text  # the backends as detected, not a placeholder
    assert f"Settings: {settings.file_name()}" in text
