"""Where Resize to a Copy proposes the copy: beside a local artifact, in the user's home folder when that folder
cannot be written, in the folder chosen last once one was chosen (remembered across sessions)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtWidgets import QLabel, QLineEdit, QPushButton
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.dialogs.resize_dialog import ResizeDialog
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder, select
from .widgets import child


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


def _copy_dialog(qtbot: QtBot, window: MainWindow, artifact: Path) -> ResizeDialog:
    select(qtbot, window, artifact)
    window.artifact_actions.resize_copy.trigger()
    return child(window, ResizeDialog, "resizeDialog")


def test_a_copy_beside_an_artifact_in_a_folder_the_user_cannot_write_is_proposed_at_home(
    qtbot: QtBot,
    window: MainWindow,
    workspace: Path,
    cr13_artifact: Path,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    open_folder(qtbot, window, workspace)
    real_access = os.access
    # As root, permission bits do not stop us; say "no" for this folder alone, as the kernel would for a user.
    monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == workspace else real_access(p, mode))
    dialog = _copy_dialog(qtbot, window, cr13_artifact)
    edit = child(dialog, QLineEdit, "resizeOutputEdit")
    assert edit.text() == str(workspace / "qwen3-8b-cr13-kv21")  # beside it first: its kind allows that
    qtbot.waitUntil(lambda: edit.text() == str(home / "qwen3-8b-cr13-kv21"), timeout=10_000)
    with qtbot.waitSignal(dialog.outputChecked, timeout=10_000):
        pass  # home checked on disk in turn
    assert dialog.output_problem is None and child(dialog, QPushButton, "resizeApplyButton").isEnabled()
    dialog.prefill(12)  # a new count keeps the place that can be written
    assert edit.text() == str(home / "qwen3-8b-cr13-kv12")
    dialog.reject()


def test_the_folder_chosen_last_is_proposed_in_the_next_session(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path, tmp_path: Path
) -> None:
    open_folder(qtbot, window, workspace)
    chosen = tmp_path / "copies"
    window.settings.copy_folder.set(str(chosen))
    window.settings.save()
    again = Settings(window.settings.store)
    assert again.copy_folder.get() == str(chosen)
    dialog = _copy_dialog(qtbot, window, cr13_artifact)
    assert child(dialog, QLineEdit, "resizeOutputEdit").text() == str(chosen / "qwen3-8b-cr13-kv21")
    dialog.reject()


def test_a_copy_to_a_server_once_is_not_proposed_for_a_local_artifact(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path
) -> None:
    open_folder(qtbot, window, workspace)
    window.settings.copy_folder.set("ssh://npu1/srv/copies")  # the last copy, of another artifact, went there
    dialog = _copy_dialog(qtbot, window, cr13_artifact)
    edit = child(dialog, QLineEdit, "resizeOutputEdit")
    note = child(dialog, QLabel, "resizeCrossingNote")
    assert edit.text() == str(workspace / "qwen3-8b-cr13-kv21")  # beside it: nothing on the server
    assert not note.isVisible()
    edit.clear()
    qtbot.keyClicks(edit, "ssh://npu1/srv/copies/qwen3-8b-cr13-kv21")  # typed by the user: said beside Apply
    assert note.isVisible() and "npu1" in note.text() and "this computer" in note.text()
    dialog.reject()


def test_a_folder_chosen_for_a_place_is_proposed_for_that_place_only(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path, tmp_path: Path
) -> None:
    from rbln_artifact_studio.core.location import LocalFolder, parse_location
    from rbln_artifact_studio.gui.models.copy_memory import chosen_for, remember

    open_folder(qtbot, window, workspace)
    chosen = tmp_path / "copies"
    remember(window.settings, LocalFolder(cr13_artifact), LocalFolder(chosen / "a-copy"))
    window.settings.save()
    again = Settings(window.settings.store)
    assert chosen_for(again, LocalFolder(cr13_artifact)) == str(chosen)
    assert chosen_for(again, parse_location("s3://models/fleet/qwen")) == ""  # not a bucket's artifact
    dialog = _copy_dialog(qtbot, window, cr13_artifact)
    assert child(dialog, QLineEdit, "resizeOutputEdit").text() == str(chosen / "qwen3-8b-cr13-kv21")
    dialog.reject()
