"""One meaning per label (issue 43 item 5): the details' what-if says it is a compile at that budget, and
`inspect --what-if` prints the same sentence and the same table."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QLabel, QLineEdit, QTableWidget
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.cli.main import main
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder, select, type_text
from .widgets import cell, child, present


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> list[str]:
    capsys.readouterr()
    assert main(list(args)) == 0
    return capsys.readouterr().out.splitlines()


def test_the_what_if_table_is_what_inspect_what_if_prints(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    type_text(qtbot, child(window, QLineEdit, "whatIfBudgetEdit"), "0.5")
    said = child(window, QLabel, "whatIfResult").text()
    assert "A compile at memory_budget 0.5" in said and "gives kvcache_num_blocks 40" in said
    assert "this artifact holds 21" in said  # not the artifact's own count within that budget

    printed = _cli(capsys, "inspect", str(cr13_artifact), "--what-if", "0.5")
    assert printed[0] in said  # the same sentence (the window wraps it in its colour)
    table = child(window, QTableWidget, "breakdownTable")
    shown = [[present(table.horizontalHeaderItem(c)).text() for c in range(table.columnCount())]]
    shown += [[cell(table, r, c).text() for c in range(table.columnCount())] for r in range(table.rowCount())]
    assert len(printed) == 1 + len(shown)
    for line, cells in zip(printed[1:], shown, strict=True):
        assert line.split() == " ".join(cells).split(), (line, cells)
    assert printed[1].startswith("NPU · chiplet") and printed[2].startswith("NPU 0 · c0")  # Rebel100: four each

    within = _cli(capsys, "inspect", str(cr13_artifact), "--memory-budget", "0.5")  # the other question
    assert any("kvcache_num_blocks 21" in line for line in within)


def test_one_chiplet_is_named_by_its_npu(ca25_artifact: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ATOM has one chiplet per NPU: its figures say "NPU 1", never "chiplet 0" (words meant for Rebel100's four)."""
    printed = "\n".join(_cli(capsys, "inspect", str(ca25_artifact)))
    assert "  NPU 1:" in printed and "chiplet 0" not in printed
    printed = "\n".join(_cli(capsys, "inspect", str(ca25_artifact), "--what-if", "0.5"))
    assert "\nNPU 1 " in printed and "chiplet" not in printed


@pytest.mark.parametrize("size", ["491.52 MiB", "1023.99 MiB", "15.72 GiB"])
def test_the_console_size_columns_never_cut_the_unit(qtbot: QtBot, size: str) -> None:
    from PySide6.QtWidgets import QStyle

    from rbln_artifact_studio.core.display.fleet_console import Column
    from rbln_artifact_studio.gui.models.jobs import JobManager
    from rbln_artifact_studio.gui.window.fleet_console import FleetConsole

    jobs = JobManager()
    console = FleetConsole(jobs, lambda: [], lambda: None, [], period=0, timeout=5)
    qtbot.addWidget(console)
    table = console.table
    margin = table.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, table) + 1
    for column in (Column.FREE, Column.USED, Column.TOTAL):  # what Qt's item text gets: the width less its margins
        room = table.columnWidth(column) - 2 * margin
        assert table.fontMetrics().horizontalAdvance(size) <= room, (column, size)
    jobs.wait()
