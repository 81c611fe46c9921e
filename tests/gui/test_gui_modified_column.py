"""When an artifact was compiled or last changed, and its size on disk (issue #23 item 11): a sortable column
and a line in the details."""

from __future__ import annotations

import os
import time
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.sizes import format_bytes
from rbln_artifact_studio.gui.models.artifact_model import COLUMNS
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder, row_values, select
from .widgets import child, present

LAST_YEAR = time.mktime((2025, 6, 1, 12, 30, 0, 0, 0, -1))


def _age(folder: Path, when: float) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            os.utime(path, (when, when))


def test_the_modified_column_sorts_and_the_details_say_when_and_how_big(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path, ca25_artifact: Path
) -> None:
    _age(cr13_artifact, LAST_YEAR)
    open_folder(qtbot, window, workspace)
    assert row_values(window, cr13_artifact)["Modified"] == "2025-06-01 12:30"
    assert row_values(window, ca25_artifact)["Modified"].startswith(time.strftime("%Y-"))
    column = [c.title for c in COLUMNS].index("Modified")
    window.browser.view.sortByColumn(column, Qt.SortOrder.AscendingOrder)
    proxy = window.browser.proxy
    first = proxy.index(0, 0).data()
    assert first == cr13_artifact.name  # the older one first
    window.browser.view.sortByColumn(column, Qt.SortOrder.DescendingOrder)
    assert proxy.index(0, 0).data() == ca25_artifact.name
    select(qtbot, window, cr13_artifact)
    line = child(window, QLabel, "detailOnDisk")
    size = window.model.summary(present(window.model.row_of(str(cr13_artifact)))).size_on_disk
    assert line.isVisible()
    assert line.text() == f"{format_bytes(size)} on disk · compiled or changed 2025-06-01 12:30"
    assert f"{size:,} B" in line.toolTip()
