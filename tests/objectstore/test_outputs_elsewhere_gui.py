"""Outputs on a server or in a bucket, from the desktop (a real sshd and a real SeaweedFS): Resize to a Copy of a
bucket's and of a server's artifact proposes a place the user can write and lands where they asked; the compile
wizard's ssh:// and s3:// outputs land there and nowhere here, or are refused before anything runs."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from gui import conftest as gui_fixtures
from gui.conftest import _stop_jobs, click_next, type_text
from gui.widgets import child
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QLineEdit, QPushButton, QWizard
from pytestqt.qtbot import QtBot
from remote.conftest import (  # noqa: F401 (the server's fixtures, used by name)
    HOST_ALIAS,
    SshServer,
    control_dir,
    server,
    ssh_server,
    studio_on_server,
    url,
)

from objectstore.conftest import BucketFixture
from rbln_artifact_studio.core.fleet.artifact import open_artifact
from rbln_artifact_studio.core.location import BucketPrefix, parse_bucket_prefix
from rbln_artifact_studio.core.storage.jsonfile import read_block_count
from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.dialogs.compile_wizard import CompileWizard
from rbln_artifact_studio.gui.dialogs.resize_dialog import ResizeDialog
from rbln_artifact_studio.gui.models.jobs import Job
from rbln_artifact_studio.gui.window.main_window import MainWindow
from rbln_artifact_studio.objectstore.artifacts import open_bucket_artifact

settings = gui_fixtures.settings
pytestmark = pytest.mark.qt_log_ignore(gui_fixtures.OFFSCREEN_NOTICE)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's home folder, and the folder the app was started in (nothing may be written there)."""
    folder = tmp_path / "home"
    (folder / "started-here").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.chdir(folder / "started-here")
    return folder


@pytest.fixture
def place_window(
    qtbot: QtBot,
    settings: Settings,
    server: SshServer,  # noqa: F811
    control_dir: Path,  # noqa: F811
    home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[MainWindow]:
    """A main window whose ssh_config (a setting) reaches the test server; copies pass through tmp_path here."""
    settings.store.setValue("ssh/configFile", str(server.client_config))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(control_dir))  # the shared connections end with the test
    staging = tmp_path / "tmp"
    staging.mkdir()
    monkeypatch.setenv("TMPDIR", str(staging))
    monkeypatch.setattr("tempfile.tempdir", None)
    w = MainWindow(settings, debounce_ms=50)
    qtbot.addWidget(w, before_close_func=lambda widget: _stop_jobs(qtbot, widget))
    w.show()
    yield w
    _stop_jobs(qtbot, w)


def _open_bucket_row(qtbot: QtBot, w: MainWindow, bucket: BucketFixture, prefix: str) -> str:
    opener = w.dialogs.open_bucket_dialog()
    opener.bucket.setText(bucket.name)
    opener.prefix.setText(prefix.rsplit("/", 1)[0])
    opener.accept()
    where = bucket.url(prefix)
    qtbot.waitUntil(lambda: w.model.row_of(where) is not None, timeout=30_000)
    assert w.browser.select_path(where)
    qtbot.waitUntil(lambda: w.artifact is not None and str(w.artifact.where) == where, timeout=20_000)
    return where


def _resize_copy(qtbot: QtBot, w: MainWindow, count: int) -> ResizeDialog:
    """Artifact ▸ Resize to a Copy…, the count typed."""
    w.artifact_actions.resize_copy.trigger()
    dialog = child(w, ResizeDialog, "resizeDialog")
    dialog.prefill(count)  # the count, as the planner and the explorer give it
    return dialog


def _retype(qtbot: QtBot, edit: QLineEdit, text: str) -> None:
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Backspace)
    qtbot.keyClicks(edit, text)


def _apply(qtbot: QtBot, w: MainWindow, dialog: ResizeDialog) -> Job:
    apply = child(dialog, QPushButton, "resizeApplyButton")
    assert apply.isEnabled(), dialog.message.text()
    with qtbot.waitSignal(w.jobs.jobAdded, timeout=10_000) as added:
        qtbot.mouseClick(apply, Qt.MouseButton.LeftButton)
    job: Job = added.args[0]
    qtbot.waitUntil(lambda: job.state.ended, timeout=90_000)
    assert job.state.value == "succeeded", job.failure
    return job


def test_a_copy_of_a_bucket_artifact_is_proposed_here_and_lands_where_asked(
    qtbot: QtBot, place_window: MainWindow, bucket: BucketFixture, cr13_artifact: Path, home: Path, tmp_path: Path
) -> None:
    w = place_window
    bucket.upload(cr13_artifact, "fleet/qwen")
    _open_bucket_row(qtbot, w, bucket, "fleet/qwen")
    dialog = _resize_copy(qtbot, w, 12)
    edit = child(dialog, QLineEdit, "resizeOutputEdit")
    assert edit.text() == str(home / "qwen-kv12"), "a folder here the user can write, not one made from the key"
    with qtbot.waitSignal(dialog.outputChecked, timeout=10_000):
        pass  # the proposed folder checked on disk, here
    assert os.access(home, os.W_OK) and dialog.output_problem is None
    assert child(dialog, QPushButton, "resizeBrowseButton").isEnabled()
    chosen = tmp_path / "copies" / "qwen-12"
    _retype(qtbot, edit, str(chosen))
    _apply(qtbot, w, dialog)
    assert read_block_count(chosen) == 12 and open_artifact(chosen).status.value == "ok"
    assert w.settings.copy_folder.get() == str(chosen.parent)
    assert not (home / "started-here" / "fleet").exists() and not Path("/fleet").exists()

    again = _resize_copy(qtbot, w, 14)  # the folder chosen last is proposed next
    assert child(again, QLineEdit, "resizeOutputEdit").text() == str(chosen.parent / "qwen-kv14")
    again.reject()


def test_a_copy_of_a_server_artifact_goes_beside_it_or_to_a_bucket(
    qtbot: QtBot,
    place_window: MainWindow,
    server: SshServer,  # noqa: F811
    studio_on_server: None,  # noqa: F811 (a simulator artifact is resized on the server by the studio there)
    bucket: BucketFixture,
    cr13_artifact: Path,
    tmp_path: Path,
) -> None:
    w = place_window
    w.settings.copy_folder.set(str(tmp_path / "copies"))  # a folder here: no place for a server's copy
    folder = tmp_path / "srv"
    folder.mkdir()
    real = Path(shutil.move(cr13_artifact, folder / "real"))  # the server is this machine seen through sshd
    from rbln_artifact_studio.gui.app.settings import ServerEntry

    with qtbot.waitSignal(w.server_menu.servers.connected, timeout=30_000):
        w.server_menu.servers.connect_server(ServerEntry(HOST_ALIAS, (str(folder),)))
    assert w.browser.select_path(url(real))
    qtbot.waitUntil(lambda: w.artifact is not None and str(w.artifact.where) == url(real), timeout=20_000)

    dialog = _resize_copy(qtbot, w, 12)
    edit = child(dialog, QLineEdit, "resizeOutputEdit")
    assert edit.text() == url(folder / "real-kv12")  # beside it, on its server
    assert not child(dialog, QPushButton, "resizeBrowseButton").isEnabled()  # no copy of it comes here
    _retype(qtbot, edit, str(tmp_path / "here"))  # a plain path: on the server, where the copy is made
    assert "✓" in dialog.message.text()
    _retype(qtbot, edit, bucket.url("fleet/from-server"))
    _apply(qtbot, w, dialog)
    copy = open_bucket_artifact(BucketPrefix(bucket.name, "fleet/from-server"))
    assert copy.status.value == "ok" and copy.config.kvcache_num_blocks == 12
    assert w.statusBar().currentMessage() == f"Wrote {bucket.url('fleet/from-server')}"

    beside = _resize_copy(qtbot, w, 13)  # proposed in the place chosen last, which a server's copy may reach
    edit = child(beside, QLineEdit, "resizeOutputEdit")
    assert edit.text() == bucket.url("fleet/real-kv13")
    _retype(qtbot, edit, str(folder / "real-kv13"))  # a plain path: beside it, on its server
    _apply(qtbot, w, beside)
    assert read_block_count(folder / "real-kv13") == 13 and read_block_count(real) == 21
    assert w.statusBar().currentMessage() == f"Wrote {url(folder / 'real-kv13')}"


def _wizard_to_output(qtbot: QtBot, w: MainWindow, model: Path) -> CompileWizard:
    """The compile wizard on the tiny model, every default taken, at its output page."""
    w.action_compile.trigger()
    wizard = child(w, CompileWizard, "compileWizard")
    qtbot.waitUntil(lambda: wizard.button(QWizard.WizardButton.NextButton).isEnabled())
    type_text(qtbot, child(wizard, QLineEdit, "wizardModelEdit"), str(model))
    status = child(wizard, QLabel, "wizardModelStatus")
    qtbot.waitUntil(lambda: "LlamaForCausalLM" in status.text(), timeout=10_000)  # read in a worker
    while wizard.currentPage() is not wizard.output_page:
        click_next(qtbot, wizard)
    return wizard


def _finish(qtbot: QtBot, w: MainWindow, wizard: CompileWizard) -> Job:
    finish = wizard.button(QWizard.WizardButton.FinishButton)
    assert finish.isEnabled(), child(wizard, QLabel, "wizardOutputProblem").text()
    with qtbot.waitSignal(w.jobs.jobAdded, timeout=10_000) as added:
        qtbot.mouseClick(finish, Qt.MouseButton.LeftButton)
    job: Job = added.args[0]
    qtbot.waitUntil(lambda: job.state.ended, timeout=90_000)
    return job


def test_the_compile_wizard_delivers_to_a_server_and_a_bucket_and_writes_nothing_here(
    qtbot: QtBot,
    place_window: MainWindow,
    bucket: BucketFixture,
    tiny_model: Path,
    home: Path,
    tmp_path: Path,
) -> None:
    w = place_window
    on_server = tmp_path / "srv" / "compiled"
    wizard = _wizard_to_output(qtbot, w, tiny_model)
    _retype(qtbot, child(wizard, QLineEdit, "wizardOutputEdit"), url(on_server))
    job = _finish(qtbot, w, wizard)
    assert job.state.value == "succeeded", job.failure
    assert open_artifact(on_server).status.value == "ok"
    assert w.statusBar().currentMessage() == f"Wrote {url(on_server)}"

    wizard = _wizard_to_output(qtbot, w, tiny_model)
    _retype(qtbot, child(wizard, QLineEdit, "wizardOutputEdit"), bucket.url("fleet/tiny"))
    job = _finish(qtbot, w, wizard)
    assert job.state.value == "succeeded", job.failure
    compiled = open_bucket_artifact(parse_bucket_prefix(bucket.url("fleet/tiny")))
    assert compiled.status.value == "ok"
    assert not [k for k in bucket.objects() if ".rbln-studio" in k]
    assert os.listdir(home / "started-here") == [] and not [p for p in (tmp_path / "tmp").rglob("*") if p.is_file()]


def test_the_compile_wizard_refuses_a_taken_place_before_compiling(
    qtbot: QtBot, place_window: MainWindow, bucket: BucketFixture, tiny_model: Path, home: Path, tmp_path: Path
) -> None:
    w = place_window
    bucket.client.put_object(Bucket=bucket.name, Key="fleet/full/readme", Body=b"x")
    wizard = _wizard_to_output(qtbot, w, tiny_model)
    edit = child(wizard, QLineEdit, "wizardOutputEdit")
    _retype(qtbot, edit, "s3://No_Such Bucket/x")
    assert not wizard.button(QWizard.WizardButton.FinishButton).isEnabled()
    assert "is not a bucket name" in child(wizard, QLabel, "wizardOutputProblem").text()
    _retype(qtbot, edit, bucket.url("fleet/full"))
    job = _finish(qtbot, w, wizard)
    assert job.state.value == "failed" and f"The output {bucket.url('fleet/full')} is not empty" in str(job.failure)
    assert list(bucket.objects("fleet/full/")) == ["fleet/full/readme"]
    assert os.listdir(home / "started-here") == [] and not [p for p in (tmp_path / "tmp").rglob("*") if p.is_file()]
