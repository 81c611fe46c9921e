"""Actions follow the table's selection, not the focus (issue #23 item 6): Preferences or a click into the Jobs
panel leave Move to Trash, Resize and the others as the selection allows."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.main_window import MainWindow

from .conftest import open_folder, select


def _states(window: MainWindow) -> dict[str, bool]:
    a = window.artifact_actions
    actions = [a.trash, a.show_in_folder, a.copy_command, a.resize_copy, window.action_resize, window.action_copy_path]
    return {action.objectName(): action.isEnabled() for action in actions}


def test_focus_elsewhere_leaves_the_actions_as_the_selection_allows(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path
) -> None:
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    window.browser.view.setFocus()
    before = _states(window)
    assert all(before.values()), before
    prefs = window.dialogs.show_preferences()
    qtbot.waitExposed(prefs)
    assert _states(window) == before
    prefs.accept()  # detects the backends again, in a job: wait for it and what follows
    qtbot.waitUntil(lambda: not window.jobs.active(), timeout=20_000)
    assert _states(window) == before
    qtbot.mouseClick(window.jobs_panel.widget(), Qt.MouseButton.LeftButton)
    window.jobs_panel.widget().setFocus()
    assert _states(window) == before
    assert window.browser.selected_paths() == [str(cr13_artifact)]
