"""State that survives any order of quitting (issue 43 item 1): the window's layout is restored valid whatever page
showed at the quit, and a saved layout that would hide the details or the table is repaired."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.window.main_window import HEADER_STATE, MainWindow

from .conftest import _stop_jobs, open_folder, select
from .test_gui_small_screen import on_small_screen
from .widgets import present


def _next_start(settings: Settings) -> Settings:
    """The settings a new process reads: the same file, nothing carried over in memory."""
    return Settings(QSettings(settings.file_name(), QSettings.Format.IniFormat))


def _start(qtbot: QtBot, settings: Settings, small: bool) -> MainWindow:
    if small:
        return on_small_screen(qtbot, settings)
    window = MainWindow(settings, debounce_ms=50)
    qtbot.addWidget(window, before_close_func=lambda w: _stop_jobs(qtbot, w))
    window.show()
    qtbot.waitExposed(window)
    return window


@pytest.mark.parametrize("small", [False, True], ids=["1280", "1024"])
def test_a_quit_on_the_start_page_leaves_the_details_in_view_next_time(
    qtbot: QtBot, settings: Settings, workspace: Path, cr13_artifact: Path, small: bool
) -> None:
    first = _start(qtbot, settings, small)
    present(first.first_steps.offer())  # a first start: the next steps hold the table's place
    room, details = first.width() * 4 // 10, first.width() * 6 // 10
    first.splitter.setSizes([room, 0, details])  # the details made the wider
    first.close()  # quit there

    again = _start(qtbot, _next_start(settings), small)
    open_folder(qtbot, again, workspace)
    select(qtbot, again, cr13_artifact)
    qtbot.waitUntil(lambda: again.detail.isVisible() and again.detail.width() >= 150)
    assert again.browser.width() >= 150
    assert again.detail.title.isVisible() and cr13_artifact.name in again.detail.title.text()
    assert again.detail.width() > again.browser.width()  # the split chosen on the start page, kept


def test_a_saved_layout_hiding_a_pane_or_the_name_column_is_repaired(
    qtbot: QtBot, settings: Settings, workspace: Path, cr13_artifact: Path
) -> None:
    first = _start(qtbot, settings, small=False)
    first.splitter.setSizes([first.width(), 0])  # the details dragged shut
    first.browser.view.horizontalHeader().hideSection(0)  # and the name column hidden
    first.close()
    saved = _next_start(settings)
    assert saved.state("mainSplitter") is not None and saved.state(HEADER_STATE) is not None

    again = _start(qtbot, saved, small=False)
    open_folder(qtbot, again, workspace)
    select(qtbot, again, cr13_artifact)
    qtbot.waitUntil(lambda: again.detail.width() >= 150)
    assert not again.browser.view.horizontalHeader().isSectionHidden(0)


def test_a_valid_saved_split_is_kept(qtbot: QtBot, settings: Settings) -> None:
    first = _start(qtbot, settings, small=False)
    first.splitter.setSizes([first.width() * 3 // 10, first.width() * 7 // 10])  # the details made wide
    qtbot.waitUntil(lambda: first.detail.width() > first.browser.width())
    first.close()

    again = _start(qtbot, _next_start(settings), small=False)
    qtbot.waitUntil(lambda: again.detail.width() > again.browser.width() * 2)
