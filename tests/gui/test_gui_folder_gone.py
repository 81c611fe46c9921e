"""The opened folder renamed, deleted, replaced by a file or by another folder: the window says so, empties the
table, and offers to open another (it kept the old rows and title for good, silently)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog, QMessageBox
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.window.main_window import APP_NAME, MainWindow

from .conftest import open_folder


def _renamed(root: Path) -> None:
    root.rename(root.with_name("fleet-moved"))


def _deleted(root: Path) -> None:
    shutil.rmtree(root)


def _replaced_by_a_file(root: Path) -> None:
    shutil.rmtree(root)
    root.write_text("a file now")


def _replaced_by_a_folder(root: Path) -> None:
    root.rename(root.with_name("fleet-old"))
    root.mkdir()


GONE: dict[str, tuple[Callable[[Path], None], str]] = {
    "renamed": (_renamed, "was moved, renamed or deleted"),
    "deleted": (_deleted, "was moved, renamed or deleted"),
    "replaced by a file": (_replaced_by_a_file, "is no longer a folder (a file took its place)"),
    "replaced by another folder": (_replaced_by_a_folder, "was replaced by another folder of the same name"),
}


@pytest.mark.parametrize("case", GONE)
def test_the_folder_gone_is_said_and_another_can_be_opened(
    qtbot: QtBot,
    window: MainWindow,
    cr13_artifact: Path,
    ca25_artifact: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    case: str,
) -> None:
    root = tmp_path / "fleet"
    root.mkdir()
    cr13_artifact.rename(root / cr13_artifact.name)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ca25_artifact.rename(elsewhere / ca25_artifact.name)
    open_folder(qtbot, window, root)
    assert window.model.rowCount() == 1
    qtbot.waitUntil(lambda: str(root) in window.state_notices._opened)  # its identity is known

    change, words = GONE[case]
    with qtbot.waitSignal(window.state_notices.folderGone, timeout=20_000) as gone:
        change(root)
    assert gone.args == [str(root), f"{root} {words}."]
    box = window.findChild(QMessageBox, "folderGone")
    assert box is not None and words in box.text()
    assert window.model.rowCount() == 0 and window.workspace.root is None
    assert window.windowTitle() == APP_NAME

    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *_args: str(elsewhere))
    with qtbot.waitSignal(window.workspace.scanFinished, timeout=20_000):
        box.button(QMessageBox.StandardButton.Open).click()
    assert window.workspace.root == str(elsewhere)
    assert [window.model.summary(r).name for r in range(window.model.rowCount())] == ["qwen3-8b-ca25x4"]
    assert os.path.isdir(elsewhere)


def test_a_closed_window_starts_no_work_when_the_folder_beside_its_own_changes(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, cr13_artifact: Path
) -> None:
    """The folder above the opened one is watched (a rename of the root shows only there): once the window is
    closed, a folder made beside the root (another test's, another program's) starts no check in its jobs."""
    root = tmp_path / "fleet"
    root.mkdir()
    cr13_artifact.rename(root / cr13_artifact.name)
    open_folder(qtbot, window, root)
    qtbot.waitUntil(lambda: str(root) in window.state_notices._opened)  # its identity is known
    window.close()
    with qtbot.assertNotEmitted(window.jobs.jobAdded, wait=1_000):
        (tmp_path / "beside").mkdir()
