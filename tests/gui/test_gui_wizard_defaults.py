"""The compile wizard's defaults work (Next to Finish compiles), every listed fix is one click, fields never lie."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QPushButton, QRadioButton, QSpinBox, QWizard
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.dialogs.compile_wizard import CompileWizard
from rbln_artifact_studio.gui.widgets.fix_buttons import FixButtons
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import click_next, open_folder, type_text
from .widgets import child


def _open(qtbot: QtBot, window: MainWindow) -> CompileWizard:
    wizard = window.dialogs.open_compile_wizard()
    qtbot.waitUntil(lambda: wizard.button(QWizard.WizardButton.NextButton).isEnabled())  # preset read in a worker
    return wizard


def _fix(wizard: CompileWizard, name: str, label: str) -> QPushButton:
    fixes = child(wizard, FixButtons, name)
    assert fixes.isVisible(), f"{name} offers no fix"
    by_label = {b.text(): b for b in fixes.buttons}
    assert label in by_label, f"{label!r} not among {list(by_label)}"
    return by_label[label]


def _message(wizard: CompileWizard, name: str) -> str:
    return child(wizard, QLabel, name).text()


def test_next_next_next_finish_compiles_the_first_preset(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    open_folder(qtbot, window, tmp_path)
    wizard = _open(qtbot, window)
    assert child(wizard, QComboBox, "wizardPresetCombo").currentText() == "Qwen/Qwen3-8B"
    click_next(qtbot, wizard)
    # The target page: ATOM-Max by default, and the fewest of them that hold 16 GB of weights, with the numbers.
    assert wizard.target_page.npu() == "RBLN-CA25"
    assert child(wizard, QSpinBox, "wizardDevicesSpin").value() == 2
    sizing = _message(wizard, "wizardDevicesInfo")
    assert "2 x RBLN-CA25 hold Qwen/Qwen3-8B: 7.63 GiB of weights" in sizing
    assert "of 15.72 GiB per NPU" in sizing and "One RBLN-CA25 would need 21.04 GiB per NPU" in sizing
    info = _message(wizard, "wizardTargetInfo")
    assert info.startswith("RBLN-CA25 (ATOM-Max), an NPU of the ATOM family: 16 GiB DRAM")
    click_next(qtbot, wizard)
    # The shape page opens valid: a partition length that divides the model's 40,960 tokens.
    assert child(wizard, QSpinBox, "wizardPartitionSpin").value() == 8192
    assert "✓" in _message(wizard, "wizardShapeMessage")
    click_next(qtbot, wizard)
    assert "kvcache_num_blocks 5</b> (floor 5, full pool 5)" in _message(wizard, "wizardPreviewLabel")
    click_next(qtbot, wizard)
    output = Path(child(wizard, QLineEdit, "wizardOutputEdit").text())
    with qtbot.waitSignal(window.jobs.jobAdded) as added:
        qtbot.mouseClick(wizard.button(QWizard.WizardButton.FinishButton), Qt.MouseButton.LeftButton)
    job = added.args[0]
    qtbot.waitUntil(lambda: job.state.ended, timeout=20_000)
    assert job.state.value == "succeeded", job.failure
    config = json.loads((output / "rbln_config.json").read_text())
    assert (config["npu"], config["num_devices"], config["kvcache_partition_len"]) == ("RBLN-CA25", 2, 8192)
    assert (config["max_seq_len"], config["kvcache_num_blocks"]) == (40_960, 5)


def test_defaults_follow_the_target(qtbot: QtBot, window: MainWindow) -> None:
    wizard = _open(qtbot, window)
    click_next(qtbot, wizard)
    wizard.target_page.set_npu("RBLN-CR13")  # 140 GiB: one holds Qwen3-8B
    assert child(wizard, QSpinBox, "wizardDevicesSpin").value() == 1
    assert "One RBLN-CR13 holds Qwen/Qwen3-8B" in _message(wizard, "wizardDevicesInfo")
    wizard.target_page.set_npu("RBLN-CA02")
    assert child(wizard, QSpinBox, "wizardDevicesSpin").value() == 2
    # A count the user typed is kept, and the page says what it means.
    type_text(qtbot, child(wizard, QSpinBox, "wizardDevicesSpin"), "1")
    wizard.target_page.set_npu("RBLN-CA25")
    assert child(wizard, QSpinBox, "wizardDevicesSpin").value() == 1
    assert "One RBLN-CA25 cannot hold Qwen/Qwen3-8B" in _message(wizard, "wizardDevicesInfo")
    assert "The fewest that do: 2" in _message(wizard, "wizardDevicesInfo")
    qtbot.mouseClick(_fix(wizard, "wizardTargetFixes", "num_devices 2"), Qt.MouseButton.LeftButton)
    assert child(wizard, QSpinBox, "wizardDevicesSpin").value() == 2
    assert "2 x RBLN-CA25 hold Qwen/Qwen3-8B" in _message(wizard, "wizardDevicesInfo")
    assert not child(wizard, FixButtons, "wizardTargetFixes").isVisible()


def test_the_partition_error_offers_each_length_that_fits(qtbot: QtBot, window: MainWindow) -> None:
    wizard = _open(qtbot, window)
    click_next(qtbot, wizard)
    click_next(qtbot, wizard)
    type_text(qtbot, child(wizard, QSpinBox, "wizardPartitionSpin"), "16384")
    assert "Partition lengths that fit: 1,024, 2,048, 4,096, 8,192" in _message(wizard, "wizardShapeMessage")
    assert not wizard.button(QWizard.WizardButton.NextButton).isEnabled()
    fixes = child(wizard, FixButtons, "wizardShapeFixes")
    assert [b.text() for b in fixes.buttons] == [
        f"kvcache_partition_len {n}" for n in ("1,024", "2,048", "4,096", "8,192")
    ]
    qtbot.mouseClick(_fix(wizard, "wizardShapeFixes", "kvcache_partition_len 4,096"), Qt.MouseButton.LeftButton)
    assert child(wizard, QSpinBox, "wizardPartitionSpin").value() == 4096
    assert "✓ flash_attn, KV block size 4,096" in _message(wizard, "wizardShapeMessage")
    assert not fixes.isVisible() and wizard.button(QWizard.WizardButton.NextButton).isEnabled()


def test_eager_too_long_offers_flash_or_a_shorter_length(qtbot: QtBot, window: MainWindow) -> None:
    wizard = _open(qtbot, window)
    click_next(qtbot, wizard)
    click_next(qtbot, wizard)
    combo = child(wizard, QComboBox, "wizardAttnCombo")
    combo.setCurrentIndex(combo.findData("eager"))
    assert "Eager attention on ATOM needs max_seq_len &lt;= 32,768" in _message(wizard, "wizardShapeMessage")
    qtbot.mouseClick(_fix(wizard, "wizardShapeFixes", "max_seq_len 32,768"), Qt.MouseButton.LeftButton)
    assert child(wizard, QSpinBox, "wizardMaxSeqLenSpin").value() == 32_768
    assert "✓ eager" in _message(wizard, "wizardShapeMessage")
    type_text(qtbot, child(wizard, QSpinBox, "wizardMaxSeqLenSpin"), "40960")
    qtbot.mouseClick(
        _fix(wizard, "wizardShapeFixes", "flash_attn with kvcache_partition_len 8,192"), Qt.MouseButton.LeftButton
    )
    assert combo.currentData() == "flash_attn" and "✓ flash_attn, KV block size 8,192" in _message(
        wizard, "wizardShapeMessage"
    )


def _to_sizing_cr13_batch8(qtbot: QtBot, wizard: CompileWizard) -> None:
    click_next(qtbot, wizard)
    wizard.target_page.set_npu("RBLN-CR13")
    click_next(qtbot, wizard)
    type_text(qtbot, child(wizard, QSpinBox, "wizardBatchSpin"), "8")
    click_next(qtbot, wizard)


def test_a_budget_below_the_floor_offers_the_budget_and_the_batch_that_fit(qtbot: QtBot, window: MainWindow) -> None:
    wizard = _open(qtbot, window)
    _to_sizing_cr13_batch8(qtbot, wizard)
    budget = child(wizard, QLineEdit, "wizardBudgetEdit")
    type_text(qtbot, budget, "0.195")
    assert "only 8 blocks can be allocated, but at least 9" in _message(wizard, "wizardPreviewLabel")
    qtbot.mouseClick(_fix(wizard, "wizardSizingFixes", "memory_budget 0.1995"), Qt.MouseButton.LeftButton)
    assert budget.text() == "0.1995"
    assert "kvcache_num_blocks 9</b>" in _message(wizard, "wizardPreviewLabel")
    assert wizard.button(QWizard.WizardButton.NextButton).isEnabled()
    type_text(qtbot, budget, "0.195")
    qtbot.mouseClick(_fix(wizard, "wizardSizingFixes", "batch_size 7"), Qt.MouseButton.LeftButton)
    assert child(wizard, QSpinBox, "wizardBatchSpin").value() == 7
    assert "(floor 8, full pool 35)" in _message(wizard, "wizardPreviewLabel")


def test_a_budget_smaller_than_the_weights_says_so_with_both_numbers(qtbot: QtBot, window: MainWindow) -> None:
    wizard = _open(qtbot, window)
    _to_sizing_cr13_batch8(qtbot, wizard)
    type_text(qtbot, child(wizard, QLineEdit, "wizardBudgetEdit"), "0.01")
    text = _message(wizard, "wizardPreviewLabel")
    assert "the weights alone, 15.27 GiB (16,391,340,032 B) per NPU, exceed the memory_budget of 1.4 GiB" in text
    assert "only 1 blocks" not in text and not wizard.button(QWizard.WizardButton.NextButton).isEnabled()
    qtbot.mouseClick(_fix(wizard, "wizardSizingFixes", "memory_budget 0.1995"), Qt.MouseButton.LeftButton)
    assert wizard.button(QWizard.WizardButton.NextButton).isEnabled()


def test_too_few_devices_offers_the_fewest_that_fit(qtbot: QtBot, window: MainWindow) -> None:
    wizard = _open(qtbot, window)
    click_next(qtbot, wizard)
    type_text(qtbot, child(wizard, QSpinBox, "wizardDevicesSpin"), "1")
    click_next(qtbot, wizard)
    click_next(qtbot, wizard)
    assert "use more devices" in _message(wizard, "wizardPreviewLabel")
    qtbot.mouseClick(_fix(wizard, "wizardSizingFixes", "num_devices 2"), Qt.MouseButton.LeftButton)
    assert child(wizard, QSpinBox, "wizardDevicesSpin").value() == 2
    assert "kvcache_num_blocks 5</b>" in _message(wizard, "wizardPreviewLabel")


def test_an_explicit_count_of_0_or_nothing_is_an_error_not_the_last_good_count(
    qtbot: QtBot, window: MainWindow
) -> None:
    wizard = _open(qtbot, window)
    _to_sizing_cr13_batch8(qtbot, wizard)
    qtbot.mouseClick(child(wizard, QRadioButton, "wizardExplicitRadio"), Qt.MouseButton.LeftButton)
    spin = child(wizard, QSpinBox, "wizardBlocksSpin")
    next_button = wizard.button(QWizard.WizardButton.NextButton)
    type_text(qtbot, spin, "20")
    assert "kvcache_num_blocks 20</b>" in _message(wizard, "wizardPreviewLabel") and next_button.isEnabled()
    type_text(qtbot, spin, "0")
    assert "kvcache_num_blocks must be a positive integer, got 0" in _message(wizard, "wizardPreviewLabel")
    assert not next_button.isEnabled() and wizard.request().kvcache_num_blocks == 0  # type: ignore[union-attr]
    assert wizard.plan() is None
    qtbot.mouseClick(wizard.button(QWizard.WizardButton.BackButton), Qt.MouseButton.LeftButton)
    click_next(qtbot, wizard)
    assert spin.text() == "0" and not next_button.isEnabled()  # still what was typed, still an error
    spin.setFocus()
    spin.lineEdit().selectAll()
    qtbot.keyClick(spin.lineEdit(), Qt.Key.Key_Backspace)
    assert spin.text() == "" and "kvcache_num_blocks is empty" in _message(wizard, "wizardPreviewLabel")
    assert not next_button.isEnabled()


def test_an_emptied_shape_field_is_an_error(qtbot: QtBot, window: MainWindow) -> None:
    wizard = _open(qtbot, window)
    click_next(qtbot, wizard)
    click_next(qtbot, wizard)
    batch = child(wizard, QSpinBox, "wizardBatchSpin")
    batch.setFocus()
    batch.lineEdit().selectAll()
    qtbot.keyClick(batch.lineEdit(), Qt.Key.Key_Backspace)
    assert batch.text() == "" and "batch_size is empty" in _message(wizard, "wizardShapeMessage")
    assert not wizard.button(QWizard.WizardButton.NextButton).isEnabled()
    type_text(qtbot, batch, "0")
    assert "batch_size must be a positive integer, got 0" in _message(wizard, "wizardShapeMessage")


def test_an_impossible_budget_also_offers_the_devices_that_hold_it(qtbot: QtBot, window: MainWindow) -> None:
    """Issue 33: more devices each hold less, so a budget too small for one NPU may fit on more; and the
    optimum-rbln wording's `names` read as code, not as raw backticks."""
    wizard = _open(qtbot, window)
    _to_sizing_cr13_batch8(qtbot, wizard)
    type_text(qtbot, child(wizard, QLineEdit, "wizardBudgetEdit"), "0.15")
    text = _message(wizard, "wizardPreviewLabel")
    assert "only 2 blocks can be allocated" in text and "use more devices: num_devices 2 would hold it" in text
    assert "`" not in text and "<code>max_seq_len</code>" in text
    assert [b.text() for b in child(wizard, FixButtons, "wizardSizingFixes").buttons] == [
        "memory_budget 0.1995",
        "num_devices 2",
    ]
    qtbot.mouseClick(_fix(wizard, "wizardSizingFixes", "num_devices 2"), Qt.MouseButton.LeftButton)
    assert child(wizard, QSpinBox, "wizardDevicesSpin").value() == 2
    assert child(wizard, QLineEdit, "wizardBudgetEdit").text() == "0.15"  # the budget stays as typed
    assert "kvcache_num_blocks 19</b>" in _message(wizard, "wizardPreviewLabel")
    assert wizard.button(QWizard.WizardButton.NextButton).isEnabled()
