"""Honest budget labels: an artifact records no memory_budget, so none is drawn or named; a what-if budget in the
detail panel draws the breakdown and the count that budget gives, the same numbers as `explore`."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QLineEdit
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.fleet.artifact import open_artifact
from rbln_artifact_studio.core.model.budget import parse_budget
from rbln_artifact_studio.core.planning.explore import explore
from rbln_artifact_studio.gui.app.tones import Mark
from rbln_artifact_studio.gui.widgets.breakdown_table import BreakdownTable
from rbln_artifact_studio.gui.widgets.dram_chart import DramChart
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder, select, type_text
from .widgets import child, present


def _has_colour(chart: DramChart, colour: QColor) -> bool:
    """Whether any pixel of the rendered chart is exactly this colour (the dashed budget line's)."""
    image = chart.grab().toImage()
    target = colour.rgb()
    return any(image.pixel(x, y) == target for y in range(0, image.height()) for x in range(0, image.width(), 1))


def test_no_budget_is_named_or_drawn_for_a_compiled_artifact(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path
) -> None:
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    caption = child(window, QLabel, "dramCaption").text()
    assert "no memory_budget recorded: the whole NPU" in caption and "budget 140 GiB" not in caption
    chart = window.detail.chart
    assert "Budget" not in [label for _, label in chart._legend_entries()]
    assert "no memory_budget recorded" in chart.summary()
    assert not _has_colour(chart, chart.mark_colours()[Mark.BUDGET])
    table = child(window.detail, BreakdownTable)
    headers = [present(table.horizontalHeaderItem(c)).text() for c in range(table.columnCount())]
    assert "Budget" not in headers and headers[-1] == "Free"

    dialog = window.dialogs.open_resize_dialog()
    assert dialog is not None
    assert "no memory_budget recorded: the whole NPU" in dialog.before_caption.text()
    assert "no memory_budget recorded" in dialog.after_caption.text()
    dialog.reject()


def test_a_what_if_budget_draws_what_explore_says(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path
) -> None:
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    edit = child(window, QLineEdit, "whatIfBudgetEdit")
    result = child(window, QLabel, "whatIfResult")
    chart = window.detail.chart
    exploration = explore(open_artifact(cr13_artifact))
    npu = exploration.npu
    for text, blocks in (("0.3", 21), ("0.45", 40), ("0.195", 8), ("30GB", None)):
        type_text(qtbot, edit, text)
        per_npu = parse_budget(text).bytes_per_npu(npu)
        expected = exploration.blocks_at(per_npu)  # what `explore` prints for this budget
        assert blocks is None or expected == blocks
        assert chart.breakdown is not None and chart.breakdown.num_blocks == expected
        assert chart.breakdown.budget_per_npu == per_npu and chart.breakdown.budget_set
        assert (
            f"kvcache_num_blocks {expected} (floor 9" in result.text()
            or f"kvcache_num_blocks {expected}, below the floor of 9" in result.text()
        )
        assert _has_colour(chart, chart.mark_colours()[Mark.BUDGET])  # a budget: its line is drawn
    assert "below the floor of 9" in result.text() or "kvcache_num_blocks" in result.text()
    type_text(qtbot, edit, "abc")
    assert "Cannot read memory_budget &#x27;abc&#x27;" in result.text()
    assert chart.breakdown is not None and not chart.breakdown.budget_set  # back to the artifact as compiled
    edit.clear()
    assert not result.isVisible() and "no memory_budget recorded" in child(window, QLabel, "dramCaption").text()
