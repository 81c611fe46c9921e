"""A Fleet Console refresh as the window takes it: the same NPUs with new figures update in place (no reset, the
selection stays on its NPUs), a sort moves the selection with its rows, other rows start the view over with the
rows still shown selected again; and each cell's data comes in one call (multiData) that says what data() says."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QModelRoleData, QModelRoleDataSpan, Qt
from PySide6.QtWidgets import QTableView
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.display.fleet_console import Column, ConsoleRow, Npu, node_row, npu_row
from rbln_artifact_studio.gui.models.console_model import ROW, SHORT, ConsoleModel
from rbln_artifact_studio.gui.models.jobs import JobManager
from rbln_artifact_studio.gui.window.fleet_console import FleetConsole

GIB = 1 << 30
WAIT = 30_000
ROLES = [
    Qt.ItemDataRole.DisplayRole,
    Qt.ItemDataRole.DecorationRole,
    Qt.ItemDataRole.ToolTipRole,
    Qt.ItemDataRole.FontRole,
    Qt.ItemDataRole.TextAlignmentRole,
    Qt.ItemDataRole.BackgroundRole,
    Qt.ItemDataRole.ForegroundRole,
    Qt.ItemDataRole.CheckStateRole,
    ROW,
    SHORT,
]


def _rows(nodes: int, shift: int = 0, without: str = "") -> list[ConsoleRow]:
    """nodes of 2 NPUs, their used memory moved by shift GiB; a node that could not be read last."""
    rows = [
        npu_row(
            "fleet",
            f"node-{n:02d}",
            Npu(i, f"rbln{i}", "RBLN-CR13", ((n * 5 + i * 3 + shift) % 14 + 1) * GIB, 16 * GIB),
        )
        for n in range(nodes)
        for i in range(2)
        if f"node-{n:02d}" != without
    ]
    return [*rows, node_row("fleet", "node-zz", "did not answer within 60 s.")]


@pytest.fixture
def console(qtbot: QtBot) -> Iterator[FleetConsole]:
    jobs = JobManager()
    c = FleetConsole(jobs, lambda: [], lambda: None, [], period=0)
    qtbot.addWidget(c)
    c.resize(1400, 700)
    c.show()
    yield c
    jobs.cancel_all()
    jobs.wait()


def _show(qtbot: QtBot, console: FleetConsole, rows: list[ConsoleRow]) -> None:
    with qtbot.waitSignal(console.model.arranged, timeout=WAIT):
        console.model.set_rows(rows)


def _selected(console: FleetConsole) -> list[tuple[str, int]]:
    model = console.model
    rows = sorted(i.row() for i in console.table.selectionModel().selectedRows())
    return [(model.row_at(r).node, model.row_at(r).npu) for r in rows]


def _current(console: FleetConsole) -> tuple[str, int]:
    row = console.model.row_at(console.table.currentIndex().row())
    return row.node, row.npu


def _counting(model: ConsoleModel) -> dict[str, int]:
    seen = {"reset": 0, "layout": 0, "changed": 0}
    model.modelAboutToBeReset.connect(lambda: seen.__setitem__("reset", seen["reset"] + 1))
    model.layoutAboutToBeChanged.connect(lambda *_: seen.__setitem__("layout", seen["layout"] + 1))
    model.dataChanged.connect(lambda *_: seen.__setitem__("changed", seen["changed"] + 1))
    return seen


def test_the_same_npus_with_new_figures_update_in_place_and_keep_the_selection(
    qtbot: QtBot, console: FleetConsole
) -> None:
    _show(qtbot, console, _rows(12))
    console.table.selectRow(5)
    console.table.selectionModel().select(
        console.model.index(7, 0),
        console.table.selectionModel().SelectionFlag.Select | console.table.selectionModel().SelectionFlag.Rows,
    )
    chosen, current = _selected(console), _current(console)
    seen = _counting(console.model)
    _show(qtbot, console, _rows(12, shift=4))  # a refresh: every NPU again, other used memory
    assert seen == {"reset": 0, "layout": 0, "changed": 1}  # no reset: the figures repaint where they are
    assert _selected(console) == chosen and _current(console) == current
    assert [r.used for r in (console.model.row_at(i) for i in range(console.model.rowCount()))] == [
        r.used for r in _rows(12, shift=4)
    ]


def test_a_sort_moves_the_selection_with_its_rows(qtbot: QtBot, console: FleetConsole) -> None:
    _show(qtbot, console, _rows(12))
    console.table.selectRow(3)
    chosen, current = _selected(console), _current(console)
    seen = _counting(console.model)
    with qtbot.waitSignal(console.model.arranged, timeout=WAIT):
        console.table.sortByColumn(Column.FREE, Qt.SortOrder.AscendingOrder)
    assert seen["reset"] == 0 and seen["layout"] == 1
    assert _selected(console) == chosen and _current(console) == current
    assert console.table.currentIndex().row() != 3  # it moved: the row followed it


def test_other_rows_start_over_and_select_again_the_rows_still_shown(qtbot: QtBot, console: FleetConsole) -> None:
    _show(qtbot, console, _rows(12))
    selection = console.table.selectionModel()
    for row in (2, 9):  # node-01 rbln0 and node-04 rbln1
        selection.select(console.model.index(row, 0), selection.SelectionFlag.Select | selection.SelectionFlag.Rows)
    selection.setCurrentIndex(console.model.index(9, 0), selection.SelectionFlag.NoUpdate)
    chosen = _selected(console)
    seen = _counting(console.model)
    _show(qtbot, console, _rows(12, without="node-01"))  # a node gone: other rows
    assert seen["reset"] == 1
    assert _selected(console) == [c for c in chosen if c[0] != "node-01"] == [("node-04", 1)]
    assert _current(console) == ("node-04", 1)


def test_a_cell_s_data_in_one_call_is_what_data_says_role_by_role(qtbot: QtBot) -> None:
    jobs = JobManager()
    model = ConsoleModel(jobs)
    view = QTableView()
    view.setModel(model)
    qtbot.addWidget(view)
    model.short_below = 6 * GIB  # some NPUs short of free memory: coloured and bold
    with qtbot.waitSignal(model.arranged, timeout=WAIT):
        model.set_rows(_rows(6))
    told = 0
    for row in range(model.rowCount()):
        for column in Column:
            index = model.index(row, column)
            for role in ROLES:
                asked = QModelRoleData(role)
                model.multiData(index, QModelRoleDataSpan(asked))
                assert asked.data() == model.data(index, role), (row, column, role)
                told += asked.data() is not None
    assert told > model.rowCount() * len(Column)  # texts, colours, fonts, alignments: there was something to tell
    jobs.cancel_all()
    jobs.wait()
