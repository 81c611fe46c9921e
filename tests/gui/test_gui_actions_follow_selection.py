"""Actions follow the table's selection, not the focus (issue #23 item 6): Preferences, a click into the Jobs panel,
the context menu, the filter box, the details or the docks leave Move to Trash and the other per-artifact actions as
the selection allows, and a real change of the selection moves them."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QMenu
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.dialogs.preferences_dialog import PreferencesDialog
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder, select
from .widgets import child, present

# What the offscreen platform cannot do for a popup menu; a real X server can.
POPUP_NOTICES = ("This plugin does not support raise", "This plugin does not support grabbing", "propagateSizeHints")


def _states(window: MainWindow) -> dict[str, bool]:
    """Every action on the selected artifact(s), by name: enabled or not."""
    a = window.artifact_actions
    actions = [
        a.trash,
        a.show_in_folder,
        a.copy_command,
        a.open_details,
        a.resize_copy,
        a.serving,
        a.compare,
        window.action_resize,
        window.action_explore,
        window.action_plan,
        window.action_copy_path,
    ]
    return {action.objectName(): action.isEnabled() for action in actions}


ONE_SELECTED = {
    "actionTrash": True,
    "actionShowInFolder": True,
    "actionCopyCommand": True,
    "actionOpenDetails": True,
    "actionResizeCopy": True,
    "actionServing": True,
    "actionCompare": False,  # two artifacts
    "actionResize": True,
    "actionExplore": True,
    "actionPlan": False,  # two or more
    "actionCopyPath": True,
}
TWO_SELECTED = {**ONE_SELECTED, "actionCompare": True, "actionPlan": True}
NONE_SELECTED = dict.fromkeys(ONE_SELECTED, False)


def _click_row(qtbot: QtBot, window: MainWindow, path: Path, modifier: Qt.KeyboardModifier | None = None) -> None:
    view, model, proxy = window.browser.view, window.model, window.browser.proxy
    index = proxy.mapFromSource(model.index(present(model.row_of(str(path)), str(path)), 0))
    pos = view.visualRect(index).center()
    if modifier is None:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    else:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, modifier, pos)


def test_focus_elsewhere_leaves_the_actions_as_the_selection_allows(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path
) -> None:
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    window.browser.view.setFocus()
    before = _states(window)
    assert before == ONE_SELECTED
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


@pytest.mark.parametrize("button", [QDialogButtonBox.StandardButton.Ok, QDialogButtonBox.StandardButton.Cancel])
def test_preferences_through_its_action_then_the_jobs_panel_leave_the_actions(
    qtbot: QtBot,
    window: MainWindow,
    workspace: Path,
    cr13_artifact: Path,
    button: QDialogButtonBox.StandardButton,
) -> None:
    open_folder(qtbot, window, workspace)
    _click_row(qtbot, window, cr13_artifact)
    qtbot.waitUntil(lambda: window.artifact is not None and window.artifact.path == cr13_artifact, timeout=10_000)
    assert _states(window) == ONE_SELECTED
    window.action_preferences.trigger()
    prefs = child(window, PreferencesDialog, "preferencesDialog")
    qtbot.waitExposed(prefs)
    prefs.detect_button.click()  # "Detect Again" (a job) then Cancel detects with the saved paths once more
    assert _states(window) == ONE_SELECTED
    closed = prefs.accepted if button is QDialogButtonBox.StandardButton.Ok else prefs.rejected
    with qtbot.waitSignal(closed):
        qtbot.mouseClick(present(child(prefs, QDialogButtonBox).button(button)), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.jobs.active(), timeout=20_000)
    assert _states(window) == ONE_SELECTED
    jobs = window.jobs_panel.list  # a click on a job's row (the folder's scan), then into its log: the focus moves
    qtbot.mouseClick(
        jobs.viewport(), Qt.MouseButton.LeftButton, pos=jobs.visualItemRect(present(jobs.item(0))).center()
    )
    assert window.focusWidget() is jobs and jobs.currentRow() == 0
    assert _states(window) == ONE_SELECTED
    qtbot.mouseClick(window.jobs_panel.log.viewport(), Qt.MouseButton.LeftButton)
    assert window.focusWidget() is window.jobs_panel.log
    assert _states(window) == ONE_SELECTED
    assert window.browser.selected_paths() == [str(cr13_artifact)]


@pytest.mark.qt_log_ignore(*POPUP_NOTICES)
def test_the_menu_the_filter_the_details_and_the_docks_leave_the_actions(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path
) -> None:
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    view = window.browser.view
    view.setFocus()
    # The context menu from the keyboard, closed with Escape.
    key = QContextMenuEvent(
        QContextMenuEvent.Reason.Keyboard, view.rect().center(), view.mapToGlobal(view.rect().center())
    )
    QApplication.sendEvent(view, key)
    menu = child(view, QMenu, "artifactContextMenu")
    assert _states(window) == ONE_SELECTED
    qtbot.keyClick(menu, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: view.findChild(QMenu, "artifactContextMenu") is None)
    assert _states(window) == ONE_SELECTED
    # A click into the filter box, and a filter the selected artifact matches.
    qtbot.mouseClick(window.browser.filter_edit, Qt.MouseButton.LeftButton)
    assert window.focusWidget() is window.browser.filter_edit
    assert _states(window) == ONE_SELECTED
    qtbot.keyClicks(window.browser.filter_edit, "cr13")
    assert _states(window) == ONE_SELECTED
    # Open Details gives the detail panel the focus; a click there keeps it.
    window.artifact_actions.open_details.trigger()
    assert window.focusWidget() is window.detail
    qtbot.mouseClick(window.detail.viewport(), Qt.MouseButton.LeftButton)
    assert _states(window) == ONE_SELECTED
    # The Jobs dock and the toolbar hidden and shown again.
    for toggle in (window.action_jobs, window.artifact_actions.toolbar_action):
        toggle.trigger()
        assert _states(window) == ONE_SELECTED
        toggle.trigger()
        assert _states(window) == ONE_SELECTED
    assert window.browser.selected_paths() == [str(cr13_artifact)]


def test_the_actions_follow_a_real_change_of_the_selection(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path, ca25_artifact: Path
) -> None:
    open_folder(qtbot, window, workspace)
    _click_row(qtbot, window, ca25_artifact)
    qtbot.waitUntil(lambda: window.artifact is not None and window.artifact.path == ca25_artifact, timeout=10_000)
    assert _states(window) == ONE_SELECTED
    _click_row(qtbot, window, cr13_artifact, Qt.KeyboardModifier.ControlModifier)  # a second row for Compare
    assert window.browser.selected_paths() == sorted([str(cr13_artifact), str(ca25_artifact)])
    qtbot.waitUntil(lambda: window.artifact is not None and window.artifact.path == cr13_artifact, timeout=10_000)
    assert _states(window) == TWO_SELECTED
    window.jobs_panel.widget().setFocus()  # the focus away from the table: Compare and Plan stay on
    assert _states(window) == TWO_SELECTED
    # A filter both artifacts match keeps both selected (and Compare on).
    qtbot.keyClicks(window.browser.filter_edit, "qwen3")
    assert window.browser.selected_paths() == sorted([str(cr13_artifact), str(ca25_artifact)])
    assert _states(window) == TWO_SELECTED
    window.browser.filter_edit.clear()
    # Ctrl+click takes rows off again: the one left selected is the one the actions and the details are for.
    _click_row(qtbot, window, cr13_artifact, Qt.KeyboardModifier.ControlModifier)
    assert window.browser.selected_paths() == [str(ca25_artifact)]
    qtbot.waitUntil(lambda: window.artifact is not None and window.artifact.path == ca25_artifact, timeout=10_000)
    assert _states(window) == ONE_SELECTED
    _click_row(qtbot, window, ca25_artifact, Qt.KeyboardModifier.ControlModifier)
    assert window.browser.selected_paths() == [] and window.browser.current_path() == ""
    qtbot.waitUntil(lambda: not window.jobs.active(), timeout=10_000)  # no details read for a row not selected
    assert _states(window) == NONE_SELECTED and window.detail.artifact is None
