"""The compile wizard driven through its widgets: inline validation, live preview, Finish to a compiled artifact."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QRadioButton, QSpinBox, QWizard
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.cli.main import build_parser
from rbln_artifact_studio.core.errors import BudgetError
from rbln_artifact_studio.core.model.budget import parse_budget
from rbln_artifact_studio.core.model.npu import get_npu
from rbln_artifact_studio.gui.dialogs.compile_wizard import CompileWizard
from rbln_artifact_studio.gui.widgets.budget_curve import BudgetCurve
from rbln_artifact_studio.gui.widgets.dram_chart import DramChart
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import click_next, open_folder, row_values, type_text
from .widgets import child


def _open_wizard(qtbot: QtBot, window: MainWindow) -> CompileWizard:
    child(window, type(window.action_compile), "actionCompile").trigger()
    wizard = child(window, CompileWizard, "compileWizard")
    assert wizard is not None and wizard.isVisible()
    qtbot.waitUntil(lambda: wizard.button(QWizard.WizardButton.NextButton).isEnabled())  # preset read in a worker
    return wizard


def _to_sizing_page(qtbot: QtBot, wizard: CompileWizard, npu: str = "RBLN-CR13") -> None:
    assert child(wizard, QComboBox, "wizardPresetCombo").currentText() == "Qwen/Qwen3-8B"
    assert "36 layers" in child(wizard, QLabel, "wizardModelStatus").text()
    click_next(qtbot, wizard)
    combo = child(wizard, QComboBox, "wizardNpuCombo")
    combo.setCurrentIndex(combo.findData(npu))
    click_next(qtbot, wizard)
    assert child(wizard, QSpinBox, "wizardMaxSeqLenSpin").value() == 40_960  # the model's maximum
    type_text(qtbot, child(wizard, QSpinBox, "wizardBatchSpin"), "8")
    type_text(qtbot, child(wizard, QSpinBox, "wizardPartitionSpin"), "8192")
    assert "floor 9 blocks, full pool 40 blocks" in child(wizard, QLabel, "wizardShapeMessage").text()
    click_next(qtbot, wizard)


def test_wizard_compiles_an_artifact_that_appears_in_the_table(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    open_folder(qtbot, window, tmp_path)
    wizard = _open_wizard(qtbot, window)
    _to_sizing_page(qtbot, wizard)
    type_text(qtbot, child(wizard, QLineEdit, "wizardBudgetEdit"), "0.3")
    preview = child(wizard, QLabel, "wizardPreviewLabel").text()
    assert "kvcache_num_blocks 21</b> (floor 9, full pool 40)" in preview
    chart = child(wizard, DramChart, "wizardDramChart")
    assert chart.breakdown is not None and chart.breakdown.num_blocks == 21 and len(chart.bars()) == 4
    curve = child(wizard, BudgetCurve, "wizardBudgetCurve")
    assert (curve.floor, curve.full, curve.blocks) == (9, 40, 21)
    cr13 = get_npu("RBLN-CR13")
    assert curve.budget == parse_budget("0.3").bytes_per_npu(cr13)
    assert [p.blocks for p in curve.points] == list(range(1, 41)) and curve.available == cr13.available_per_npu
    click_next(qtbot, wizard)

    output = tmp_path / "qwen3-8b-rbln-cr13-kv21"
    assert child(wizard, QLineEdit, "wizardOutputEdit").text() == str(output)
    command = child(wizard, QLineEdit, "wizardCommand").text()
    args = build_parser().parse_args(shlex.split(command)[1:])
    assert (args.npu, args.batch_size, args.max_seq_len, args.kvcache_partition_len, args.memory_budget) == (
        "RBLN-CR13",
        8,
        40_960,
        8192,
        "0.3",
    )
    with qtbot.waitSignal(window.jobs.jobAdded) as added:
        qtbot.mouseClick(wizard.button(QWizard.WizardButton.FinishButton), Qt.MouseButton.LeftButton)
    job = added.args[0]
    qtbot.waitUntil(lambda: job.state.ended, timeout=20_000)  # the watcher may show the row before the job reports
    assert job.state.value == "succeeded", job.failure
    qtbot.waitUntil(lambda: window.model.row_of(str(output)) is not None, timeout=20_000)
    assert row_values(window, output)["kvcache_num_blocks"] == "21"
    assert json.loads((output / "rbln_config.json").read_text())["kvcache_num_blocks"] == 21
    qtbot.waitUntil(lambda: window.artifact is not None and window.artifact.path == output)


def test_sizing_validates_as_the_user_types(qtbot: QtBot, window: MainWindow) -> None:
    wizard = _open_wizard(qtbot, window)
    _to_sizing_page(qtbot, wizard)
    budget = child(wizard, QLineEdit, "wizardBudgetEdit")
    blocks = child(wizard, QSpinBox, "wizardBlocksSpin")
    preview = child(wizard, QLabel, "wizardPreviewLabel")
    next_button = wizard.button(QWizard.WizardButton.NextButton)

    type_text(qtbot, budget, "0.195")
    assert "only 8 blocks can be allocated, but at least 9 blocks are required" in preview.text()
    assert "a memory_budget of at least 0.1995" in preview.text()
    assert not next_button.isEnabled()
    curve = child(wizard, BudgetCurve, "wizardBudgetCurve")
    assert curve.points and curve.blocks is None  # the curve still shows where the floor would be reached

    type_text(qtbot, budget, "1.5")
    try:
        parse_budget("1.5")
    except BudgetError as exc:
        assert str(exc) in preview.text()
    assert "must be in (0, 1]" in preview.text() and not next_button.isEnabled()

    type_text(qtbot, budget, "")
    assert "kvcache_num_blocks 40</b>" in preview.text() and next_button.isEnabled()  # unset: the whole NPU

    type_text(qtbot, budget, "0.3")
    explicit = child(wizard, QRadioButton, "wizardExplicitRadio")
    qtbot.mouseClick(explicit, Qt.MouseButton.LeftButton)
    assert not budget.isEnabled() and blocks.isEnabled() and blocks.value() == 21  # exclusive by construction
    type_text(qtbot, blocks, "5")
    assert "kvcache_num_blocks=5 is below the minimum required for the full sequence length (num_min_blocks=9)." in (
        preview.text()
    )
    assert not next_button.isEnabled()
    type_text(qtbot, blocks, "45")
    assert "above the full pool" in preview.text() and next_button.isEnabled()
    assert wizard.request().memory_budget is None and wizard.request().kvcache_num_blocks == 45  # type: ignore[union-attr]


def test_shape_errors_are_the_cores_messages(qtbot: QtBot, window: MainWindow) -> None:
    wizard = _open_wizard(qtbot, window)
    click_next(qtbot, wizard)
    combo = child(wizard, QComboBox, "wizardNpuCombo")
    combo.setCurrentIndex(combo.findData("RBLN-CR13"))
    click_next(qtbot, wizard)
    message = child(wizard, QLabel, "wizardShapeMessage")
    type_text(qtbot, child(wizard, QSpinBox, "wizardPartitionSpin"), "5000")
    assert "Flash attention needs max_seq_len to be a multiple of kvcache_partition_len" in message.text()
    assert not wizard.button(QWizard.WizardButton.NextButton).isEnabled()
    type_text(qtbot, child(wizard, QSpinBox, "wizardPartitionSpin"), "32768")
    assert "kvcache_partition_len on Rebel100 must be in [1,024, 16,384], got 32,768." in message.text()
    type_text(qtbot, child(wizard, QSpinBox, "wizardChunkSpin"), "100")
    child(wizard, QSpinBox, "wizardPartitionSpin").setValue(0)
    assert "prefill_chunk_size must be a positive multiple of 64, got 100." in message.text()


def test_a_local_model_folder_is_read_in_a_worker(
    qtbot: QtBot, window: MainWindow, tiny_model: Path, tmp_path: Path
) -> None:
    wizard = _open_wizard(qtbot, window)
    status = child(wizard, QLabel, "wizardModelStatus")
    edit = child(wizard, QLineEdit, "wizardModelEdit")
    qtbot.keyClicks(edit, str(tmp_path / "missing"))
    qtbot.waitUntil(lambda: "No local folder" in status.text())
    assert not wizard.button(QWizard.WizardButton.NextButton).isEnabled()
    type_text(qtbot, edit, str(tiny_model))
    qtbot.waitUntil(lambda: wizard.button(QWizard.WizardButton.NextButton).isEnabled())
    assert "LlamaForCausalLM: 2 layers" in status.text() and child(wizard, QRadioButton, "wizardLocalRadio").isChecked()
