"""A bucket's artifacts in the desktop app beside others: two prefixes of one bucket name their rows' prefix in the
Host column; Download to This Computer… lands the copy whole and offers it in the window, a cancel leaves nothing,
an unfinished copy in the bucket is refused with the reason."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import same_files
from gui import conftest as gui_fixtures
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from objectstore.conftest import BucketFixture
from rbln_artifact_studio.core.location import parse_bucket_prefix
from rbln_artifact_studio.core.storage import faults
from rbln_artifact_studio.gui.models.artifact_model import HOST_COLUMN
from rbln_artifact_studio.gui.window.main_window import MainWindow

settings, window = gui_fixtures.settings, gui_fixtures.window
pytestmark = pytest.mark.qt_log_ignore(gui_fixtures.OFFSCREEN_NOTICE)


def _open_bucket(qtbot: QtBot, w: MainWindow, bucket: BucketFixture, url: str, prefix: str = "fleet") -> None:
    dialog = w.dialogs.open_bucket_dialog()
    dialog.bucket.setText(bucket.name)
    dialog.prefix.setText(prefix)
    dialog.accept()
    qtbot.waitUntil(lambda: w.model.row_of(url) is not None, timeout=30_000)
    assert w.browser.select_path(url)
    qtbot.waitUntil(w.artifact_actions.download.action.isEnabled, timeout=10_000)


def test_a_bucket_artifact_downloads_whole_and_is_offered(
    qtbot: QtBot, window: MainWindow, bucket: BucketFixture, cr13_artifact: Path, tmp_path: Path
) -> None:
    w = window
    bucket.upload(cr13_artifact, "fleet/qwen")
    url = bucket.url("fleet/qwen")
    _open_bucket(qtbot, w, bucket, url)
    w.settings.copy_folder.set(url)  # the last copy went into the bucket: not a folder here, so home is proposed
    dialog = w.artifact_actions.download.choose_folder()
    assert dialog is not None and Path(dialog.directory().absolutePath()) == Path.home()
    dialog.reject()

    downloads = tmp_path / "downloads"
    downloads.mkdir()
    job = w.artifact_actions.download.start(parse_bucket_prefix(url), downloads / "qwen")
    with qtbot.waitSignal(job.finished, timeout=60_000):
        pass
    assert job.state.value == "succeeded", job.failure
    assert same_files(cr13_artifact, downloads / "qwen")
    assert w.settings.copy_folder.get() == str(downloads)  # proposed first next time
    notice = w.results
    assert notice.bar.isVisible() and str(downloads / "qwen") in notice.label.text()
    with qtbot.waitSignal(w.workspace.scanFinished, timeout=30_000):
        qtbot.mouseClick(notice.open_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.browser.current_path() == str(downloads / "qwen"), timeout=20_000)


def test_two_prefixes_of_one_bucket_name_their_rows_prefix(
    qtbot: QtBot, window: MainWindow, bucket: BucketFixture, cr13_artifact: Path
) -> None:
    w = window
    bucket.upload(cr13_artifact, "prod/qwen")
    bucket.upload(cr13_artifact, "staging/qwen")
    prod, staging = bucket.url("prod/qwen"), bucket.url("staging/qwen")
    _open_bucket(qtbot, w, bucket, prod, "prod")
    row = w.model.row_of(prod)
    assert row is not None and w.model.index(row, HOST_COLUMN).data() == f"s3://{bucket.name}"  # one prefix
    _open_bucket(qtbot, w, bucket, staging, "staging")
    cells = {p: w.model.index(w.model.row_of(p), HOST_COLUMN).data() for p in (prod, staging)}  # type: ignore[arg-type]
    assert cells == {prod: f"s3://{bucket.name}: prod", staging: f"s3://{bucket.name}: staging"}


@pytest.fixture
def held_at_staging() -> Iterator[tuple[threading.Event, threading.Event]]:
    """The download's worker held once its staging folder exists: (reached, release)."""
    reached, release = threading.Event(), threading.Event()

    def hook(step: str) -> None:
        if step == "staging.created" and threading.current_thread() is not threading.main_thread():
            reached.set()
            release.wait(30)

    previous = faults.install(hook)
    yield reached, release
    release.set()
    faults.install(previous)


def test_a_cancelled_download_leaves_nothing_here(
    qtbot: QtBot,
    window: MainWindow,
    bucket: BucketFixture,
    cr13_artifact: Path,
    tmp_path: Path,
    held_at_staging: tuple[threading.Event, threading.Event],
) -> None:
    w = window
    bucket.upload(cr13_artifact, "fleet/qwen")
    url = bucket.url("fleet/qwen")
    _open_bucket(qtbot, w, bucket, url)
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    reached, release = held_at_staging
    job = w.artifact_actions.download.start(parse_bucket_prefix(url), downloads / "qwen")
    qtbot.waitUntil(reached.is_set, timeout=30_000)
    assert [p.name for p in downloads.iterdir()] != []  # the staging folder, hidden beside the destination
    with qtbot.waitSignal(job.cancelled, timeout=30_000):
        job.cancel()  # as the jobs panel's Cancel does
        release.set()
    assert list(downloads.iterdir()) == []  # neither the artifact nor its staging folder


def test_an_unfinished_copy_in_the_bucket_is_refused_with_the_reason(
    qtbot: QtBot, window: MainWindow, bucket: BucketFixture, cr13_artifact: Path, tmp_path: Path
) -> None:
    w = window
    bucket.upload(cr13_artifact, "fleet/qwen")
    bucket.client.put_object(Bucket=bucket.name, Key="fleet/half/.rbln-studio-incomplete", Body=b"{}")
    bucket.upload(cr13_artifact, "fleet/half")
    job = w.artifact_actions.download.start(parse_bucket_prefix(bucket.url("fleet/half")), tmp_path / "half")
    with qtbot.waitSignal(job.finished, timeout=60_000):
        pass
    assert job.state.value == "failed" and job.failure is not None
    assert "is an incomplete copy" in job.failure.reason
    assert not (tmp_path / "half").exists()
    assert f"failed: {job.failure.reason}" in w.statusBar().currentMessage()
