"""Help at hand (issue 33 item 5): Getting Started inside the app, Keyboard Shortcuts listed from the window's own
actions, Documentation in the browser, and the version information copied for a report."""

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


def test_documentation_opens_the_guide_in_the_browser(qtbot: QtBot, settings: Settings, browser: _Browser) -> None:
    window = on_small_screen(qtbot, settings)
    window.help.action_docs.trigger()
    assert len(browser.opened) == 1
    page = Path(browser.opened[0].toLocalFile())
    assert page.name == "desktop.md" and page.parent.name == "docs" and page.is_file()
    assert "# The desktop app" in page.read_text()


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
