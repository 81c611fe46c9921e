"""Dark mode a user can reach (issue #23 item 3): View ▸ Theme, remembered; the desktop's scheme followed live;
chart colours from the palette with KV cache and free space told apart in both schemes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.status import Status
from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.app.theme import Theme, dark_palette, light_palette, system_palette
from rbln_artifact_studio.gui.app.tones import DARK, Tone, is_dark
from rbln_artifact_studio.gui.main import build_parser
from rbln_artifact_studio.gui.widgets.dram_chart import DramChart, segment_colour
from rbln_artifact_studio.gui.widgets.table_delegate import RowTextDelegate
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .layout_audit import contrast
from .widgets import child


@pytest.fixture(autouse=True)
def _desktop_palette_afterwards() -> Iterator[None]:
    system_palette()  # as the desktop gave it, before any test changes it
    yield
    QGuiApplication.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Unknown)
    QApplication.setPalette(system_palette())


def _app_is_dark() -> bool:
    return is_dark(QApplication.palette())


def test_view_theme_dark_is_applied_and_remembered(qtbot: QtBot, window: MainWindow, settings: Settings) -> None:
    menu = window.theme.menu
    assert menu.menuAction() in window.view_menu.actions()
    assert [a.text() for a in menu.actions()] == ["&System", "&Light", "&Dark"]
    assert window.theme.actions[Theme.SYSTEM].isChecked()
    window.theme.actions[Theme.DARK].trigger()
    assert _app_is_dark()
    qtbot.waitUntil(lambda: window.findChild(DramChart, "dramChart") is not None)  # built after the first paint
    chart = child(window, DramChart, "dramChart")
    qtbot.waitUntil(lambda: is_dark(chart.palette()))  # the widgets get the new palette: they repaint in it
    delegate = window.browser.view.itemDelegate()
    assert isinstance(delegate, RowTextDelegate)
    qtbot.waitUntil(lambda: delegate._status_colours[Status.OK].name() == DARK[Tone.OK])  # the table's status text
    again = MainWindow(settings)
    qtbot.addWidget(again)
    assert again.theme.theme is Theme.DARK and again.theme.actions[Theme.DARK].isChecked()
    again.theme.actions[Theme.LIGHT].trigger()
    assert not _app_is_dark()


def test_system_follows_the_desktop_scheme_live(window: MainWindow) -> None:
    hints = QGuiApplication.styleHints()
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)  # what Qt sends when the desktop switches
    assert _app_is_dark()
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Light)
    assert not _app_is_dark()
    window.theme.choose(Theme.LIGHT)
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)  # a chosen theme stays as chosen
    assert not _app_is_dark()


def test_theme_option_is_for_this_run_only(window: MainWindow, settings: Settings) -> None:
    assert build_parser().parse_args(["--theme", "dark", "FOLDER"]).theme == "dark"
    window.theme.choose(Theme.DARK, remember=False)  # what `rbln-studio --theme dark` does
    assert _app_is_dark()
    assert settings.store.value("view/theme") is None


@pytest.mark.parametrize("palette", [light_palette(), dark_palette()], ids=["light", "dark"])
def test_kv_cache_and_free_space_are_told_apart(palette: object) -> None:
    kv, free = segment_colour("kv", palette), segment_colour("free", palette)  # type: ignore[arg-type]
    assert contrast(kv, free) >= 3.0  # WCAG's threshold for graphics (the old fills: 2.94 light, 2.96 dark)
    outside = segment_colour("outside", palette)  # type: ignore[arg-type]
    assert outside.name() != free.name()
