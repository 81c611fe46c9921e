"""The window stays true to every place it shows (issue 40 item 2), with a real SeaweedFS and a real sshd: what the
app writes into a shown bucket or server folder appears in the table, selected, with the figures the place holds
now, without a refresh; a row a write may change says so until it is read again; Refresh (F5) reads every opened
place of every kind again, keeps every row and shows what someone else added."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from gui import conftest as gui_fixtures
from gui.conftest import open_folder
from gui.widgets import child
from PySide6.QtWidgets import QLineEdit
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
from objectstore.test_outputs_elsewhere_gui import (  # noqa: F401 (fixtures, used by name)
    _apply,
    _finish,
    _open_bucket_row,
    _resize_copy,
    _retype,
    _wizard_to_output,
    home,
    place_window,
)
from rbln_artifact_studio.gui.app.settings import ServerEntry
from rbln_artifact_studio.gui.dialogs.resize_dialog import ResizeDialog
from rbln_artifact_studio.gui.window.main_window import MainWindow

settings = gui_fixtures.settings
pytestmark = pytest.mark.qt_log_ignore(gui_fixtures.OFFSCREEN_NOTICE)


def _blocks(w: MainWindow, path: str) -> int | None:
    """The row's kvcache_num_blocks as the table holds it (None: no such row)."""
    row = w.model.row_of(path)
    return None if row is None else w.model.summary(row).kvcache_num_blocks


def _cli_blocks(run_cli, where: str) -> int:
    done = run_cli("get-kvcache-num-blocks", where)
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


def _shown_and_read(w: MainWindow, path: str) -> bool:
    """path's row is in the table, selected, and no longer stale."""
    return w.model.row_of(path) is not None and w.browser.current_path() == path and path not in w.model.stale


def _connect(qtbot: QtBot, w: MainWindow, folder: Path) -> None:
    with qtbot.waitSignal(w.server_menu.servers.connected, timeout=30_000):
        w.server_menu.servers.connect_server(ServerEntry(HOST_ALIAS, (str(folder),)))


def test_a_copy_and_an_in_place_resize_in_a_shown_bucket_show_what_the_bucket_holds(
    qtbot: QtBot,
    place_window: MainWindow,  # noqa: F811
    bucket: BucketFixture,
    cr13_artifact: Path,
    run_cli,
) -> None:
    w = place_window
    bucket.upload(cr13_artifact, "fleet/qwen")
    source = _open_bucket_row(qtbot, w, bucket, "fleet/qwen")
    assert _blocks(w, source) == 21

    dialog = _resize_copy(qtbot, w, 12)
    _retype(qtbot, child(dialog, QLineEdit, "resizeOutputEdit"), bucket.url("fleet/qwen-12"))
    _apply(qtbot, w, dialog)
    copy = bucket.url("fleet/qwen-12")
    qtbot.waitUntil(lambda: _shown_and_read(w, copy), timeout=30_000)  # no Refresh: read again after the write
    assert _blocks(w, copy) == _cli_blocks(run_cli, copy) == 12

    assert w.browser.select_path(source)
    qtbot.waitUntil(lambda: w.artifact is not None and str(w.artifact.where) == source, timeout=20_000)
    w.action_resize.trigger()
    in_place = child(w, ResizeDialog, "resizeDialog")
    in_place.prefill(14)
    in_place.mode_in_place.setChecked(True)
    job = _apply(qtbot, w, in_place)
    assert job.state.value == "succeeded"
    qtbot.waitUntil(lambda: _shown_and_read(w, source), timeout=30_000)
    assert _blocks(w, source) == _cli_blocks(run_cli, source) == 14  # not the 21 it showed before


def test_a_row_being_written_says_it_may_be_stale_until_it_is_read_again(
    qtbot: QtBot,
    place_window: MainWindow,  # noqa: F811
    bucket: BucketFixture,
    cr13_artifact: Path,
) -> None:
    from rbln_artifact_studio.core.location import parse_bucket_prefix
    from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
    from rbln_artifact_studio.gui.models import operations
    from rbln_artifact_studio.gui.models.artifact_model import STATUS_COLUMN

    w = place_window
    bucket.upload(cr13_artifact, "fleet/qwen")
    source = _open_bucket_row(qtbot, w, bucket, "fleet/qwen")
    w.jobs.hold()  # the resize waits: what the row says while it is written
    request = ResizeRequest(parse_bucket_prefix(source), 13)
    job = operations.resize(w.jobs, request, w.settings.toolchain().settings())
    w.busy.track(job, source, writes=(source,))
    row = w.model.row_of(source)
    assert row is not None and source in w.model.stale
    assert w.model.index(row, STATUS_COLUMN).data() == "ok · writing…"
    w.jobs.release()
    with qtbot.waitSignal(job.finished, timeout=60_000):
        pass
    assert source in w.model.stale  # ended, not yet read again: still stale
    qtbot.waitUntil(lambda: source not in w.model.stale, timeout=30_000)
    row = w.model.row_of(source)
    assert row is not None and w.model.index(row, STATUS_COLUMN).data() == "ok" and _blocks(w, source) == 13


def test_a_compile_into_a_shown_server_folder_and_bucket_appears_selected(
    qtbot: QtBot,
    place_window: MainWindow,  # noqa: F811
    bucket: BucketFixture,
    cr13_artifact: Path,
    tiny_model: Path,
    tmp_path: Path,
) -> None:
    w = place_window
    folder = tmp_path / "srv"
    folder.mkdir()
    shutil.move(cr13_artifact, folder / "real")  # the server is this machine seen through sshd
    _connect(qtbot, w, folder)
    bucket.upload(folder / "real", "fleet/qwen")
    _open_bucket_row(qtbot, w, bucket, "fleet/qwen")

    on_server = folder / "compiled"
    wizard = _wizard_to_output(qtbot, w, tiny_model)
    _retype(qtbot, child(wizard, QLineEdit, "wizardOutputEdit"), url(on_server))
    assert _finish(qtbot, w, wizard).state.value == "succeeded"
    qtbot.waitUntil(lambda: _shown_and_read(w, url(on_server)), timeout=30_000)

    wizard = _wizard_to_output(qtbot, w, tiny_model)
    _retype(qtbot, child(wizard, QLineEdit, "wizardOutputEdit"), bucket.url("fleet/tiny"))
    assert _finish(qtbot, w, wizard).state.value == "succeeded"
    qtbot.waitUntil(lambda: _shown_and_read(w, bucket.url("fleet/tiny")), timeout=30_000)
    assert w.model.row_of(url(on_server)) is not None  # the other places' rows stay


def test_refresh_reads_every_kind_of_place_again_and_drops_none(
    qtbot: QtBot,
    place_window: MainWindow,  # noqa: F811
    bucket: BucketFixture,
    cr13_artifact: Path,
    ca25_artifact: Path,
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    run_cli,
) -> None:
    w = place_window
    folder = tmp_path / "srv"
    folder.mkdir()
    on_server = Path(shutil.copytree(cr13_artifact, folder / "real"))
    bucket.upload(cr13_artifact, "fleet/qwen")
    here = tmp_path_factory.mktemp("here")
    shutil.copytree(cr13_artifact, here / "local")
    open_folder(qtbot, w, here)
    _connect(qtbot, w, folder)
    _open_bucket_row(qtbot, w, bucket, "fleet/qwen")
    qtbot.waitUntil(lambda: not w.jobs.active(), timeout=30_000)
    before = set(w.model.paths())
    assert len(before) == 3 and {p.split("://")[0] for p in before if "://" in p} == {"ssh", "s3"}

    # Someone else adds an artifact to the bucket and to the server, and resizes the bucket's in place.
    bucket.upload(ca25_artifact, "fleet/other")
    shutil.copytree(ca25_artifact, folder / "other")
    done = run_cli("set-kvcache-num-blocks", bucket.url("fleet/qwen"), 12)
    assert done.returncode == 0, done.stderr
    added = {bucket.url("fleet/other"), url(folder / "other")}
    assert not added & set(w.model.paths())  # nothing tells the window about them

    w.action_refresh.trigger()
    qtbot.waitUntil(lambda: added <= set(w.model.paths()), timeout=60_000)
    qtbot.waitUntil(lambda: not w.jobs.active(), timeout=60_000)
    assert set(w.model.paths()) == before | added  # every row kept: the folder's, the server's, the bucket's
    assert _blocks(w, bucket.url("fleet/qwen")) == _cli_blocks(run_cli, bucket.url("fleet/qwen")) == 12
    assert _blocks(w, url(on_server)) == 21

    shutil.rmtree(folder / "other")  # gone from the server: gone from the table on the next Refresh
    w.action_refresh.trigger()
    qtbot.waitUntil(lambda: url(folder / "other") not in w.model.paths(), timeout=60_000)
    qtbot.waitUntil(lambda: not w.jobs.active(), timeout=60_000)
    assert set(w.model.paths()) == before | {bucket.url("fleet/other")}


def test_a_place_refresh_cannot_read_keeps_its_rows_marked_stale(
    qtbot: QtBot,
    place_window: MainWindow,  # noqa: F811
    bucket: BucketFixture,
    cr13_artifact: Path,
) -> None:
    from rbln_artifact_studio.gui.models.artifact_model import STATUS_COLUMN

    w = place_window
    bucket.upload(cr13_artifact, "fleet/qwen")
    source = _open_bucket_row(qtbot, w, bucket, "fleet/qwen")
    qtbot.waitUntil(lambda: not w.jobs.active(), timeout=30_000)
    for key in bucket.objects():  # the bucket goes away behind the window's back
        bucket.client.delete_object(Bucket=bucket.name, Key=key)
    bucket.client.delete_bucket(Bucket=bucket.name)
    with qtbot.waitSignal(w.jobs.jobFailed, timeout=60_000) as failed:
        w.action_refresh.trigger()
    assert failed.args[0].visible, "why it could not be read is in the jobs panel"
    row = w.model.row_of(source)
    assert row is not None and source in w.model.stale  # kept, but not passed off as what the bucket holds
    assert w.model.index(row, STATUS_COLUMN).data() == "ok · stale"
