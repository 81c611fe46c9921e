"""A row names its place (issue 43 item 2): at 1024x700 the place of each row (a folder here, a server, a bucket)
reads beside its name without scrolling, and a bucket row's Jobs entry and Where-fits title name it as the CLI does."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from objectstore.conftest import BucketFixture, bucket, seaweed  # noqa: F401 (fixtures)
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QLineEdit, QPushButton, QRadioButton, QSpinBox, QStyle
from pytestqt.qtbot import QtBot
from remote.conftest import (  # noqa: F401 (fixtures)
    HOST_ALIAS,
    SshServer,
    control_dir,
    server,
    ssh_server,
)

from rbln_artifact_studio.gui.app.settings import ServerEntry, Settings
from rbln_artifact_studio.gui.dialogs.resize_dialog import ResizeDialog
from rbln_artifact_studio.gui.models.artifact_model import HOST_COLUMN, NAME_COLUMN
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder
from .test_gui_small_screen import on_small_screen
from .widgets import child, present

WAIT = 60_000
NAME = "qwen"


@pytest.fixture
def three_places(
    qtbot: QtBot,
    settings: Settings,
    tmp_path: Path,
    cr13_artifact: Path,
    server: SshServer,  # noqa: F811
    control_dir: Path,  # noqa: F811
    bucket: BucketFixture,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[MainWindow, dict[str, str]]:
    """A 1024x700 window showing an artifact named NAME in a folder here, on the server and in the bucket; the
    three rows' locations as the CLI names them, by place."""
    here, there = tmp_path / "here", tmp_path / "there"
    for folder in (here, there):
        shutil.copytree(cr13_artifact, folder / NAME)
    bucket.upload(cr13_artifact, f"fleet/{NAME}")
    settings.store.setValue("ssh/configFile", str(server.client_config))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(control_dir))
    w = on_small_screen(qtbot, settings)
    open_folder(qtbot, w, here)
    with qtbot.waitSignal(w.server_menu.servers.connected, timeout=WAIT):
        w.server_menu.servers.connect_server(ServerEntry(HOST_ALIAS, (str(there),)))
    w.dialogs.reopen_bucket({"bucket": bucket.name, "prefix": "fleet"})  # the chain's store: AWS_ENDPOINT_URL
    rows = {
        "here": str(here / NAME),
        "server": f"ssh://{HOST_ALIAS}{there / NAME}",
        "bucket": bucket.url(f"fleet/{NAME}"),
    }
    qtbot.waitUntil(lambda: all(w.model.row_of(location) is not None for location in rows.values()), timeout=WAIT)
    return w, rows


def test_each_rows_place_reads_beside_its_name_at_1024(
    three_places: tuple[MainWindow, dict[str, str]],
    bucket: BucketFixture,  # noqa: F811
) -> None:
    w, rows = three_places
    view = w.browser.view
    assert w.width() <= 1024
    assert view.horizontalScrollBar().value() == 0
    margin = 1 + view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view)
    shown = view.viewport().rect()
    places = {}
    for where, location in rows.items():
        row = present(w.model.row_of(location))
        name, place = (w.browser.proxy.mapFromSource(w.model.index(row, c)) for c in (NAME_COLUMN, HOST_COLUMN))
        assert name.data() == NAME
        places[where] = text = place.data()
        for cell in (name, place):  # in the viewport as it opens: no scrolling sideways
            assert shown.contains(view.visualRect(cell)), (where, cell.data(), view.visualRect(cell), shown)
        whole = view.fontMetrics().horizontalAdvance(text) + 2 * margin
        assert whole <= view.visualRect(place).width(), (where, text)  # drawn whole, not elided
    assert places == {"here": "local", "server": HOST_ALIAS, "bucket": f"s3://{bucket.name}"}
    assert rows["server"].startswith(f"ssh://{places['server']}/") and rows["bucket"].startswith(places["bucket"] + "/")


def test_a_bucket_rows_job_and_where_it_fits_name_it_as_the_cli_does(
    qtbot: QtBot,
    three_places: tuple[MainWindow, dict[str, str]],
    server: SshServer,  # noqa: F811
    control_dir: Path,  # noqa: F811
    run_cli: Callable[..., object],
) -> None:
    w, rows = three_places
    location = rows["bucket"]
    assert w.browser.select_path(location)
    qtbot.waitUntil(lambda: w.artifact is not None and str(w.artifact.where) == location, timeout=WAIT)

    console = w.server_menu.open_servers_view()
    with qtbot.waitSignal(console.placed, timeout=WAIT):
        console.fit_button.click()
    env = {"RBLN_STUDIO_SSH_CONFIG": str(server.client_config), "XDG_RUNTIME_DIR": str(control_dir)}
    done = run_cli("place", location, "--on", f"ssh://{HOST_ALIAS}", env=env)
    cli_title = done.stdout.splitlines()[0]  # type: ignore[attr-defined]
    assert cli_title.startswith(f"{location} (")
    assert console.place.title.text() == cli_title

    dialog = w.dialogs.resize_dialog_for(present(w.artifact))
    assert dialog.windowTitle() == f"Resize KV cache: {location}"
    radio = child(dialog, QRadioButton, "resizeModeInPlace")
    qtbot.mouseClick(radio, Qt.MouseButton.LeftButton, pos=QPoint(8, radio.height() // 2))
    spin = child(dialog, QSpinBox, "resizeTargetSpin")
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin.lineEdit(), "12")
    assert child(dialog, QLineEdit, "resizeCommand").text().endswith(f" {location} 12")
    button = child(dialog, QPushButton, "resizeApplyButton")
    qtbot.waitUntil(button.isEnabled, timeout=WAIT)
    with qtbot.waitSignal(w.jobs.jobAdded) as added:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    job = added.args[0]
    entry = present(w.jobs_panel.row_for(job))
    assert entry.title.full_text == f"Resize {location} to 12 blocks (in place)"
    with qtbot.waitSignal(job.succeeded, timeout=WAIT):
        pass
    assert isinstance(dialog, ResizeDialog)
