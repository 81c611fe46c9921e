"""The GUI and the CLI resize one artifact at once: one proceeds, the other is told who holds it, nothing is lost."""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import paused_cli as start_paused_cli
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QMessageBox, QPushButton, QRadioButton, QSpinBox
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.storage.fsutil import LOCK_NAME
from rbln_artifact_studio.gui.dialogs.resize_dialog import ResizeDialog
from rbln_artifact_studio.gui.models.jobs import Job
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder, row_values, select, type_text
from .widgets import child


def _snapshot(folder: Path) -> dict[str, str]:
    """Every file's hash, but the lock file (the holder's own bookkeeping)."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != LOCK_NAME
    }


def _blocks(artifact: Path) -> int:
    return int(json.loads((artifact / "rbln_config.json").read_text())["kvcache_num_blocks"])


@pytest.fixture
def paused_cli(cr13_artifact: Path) -> Iterator[subprocess.Popen[str]]:
    """`rbln-studio-cli set-kvcache-num-blocks ARTIFACT 12` in another process, stopped holding the artifact's lock."""
    proc = start_paused_cli("resize.locked", "set-kvcache-num-blocks", cr13_artifact, 12)
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.communicate()


def _resize_in_place(qtbot: QtBot, window: MainWindow, target: int) -> Job:
    child(window, type(window.action_resize), "actionResize").trigger()
    dialog = child(window, ResizeDialog, "resizeDialog")
    assert dialog is not None and dialog.isVisible()
    radio = child(dialog, QRadioButton, "resizeModeInPlace")
    qtbot.mouseClick(radio, Qt.MouseButton.LeftButton, pos=QPoint(8, radio.height() // 2))
    type_text(qtbot, child(dialog, QSpinBox, "resizeTargetSpin"), str(target))
    with qtbot.waitSignal(window.jobs.jobAdded) as added:
        qtbot.mouseClick(child(dialog, QPushButton, "resizeApplyButton"), Qt.MouseButton.LeftButton)
    job = added.args[0]
    qtbot.waitUntil(lambda: job.state.ended, timeout=20_000)
    return job


def _error_box() -> QMessageBox | None:
    boxes = [w for w in QApplication.topLevelWidgets() if w.objectName() == "errorDialog" and w.isVisible()]
    return boxes[0] if boxes else None  # type: ignore[return-value]


def test_gui_resize_waits_for_the_cli_that_holds_the_artifact(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path, paused_cli: subprocess.Popen[str]
) -> None:
    before = _snapshot(cr13_artifact)
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)

    job = _resize_in_place(qtbot, window, 15)
    assert job.state.value == "failed"
    assert job.failure is not None
    reason = job.failure.reason
    assert f"{cr13_artifact} is being changed by process {paused_cli.pid} on " in reason
    assert "(resize in place, since " in reason and reason.endswith("Wait for it to finish, then try again.")
    qtbot.waitUntil(lambda: _error_box() is not None)
    box = _error_box()
    assert box is not None and box.text() == reason
    box.close()
    assert _snapshot(cr13_artifact) == before  # the GUI changed nothing
    assert row_values(window, cr13_artifact)["kvcache_num_blocks"] == "21"

    # The CLI goes on and finishes its own resize; the table follows it.
    _, err = paused_cli.communicate(input="", timeout=60)
    assert paused_cli.returncode == 0, err
    assert _blocks(cr13_artifact) == 12 and not (cr13_artifact / LOCK_NAME).exists()
    qtbot.waitUntil(lambda: row_values(window, cr13_artifact)["kvcache_num_blocks"] == "12", timeout=10_000)
    qtbot.waitUntil(lambda: window.artifact is not None and window.artifact.config.kvcache_num_blocks == 12)

    # Tried again once the lock is free, the GUI's resize goes through.
    job = _resize_in_place(qtbot, window, 15)
    assert job.state.value == "succeeded", job.failure
    assert _blocks(cr13_artifact) == 15
    qtbot.waitUntil(lambda: row_values(window, cr13_artifact)["kvcache_num_blocks"] == "15", timeout=10_000)
    assert _error_box() is None
