"""A copy's default never crosses to another machine or store (a real sshd and a real SeaweedFS): after a local
artifact's copy is sent to a server, a bucket's artifact and a local one propose nothing on that server; the server
is proposed again for copies of artifacts of the place it was chosen for, with a note beside Apply."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from gui import conftest as gui_fixtures
from gui.conftest import open_folder
from gui.widgets import child
from PySide6.QtWidgets import QLabel, QLineEdit
from pytestqt.qtbot import QtBot
from remote.conftest import (  # noqa: F401 (the server's fixtures, used by name)
    SshServer,
    control_dir,
    server,
    ssh_server,
    url,
)

from objectstore.conftest import BucketFixture
from objectstore.test_outputs_elsewhere_gui import (  # noqa: F401 (the window's fixtures, used by name)
    _apply,
    _open_bucket_row,
    _resize_copy,
    _retype,
    home,
    place_window,
)
from rbln_artifact_studio.core.storage.jsonfile import read_block_count
from rbln_artifact_studio.gui.window.main_window import MainWindow

settings = gui_fixtures.settings
pytestmark = pytest.mark.qt_log_ignore(gui_fixtures.OFFSCREEN_NOTICE)


def test_a_copy_sent_to_a_server_is_not_the_default_of_another_place(
    qtbot: QtBot,
    place_window: MainWindow,  # noqa: F811
    bucket: BucketFixture,
    cr13_artifact: Path,
    home: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    w = place_window
    bucket.upload(cr13_artifact, "fleet/qwen")
    local = tmp_path / "here"
    local.mkdir()
    mine = Path(shutil.move(cr13_artifact, local / "mine"))
    open_folder(qtbot, w, local)
    assert w.browser.select_path(str(mine))
    qtbot.waitUntil(lambda: w.artifact is not None and w.artifact.path == mine, timeout=10_000)
    sent = tmp_path / "srv" / "mine-12"
    sent.parent.mkdir()
    dialog = _resize_copy(qtbot, w, 12)
    _retype(qtbot, child(dialog, QLineEdit, "resizeOutputEdit"), url(sent))
    note = child(dialog, QLabel, "resizeCrossingNote")
    assert note.isVisible() and "this computer" in note.text()  # the user chose another machine: said so
    _apply(qtbot, w, dialog)
    assert read_block_count(sent) == 12

    _open_bucket_row(qtbot, w, bucket, "fleet/qwen")
    from_bucket = _resize_copy(qtbot, w, 13)
    proposed = child(from_bucket, QLineEdit, "resizeOutputEdit").text()
    assert proposed == str(home / "qwen-kv13"), "a folder here, nothing on the server the last copy went to"
    assert not child(from_bucket, QLabel, "resizeCrossingNote").isVisible()
    route = child(from_bucket, QLabel, "resizeCopyRoute")  # the kind's capabilities say how the copy is made
    assert route.isVisible() and route.text().startswith(f"Downloaded from {bucket.url()}")
    _retype(qtbot, child(from_bucket, QLineEdit, "resizeOutputEdit"), bucket.url("fleet/qwen-13"))
    assert route.text().startswith(f"Made on {bucket.url()}")  # a server-side copy in the bucket
    from_bucket.reject()

    assert w.browser.select_path(str(mine))
    qtbot.waitUntil(lambda: w.artifact is not None and w.artifact.path == mine, timeout=10_000)
    again = _resize_copy(qtbot, w, 14)  # the same place's artifact: the server it chose is proposed, and said
    assert child(again, QLineEdit, "resizeOutputEdit").text() == url(sent.parent / "mine-kv14")
    assert child(again, QLabel, "resizeCrossingNote").isVisible()
    again.reject()
