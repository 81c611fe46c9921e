"""The toolbar's buttons follow their actions through a long session (issue #28 item 5) without piling up.

Qt's QToolButton connects its action's changed() once more on every change of the action: each selection moved
the count up by the actions it enabled or disabled, and the memory with it. The count of connections is what this
test reads (no memory figure), with what a user sees: each button enabled as its action is.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import SIGNAL
from PySide6.QtWidgets import QToolButton
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder, select


def _connections(window: MainWindow) -> dict[str, int]:
    toolbar = window.artifact_actions.toolbar
    return {a.objectName(): a.receivers(SIGNAL("changed()")) for a in toolbar.actions()}


def _buttons_follow(window: MainWindow) -> bool:
    toolbar = window.artifact_actions.toolbar
    for action in toolbar.actions():
        button = toolbar.widgetForAction(action)
        assert isinstance(button, QToolButton)
        if button.isEnabled() != action.isEnabled() or button.toolTip() != action.toolTip():
            return False
    return True


def test_moving_the_selection_leaves_the_toolbar_as_connected_as_it_was(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path, ca25_artifact: Path
) -> None:
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    before = _connections(window)
    for _ in range(10):  # each move disables Resize and the others while the details load, then enables them
        for path in (ca25_artifact, cr13_artifact):
            select(qtbot, window, path)
            assert _buttons_follow(window)
    assert window.action_resize.isEnabled()
    assert _connections(window) == before
    window.browser.view.clearSelection()
    window.browser.view.setCurrentIndex(window.browser.proxy.index(-1, -1))
    qtbot.waitUntil(lambda: not window.action_resize.isEnabled())
    assert _buttons_follow(window)
