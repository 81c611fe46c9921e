"""The resize dialog driven through its widgets: inline validation, preview, in place, to a copy, cancel."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QLabel, QLineEdit, QPushButton, QRadioButton, QSpinBox
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.fleet.artifact import open_artifact
from rbln_artifact_studio.core.fleet.targets import check_target, target_for_budget
from rbln_artifact_studio.core.model.budget import parse_budget
from rbln_artifact_studio.core.simulator.compiler import CompileRequest, plan_compile, write_artifact
from rbln_artifact_studio.gui.dialogs.resize_dialog import ResizeDialog
from rbln_artifact_studio.gui.models.jobs import Job
from rbln_artifact_studio.gui.widgets.dram_chart import DramChart
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder, row_values, select
from .widgets import child


def _type(qtbot: QtBot, widget: QLineEdit | QSpinBox, text: str) -> None:
    edit = widget.lineEdit() if isinstance(widget, QSpinBox) else widget
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Backspace)
    qtbot.keyClicks(edit, text)


def _open_dialog(qtbot: QtBot, window: MainWindow, folder: Path, artifact: Path) -> ResizeDialog:
    open_folder(qtbot, window, folder)
    select(qtbot, window, artifact)
    child(window, type(window.action_resize), "actionResize").trigger()
    dialog = child(window, ResizeDialog, "resizeDialog")
    assert dialog is not None and dialog.isVisible()
    return dialog


def _blocks(artifact: Path) -> int:
    return int(json.loads((artifact / "rbln_config.json").read_text())["kvcache_num_blocks"])


def _apply(qtbot: QtBot, window: MainWindow, dialog: ResizeDialog) -> Job:
    button = child(dialog, QPushButton, "resizeApplyButton")
    assert button.isEnabled()
    with qtbot.waitSignal(window.jobs.jobAdded) as added:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    return added.args[0]


def test_below_the_floor_disables_apply(qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path) -> None:
    dialog = _open_dialog(qtbot, window, workspace, cr13_artifact)
    assert "<b>21</b> · floor <b>9</b> · full pool <b>40</b>" in child(dialog, QLabel, "resizeCurrentLabel").text()
    _type(qtbot, child(dialog, QSpinBox, "resizeTargetSpin"), "5")
    message = child(dialog, QLabel, "resizeMessage").text()
    expected = check_target(open_artifact(cr13_artifact).config, 5).error
    assert (
        expected
        == "kvcache_num_blocks=5 is below the minimum required for the full sequence length (num_min_blocks=9)."
    )
    assert expected in message
    assert not child(dialog, QPushButton, "resizeApplyButton").isEnabled()
    assert child(dialog, QLineEdit, "resizeCommand").text() == ""
    _type(qtbot, child(dialog, QSpinBox, "resizeTargetSpin"), "9")
    assert child(dialog, QPushButton, "resizeApplyButton").isEnabled()


def test_above_current_and_above_the_full_pool_warn(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path
) -> None:
    dialog = _open_dialog(qtbot, window, workspace, cr13_artifact)
    _type(qtbot, child(dialog, QSpinBox, "resizeTargetSpin"), "30")
    message = child(dialog, QLabel, "resizeMessage").text()
    # 30 blocks fit the NPU (the tables say so): no warning contradicts that (issue 16, point 8).
    assert "may fail to allocate" not in message and "✓ 30 blocks" in message
    assert "above the full pool" not in message
    _type(qtbot, child(dialog, QSpinBox, "resizeTargetSpin"), "1000")  # 281 GiB of KV per chiplet
    message = child(dialog, QLabel, "resizeMessage").text()
    assert "kvcache_num_blocks=1000 does not fit RBLN-CR13" in message and "The largest count that fits is" in message
    assert not child(dialog, QPushButton, "resizeApplyButton").isEnabled()
    _type(qtbot, child(dialog, QSpinBox, "resizeTargetSpin"), "45")
    message = child(dialog, QLabel, "resizeMessage").text()
    assert (
        "kvcache_num_blocks=45 is above the full pool (num_full_blocks=40); the excess blocks are never used."
        in message
    )
    assert child(dialog, QPushButton, "resizeApplyButton").isEnabled()
    after = child(dialog, DramChart, "resizeAfterChart").breakdown
    before = child(dialog, DramChart, "resizeBeforeChart").breakdown
    assert before is not None and after is not None and (before.num_blocks, after.num_blocks) == (21, 45)
    assert after.tightest.kv > before.tightest.kv


def test_resize_in_place_updates_the_table(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path
) -> None:
    dialog = _open_dialog(qtbot, window, workspace, cr13_artifact)
    radio = child(dialog, QRadioButton, "resizeModeInPlace")
    qtbot.mouseClick(radio, Qt.MouseButton.LeftButton, pos=QPoint(8, radio.height() // 2))  # on its indicator
    assert not child(dialog, QLineEdit, "resizeOutputEdit").isEnabled()
    _type(qtbot, child(dialog, QSpinBox, "resizeTargetSpin"), "12")
    assert (
        child(dialog, QLineEdit, "resizeCommand").text() == f"rbln-studio-cli set-kvcache-num-blocks {cr13_artifact} 12"
    )
    job = _apply(qtbot, window, dialog)
    with qtbot.waitSignal(job.succeeded, timeout=20_000):
        pass
    assert _blocks(cr13_artifact) == 12
    qtbot.waitUntil(lambda: row_values(window, cr13_artifact)["kvcache_num_blocks"] == "12")
    qtbot.waitUntil(lambda: "kvcache_num_blocks 12 " in child(window, QLabel, "kvBlocksLabel").text())


def test_resize_to_a_copy_beside_the_source(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path
) -> None:
    dialog = _open_dialog(qtbot, window, workspace, cr13_artifact)
    assert child(dialog, QRadioButton, "resizeModeCopy").isChecked()
    _type(qtbot, child(dialog, QSpinBox, "resizeTargetSpin"), "12")
    copy = workspace / "qwen3-8b-cr13-kv12"
    assert child(dialog, QLineEdit, "resizeOutputEdit").text() == str(copy)
    job = _apply(qtbot, window, dialog)
    # The watcher may show the new folder before the job reports; wait for both.
    qtbot.waitUntil(lambda: window.model.row_of(str(copy)) is not None, timeout=20_000)
    qtbot.waitUntil(lambda: job.state.value == "succeeded", timeout=20_000)
    assert row_values(window, copy)["kvcache_num_blocks"] == "12" and _blocks(copy) == 12
    assert row_values(window, cr13_artifact)["kvcache_num_blocks"] == "21" and _blocks(cr13_artifact) == 21


def test_fit_to_budget_resolves_the_target(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path
) -> None:
    dialog = _open_dialog(qtbot, window, workspace, cr13_artifact)
    _type(qtbot, child(dialog, QLineEdit, "resizeBudgetEdit"), "0.2")
    expected = target_for_budget(open_artifact(cr13_artifact), parse_budget("0.2"))
    assert child(dialog, QRadioButton, "resizeByBudget").isChecked()
    assert child(dialog, QSpinBox, "resizeTargetSpin").value() == expected
    copy = workspace / f"qwen3-8b-cr13-kv{expected}"
    assert child(dialog, QLineEdit, "resizeCommand").text() == (
        f"rbln-studio-cli set-memory-budget {cr13_artifact} 0.2 --output-dir {copy}"
    )
    _type(qtbot, child(dialog, QLineEdit, "resizeBudgetEdit"), "0.1")
    message = child(dialog, QLabel, "resizeMessage").text()
    assert "Insufficient memory for the required KV cache" in message
    assert not child(dialog, QPushButton, "resizeApplyButton").isEnabled()


def test_cancel_a_copy_leaves_nothing(qtbot: QtBot, window: MainWindow, tmp_path: Path, tiny_model: Path) -> None:
    folder = tmp_path / "artifacts"
    request = CompileRequest(
        str(tiny_model),
        npu="RBLN-CA25",
        batch_size=2,
        max_seq_len=4096,
        kvcache_partition_len=1024,
        materialize_weights=True,
    )
    source = write_artifact(plan_compile(request), folder / "tiny")
    before = sorted(p.name for p in folder.iterdir())
    dialog = _open_dialog(qtbot, window, folder, source)
    assert _blocks(source) == 8 and (source / "prefill.rbln").stat().st_size > 1 << 20  # materialized weights
    _type(qtbot, child(dialog, QSpinBox, "resizeTargetSpin"), "6")
    output = Path(child(dialog, QLineEdit, "resizeOutputEdit").text())
    assert output == folder / "tiny-kv6"

    staged: list[list[str]] = []

    def cancel_mid_copy(job: Job) -> None:
        if not job.writes:
            return  # rescans and detail reads started by the watcher meanwhile are not the copy

        def on_progress(done: int, total: int, message: str) -> None:
            # Runs in the worker thread (a direct connection), so the copy cannot finish before the cancel.
            if done > 0 and not job.token.cancelled:
                staged.append(sorted(p.name for p in folder.iterdir()))
                job.cancel()

        job.progressed.connect(on_progress, Qt.ConnectionType.DirectConnection)

    window.jobs.jobAdded.connect(cancel_mid_copy)
    job = _apply(qtbot, window, dialog)
    with qtbot.waitSignal(job.cancelled, timeout=20_000):
        pass
    assert len(staged) == 1 and any(".partial-" in name for name in staged[0])  # cancelled while copying
    assert not output.exists()
    assert sorted(p.name for p in folder.iterdir()) == before  # no staging folder left behind
    assert window.model.row_of(str(output)) is None and _blocks(source) == 8
    assert not [w for w in QApplication.topLevelWidgets() if w.objectName() == "errorDialog" and w.isVisible()]
