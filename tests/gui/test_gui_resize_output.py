"""The resize dialog checks the copy's folder as the user types (in a worker) and starts from a given target."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QLineEdit, QPushButton, QRadioButton, QSpinBox
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.artifact import open_artifact
from rbln_artifact_studio.core.storage import output_check
from rbln_artifact_studio.core.storage.fsutil import check_new_output_dir
from rbln_artifact_studio.gui.dialogs.resize_dialog import ResizeDialog
from rbln_artifact_studio.gui.models.jobs import JobManager
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder, select
from .widgets import child


@pytest.fixture
def dialog(qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path) -> ResizeDialog:
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    window.action_resize.trigger()
    found = child(window, ResizeDialog, "resizeDialog")
    assert found is not None and found.jobs is window.jobs
    return found


def type_output(qtbot: QtBot, dialog: ResizeDialog, text: str) -> None:
    """Type a folder and wait for the worker's answer about exactly that text."""
    edit = child(dialog, QLineEdit, "resizeOutputEdit")
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Backspace)
    checked: list[str] = []
    dialog.outputChecked.connect(checked.append)
    qtbot.keyClicks(edit, text)
    qtbot.waitUntil(lambda: text in checked, timeout=10_000)
    dialog.outputChecked.disconnect(checked.append)


def message(dialog: ResizeDialog) -> str:
    return child(dialog, QLabel, "resizeMessage").text()


def apply_enabled(dialog: ResizeDialog) -> bool:
    return child(dialog, QPushButton, "resizeApplyButton").isEnabled()


def core_says(output: Path, source: Path) -> str:
    """What the copy itself would refuse with (it may create the parent: only used where the parent exists)."""
    with pytest.raises(StudioError) as raised:
        check_new_output_dir(output, source)
    return raised.value.one_line()


def test_a_folder_that_exists_with_files_is_refused(
    qtbot: QtBot, dialog: ResizeDialog, workspace: Path, cr13_artifact: Path
) -> None:
    taken = workspace / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("keep me")
    type_output(qtbot, dialog, str(taken))
    assert core_says(taken, cr13_artifact) in message(dialog)
    assert "exists and is not empty" in message(dialog) and not apply_enabled(dialog)
    type_output(qtbot, dialog, str(workspace / "fresh"))
    assert "✓ 21 blocks" in message(dialog) and apply_enabled(dialog)
    (workspace / "empty").mkdir()
    type_output(qtbot, dialog, str(workspace / "empty"))
    assert apply_enabled(dialog)  # an empty folder is fine: the copy replaces it
    assert (taken / "notes.txt").read_text() == "keep me"


def test_the_source_or_a_folder_inside_it_is_refused_at_once(
    qtbot: QtBot, dialog: ResizeDialog, cr13_artifact: Path
) -> None:
    edit = child(dialog, QLineEdit, "resizeOutputEdit")
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Backspace)
    qtbot.keyClicks(edit, str(cr13_artifact))  # the typed path alone says it: no need to wait for the disk
    assert core_says(cr13_artifact, cr13_artifact) in message(dialog) and not apply_enabled(dialog)
    qtbot.keyClicks(edit, "/copy")
    assert core_says(cr13_artifact / "copy", cr13_artifact) in message(dialog) and not apply_enabled(dialog)
    assert not (cr13_artifact / "copy").exists()
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Backspace)
    assert "Choose the folder for the copy." in message(dialog) and not apply_enabled(dialog)


def test_missing_parents_are_checked_without_creating_them(qtbot: QtBot, dialog: ResizeDialog, workspace: Path) -> None:
    deep = workspace / "new" / "deeper" / "copy"
    type_output(qtbot, dialog, str(deep))
    assert apply_enabled(dialog) and "✓" in message(dialog)
    assert not (workspace / "new").exists()  # the check created nothing
    (workspace / "a-file").write_text("x")
    type_output(qtbot, dialog, str(workspace / "a-file" / "copy"))
    assert f"{workspace / 'a-file'} exists and is not a folder" in message(dialog) and not apply_enabled(dialog)


def test_a_parent_that_cannot_be_written_is_refused(
    qtbot: QtBot, dialog: ResizeDialog, workspace: Path, cr13_artifact: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = workspace / "locked"
    locked.mkdir()
    real_access = os.access
    # As root, permission bits do not stop us; say "no" for this folder alone, as the kernel would for a user.
    monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == locked else real_access(p, mode))
    type_output(qtbot, dialog, str(locked / "copy"))
    assert core_says(locked / "copy", cr13_artifact) in message(dialog)
    assert f"Cannot write into {locked}: permission denied" in message(dialog) and not apply_enabled(dialog)
    type_output(qtbot, dialog, str(locked / "sub" / "copy"))  # created below it: the same answer
    assert f"Cannot write into {locked}: permission denied" in message(dialog) and not apply_enabled(dialog)


def test_in_place_needs_no_folder(qtbot: QtBot, dialog: ResizeDialog, workspace: Path) -> None:
    (workspace / "taken").mkdir()
    (workspace / "taken" / "notes.txt").write_text("keep me")
    type_output(qtbot, dialog, str(workspace / "taken"))
    assert not apply_enabled(dialog)
    child(dialog, QRadioButton, "resizeModeInPlace").setChecked(True)
    child(dialog, QSpinBox, "resizeTargetSpin").setValue(12)
    assert apply_enabled(dialog) and not child(dialog, QLineEdit, "resizeOutputEdit").isEnabled()


def test_prefilled_count_and_budget(qtbot: QtBot, cr13_artifact: Path, workspace: Path) -> None:
    jobs = JobManager()
    artifact = open_artifact(cr13_artifact)
    by_count = ResizeDialog(artifact, None, jobs, target=12)
    qtbot.addWidget(by_count)
    assert child(by_count, QSpinBox, "resizeTargetSpin").value() == 12
    assert child(by_count, QRadioButton, "resizeByCount").isChecked()
    assert child(by_count, QLineEdit, "resizeOutputEdit").text() == str(workspace / "qwen3-8b-cr13-kv12")
    assert by_count.request is not None and by_count.request.target == 12
    by_budget = ResizeDialog(artifact, None, jobs, budget_text="0.2")
    qtbot.addWidget(by_budget)
    by_budget.show()
    assert child(by_budget, QRadioButton, "resizeByBudget").isChecked()
    assert child(by_budget, QLineEdit, "resizeBudgetEdit").text() == "0.2"
    assert by_budget.request is not None and by_budget.request.budget_text == "0.2"
    with qtbot.waitSignal(by_budget.outputChecked, timeout=10_000):
        pass  # the default folder beside the source is checked as well
    assert by_budget.output_problem is None
    jobs.wait()


def test_pure_check_agrees_with_the_core(workspace: Path, cr13_artifact: Path) -> None:
    assert output_check.folder_problem("", cr13_artifact) == output_check.CHOOSE_FOLDER
    assert output_check.folder_problem(str(workspace / "x"), cr13_artifact) is None
    link = workspace / "link-to-source"
    link.symlink_to(cr13_artifact)
    assert output_check.folder_problem(str(link / "copy"), cr13_artifact) == core_says(link / "copy", cr13_artifact)
    assert "lies inside the source artifact" in (output_check.folder_problem(str(link / "copy"), cr13_artifact) or "")
