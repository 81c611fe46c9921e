"""A bucket in the desktop app: File ▸ Open Bucket…, rows with their Host, details, resize, and what cannot be done."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from gui import conftest as gui_fixtures
from pytestqt.qtbot import QtBot

from objectstore.conftest import BucketFixture
from rbln_artifact_studio.core.fleet.columns import TITLES
from rbln_artifact_studio.core.location import BucketPrefix, parse_bucket_prefix
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
from rbln_artifact_studio.gui.models import operations
from rbln_artifact_studio.gui.window.main_window import MainWindow
from rbln_artifact_studio.objectstore.artifacts import open_bucket_artifact

# The main window and its settings as the GUI tests make them, and the notice the offscreen platform gives.
settings, window = gui_fixtures.settings, gui_fixtures.window
pytestmark = pytest.mark.qt_log_ignore(
    gui_fixtures.OFFSCREEN_NOTICE
)  # what the offscreen platform cannot do (gui/conftest.py)


def test_open_bucket_shows_rows_details_and_resizes(
    qtbot: QtBot, window: MainWindow, bucket: BucketFixture, cr13_artifact: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = window
    bucket.upload(cr13_artifact, "fleet/qwen")
    url = bucket.opened("fleet/qwen")  # the bucket with the store it was opened in
    monkeypatch.delenv("AWS_ENDPOINT_URL")  # the store is reached through the endpoint typed in the dialog only
    before = dict(os.environ)
    dialog = w.dialogs.open_bucket_dialog()
    assert dialog.endpoint.text() == ""
    dialog.endpoint.setText(bucket.store.endpoint)
    dialog.bucket.setText(bucket.name)
    dialog.prefix.setText("fleet")
    dialog.accept()
    assert dict(os.environ) == before  # not written: setenv while Qt's threads start crashed the app
    host = TITLES.index("Host")
    qtbot.waitUntil(lambda: w.model.row_of(url) is not None, timeout=30_000)
    row = w.model.row_of(url)
    assert (
        row is not None and w.model.index(row, host).data() == bucket.opened()
    )  # the location as the CLI prints it, to the bucket
    assert w.model.summary(row).status.value == "ok"

    assert w.browser.select_path(url)
    qtbot.waitUntil(lambda: w.artifact is not None and str(w.artifact.where) == url, timeout=20_000)
    assert w.artifact is not None and w.artifact.breakdown() is not None  # the detail panel's DRAM breakdown

    assert not w.artifact_actions.show_in_file_manager()
    assert "not on this computer" in w.statusBar().currentMessage()
    box = w.artifact_actions.move_to_trash()
    assert box is not None and box.objectName() == "trashRefused" and "Nothing was changed." in box.text()
    box.close()

    choice = ResizeRequest(parse_bucket_prefix(url), 12)
    job = operations.resize(w.jobs, choice, w.settings.toolchain().settings())
    with qtbot.waitSignal(job.succeeded, timeout=60_000):
        pass
    assert open_bucket_artifact(parse_bucket_prefix(url)).config.kvcache_num_blocks == 12


def test_bucket_dialog_refuses_a_bad_bucket_name(qtbot: QtBot, window: MainWindow) -> None:
    dialog = window.dialogs.open_bucket_dialog()
    dialog.bucket.setText("No_Such Bucket")
    dialog.accept()
    assert dialog.isVisible() and "is not a bucket name" in dialog.problem.text()
    dialog.reject()


def test_the_resize_dialog_takes_every_place_a_bucket_copy_can_go_and_makes_it(
    qtbot: QtBot, window: MainWindow, bucket: BucketFixture, cr13_artifact: Path, tmp_path: Path
) -> None:
    """A copy of a bucket's artifact goes to another prefix, a folder here or a server (dispatch.CROSSINGS): the
    dialog accepts each as typed, refuses the artifact's own prefix, and Apply makes the copy in the bucket."""
    from gui.widgets import child
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QLabel, QLineEdit, QPushButton

    from rbln_artifact_studio.gui.dialogs.resize_dialog import ResizeDialog

    w = window
    bucket.upload(cr13_artifact, "fleet/qwen")
    url = bucket.opened("fleet/qwen")
    opener = w.dialogs.open_bucket_dialog()
    opener.endpoint.setText(bucket.store.endpoint)
    opener.bucket.setText(bucket.name)
    opener.prefix.setText("fleet")
    opener.accept()
    qtbot.waitUntil(lambda: w.model.row_of(url) is not None, timeout=30_000)
    assert w.browser.select_path(url)
    qtbot.waitUntil(lambda: w.artifact is not None and str(w.artifact.where) == url, timeout=20_000)
    w.action_resize.trigger()
    dialog = child(w, ResizeDialog, "resizeDialog")
    dialog.prefill(12)
    edit = child(dialog, QLineEdit, "resizeOutputEdit")
    apply = child(dialog, QPushButton, "resizeApplyButton")

    def typed(text: str) -> str:
        edit.selectAll()
        qtbot.keyClick(edit, Qt.Key.Key_Backspace)
        qtbot.keyClicks(edit, text)
        return child(dialog, QLabel, "resizeMessage").text()

    for place in ("fleet/qwen-12", str(tmp_path / "here-12"), "ssh://npu7/srv/qwen-12"):
        said = typed(place)
        assert "✓" in said and apply.isEnabled(), (place, said)
    said = typed("fleet/qwen")
    assert "a folder of its own" in said and not apply.isEnabled()
    said = typed("fleet/qwen-12")
    assert apply.isEnabled(), said
    qtbot.mouseClick(apply, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: any(k.endswith("fleet/qwen-12/rbln_config.json") for k in bucket.objects("fleet/qwen-12")),
        timeout=60_000,
    )
    qtbot.waitUntil(lambda: not w.jobs.active(), timeout=60_000)
    assert open_bucket_artifact(BucketPrefix(bucket.name, "fleet/qwen-12")).config.kvcache_num_blocks == 12
    assert open_bucket_artifact(BucketPrefix(bucket.name, "fleet/qwen")).config.kvcache_num_blocks != 12


def test_an_opened_bucket_is_opened_again_on_the_next_start(
    qtbot: QtBot, window: MainWindow, bucket: BucketFixture, cr13_artifact: Path
) -> None:
    from PySide6.QtCore import QSettings

    from rbln_artifact_studio.gui.app.settings import Settings

    bucket.upload(cr13_artifact, "fleet/qwen")
    url = bucket.opened("fleet/qwen")
    dialog = window.dialogs.open_bucket_dialog()
    dialog.endpoint.setText(bucket.store.endpoint)
    dialog.bucket.setText(bucket.name)
    dialog.prefix.setText("fleet")
    dialog.accept()
    qtbot.waitUntil(lambda: window.model.row_of(url) is not None, timeout=30_000)
    gui_fixtures._stop_jobs(qtbot, window)  # the bucket's checks may still run: quit without asking
    window.close()
    window.settings.flush()

    again = MainWindow(Settings(QSettings(window.settings.file_name(), QSettings.Format.IniFormat)), debounce_ms=50)
    qtbot.addWidget(again, before_close_func=lambda w: gui_fixtures._stop_jobs(qtbot, w))
    qtbot.waitUntil(lambda: again.model.row_of(url) is not None, timeout=30_000)  # no dialog: reopened as it was
    assert [b.url for b in again.settings.session.opened_buckets()] == [bucket.opened("fleet")]
    assert again.settings.session.opened_buckets()[0].endpoint == bucket.store.endpoint
