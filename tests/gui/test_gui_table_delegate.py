"""The artifact table's delegate paints exactly what Qt's own delegate paints, without asking the model per role."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QFont, QImage
from PySide6.QtWidgets import QApplication, QStyledItemDelegate
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.fleet.scan import ArtifactSummary, scan
from rbln_artifact_studio.core.status import Status
from rbln_artifact_studio.gui.models.artifact_model import ArtifactTableModel
from rbln_artifact_studio.gui.widgets.table_delegate import RowTextDelegate
from rbln_artifact_studio.gui.window.artifact_browser import ArtifactBrowser


class CountingModel(ArtifactTableModel):
    """Counts data() calls (what Qt's delegate makes for every role of every painted cell)."""

    calls = 0

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        self.calls += 1
        return super().data(index, role)


def _rows(workspace: Path, count: int) -> list[ArtifactSummary]:
    first = next(iter(scan(workspace)))
    rows = [replace(first, path=f"/fleet/a{i:04d}", name=f"a{i:04d}") for i in range(count)]
    rows[3] = replace(rows[3], name="a0003-with-a-name-far-too-long-for-its-column")  # elided
    rows[4] = replace(rows[4], status=Status.WARNING, problems=["kvcache_num_blocks above the full pool"])
    rows[5] = replace(rows[5], status=Status.INVALID, kvcache_num_blocks=None, kv_bytes_per_npu=None)
    return rows


def _browser(qtbot: QtBot, model: ArtifactTableModel) -> ArtifactBrowser:
    browser = ArtifactBrowser(model)
    qtbot.addWidget(browser)
    browser.resize(900, 420)
    browser.show()
    qtbot.waitExposed(browser)
    return browser


def _grab(browser: ArtifactBrowser) -> QImage:
    QApplication.processEvents()  # the view lays its items out again after a change of delegate
    return browser.view.viewport().grab().toImage()


def _use_qt_delegate(browser: ArtifactBrowser) -> None:
    browser.view.setItemDelegate(QStyledItemDelegate(browser.view))
    QApplication.processEvents()


@pytest.mark.parametrize("direction", [Qt.LayoutDirection.LeftToRight, Qt.LayoutDirection.RightToLeft])
def test_cells_look_exactly_as_qt_paints_them(qtbot: QtBot, workspace: Path, direction: Qt.LayoutDirection) -> None:
    model = ArtifactTableModel()
    model.upsert(_rows(workspace, 40))
    browser = _browser(qtbot, model)
    browser.setLayoutDirection(direction)  # right to left, e.g. rbln-studio -reverse: numbers and text mirrored
    assert isinstance(browser.view.itemDelegate(), RowTextDelegate)
    browser.view.selectRow(2)  # a selected row, a warning, an invalid row with "?" cells, an elided name
    ours = _grab(browser)
    _use_qt_delegate(browser)
    assert _grab(browser) == ours  # pixel for pixel: alignment, colours, eliding, selection


def test_a_repaint_asks_the_model_nothing_for_plain_cells(qtbot: QtBot, workspace: Path) -> None:
    model = CountingModel()
    model.upsert(_rows(workspace, 2000))
    browser = _browser(qtbot, model)
    viewport = browser.view.viewport()
    model.calls = 0
    viewport.repaint()
    assert model.calls == 0
    _use_qt_delegate(browser)
    viewport.repaint()
    assert model.calls > 100  # Qt's delegate: one call per role per visible cell


def test_filtering_and_sorting_paint_the_rows_they_show(qtbot: QtBot, workspace: Path) -> None:
    model = ArtifactTableModel()
    model.upsert(_rows(workspace, 40))
    browser = _browser(qtbot, model)
    qtbot.keyClicks(browser.filter_edit, "invalid")
    assert browser.proxy.rowCount() == 1
    browser.view.sortByColumn(0, Qt.SortOrder.DescendingOrder)
    ours = _grab(browser)
    _use_qt_delegate(browser)
    assert _grab(browser) == ours


def test_a_new_font_lays_the_texts_out_again(qtbot: QtBot, workspace: Path) -> None:
    model = ArtifactTableModel()
    model.upsert(_rows(workspace, 40))
    browser = _browser(qtbot, model)
    _grab(browser)  # texts laid out in the first font
    font = QFont(browser.view.font())
    font.setPointSize(font.pointSize() + 5)
    browser.view.setFont(font)
    ours = _grab(browser)
    _use_qt_delegate(browser)
    assert _grab(browser) == ours
