"""The compile wizard's backend choice: detected in a job, optimum disabled with the reason, compiles through it."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from fakes.helpers import argv_runs
from fakes.install import FakeToolchain
from PySide6.QtCore import Qt
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QSpinBox, QWizard
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.cli.main import build_parser
from rbln_artifact_studio.gui.dialogs.compile_wizard import CompileWizard
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import click_next, open_folder, row_values, type_text
from .widgets import child

pytest_plugins = ["fakes.plugin"]


def _to_target_page(qtbot: QtBot, window: MainWindow, model: Path) -> CompileWizard:
    wizard = window.dialogs.open_compile_wizard()
    type_text(qtbot, child(wizard, QLineEdit, "wizardModelEdit"), str(model))
    qtbot.waitUntil(lambda: wizard.button(QWizard.WizardButton.NextButton).isEnabled(), timeout=10_000)
    click_next(qtbot, wizard)
    return wizard


def _optimum_item_enabled(combo: QComboBox) -> bool:
    model = combo.model()
    assert isinstance(model, QStandardItemModel)
    return model.item(combo.findData("optimum")).isEnabled()


def _to_output_page(qtbot: QtBot, wizard: CompileWizard) -> None:
    """The tiny model on one ATOM-Max: block 1,024, batch 2 (floor 9, full pool 16); a budget of 0.5 fits all 16."""
    combo = child(wizard, QComboBox, "wizardNpuCombo")
    combo.setCurrentIndex(combo.findData("RBLN-CA25"))
    click_next(qtbot, wizard)
    type_text(qtbot, child(wizard, QSpinBox, "wizardBatchSpin"), "2")
    type_text(qtbot, child(wizard, QSpinBox, "wizardMaxSeqLenSpin"), "8192")
    type_text(qtbot, child(wizard, QSpinBox, "wizardPartitionSpin"), "1024")
    click_next(qtbot, wizard)
    type_text(qtbot, child(wizard, QLineEdit, "wizardBudgetEdit"), "0.5")
    assert "kvcache_num_blocks 16</b> (floor 9, full pool 16)" in child(wizard, QLabel, "wizardPreviewLabel").text()
    click_next(qtbot, wizard)


def test_without_optimum_the_choice_is_disabled_with_the_reason(
    qtbot: QtBot, window: MainWindow, no_toolchain: None, tiny_model: Path, tmp_path: Path
) -> None:
    open_folder(qtbot, window, tmp_path)
    wizard = _to_target_page(qtbot, window, tiny_model)
    combo = child(wizard, QComboBox, "wizardBackendCombo")
    info = child(wizard, QLabel, "wizardBackendInfo")
    qtbot.waitUntil(lambda: not window.backend_status.detecting, timeout=20_000)
    assert not _optimum_item_enabled(combo)
    assert combo.itemText(combo.findData("optimum")) == "optimum-rbln-cli (not available)"
    assert "optimum-rbln-cli is not available: optimum-rbln-cli not found on PATH" in info.text()
    assert "runs with <b>the built-in simulator</b>" in info.text()
    combo.setCurrentIndex(combo.findData("sim"))
    _to_output_page(qtbot, wizard)
    command = shlex.split(child(wizard, QLineEdit, "wizardCommand").text())
    assert command[command.index("--backend") + 1] == "sim" and build_parser().parse_args(command[1:]).backend == "sim"
    with qtbot.waitSignal(window.jobs.jobAdded) as added:
        qtbot.mouseClick(wizard.button(QWizard.WizardButton.FinishButton), Qt.MouseButton.LeftButton)
    job = added.args[0]
    qtbot.waitUntil(lambda: job.state.ended, timeout=20_000)
    assert job.state.value == "succeeded" and job.result.backend == "sim"


def test_a_wizard_compile_runs_through_optimum_rbln_cli(
    qtbot: QtBot, window: MainWindow, argv_log: Path, toolchain: FakeToolchain, tiny_model: Path, tmp_path: Path
) -> None:
    open_folder(qtbot, window, tmp_path)
    wizard = window.dialogs.open_compile_wizard()
    combo = child(wizard, QComboBox, "wizardBackendCombo")
    info = child(wizard, QLabel, "wizardBackendInfo")
    assert not _optimum_item_enabled(combo) and "Detecting the backends…" in info.text()  # answered by a job
    qtbot.waitUntil(lambda: _optimum_item_enabled(combo), timeout=20_000)
    type_text(qtbot, child(wizard, QLineEdit, "wizardModelEdit"), str(tiny_model))
    qtbot.waitUntil(lambda: wizard.button(QWizard.WizardButton.NextButton).isEnabled(), timeout=10_000)
    click_next(qtbot, wizard)
    assert combo.itemText(combo.findData("optimum")) == "optimum-rbln-cli 0.12.0"
    assert str(toolchain.path_dir) in info.text() and "runs with <b>optimum-rbln-cli</b>" in info.text()
    combo.setCurrentIndex(combo.findData("optimum"))
    _to_output_page(qtbot, wizard)

    output = Path(child(wizard, QLineEdit, "wizardOutputEdit").text())
    assert output.parent == tmp_path
    assert "Compiled by optimum-rbln-cli" in child(wizard, QLabel, "wizardSummary").text()
    command = shlex.split(child(wizard, QLineEdit, "wizardCommand").text())
    assert build_parser().parse_args(command[1:]).backend == "optimum"
    with qtbot.waitSignal(window.jobs.jobAdded) as added:
        qtbot.mouseClick(wizard.button(QWizard.WizardButton.FinishButton), Qt.MouseButton.LeftButton)
    job = added.args[0]
    qtbot.waitUntil(lambda: job.state.ended, timeout=30_000)
    assert job.state.value == "succeeded", job.failure
    assert job.result.backend == "optimum" and job.result.path == output

    runs = [argv for argv in argv_runs(argv_log) if argv != ["--version"]]
    assert len(runs) == 1 and runs[0][runs[0].index("--model-id") + 1] == str(tiny_model)
    assert runs[0][runs[0].index("--memory-budget") + 1] == "0.5"
    assert "🚀 Starting compilation" in job.log_lines  # the tool's output, streamed into the job log
    assert json.loads((output / "rbln_config.json").read_text())["kvcache_num_blocks"] == 16
    qtbot.waitUntil(lambda: window.model.row_of(str(output)) is not None, timeout=10_000)
    assert row_values(window, output)["kvcache_num_blocks"] == "16"
