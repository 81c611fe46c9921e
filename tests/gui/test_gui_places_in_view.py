"""Several places in one table (issue 33 item 1): rows of two folders on this computer say which folder they are
from, and a server's artifact downloads to this computer and is offered in the window when it lands."""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot
from remote.conftest import (  # noqa: F401 (fixtures)
    HOST_ALIAS,
    SshServer,
    control_dir,
    server,
    ssh_server,
)

from rbln_artifact_studio.core.fleet.columns import TITLES
from rbln_artifact_studio.core.location import ServerFolder
from rbln_artifact_studio.gui.app.settings import ServerEntry, Settings
from rbln_artifact_studio.gui.models.artifact_model import HOST_COLUMN, place_labels
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder
from .test_gui_servers import server_window  # noqa: F401 (fixture)
from .test_gui_small_screen import on_small_screen

assert TITLES[HOST_COLUMN] == "Host"


def _host_cells(w: MainWindow) -> dict[str, str]:
    return {w.model.summary(r).path: w.model.index(r, HOST_COLUMN).data() for r in range(w.model.rowCount())}


def _add_beside(qtbot: QtBot, w: MainWindow, folder: Path) -> None:
    with qtbot.waitSignal(w.workspace.scanFinished, timeout=30_000):
        w.workspace.add(folder)


def test_rows_of_two_local_folders_name_their_folder_in_the_host_column(
    qtbot: QtBot, settings: Settings, workspace: Path, tmp_path_factory: pytest.TempPathFactory, cr13_artifact: Path
) -> None:
    w = on_small_screen(qtbot, settings)
    open_folder(qtbot, w, workspace)
    assert set(_host_cells(w).values()) == {"local"}  # one folder: as the CLI says it

    outputs = tmp_path_factory.mktemp("outputs")
    copy = outputs / "qwen3-8b-cr13-copy"
    shutil.copytree(cr13_artifact, copy)
    _add_beside(qtbot, w, outputs)
    first, second = f"local: {workspace.name}", f"local: {outputs.name}"
    cells = _host_cells(w)
    assert cells[str(copy)] == second
    assert {cells[p] for p in cells if p != str(copy)} == {first}
    row = w.model.row_of(str(copy))
    assert row is not None
    assert w.model.index(row, HOST_COLUMN).data(Qt.ItemDataRole.ToolTipRole) == f"On this computer, in {outputs}"

    w.browser.filter_edit.setText(outputs.name)  # the filter finds a folder's rows by its name
    assert [s.path for s in w.browser.shown_summaries()] == [str(copy)]
    w.browser.filter_edit.clear()

    w.browser.view.sortByColumn(HOST_COLUMN, Qt.SortOrder.DescendingOrder)  # grouped by folder
    hosts = [w.model.index(r, HOST_COLUMN).data() for r in range(w.model.rowCount())]
    assert hosts == sorted(hosts, reverse=True)

    open_folder(qtbot, w, workspace)  # one folder again: "local" as before
    assert set(_host_cells(w).values()) == {"local"}


def test_place_labels_tell_apart_the_roots_of_one_host() -> None:
    assert place_labels(["/data/a/models", "/data/b/models", "/srv/outputs"]) == {
        "/data/a/models": "local: a/models",
        "/data/b/models": "local: b/models",
        "/srv/outputs": "local: outputs",
    }
    assert place_labels(["/data/models"]) == {}  # one folder: its rows say "local"
    assert place_labels(["/data/models", "ssh://gpu1/data/models", "s3://fleet/models"]) == {}  # one root each
    assert place_labels(["ssh://gpu1/data/models", "ssh://gpu1/srv/models", "ssh://gpu2/data/models"]) == {
        "ssh://gpu1/data/models": "gpu1: data/models",
        "ssh://gpu1/srv/models": "gpu1: srv/models",
    }
    assert place_labels(["s3://fleet/prod", "s3://fleet/staging/", "s3://other"]) == {
        "s3://fleet/prod": "s3://fleet: prod",
        "s3://fleet/staging": "s3://fleet: staging",
    }


def test_a_server_artifact_downloads_here_and_is_offered_beside_the_shown_folder(
    qtbot: QtBot,
    server_window: MainWindow,  # noqa: F811
    workspace: Path,
    cr13_artifact: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    w = server_window
    on_server = tmp_path_factory.mktemp("on server")
    served = Path(shutil.copytree(cr13_artifact, on_server / "qwen3-8b-served"))
    also = tmp_path_factory.mktemp("also on server")  # a second folder there: its rows name their folder
    shutil.copytree(cr13_artifact, also / "qwen3-8b-also")
    open_folder(qtbot, w, workspace)
    action = w.artifact_actions.download.action
    assert w.browser.select_path(str(cr13_artifact))
    assert not action.isEnabled(), "a local artifact is here already"
    with qtbot.waitSignal(w.server_menu.servers.connected, timeout=30_000):
        w.server_menu.servers.connect_server(ServerEntry(HOST_ALIAS, (str(on_server), str(also))))
    url = str(ServerFolder(HOST_ALIAS, str(served)))
    qtbot.waitUntil(lambda: w.model.row_of(url) is not None, timeout=30_000)
    assert w.browser.select_path(url)
    qtbot.waitUntil(action.isEnabled, timeout=10_000)
    assert action in w.artifact_actions.menu_actions()  # the table's context menu and the Artifact menu

    downloads = tmp_path_factory.mktemp("downloads")
    w.settings.copy_folder.set(str(downloads))  # the folder last chosen for copies is proposed
    dialog = w.artifact_actions.download.choose_folder()
    assert dialog is not None and Path(dialog.directory().absolutePath()) == downloads
    with qtbot.waitSignal(w.jobs.jobAdded, timeout=10_000) as added:
        dialog.accept()  # "Download Here" on the folder proposed
    assert not dialog.isVisible()
    job = added.args[0]
    with qtbot.waitSignal(job.finished, timeout=60_000):
        pass
    assert job.state.value == "succeeded", job.failure
    landed = downloads / served.name
    assert not filecmp.dircmp(served, landed).diff_files and sorted(p.name for p in landed.iterdir()) == sorted(
        p.name for p in served.iterdir()
    )
    notice = w.results  # outside the shown folder: one click opens it beside
    assert notice.bar.isVisible() and str(landed) in notice.label.text()
    with qtbot.waitSignal(w.workspace.scanFinished, timeout=30_000):
        qtbot.mouseClick(notice.open_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.browser.current_path() == str(landed), timeout=20_000)
    cells = _host_cells(w)
    assert cells[str(landed)] == f"local: {downloads.name}" and cells[str(cr13_artifact)] == f"local: {workspace.name}"
    assert cells[url] == f"{HOST_ALIAS}: {on_server.name}"
    assert cells[str(ServerFolder(HOST_ALIAS, str(also / "qwen3-8b-also")))] == f"{HOST_ALIAS}: {also.name}"

    # Again into the same folder: refused with the reason, nothing changed there.
    assert w.browser.select_path(url)
    qtbot.waitUntil(action.isEnabled, timeout=10_000)
    job = w.artifact_actions.download.start(ServerFolder(HOST_ALIAS, str(served)), landed)
    with qtbot.waitSignal(job.finished, timeout=60_000):
        pass
    assert job.state.value == "failed" and job.failure is not None
    assert "exists and is not empty" in job.failure.reason
    box = next(b for b in w.findChildren(QMessageBox) if b.objectName() == "errorDialog" and b.isVisible())
    assert "exists and is not empty" in box.text()
    box.close()
