"""Selection and scroll position are the user's during a scan (issue #23 item 8): once the user has filtered,
scrolled or clicked, the end of the scan selects no row on its own."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder


def test_a_filter_typed_during_the_scan_is_not_overridden(qtbot: QtBot, window: MainWindow, workspace: Path) -> None:
    with qtbot.waitSignal(window.workspace.scanFinished, timeout=20_000):
        window.open_folder(workspace)
        qtbot.keyClicks(window.browser.filter_edit, "ca25")  # typed before the rows are in
    assert window.browser.proxy.rowCount() == 1
    assert window.browser.selected_paths() == [] and window.browser.current_path() == ""


def test_untouched_the_first_row_is_selected_as_before(qtbot: QtBot, window: MainWindow, workspace: Path) -> None:
    open_folder(qtbot, window, workspace)
    qtbot.waitUntil(lambda: window.browser.current_path() != "")
    assert len(window.browser.selected_paths()) == 1
