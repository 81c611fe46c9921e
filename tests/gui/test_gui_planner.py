"""The co-location planner through the GUI: multi-select, verdicts, per-chiplet figures equal to the CLI's, the fix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import compile_artifact
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QPushButton, QRadioButton, QSpinBox, QTableWidget
from pytestqt.qtbot import QtBot
from test_planner import CR13_CHIPLET, add_workspace, chiplet_used

from rbln_artifact_studio.gui.dialogs.planner_dialog import EXACT_ROLE, PlannerDialog
from rbln_artifact_studio.gui.dialogs.resize_dialog import ResizeDialog
from rbln_artifact_studio.gui.models.jobs import Job
from rbln_artifact_studio.gui.widgets.plan_chart import PlanChart
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import make_real_like, open_folder
from .widgets import cell, child, present


@pytest.fixture(scope="module")
def _full_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_artifact(tmp_path_factory.mktemp("full") / "qwen3-8b-cr13-full", npu="RBLN-CR13")


@pytest.fixture
def cr13_full(_full_template: Path, tmp_path: Path) -> Path:
    """Qwen3-8B on one RBLN-CR13 with the whole NPU (40 blocks), beside cr13_artifact (21 blocks)."""
    return Path(shutil.copytree(_full_template, tmp_path / "qwen3-8b-cr13-full"))


def select_rows(qtbot: QtBot, window: MainWindow, paths: list[Path]) -> None:
    """Click the first row, Ctrl+click the others, as a user selects several artifacts."""
    view = window.browser.view
    for i, path in enumerate(paths):
        row = window.browser.proxy.mapFromSource(window.model.index(present(window.model.row_of(str(path))), 0))
        modifier = Qt.KeyboardModifier.NoModifier if i == 0 else Qt.KeyboardModifier.ControlModifier
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, modifier, view.visualRect(row).center())
    assert sorted(window.browser.selected_paths()) == sorted(map(str, paths))


def open_planner(qtbot: QtBot, window: MainWindow, folder: Path, paths: list[Path]) -> PlannerDialog:
    open_folder(qtbot, window, folder)
    select_rows(qtbot, window, paths[:1])
    assert not window.action_plan.isEnabled()  # one artifact is no plan
    select_rows(qtbot, window, paths)
    assert window.action_plan.isEnabled()
    window.action_plan.trigger()
    dialog = child(window, PlannerDialog, "plannerDialog")
    assert dialog is not None and dialog.isVisible()
    qtbot.waitUntil(lambda: dialog.plan_result is not None or "Cannot plan" in verdict(dialog), timeout=20_000)
    return dialog


def verdict(dialog: PlannerDialog) -> str:
    return child(dialog, QLabel, "plannerVerdict").text()


def tables(dialog: PlannerDialog) -> list[QTableWidget]:
    return [view.table for view in dialog.family_views]


def cli_plan(run_cli, *args: object) -> dict:
    return json.loads(run_cli("plan", *args, "--json").stdout)


def assert_same_figures_as_cli(dialog: PlannerDialog, data: dict) -> None:
    """Every (NPU, chiplet) row of every family table holds the CLI's used, available and headroom bytes."""
    shown = tables(dialog)
    assert len(shown) == len(data["families"])
    for table, family in zip(shown, data["families"], strict=True):
        assert table.rowCount() == len(family["chiplets"])
        headers = [present(table.horizontalHeaderItem(c)).text() for c in range(table.columnCount())]
        for row, chiplet in enumerate(family["chiplets"]):
            cells = {h: present(table.item(row, c)) for c, h in enumerate(headers)}
            assert cells["Used"].data(EXACT_ROLE) == chiplet["used"]
            assert cells["Available"].data(EXACT_ROLE) == chiplet["available"]
            assert cells["Headroom / overflow"].data(EXACT_ROLE) == chiplet["headroom"]
            for label, share in chiplet["artifacts"].items():
                assert cells[label].data(EXACT_ROLE) == share["used"]
        tight = family["tightest"]
        marked = [r for r in range(table.rowCount()) if cell(table, r, 0).text().endswith("◀ tightest")]
        assert marked == [tight["node"] * 4 + tight["chiplet"] if family["family"] == "Rebel100" else tight["node"]]


def test_a_set_that_fits(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, cr13_artifact: Path, cr13_full: Path, run_cli
) -> None:
    dialog = open_planner(qtbot, window, tmp_path, [cr13_artifact, cr13_full])
    data = cli_plan(run_cli, cr13_artifact, cr13_full)
    assert data["verdict"] == "fit"
    command = child(dialog, QLineEdit, "plannerCommand").text()
    assert command == f"rbln-studio-cli plan {cr13_artifact} {cr13_full}"
    text = verdict(dialog)
    assert "2 artifacts: fit" in text and "does not fit" not in text
    assert "Rebel100: tightest NPU 0 / chiplet" in text
    assert_same_figures_as_cli(dialog, data)
    chart = child(dialog, PlanChart, "plannerChart")
    bars = chart.bars()
    assert [b.label for b in bars] == ["NPU 0 · c0", "NPU 0 · c1", "NPU 0 · c2", "NPU 0 · c3"]
    assert all(b.chiplet.headroom > 0 for b in bars) and [b.tightest for b in bars].count(True) == 1
    assert all(len(b.pieces) == 4 for b in bars)  # two artifacts, each weights+workspace then KV
    share_rect = bars[0].pieces[1][2]  # the first artifact's KV part
    assert chart.tooltip_at(share_rect.center().toPoint()).startswith("qwen3-8b-cr13: ")
    # The set fits, so the fix for the smaller artifact is growth to its whole pool, as the CLI says.
    combo = child(dialog, QComboBox, "plannerFixCombo")
    combo.setCurrentText("qwen3-8b-cr13")
    fix = cli_plan(run_cli, cr13_artifact, cr13_full, "--fix", cr13_artifact)["fixes"][0]
    assert fix["target"] == 40
    label = child(dialog, QLabel, "plannerFixLabel").text()
    assert f"grow to kvcache_num_blocks={fix['target']}" in label and f"{fix['headroom_after']:,} bytes free" in label
    assert "above the current count" not in label  # the fix fits: no warning may say it might not


def test_one_chiplet_overflows_and_the_fix_is_applied_through_the_resize_dialog(
    qtbot: QtBot,
    window: MainWindow,
    tmp_path: Path,
    cr13_artifact: Path,
    cr13_full: Path,
    run_cli,
) -> None:
    headroom = CR13_CHIPLET - chiplet_used(cr13_artifact, 0, 2) - chiplet_used(cr13_full, 0, 2)
    add_workspace(cr13_full, node=0, chiplet=2, extra=headroom + 100 * 2**20)
    dialog = open_planner(qtbot, window, tmp_path, [cr13_artifact, cr13_full])
    data = cli_plan(run_cli, cr13_artifact, cr13_full)
    assert data["verdict"] == "does not fit"
    text = verdict(dialog)
    assert "2 artifacts: does not fit" in text
    assert "tightest NPU 0 / chiplet 2, OVER by 104,857,600 bytes (100 MiB); 1 of 4 chiplet(s) over" in text
    assert_same_figures_as_cli(dialog, data)
    (table,) = tables(dialog)
    over = [r for r in range(4) if cell(table, r, table.columnCount() - 1).data(EXACT_ROLE) < 0]
    assert over == [2] and cell(table, 2, table.columnCount() - 1).text() == "−100 MiB over"
    bars = child(dialog, PlanChart, "plannerChart").bars()
    assert [b.label for b in bars if b.chiplet.headroom < 0] == ["NPU 0 · c2"]
    assert next(b for b in bars if b.tightest).label == "NPU 0 · c2"
    assert bars[2].rect.top() < bars[2].available_y  # the bar rises above the available line
    # The fix offered first is the CLI's first: qwen3-8b-cr13 down to 20 blocks.
    fix = cli_plan(run_cli, cr13_artifact, cr13_full, "--fix", cr13_artifact)["fixes"][0]
    assert child(dialog, QComboBox, "plannerFixCombo").currentText() == fix["artifact"] == "qwen3-8b-cr13"
    label = child(dialog, QLabel, "plannerFixLabel").text()
    assert f"shrink to kvcache_num_blocks={fix['target']} (now 21" in label
    assert (
        f"memory_budget {fix['memory_budget']['fraction']:g} or {fix['memory_budget']['budget_bytes']:,} bytes" in label
    )
    button = child(dialog, QPushButton, "plannerResizeButton")
    assert button.isEnabled()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    resize = child(dialog, ResizeDialog, "resizeDialog")
    assert resize is not None and resize.isVisible() and resize.artifact.path == cr13_artifact
    assert child(resize, QSpinBox, "resizeTargetSpin").value() == fix["target"] == 20
    assert child(resize, QRadioButton, "resizeByCount").isChecked()
    assert child(resize, QRadioButton, "resizeModeCopy").isChecked()  # a copy unless the user says otherwise
    in_place = child(resize, QRadioButton, "resizeModeInPlace")
    qtbot.mouseClick(in_place, Qt.MouseButton.LeftButton, pos=QPoint(8, in_place.height() // 2))
    writes: list[Job] = []
    window.jobs.jobAdded.connect(lambda job: writes.append(job) if job.writes else None)
    qtbot.mouseClick(child(resize, QPushButton, "resizeApplyButton"), Qt.MouseButton.LeftButton)
    assert len(writes) == 1
    with qtbot.waitSignal(writes[0].succeeded, timeout=20_000):
        pass
    assert json.loads((cr13_artifact / "rbln_config.json").read_text())["kvcache_num_blocks"] == 20
    # The table sees the change and the planner plans again on its own.
    qtbot.waitUntil(lambda: dialog.plan_result is not None and "2 artifacts: fit" in verdict(dialog), timeout=20_000)
    assert_same_figures_as_cli(dialog, cli_plan(run_cli, cr13_artifact, cr13_full))


def test_mixed_families_are_not_comparable(
    qtbot: QtBot,
    window: MainWindow,
    workspace: Path,
    cr13_artifact: Path,
    ca25_artifact: Path,
    run_cli,
) -> None:
    dialog = open_planner(qtbot, window, workspace, [cr13_artifact, ca25_artifact])
    data = cli_plan(run_cli, *dialog.paths)  # the table's order: ATOM first
    assert data["verdict"] == "not comparable"
    text = verdict(dialog)
    assert "2 artifacts: not comparable" in text and "never share an NPU" in text
    assert_same_figures_as_cli(dialog, data)
    titles = [view.title() for view in dialog.family_views]
    assert titles == ["ATOM (RBLN-CA25), 4 NPU(s): fit", "Rebel100 (RBLN-CR13), 1 NPU(s): fit"]
    charts = [view.chart for view in dialog.family_views]
    atom = next(c for c in charts if c.stack is not None and c.stack.family == "ATOM")
    assert [b.label for b in atom.bars()] == ["NPU 0", "NPU 1", "NPU 2", "NPU 3"]
    assert all(len(b.chiplet.shares) == 1 for c in charts for b in c.bars())  # never summed across families


def test_unknown_allocations_give_an_unknown_verdict(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, cr13_artifact: Path, cr13_full: Path
) -> None:
    real = make_real_like(cr13_artifact, tmp_path / "real")
    dialog = open_planner(qtbot, window, tmp_path, [cr13_full, real])
    text = verdict(dialog)
    assert "2 artifacts: unknown" in text and "The plan cannot be computed for real" in text
    child(dialog, QComboBox, "plannerFixCombo").setCurrentText("qwen3-8b-cr13-full")
    assert "unknown" in child(dialog, QLabel, "plannerFixLabel").text()
    assert not child(dialog, QPushButton, "plannerResizeButton").isEnabled()
