"""The compile wizard remembers every choice (issue 43 item 1): model, shape, backend, budget and the output's folder
come back on the next start, and each page's summary follows its fields after going back and forth."""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QSpinBox, QWizard
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.backends.choice import BackendChoice
from rbln_artifact_studio.core.estimation.estimator import SequenceShape
from rbln_artifact_studio.core.simulator.compiler import resolve_shape
from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.dialogs.compile_wizard import CompileWizard
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import _stop_jobs, click_next, type_text
from .widgets import child, present


def _wizard(qtbot: QtBot, window: MainWindow) -> CompileWizard:
    wizard = window.dialogs.open_compile_wizard()
    qtbot.waitUntil(lambda: wizard.button(QWizard.WizardButton.NextButton).isEnabled())  # the model is read
    return wizard


def _back(qtbot: QtBot, wizard: CompileWizard) -> None:
    qtbot.mouseClick(wizard.button(QWizard.WizardButton.BackButton), Qt.MouseButton.LeftButton)


def _choose_preset(qtbot: QtBot, wizard: CompileWizard, model_id: str) -> None:
    combo = child(wizard, QComboBox, "wizardPresetCombo")
    combo.setCurrentIndex(combo.findText(model_id))
    qtbot.waitUntil(lambda: wizard.model is not None and wizard.model.model_id == model_id)


def _shape_says_its_fields(wizard: CompileWizard) -> None:
    """The Shape page's summary names the floor and full pool of the shape its fields describe."""
    request, model = present(wizard.request()), present(wizard.model)
    shape = resolve_shape(request, model)
    seq = SequenceShape(shape.batch_size, shape.max_seq_len, shape.block_size, shape.attn)
    message = child(wizard, QLabel, "wizardShapeMessage").text()
    found = re.search(r"floor (\d+) blocks, full pool (\d+) blocks", message)
    assert found is not None, message
    assert (int(found[1]), int(found[2])) == (seq.floor, seq.full), (message, request)


def test_the_shape_summary_follows_a_model_changed_on_the_way_back(qtbot: QtBot, window: MainWindow) -> None:
    wizard = _wizard(qtbot, window)
    click_next(qtbot, wizard)
    click_next(qtbot, wizard)  # the Shape page, of Qwen3-8B
    _shape_says_its_fields(wizard)
    _back(qtbot, wizard)
    _back(qtbot, wizard)
    _choose_preset(qtbot, wizard, "meta-llama/Llama-3.2-1B")
    click_next(qtbot, wizard)
    click_next(qtbot, wizard)
    assert child(wizard, QSpinBox, "wizardMaxSeqLenSpin").value() == 131_072  # the new model's own maximum
    _shape_says_its_fields(wizard)
    _back(qtbot, wizard)  # the Target page, then Shape again with another batch typed on the way
    click_next(qtbot, wizard)
    type_text(qtbot, child(wizard, QSpinBox, "wizardBatchSpin"), "4")
    _shape_says_its_fields(wizard)
    click_next(qtbot, wizard)
    _sizing_and_output_say_their_fields(wizard)
    _back(qtbot, wizard)
    _shape_says_its_fields(wizard)
    wizard.reject()


def _sizing_and_output_say_their_fields(wizard: CompileWizard) -> None:
    """The Sizing page's preview and the Output page's summary name the floor and full pool of the fields' shape."""
    request, model = present(wizard.request()), present(wizard.model)
    shape = resolve_shape(request, model)
    seq = SequenceShape(shape.batch_size, shape.max_seq_len, shape.block_size, shape.attn)
    preview = child(wizard, QLabel, "wizardPreviewLabel").text()
    assert f"(floor {seq.floor}, full pool {seq.full})" in preview, preview
    wizard.next()
    summary = child(wizard, QLabel, "wizardSummary").text()
    assert f"(floor {seq.floor}, full pool {seq.full})" in summary and f"batch {shape.batch_size}," in summary
    wizard.back()


def test_every_choice_comes_back_on_the_next_start(
    qtbot: QtBot, window: MainWindow, settings: Settings, tmp_path: Path
) -> None:
    wizard = _wizard(qtbot, window)
    _choose_preset(qtbot, wizard, "meta-llama/Llama-3.2-1B")
    click_next(qtbot, wizard)
    wizard.target_page.set_npu("RBLN-CR13")
    wizard.target_page.set_backend(BackendChoice.SIM)
    click_next(qtbot, wizard)
    type_text(qtbot, child(wizard, QSpinBox, "wizardBatchSpin"), "2")
    type_text(qtbot, child(wizard, QSpinBox, "wizardMaxSeqLenSpin"), "8192")
    click_next(qtbot, wizard)
    type_text(qtbot, child(wizard, QLineEdit, "wizardBudgetEdit"), "0.4")
    click_next(qtbot, wizard)
    outputs = tmp_path / "compiled"
    outputs.mkdir()
    type_text(qtbot, child(wizard, QLineEdit, "wizardOutputEdit"), str(outputs / "first"))
    with qtbot.waitSignal(window.jobs.jobAdded) as added:
        qtbot.mouseClick(wizard.button(QWizard.WizardButton.FinishButton), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: added.args[0].state.ended, timeout=30_000)
    window.close()

    fresh = Settings(QSettings(settings.file_name(), QSettings.Format.IniFormat))  # what the next process reads
    again = MainWindow(fresh, debounce_ms=50)
    qtbot.addWidget(again, before_close_func=lambda w: _stop_jobs(qtbot, w))
    wizard = _wizard(qtbot, again)
    assert child(wizard, QComboBox, "wizardPresetCombo").currentText() == "meta-llama/Llama-3.2-1B"
    click_next(qtbot, wizard)
    assert wizard.target_page.npu() == "RBLN-CR13" and wizard.target_page.backend() == BackendChoice.SIM
    click_next(qtbot, wizard)
    assert child(wizard, QSpinBox, "wizardBatchSpin").value() == 2
    assert child(wizard, QSpinBox, "wizardMaxSeqLenSpin").value() == 8192
    _shape_says_its_fields(wizard)
    click_next(qtbot, wizard)
    assert child(wizard, QLineEdit, "wizardBudgetEdit").text() == "0.4"
    click_next(qtbot, wizard)
    assert Path(child(wizard, QLineEdit, "wizardOutputEdit").text()).parent == outputs
    wizard.reject()


def test_a_model_folder_comes_back_too(qtbot: QtBot, window: MainWindow, settings: Settings, tmp_path: Path) -> None:
    settings.choices.set("wizard", {"model_id": str(tmp_path / "gone"), "backend": "sim"})
    wizard = _wizard_any(qtbot, window)
    assert child(wizard, QLineEdit, "wizardModelEdit").text() == str(tmp_path / "gone")
    qtbot.waitUntil(lambda: "✖" in child(wizard, QLabel, "wizardModelStatus").text())  # said, not replaced
    wizard.reject()


def _wizard_any(qtbot: QtBot, window: MainWindow) -> CompileWizard:
    wizard = window.dialogs.open_compile_wizard()
    qtbot.waitExposed(wizard)
    return wizard
