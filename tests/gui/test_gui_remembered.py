"""Choices remembered (issue 33 item 2): the wizard's last target, shape and budget; the last bucket and prefix in a
dialog wide enough for its endpoint; Open Recent for folders, servers and buckets; a first start's next steps."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QComboBox, QLineEdit, QRadioButton, QSpinBox, QWizard
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.location import BucketPrefix
from rbln_artifact_studio.gui.app.settings import ServerEntry, Settings
from rbln_artifact_studio.gui.app.theme import Theme, system_palette
from rbln_artifact_studio.gui.dialogs import bucket_dialog
from rbln_artifact_studio.gui.dialogs.bucket_dialog import BucketDialog
from rbln_artifact_studio.gui.dialogs.compile_wizard import CompileWizard
from rbln_artifact_studio.gui.models.jobs import Job, JobManager
from rbln_artifact_studio.gui.window import folder_control
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import _stop_jobs, click_next, open_folder, type_text
from .layout_audit import audit
from .test_gui_small_screen import SMALL, on_small_screen
from .widgets import child, present


@pytest.fixture(autouse=True)
def _desktop_palette_afterwards() -> Iterator[None]:
    system_palette()
    yield
    QApplication.setPalette(system_palette())


def _wizard(qtbot: QtBot, window: MainWindow) -> CompileWizard:
    wizard = window.dialogs.open_compile_wizard()
    qtbot.waitUntil(lambda: wizard.button(QWizard.WizardButton.NextButton).isEnabled())  # the preset is read
    return wizard


def test_the_wizard_starts_from_the_last_target_shape_and_budget(
    qtbot: QtBot, window: MainWindow, settings: Settings, tmp_path: Path
) -> None:
    open_folder(qtbot, window, tmp_path)
    wizard = _wizard(qtbot, window)
    click_next(qtbot, wizard)
    wizard.target_page.set_npu("RBLN-CR13")
    type_text(qtbot, child(wizard, QSpinBox, "wizardDevicesSpin"), "2")
    click_next(qtbot, wizard)
    type_text(qtbot, child(wizard, QSpinBox, "wizardBatchSpin"), "4")
    type_text(qtbot, child(wizard, QSpinBox, "wizardMaxSeqLenSpin"), "16384")
    partition = child(wizard, QSpinBox, "wizardPartitionSpin").value()
    attn = child(wizard, QComboBox, "wizardAttnCombo").currentData()
    click_next(qtbot, wizard)
    type_text(qtbot, child(wizard, QLineEdit, "wizardBudgetEdit"), "0.5")
    click_next(qtbot, wizard)
    with qtbot.waitSignal(window.jobs.jobAdded) as added:
        qtbot.mouseClick(wizard.button(QWizard.WizardButton.FinishButton), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: added.args[0].state.ended, timeout=30_000)

    again = MainWindow(settings, debounce_ms=50)  # the next start, the same settings
    qtbot.addWidget(again, before_close_func=lambda w: _stop_jobs(qtbot, w))
    for w in (window, again):
        wizard = _wizard(qtbot, w)
        assert wizard.target_page.npu() == "RBLN-CR13"
        assert child(wizard, QSpinBox, "wizardDevicesSpin").value() == 2
        assert child(wizard, QSpinBox, "wizardBatchSpin").value() == 4
        assert child(wizard, QSpinBox, "wizardMaxSeqLenSpin").value() == 16384
        assert child(wizard, QSpinBox, "wizardPartitionSpin").value() == partition
        assert child(wizard, QComboBox, "wizardAttnCombo").currentData() == attn
        assert child(wizard, QLineEdit, "wizardBudgetEdit").text() == "0.5"
        assert child(wizard, QRadioButton, "wizardAutoRadio").isChecked()
        wizard.reject()


def test_open_bucket_remembers_the_bucket_and_open_recent_lists_it(
    qtbot: QtBot, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    scans: list[BucketPrefix] = []

    def scan(jobs: JobManager, model: object, root: BucketPrefix) -> Job:
        scans.append(root)
        return jobs.submit(f"Scan {root}", lambda ctx: 0)  # no store here: a scan that finds nothing

    monkeypatch.setattr(bucket_dialog, "open_bucket", scan)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    window = on_small_screen(qtbot, settings)
    dialog = window.dialogs.open_bucket_dialog()
    qtbot.waitExposed(dialog)
    endpoint = "http://seaweed.storage.internal:8333"
    for name, text in (("bucketEndpoint", endpoint), ("bucketName", "models"), ("bucketPrefix", "fleet/qwen")):
        type_text(qtbot, child(dialog, QLineEdit, name), text)
    field = child(dialog, QLineEdit, "bucketEndpoint")
    assert field.fontMetrics().horizontalAdvance(endpoint) < field.width()  # the endpoint is not cut off
    assert audit(dialog, SMALL) == []
    dialog.accept()
    opened = "s3+http://seaweed.storage.internal:8333/models/fleet/qwen"  # the bucket with its store
    assert [str(s) for s in scans] == [opened]
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)

    again = MainWindow(settings, debounce_ms=50)
    qtbot.addWidget(again, before_close_func=lambda w: _stop_jobs(qtbot, w))
    reopened = again.dialogs.open_bucket_dialog()
    assert isinstance(reopened, BucketDialog)
    assert (reopened.endpoint.text(), reopened.bucket.text(), reopened.prefix.text()) == (
        endpoint,
        "models",
        "fleet/qwen",
    )
    reopened.reject()
    before = len(scans)  # the buckets open when the first window closed are opened again by the new one
    again.folders.fill_recent_menu()
    recent = {a.text(): a for a in again.folders.recent_menu.actions() if a.text()}
    assert opened in recent  # the bucket with its store, as the CLI takes it
    recent[opened].trigger()
    assert [str(s) for s in scans[before:]] == [opened]  # reached through the endpoint it was opened with
    import os

    assert "AWS_ENDPOINT_URL" not in os.environ  # kept in the location: setenv with threads running crashes


def test_open_recent_lists_servers_and_connects_again(
    qtbot: QtBot, window: MainWindow, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.remember_server(ServerEntry("npu-7", ("/srv/artifacts",)))
    connected: list[ServerEntry] = []
    monkeypatch.setattr(window.server_menu.servers, "connect_server", connected.append)
    window.folders.recent_menu.aboutToShow.emit()  # what opening File ▸ Open Recent does
    recent = {a.text(): a for a in window.folders.recent_menu.actions() if a.text()}
    assert window.folders.recent_menu.isEnabled()
    recent["npu-7: /srv/artifacts"].trigger()
    assert connected == [ServerEntry("npu-7", ("/srv/artifacts",))]


@pytest.mark.parametrize("theme", [Theme.LIGHT, Theme.DARK])
def test_a_first_start_offers_the_next_steps(
    qtbot: QtBot, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, theme: Theme
) -> None:
    window = on_small_screen(qtbot, settings)
    window.theme.choose(theme, remember=False)
    panel = present(window.first_steps.offer())  # what `rbln-studio` with no arguments does
    qtbot.waitExposed(panel)
    assert [b.text() for b in panel.buttons.values()] == [
        "Open a Folder…",
        "Open the Demo Workspace",
        "Connect to a Server…",
        "Open a Bucket…",
        "Compile a Model…",
    ]
    assert not window.browser.isVisible() and audit(window, SMALL) == []
    qtbot.mouseClick(panel.buttons["actionOpenBucket"], Qt.MouseButton.LeftButton)
    bucket = window.findChild(BucketDialog)
    assert bucket is not None and bucket.isVisible()
    bucket.reject()
    monkeypatch.setattr(folder_control, "demo_folder", lambda: str(tmp_path / "demo"))
    with qtbot.waitSignal(window.workspace.scanFinished, timeout=30_000):
        qtbot.mouseClick(panel.buttons["actionOpenDemo"], Qt.MouseButton.LeftButton)
    assert window.first_steps.panel is None and window.browser.isVisible() and window.model.rowCount() == 5
    window.workspace.watcher.clear()  # the demo's last writes would queue a rescan while the window closes
    _stop_jobs(qtbot, window)

    again = MainWindow(settings, debounce_ms=50)  # something was opened: the next start goes straight on
    qtbot.addWidget(again, before_close_func=lambda w: _stop_jobs(qtbot, w))
    assert again.first_steps.offer() is None


def test_the_wizard_ignores_a_damaged_memory(qtbot: QtBot, window: MainWindow, settings: Settings) -> None:
    settings.store.setValue("choices/wizard", "{not json")
    fresh = Settings(settings.store)
    assert fresh.choices.get("wizard") is None
    settings.choices.set("wizard", {"npu": "RBLN-NOPE", "num_devices": "two", "memory_budget": 5})
    wizard = _wizard(qtbot, window)
    assert wizard.target_page.npu() == "RBLN-CA25"  # the defaults, not a crash
    assert child(wizard, QComboBox, "wizardNpuCombo").currentData() == "RBLN-CA25"
    wizard.reject()
