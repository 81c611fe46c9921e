"""The small things of issue #23 item 10: the title names the app once, round axis steps, Compare's columns share
the width, Explore Budgets… on the toolbar (the explorer's fraction is in test_gui_explorer.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QItemSelectionModel
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.sizes import format_bytes
from rbln_artifact_studio.gui.dialogs.compare_dialog import CompareDialog
from rbln_artifact_studio.gui.widgets.chart_base import GIB, axis_ticks
from rbln_artifact_studio.gui.widgets.dram_chart import DramChart
from rbln_artifact_studio.gui.window.main_window import APP_NAME, MainWindow

from .conftest import open_folder, select
from .widgets import child, present


@pytest.fixture
def display_name() -> Iterator[None]:
    """The display name the application sets (application.configure): Qt appends it to every window title."""
    before = QGuiApplication.applicationDisplayName()
    QGuiApplication.setApplicationDisplayName(APP_NAME)
    yield
    QGuiApplication.setApplicationDisplayName(before)


def test_the_title_names_the_folder_and_leaves_the_app_name_to_qt(
    qtbot: QtBot, display_name: None, window: MainWindow, workspace: Path
) -> None:
    open_folder(qtbot, window, workspace)
    assert window.windowTitle() == str(workspace)  # Qt shows "FOLDER — RBLN Artifact Studio"


def test_axis_steps_are_round() -> None:
    assert [format_bytes(t) for t in axis_ticks(35 * GIB)] == ["0 bytes", "10 GiB", "20 GiB", "30 GiB"]
    assert [format_bytes(t) for t in axis_ticks(8 * GIB)] == ["0 bytes", "2 GiB", "4 GiB", "6 GiB", "8 GiB"]
    assert [format_bytes(t) for t in axis_ticks(300 << 20)] == ["0 bytes", "100 MiB", "200 MiB", "300 MiB"]
    for scale in (1, 999, 35 * GIB + 1, 1 << 45):
        ticks = axis_ticks(scale)
        assert ticks[0] == 0 and ticks[-1] <= scale and len(ticks) <= 6


def test_the_dram_chart_labels_its_axis_in_round_steps(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path
) -> None:
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    chart = child(window, DramChart, "dramChart")
    axis = [text for text, _ in chart.label_rects() if text.endswith(("GiB", "MiB", "bytes")) and " " in text]
    assert "10 GiB" in axis and all(not any(c in t for c in ".,") for t in axis)


def test_compare_columns_share_the_width_and_explore_is_on_the_toolbar(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path, ca25_artifact: Path
) -> None:
    assert window.action_explore in window.artifact_actions.toolbar.actions()
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    window.browser.view.selectionModel().select(
        window.browser.proxy.mapFromSource(window.model.index(present(window.model.row_of(str(ca25_artifact))), 0)),
        QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows,
    )
    compare = window.artifact_actions.open_compare()
    assert isinstance(compare, CompareDialog)
    qtbot.waitUntil(lambda: compare.comparison is not None)
    header = compare.differences.horizontalHeader()
    a, b, diff = (header.sectionSize(c) for c in (1, 2, 3))
    assert abs(a - diff) <= 2 and abs(b - diff) <= 2
    compare.close()
