"""Buckets of two stores open in the desktop at once (one named by a profile, one by Open Bucket's Endpoint field):
each row reads and acts on its own store, and both come back with their stores on the next start."""

from __future__ import annotations

from pathlib import Path

import pytest
from gui import conftest as gui_fixtures
from gui.widgets import child
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QPushButton, QRadioButton
from pytestqt.qtbot import QtBot

from objectstore.conftest import TwoStores
from rbln_artifact_studio.core.fleet.columns import TITLES
from rbln_artifact_studio.core.location import BucketPrefix, parse_bucket_prefix
from rbln_artifact_studio.gui.app.session_settings import BucketEntry
from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.dialogs.bucket_dialog import entry_location
from rbln_artifact_studio.gui.dialogs.resize_dialog import ResizeDialog
from rbln_artifact_studio.gui.window.main_window import MainWindow
from rbln_artifact_studio.objectstore.artifacts import open_bucket_artifact

settings, window = gui_fixtures.settings, gui_fixtures.window
pytestmark = pytest.mark.qt_log_ignore(gui_fixtures.OFFSCREEN_NOTICE)


def _open(w: MainWindow, name: str, *, profile: str = "", endpoint: str = "") -> None:
    dialog = w.dialogs.open_bucket_dialog()
    dialog.endpoint.setText(endpoint)
    dialog.profile.setText(profile)
    dialog.bucket.setText(name)
    dialog.prefix.setText("fleet")
    dialog.accept()


def _blocks(w: MainWindow, url: str) -> int | None:
    row = w.model.row_of(url)
    return None if row is None else w.model.summary(row).kvcache_num_blocks


def test_rows_of_two_stores_act_on_their_own_store_and_come_back_with_it(
    qtbot: QtBot, window: MainWindow, two_stores: TwoStores, cr13_artifact: Path
) -> None:
    w, a, b = window, two_stores.a, two_stores.b
    a.upload(cr13_artifact, "fleet/qwen")  # the same artifact at the same key in both stores: 21 blocks
    b.upload(cr13_artifact, "fleet/qwen")
    _open(w, a.name, profile="a")
    _open(w, b.name, endpoint=b.store.endpoint)  # no profile: the chain's keys, this endpoint
    in_a, in_b = two_stores.url("a", "fleet/qwen"), b.opened("fleet/qwen")
    qtbot.waitUntil(lambda: _blocks(w, in_a) == 21 and _blocks(w, in_b) == 21, timeout=60_000)
    host = TITLES.index("Host")
    cells = {url: w.model.index(w.model.row_of(url), host).data() for url in (in_a, in_b)}  # type: ignore[arg-type]
    assert cells == {in_a: f"s3://a@{a.name}", in_b: b.opened()}

    # An in-place resize of store a's row, through the window's own dialog: store a changes, store b does not.
    assert w.browser.select_path(in_a)
    qtbot.waitUntil(lambda: w.artifact is not None and str(w.artifact.where) == in_a, timeout=20_000)
    b_before = b.objects()
    w.action_resize.trigger()
    dialog = child(w, ResizeDialog, "resizeDialog")
    child(dialog, QRadioButton, "resizeModeInPlace").setChecked(True)
    dialog.target_spin.setValue(12)
    with qtbot.waitSignal(w.jobs.jobAdded) as added:
        qtbot.mouseClick(child(dialog, QPushButton, "resizeApplyButton"), Qt.MouseButton.LeftButton)
    with qtbot.waitSignal(added.args[0].finished, timeout=60_000):
        pass
    assert added.args[0].failure is None
    assert open_bucket_artifact(parse_bucket_prefix(in_a)).config.kvcache_num_blocks == 12
    assert open_bucket_artifact(parse_bucket_prefix(in_b)).config.kvcache_num_blocks == 21
    assert b.objects() == b_before  # not one object of store b rewritten

    gui_fixtures._stop_jobs(qtbot, w)
    w.close()
    w.settings.flush()
    again = MainWindow(Settings(QSettings(w.settings.file_name(), QSettings.Format.IniFormat)), debounce_ms=50)
    qtbot.addWidget(again, before_close_func=lambda x: gui_fixtures._stop_jobs(qtbot, x))
    # Both buckets reopened, each in its own store: store a's row reads 12, store b's 21 (no dialog, no choice).
    qtbot.waitUntil(lambda: _blocks(again, in_a) == 12 and _blocks(again, in_b) == 21, timeout=60_000)
    opened = {entry.url for entry in again.settings.session.opened_buckets()}
    assert opened == {two_stores.url("a", "fleet"), b.opened("fleet")}


def test_open_bucket_refuses_an_endpoint_it_cannot_keep_with_the_bucket(qtbot: QtBot, window: MainWindow) -> None:
    dialog = window.dialogs.open_bucket_dialog()
    dialog.bucket.setText("models")
    for endpoint in ("minio.local:9000", "http://minio.local:9000/s3"):  # no scheme; a path (a profile's business)
        dialog.endpoint.setText(endpoint)
        dialog.accept()
        assert dialog.isVisible() and "is not an endpoint URL" in dialog.problem.text(), endpoint
    dialog.endpoint.setText("HTTP://minio.local:9000/")
    dialog.profile.setText("lab")
    assert dialog.location() == BucketPrefix("models", "", "lab", "http://minio.local:9000")
    dialog.reject()


def test_a_bucket_remembered_before_locations_named_their_store_reopens_in_its_store() -> None:
    """Settings written by an earlier version: the URL without its store, the endpoint and profile beside it."""
    old = BucketEntry("s3://models/fleet", "http://minio.local:9000", "lab")
    assert entry_location(old) == BucketPrefix("models", "fleet", "lab", "http://minio.local:9000")
    assert entry_location(BucketEntry("s3://models/fleet")) == BucketPrefix("models", "fleet")


def test_keys_fixed_in_aws_credentials_while_the_app_runs_open_the_bucket_again(
    qtbot: QtBot, window: MainWindow, two_stores: TwoStores, cr13_artifact: Path
) -> None:
    """Store b refuses the keys of profile b; the user fixes them as the error says and opens the bucket again (Open
    Recent), without restarting the app."""
    import os

    w, b = window, two_stores.b
    b.upload(cr13_artifact, "fleet/qwen")
    credentials = Path(os.environ["AWS_SHARED_CREDENTIALS_FILE"])
    right = credentials.read_text()
    credentials.write_text(
        right.replace(f"[b]\naws_access_key_id = {b.store.access_key}", "[b]\naws_access_key_id = NOTB")
    )
    with qtbot.waitSignal(w.jobs.jobAdded) as added:
        _open(w, b.name, profile="b")
    job = added.args[0]
    qtbot.waitUntil(lambda: job.state.ended, timeout=60_000)
    assert job.failure is not None and "under [b] in ~/.aws/credentials" in job.failure.reason, job.failure

    credentials.write_text(right)  # fixed, as the error said
    w.folders.recent_menu.aboutToShow.emit()  # File ▸ Open Recent
    [again] = [a for a in w.folders.recent_menu.actions() if a.text() == two_stores.url("b", "fleet")]
    again.trigger()
    in_b = two_stores.url("b", "fleet/qwen")
    qtbot.waitUntil(lambda: _blocks(w, in_b) == 21, timeout=60_000)
