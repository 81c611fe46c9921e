"""The budget explorer through the GUI: the core's curve, floor and full pool, zoom to the 2 MiB steps, click to resize."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import compile_artifact
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QLabel, QLineEdit, QPushButton, QRadioButton, QSpinBox
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.fleet.artifact import open_artifact
from rbln_artifact_studio.core.planning.explore import exploration_text, explore, target_at
from rbln_artifact_studio.core.sizes import MIB, format_bytes_exact
from rbln_artifact_studio.gui.dialogs.explorer_dialog import ExplorerDialog
from rbln_artifact_studio.gui.dialogs.resize_dialog import ResizeDialog
from rbln_artifact_studio.gui.models.jobs import Job
from rbln_artifact_studio.gui.widgets.explorer_chart import ExplorerChart
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import make_real_like, open_folder, select
from .widgets import child


def open_explorer(qtbot: QtBot, window: MainWindow, folder: Path, artifact: Path) -> ExplorerDialog:
    open_folder(qtbot, window, folder)
    select(qtbot, window, artifact)
    assert window.action_explore.isEnabled()
    child(window, type(window.action_explore), "actionExplore").trigger()
    dialog = child(window, ExplorerDialog, "explorerDialog")
    assert dialog is not None and dialog.isVisible()
    qtbot.waitUntil(lambda: dialog._job is None, timeout=20_000)
    return dialog


def click_budget(qtbot: QtBot, chart: ExplorerChart, x: float) -> None:
    qtbot.mouseClick(chart, Qt.MouseButton.LeftButton, pos=QPoint(round(x), chart.height() // 2))


def test_curve_floor_full_and_a_click_fills_the_resize_dialog(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path
) -> None:
    dialog = open_explorer(qtbot, window, workspace, cr13_artifact)
    artifact = open_artifact(cr13_artifact)
    expected = explore(artifact)
    chart = child(dialog, ExplorerChart, "explorerChart")
    assert chart.exploration == expected and chart.view == (0, expected.available)
    summary = child(dialog, QLabel, "explorerSummary").text()
    assert "kvcache_num_blocks 21 (floor 9, full pool 40)" in summary
    assert summary.splitlines() == [line.strip() for line in exploration_text(expected).splitlines()[:3]]  # the CLI's
    assert child(dialog, QLineEdit, "explorerCommand").text() == f"rbln-studio-cli explore {cr13_artifact}"
    assert expected.floor_budget is not None and expected.full_budget is not None
    assert f"floor (9 blocks) from memory_budget 0.1995 or {expected.floor_budget.low:,} bytes" in summary
    assert f"full pool (40 blocks) from memory_budget {expected.full_budget.fraction:g}" in summary
    # Every breakpoint is drawn at its own budget and count, left to right, bottom to top.
    xs = [chart.point_pos(i).x() for i in range(len(expected.points))]
    assert xs == sorted(xs) and len(set(xs)) == len(xs)
    assert chart.point_pos(0).y() > chart.point_pos(len(xs) - 1).y()

    fourteen = expected.points[13]
    assert fourteen.blocks == 14
    assert chart.tooltip_at(chart.point_pos(13)) == (
        f"{format_bytes_exact(fourteen.budget_bytes)} per NPU (fraction {fourteen.fraction:.4f}): 14 blocks. Click to resize to it."
    )
    click_budget(qtbot, chart, chart.point_pos(13).x())
    resize = child(dialog, ResizeDialog, "resizeDialog")
    assert resize is not None and resize.isVisible()
    click = target_at(artifact, fourteen.budget_bytes)
    assert child(resize, QRadioButton, "resizeByBudget").isChecked()
    typed = child(resize, QLineEdit, "resizeBudgetEdit").text()  # a fraction, as a user types it (issue #23)
    assert typed.startswith("0.") and len(typed) <= 10 and float(typed) >= fourteen.fraction
    assert child(resize, QSpinBox, "resizeTargetSpin").value() == click.blocks == 14
    assert child(resize, QPushButton, "resizeApplyButton").isEnabled()
    assert child(dialog, QLabel, "explorerPick").text().endswith("fit to budget resolves to 14 blocks.")
    assert chart.picked is not None and chart.picked[1] == 14 and chart.picked[0] >= fourteen.budget_bytes

    # A click left of the floor's budget fills the same dialog with the floor error; Apply is disabled.
    click_budget(qtbot, chart, chart.point_pos(7).x())
    assert child(dialog, ResizeDialog, "resizeDialog") is resize
    message = child(resize, QLabel, "resizeMessage").text()
    assert "only 8 blocks can be allocated, but at least 9 blocks are required" in message
    assert not child(resize, QPushButton, "resizeApplyButton").isEnabled()
    assert "at least 9 blocks are required" in child(dialog, QLabel, "explorerPick").text()

    # Back to 14 blocks and Apply: a copy resized through 'fit to budget', the source untouched.
    click_budget(qtbot, chart, chart.point_pos(13).x())
    copy = workspace / "qwen3-8b-cr13-kv14"
    assert child(resize, QLineEdit, "resizeOutputEdit").text() == str(copy)
    with qtbot.waitSignal(window.jobs.jobAdded) as added:
        qtbot.mouseClick(child(resize, QPushButton, "resizeApplyButton"), Qt.MouseButton.LeftButton)
    job: Job = added.args[0]
    with qtbot.waitSignal(job.succeeded, timeout=20_000):
        pass
    assert json.loads((copy / "rbln_config.json").read_text())["kvcache_num_blocks"] == 14
    assert json.loads((cr13_artifact / "rbln_config.json").read_text())["kvcache_num_blocks"] == 21


@pytest.fixture
def tiny_atom(tiny_model: Path, tmp_path: Path) -> Path:
    """Per-block KV far below 2 MiB: eight blocks share one 8 MiB step (see tests/test_explore.py)."""
    return compile_artifact(
        tmp_path / "artifacts" / "tiny-ca25", model_id=str(tiny_model), npu="RBLN-CA25", batch_size=4,
        max_seq_len=8192, kvcache_partition_len=1024,
    )  # fmt: skip


def test_zoom_shows_the_2mib_steps_and_clicks_between_them(qtbot: QtBot, window: MainWindow, tiny_atom: Path) -> None:
    dialog = open_explorer(qtbot, window, tiny_atom.parent, tiny_atom)
    chart = child(dialog, ExplorerChart, "explorerChart")
    e = chart.exploration
    assert e is not None and [p.blocks for p in e.points] == [8, 16, 24, 32]
    assert chart.point_pos(2).x() - chart.point_pos(1).x() < 1  # 8 MiB of 15.7 GiB: one pixel at most
    qtbot.mouseClick(child(dialog, QPushButton, "explorerZoomFloorFull"), Qt.MouseButton.LeftButton)
    low, high = chart.view
    assert e.floor_budget is not None and e.full_budget is not None
    assert low < e.floor_budget.low and e.full_budget.low < high and high - low <= 64 * MIB
    assert chart.point_pos(2).x() - chart.point_pos(1).x() > 50  # each step is now plain to see
    # Between two steps the click resolves to the lower count, as fit to budget would.
    between = chart.x_of(e.points[2].budget_bytes - 4 * MIB)
    click_budget(qtbot, chart, between)
    resize = child(dialog, ResizeDialog, "resizeDialog")
    assert child(resize, QSpinBox, "resizeTargetSpin").value() == 16
    click_budget(qtbot, chart, chart.point_pos(2).x() + 2)  # close enough to snap onto the step
    typed = child(resize, QLineEdit, "resizeBudgetEdit").text()
    assert typed.startswith("0.") and float(typed) >= e.points[2].fraction  # a fraction, rounded up onto the step
    assert child(resize, QSpinBox, "resizeTargetSpin").value() == 24
    # The wheel zooms around the cursor; the buttons widen and reset.
    span = high - low
    anchor = chart.point_pos(2)
    wheel = QWheelEvent(
        anchor, chart.mapToGlobal(anchor), QPoint(), QPoint(0, 120), Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False,
    )  # fmt: skip
    QApplication.sendEvent(chart, wheel)
    assert chart.view[1] - chart.view[0] == pytest.approx(span * 0.8, abs=2)
    assert abs(chart.point_pos(2).x() - anchor.x()) < 2
    qtbot.mouseClick(child(dialog, QPushButton, "explorerZoomOut"), Qt.MouseButton.LeftButton)
    assert chart.view[1] - chart.view[0] == pytest.approx(span * 1.6, abs=4)
    qtbot.mouseClick(child(dialog, QPushButton, "explorerZoomReset"), Qt.MouseButton.LeftButton)
    assert chart.view == (0, e.available)
    for _ in range(40):  # zooming in stops at four 2 MiB steps across the plot
        qtbot.mouseClick(child(dialog, QPushButton, "explorerZoomIn"), Qt.MouseButton.LeftButton)
    assert chart.view[1] - chart.view[0] == 8 * MIB
    assert chart.x_of(chart.view[0] + 2 * MIB) - chart.x_of(chart.view[0]) > 100


def test_unknown_allocations_say_why(qtbot: QtBot, window: MainWindow, tmp_path: Path, cr13_artifact: Path) -> None:
    real = make_real_like(cr13_artifact, tmp_path / "real" / "qwen3-8b-real")
    dialog = open_explorer(qtbot, window, tmp_path / "real", real)
    text = child(dialog, QLabel, "explorerSummary").text()
    assert text.startswith("Cannot explore budgets for qwen3-8b-real: its allocations are unknown.")
    assert not child(dialog, ExplorerChart, "explorerChart").isVisible()
