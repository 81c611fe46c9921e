"""An action a kind of place does not allow is off, and says why where the action is (its tooltip and status
tip), from the kind's capabilities: Download to This Computer for an artifact already here."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder, select


def test_download_of_a_local_artifact_is_off_with_the_reason(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path
) -> None:
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    action = window.artifact_actions.download.action
    assert not action.isEnabled()
    assert "already on this computer" in action.toolTip() and action.statusTip() == action.toolTip()
