"""The desktop scans every kind of place through its Kind (places/dispatch): a folder here in the scan process
(its first scan and a rescan after a change), a server's folders, and a registered kind's place. Every Kind is
wrapped in one that marks the rows it hands out (marking_kind.py): the table shows exactly the marked rows, the
fast rows marked by the Kind's scan and their verdicts by its verify."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from gui import conftest as gui_fixtures
from pytestqt.qtbot import QtBot
from remote.conftest import HOST_ALIAS, SshServer, control_dir, server, ssh_server  # noqa: F401 (fixtures)

from places.marking_kind import CHECKED, LISTED, marking
from places.test_registered_place import fleet, plugin, served  # noqa: F401 (fixtures)
from rbln_artifact_studio.core.fleet.columns import TITLES
from rbln_artifact_studio.core.location import parse_location
from rbln_artifact_studio.gui.app.settings import ServerEntry, Settings
from rbln_artifact_studio.gui.models import folder_scan
from rbln_artifact_studio.gui.window.main_window import MainWindow
from rbln_artifact_studio.places import dispatch

HERE = Path(__file__).parent
settings, window = gui_fixtures.settings, gui_fixtures.window
pytestmark = pytest.mark.qt_log_ignore(gui_fixtures.OFFSCREEN_NOTICE)
NAMES = ("qwen3-8b-ca25x4", "qwen3-8b-cr13")


@pytest.fixture
def marked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every Kind marked, in this process (servers, places) and in the scan process a folder here is read in."""
    monkeypatch.setattr(dispatch, "kind_of", marking(dispatch.kind_of))
    monkeypatch.setattr(folder_scan, "command", lambda: [sys.executable, str(HERE / "marked_scan_process.py")])


def _shown(w: MainWindow) -> dict[str, tuple[str, str]]:
    """Each row's path: its Name and Status cells as the table shows them."""
    name, status = TITLES.index("Name"), TITLES.index("Status")
    return {
        w.model.summary(r).path: (w.model.index(r, name).data(), w.model.index(r, status).data())
        for r in range(w.model.rowCount())
    }


def _copies(folder: Path, *artifacts: Path) -> Path:
    folder.mkdir()
    for artifact in artifacts:
        shutil.copytree(artifact, folder / artifact.name)
    return folder


def test_a_folder_here_is_shown_as_its_kind_reads_it_first_scan_and_rescan(
    qtbot: QtBot, marked: None, window: MainWindow, tmp_path: Path, cr13_artifact: Path, ca25_artifact: Path
) -> None:
    here = _copies(tmp_path / "here", cr13_artifact)
    gui_fixtures.open_folder(qtbot, window, here)
    qtbot.waitUntil(lambda: _shown(window)[str(here / NAMES[1])][1] == "ok", timeout=30_000)
    assert _shown(window) == {str(here / NAMES[1]): (NAMES[1] + LISTED + CHECKED, "ok")}
    shutil.copytree(ca25_artifact, here / "staging")  # a new artifact, made whole by one rename as a copy is
    (here / "staging").rename(here / NAMES[0])
    qtbot.waitUntil(lambda: len(_shown(window)) == 2, timeout=30_000)  # the watcher's rescan, through the Kind
    qtbot.waitUntil(lambda: _shown(window)[str(here / NAMES[0])][1] == "ok", timeout=30_000)
    assert _shown(window)[str(here / NAMES[0])] == (NAMES[0] + LISTED + CHECKED, "ok")


@pytest.fixture
def server_window(
    qtbot: QtBot,
    settings: Settings,
    server: SshServer,  # noqa: F811
    control_dir: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[MainWindow]:
    """A main window whose ssh_config (a setting) reaches the test server."""
    config = tmp_path / "ssh_config"
    config.write_text(server.client_config.read_text())
    settings.store.setValue("ssh/configFile", str(config))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(control_dir))  # the shared connections end with the test
    w = MainWindow(settings, debounce_ms=50)
    qtbot.addWidget(w, before_close_func=lambda widget: gui_fixtures._stop_jobs(qtbot, widget))
    w.show()
    yield w
    gui_fixtures._stop_jobs(qtbot, w)


def test_a_servers_folder_is_shown_as_its_kind_reads_it(
    qtbot: QtBot,
    marked: None,
    server_window: MainWindow,
    tmp_path: Path,
    cr13_artifact: Path,
    ca25_artifact: Path,
) -> None:
    there = _copies(tmp_path / "on server", cr13_artifact, ca25_artifact)
    gui_fixtures.make_real_like(cr13_artifact, there / "qwen3-8b-real")  # rebel reads it there, in the Kind's verify
    with qtbot.waitSignal(server_window.server_menu.servers.connected, timeout=30_000):
        server_window.server_menu.servers.connect_server(ServerEntry(HOST_ALIAS, (str(there),)))
    url = f"ssh://{HOST_ALIAS}{there}"
    real = f"{url}/qwen3-8b-real"
    qtbot.waitUntil(lambda: _shown(server_window).get(real, ("", "checking"))[1] != "checking", timeout=30_000)
    shown = _shown(server_window)
    assert shown.pop(real)[0] == "qwen3-8b-real" + LISTED + CHECKED
    # The simulator's artifacts get their verdicts in the walk there: nothing left for the Kind's verify.
    assert shown == {f"{url}/{name}": (name + LISTED, "ok") for name in NAMES}


def test_a_registered_kinds_place_is_shown_as_its_kind_reads_it(
    qtbot: QtBot,
    marked: None,
    plugin: Path,  # noqa: F811
    window: MainWindow,
    served: str,  # noqa: F811
) -> None:
    from rbln_artifact_studio.gui.models.place_scan import open_place

    job = open_place(window.jobs, window.model, parse_location(served))
    with qtbot.waitSignal(job.finished, timeout=30_000):
        pass
    # Its scan reads every verdict: its verify has none to give.
    assert _shown(window) == {f"{served}/{name}": (name + LISTED, "ok") for name in NAMES}
