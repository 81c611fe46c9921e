"""Where Resize to a Copy proposes the copy: beside a local artifact, in the user's home folder when that folder
cannot be written, in the folder chosen last once one was chosen (remembered across sessions)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtWidgets import QLineEdit, QPushButton
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
