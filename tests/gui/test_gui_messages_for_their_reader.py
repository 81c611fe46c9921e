"""Messages built for their reader (issue 43 item 6): every refusal the resize dialog shows, and the failure of the
resize it starts, names the dialog's own controls, never a CLI flag; each closes as every refusal does."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QLabel, QLineEdit, QPushButton, QRadioButton, QSpinBox
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.errors import NOTHING_CHANGED
from rbln_artifact_studio.core.storage import swap
from rbln_artifact_studio.gui.dialogs.resize_dialog import ResizeDialog
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder, select
from .widgets import child, present

pytest_plugins = ["fakes.plugin"]

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]+")
WAIT = 20_000


def _dialog(qtbot: QtBot, window: MainWindow, folder: Path, artifact: Path) -> ResizeDialog:
    open_folder(qtbot, window, folder)
    select(qtbot, window, artifact)
    window.action_resize.trigger()
    return child(window, ResizeDialog, "resizeDialog")


def _said(dialog: ResizeDialog) -> str:
    """The dialog's message as its reader sees it (the label's rich text, without its markup)."""
    return re.sub(r"<[^>]+>", "", child(dialog, QLabel, "resizeMessage").text())


def _type(qtbot: QtBot, edit: QLineEdit, text: str) -> None:
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Backspace)
    qtbot.keyClicks(edit, text)


def _in_place(qtbot: QtBot, dialog: ResizeDialog) -> None:
    radio = child(dialog, QRadioButton, "resizeModeInPlace")
    qtbot.mouseClick(radio, Qt.MouseButton.LeftButton, pos=QPoint(8, radio.height() // 2))


def test_every_refusal_of_the_resize_dialog_names_its_controls_not_a_flag(
    qtbot: QtBot,
    window: MainWindow,
    tmp_path: Path,
    argv_log: Path,
    real_artifact: Path,
    cr13_artifact: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    shutil.move(real_artifact, folder / real_artifact.name)
    real, sim = folder / real_artifact.name, folder / cr13_artifact.name
    shutil.copytree(cr13_artifact, sim)
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "a-file").write_text("x")
    shown: list[str] = []

    dialog = _dialog(qtbot, window, folder, sim)
    spin, edit = child(dialog, QSpinBox, "resizeTargetSpin"), child(dialog, QLineEdit, "resizeOutputEdit")
    for count in ("5", "999999"):  # below the floor; more than the NPU's DRAM holds
        _type(qtbot, spin.lineEdit(), count)
        shown.append(_said(dialog))
    _type(qtbot, spin.lineEdit(), "12")
    for output in ("", "nosuch://host/x", str(sim), str(sim / "inside")):  # none; a bad place; the source; inside it
        _type(qtbot, edit, output)
        shown.append(_said(dialog))
    with qtbot.waitSignal(dialog.outputChecked, timeout=WAIT):
        _type(qtbot, edit, str(tmp_path / "taken"))  # a folder that holds files: the disk's answer
    qtbot.waitUntil(lambda: "✖" in child(dialog, QLabel, "resizeMessage").text(), timeout=WAIT)
    shown.append(_said(dialog))
    dialog.by_budget.setChecked(True)
    for budget in ("", "lots", "0.001"):  # none; not a budget; too small for the floor
        _type(qtbot, dialog.budget_edit, budget)
        shown.append(_said(dialog))
    dialog.reject()

    # The real artifact next: in place, its staged copy needs room beside it.
    dialog = _dialog(qtbot, window, folder, real)
    _type(qtbot, child(dialog, QSpinBox, "resizeTargetSpin").lineEdit(), "12")
    with monkeypatch.context() as patched, qtbot.waitSignal(dialog._staging.answered, timeout=WAIT):
        patched.setattr(swap, "free_bytes", lambda _folder: 1000)  # no room beside it for the staged copy
        _in_place(qtbot, dialog)
    shown.append(_said(dialog))
    assert "resize to a copy on another disk" in shown[-1] and "To a copy" in shown[-1]
    dialog.reject()

    assert all(text.startswith("✖") for text in shown), shown  # each one a refusal, Apply off
    assert [text for text in shown if FLAG.search(text)] == []
    assert NOTHING_CHANGED in shown[-1]


def test_a_resize_the_dialog_started_fails_in_the_desktops_words(
    qtbot: QtBot,
    window: MainWindow,
    tmp_path: Path,
    argv_log: Path,
    real_artifact: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In place on a file system that cannot swap folders: refused by the engine after Apply; the Jobs entry says
    what to do with the dialog's controls (the CLI names --output-dir: tests/test_messages_for_their_reader.py)."""
    dialog = _dialog(qtbot, window, real_artifact.parent, real_artifact)
    _type(qtbot, child(dialog, QSpinBox, "resizeTargetSpin").lineEdit(), "12")
    with qtbot.waitSignal(dialog._staging.answered, timeout=WAIT):
        _in_place(qtbot, dialog)
    monkeypatch.setattr(swap, "can_exchange", lambda _parent: False)
    button = child(dialog, QPushButton, "resizeApplyButton")
    qtbot.waitUntil(button.isEnabled, timeout=WAIT)
    with qtbot.waitSignal(window.jobs.jobAdded) as added:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    job = added.args[0]
    with qtbot.waitSignal(job.failed, timeout=WAIT):
        pass
    reason = job.failure.reason
    assert "cannot swap folders atomically" in reason and "To a copy" in reason, reason
    assert not FLAG.search(reason) and reason.endswith(NOTHING_CHANGED)
    assert present(window.jobs_panel.row_for(job)).toolTip() == reason
