"""Server ▸ Fleet Console: every source's NPUs (connected servers, the console's own servers, @groups) in a tab of
the main area, with the numbers the CLI's JSON gives; sort and filter in a worker (8,000 rows never hold the window
up); the free-memory threshold; "Where does this fit?" across every source; the sources reconnected on the next
start, RBLN_STUDIO_SSH_CONFIG honoured and the ssh config's hosts offered in Connect."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from prometheus.promserver import free_port
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QPushButton, QTableView, QTabWidget, QWidget
from pytestqt.qtbot import QtBot
from remote.conftest import control_dir  # noqa: F401 (fixture)
from remote.fleet_harness import CR13, GIB, Fleet, default_setups, fleet  # noqa: F401 (fixture)

from rbln_artifact_studio.core.display.fleet_console import Column, ConsoleRow, node_row
from rbln_artifact_studio.core.fleet.artifact import Artifact, open_artifact
from rbln_artifact_studio.core.fleet.host_groups import save_group
from rbln_artifact_studio.core.fleet.npu_status import Device, DeviceStatus, NpuProcess, ReadForm
from rbln_artifact_studio.gui.app.settings import ServerEntry, Settings
from rbln_artifact_studio.gui.app.tones import Tone, qcolor
from rbln_artifact_studio.gui.dialogs.connect_dialog import ConnectDialog
from rbln_artifact_studio.gui.dialogs.preferences_dialog import PreferencesDialog
from rbln_artifact_studio.gui.dialogs.resize_dialog import ResizeDialog
from rbln_artifact_studio.gui.models.console_model import SHORT, ConsoleModel
from rbln_artifact_studio.gui.models.jobs import JobManager
from rbln_artifact_studio.gui.window.fleet_console import SETTING_PERIOD, FleetConsole
from rbln_artifact_studio.gui.window.main_window import MainWindow
from rbln_artifact_studio.places.fleet_sources import NodeReading, Source, SourceKind, rows_of
from rbln_artifact_studio.remote import registry
from rbln_artifact_studio.remote.transport import SshOptions

from .conftest import _stop_jobs
from .widgets import present

Run = Callable[..., subprocess.CompletedProcess[str]]
HOSTS = ["npu-a", "npu-b", "npu-junk"]
WAIT = 90_000


@pytest.fixture
def groups(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The server groups' file in a folder of the test's own."""
    monkeypatch.setenv("RBLN_STUDIO_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "config"


@pytest.fixture
def console(qtbot: QtBot, fleet: Fleet, control_dir: Path, groups: Path) -> Iterator[FleetConsole]:  # noqa: F811
    """npu-a connected (File ▸ Connect), npu-b and npu-junk the console's own sources."""
    default_setups(fleet)
    registry.configure(SshOptions(config_file=fleet.client_config, control_dir=control_dir))
    jobs = JobManager()
    artifact = open_artifact(fleet.artifact)
    c = FleetConsole(jobs, lambda: ["npu-a"], lambda: artifact, ["npu-b", "npu-junk"], period=0, timeout=30)
    qtbot.addWidget(c)
    c.resize(1600, 700)
    c.show()
    yield c
    jobs.cancel_all()
    jobs.wait()
    registry.configure()


def _rows(model: ConsoleModel) -> list[ConsoleRow]:
    return [model.row_at(i) for i in range(model.rowCount())]


def _refresh(qtbot: QtBot, console: FleetConsole) -> None:
    with qtbot.waitSignal(console.refreshed, timeout=WAIT):
        console.refresh()


def test_the_console_shows_every_source_with_the_numbers_of_the_cli_json(
    qtbot: QtBot,
    console: FleetConsole,
    run_cli: Run,
    fleet: Fleet,  # noqa: F811
    control_dir: Path,  # noqa: F811
) -> None:
    _refresh(qtbot, console)
    done = run_cli("devices", *(f"ssh://{h}" for h in HOSTS), "--json", env=fleet.env(control_dir), timeout=90)
    cli = {r["host"]: r for r in json.loads(done.stdout)}
    rows = _rows(console.model)
    assert {r.node for r in rows} == set(HOSTS)  # the connected server and the console's own, at once
    for host, data in cli.items():
        mine = [r for r in rows if r.node == host]
        if data["error"] is not None:
            [failed] = mine
            assert failed.error == data["error"] and "cannot be true" in failed.texts[Column.HOLDERS]
            continue
        assert [(r.used, r.free, r.total) for r in mine] == [
            (d["memory_used"], d["memory_free"], d["memory_total"]) for d in data["devices"]
        ]
        for row, device in zip(mine, data["devices"], strict=True):
            assert row.texts[Column.PRODUCT] == device["name"] == "RBLN-CR13"
            assert [f"pid {p['pid']}" in row.texts[Column.HOLDERS] for p in device["processes"]] == [True] * len(
                device["processes"]
            )
    served = next(r for r in rows if r.node == "npu-a" and r.npu == 0)
    assert served.texts[Column.ARTIFACT] == f"ssh://npu-a{fleet.artifact}" and "+25.0%" in served.texts[Column.DRIFT]
    drift = console.model.index(_rows(console.model).index(served), Column.DRIFT)
    assert served.flagged and drift.data(Qt.ItemDataRole.ForegroundRole) == qcolor(Tone.WARNING)
    assert "3 source(s): 3 node(s), 3 NPU(s), 1 not read" in console.state.text()
    # the last hour, sampled while the console is open: one point per refresh
    _refresh(qtbot, console)
    assert len(console.model.history.points(served.key)) == 2


def test_sort_and_type_to_filter(qtbot: QtBot, console: FleetConsole, fleet: Fleet) -> None:  # noqa: F811
    fleet.setup(
        "npu-c",
        {"form": "json", "devices": [{"name": "RBLN-CA12", "used": 2 * GIB, "total": 16_877_879_296}] * 2},
    )
    with qtbot.waitSignal(console.refreshed, timeout=WAIT):
        assert console.sources.add("npu-c")
    model = console.model
    with qtbot.waitSignal(model.arranged, timeout=WAIT):
        console.table.horizontalHeader().setSortIndicator(Column.FREE, Qt.SortOrder.DescendingOrder)
    frees = [r.free for r in _rows(model) if r.free is not None]
    assert frees == sorted(frees, reverse=True) and len(frees) == 5
    assert _rows(model)[-1].error  # a node not read sorts last either way
    with qtbot.waitSignal(model.arranged, timeout=WAIT):
        qtbot.keyClicks(console.filter_edit, "ca12")
    assert [r.node for r in _rows(model)] == ["npu-c", "npu-c"]
    with qtbot.waitSignal(model.arranged, timeout=WAIT):
        console.filter_edit.setText("free < 20 GiB")
    assert {r.node for r in _rows(model)} == {"npu-c"}
    with qtbot.waitSignal(model.arranged, timeout=WAIT):
        console.filter_edit.setText("cr13 free>50GiB")
    assert {r.node for r in _rows(model)} == {"npu-a", "npu-b"}
    with qtbot.waitSignal(model.arranged, timeout=WAIT):
        console.filter_edit.setText("vllm")  # a process holding the NPU
    assert {r.node for r in _rows(model)} == {"npu-a", "npu-b"}


def test_where_does_this_fit_works_across_every_source(
    qtbot: QtBot,
    console: FleetConsole,
    run_cli: Run,
    fleet: Fleet,  # noqa: F811
    control_dir: Path,  # noqa: F811
    groups: Path,
) -> None:
    save_group("rack", ["npu-b"])
    console.sources.remove("npu-b")
    assert console.sources.add("@rack")  # npu-b now through its group
    full = {"form": "json", "devices": [{"name": "RBLN-CR13", "used": CR13 - fleet.need + GIB, "total": CR13}]}
    fleet.setup("npu-b", full)
    with qtbot.waitSignal(console.placed, timeout=WAIT):
        console.fit_button.click()
    env = {**fleet.env(control_dir), "RBLN_STUDIO_CONFIG_DIR": str(groups)}
    done = run_cli("place", str(fleet.artifact), "--on", "ssh://npu-a", "@rack", "ssh://npu-junk", "--json", env=env)
    [cli] = json.loads(done.stdout)["placements"]
    tree = console.place.tree
    first = present(tree.topLevelItem(0))
    assert [o["host"] for o in cli["options"]] == ["npu-a"] and first.text(0) == "1. npu-a"
    assert first.data(2, Qt.ItemDataRole.UserRole) == cli["options"][0]["headroom"]
    blocked = {b["host"]: b for b in cli["blocked"]}
    assert blocked["npu-b"]["block"] == "free_dram" and blocked["npu-b"]["fits_kvcache_num_blocks"]
    button = present(tree.findChild(QPushButton, "serversResizeCopy-npu-b"))
    assert str(blocked["npu-b"]["fits_kvcache_num_blocks"]) in button.text()
    with qtbot.waitSignal(console.resizeCopyRequested) as asked:
        button.click()
    artifact, blocks = asked.args
    assert isinstance(artifact, Artifact) and artifact.path == fleet.artifact
    assert blocks == blocked["npu-b"]["fits_kvcache_num_blocks"]
    assert "npu-junk" in blocked and blocked["npu-junk"]["block"] == "unreachable"
    assert console.sources.add("not a host/") is False and "is not a source" in console.state.text()


# ---- in the window: a tab of its own, remembered, reconnected -------------------------------------------------


@pytest.fixture
def fleet_env(
    fleet: Fleet,  # noqa: F811
    control_dir: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    groups: Path,
) -> Iterator[Fleet]:
    """The app reaches the fleet only through RBLN_STUDIO_SSH_CONFIG, as the CLI does (no setting names it)."""
    default_setups(fleet)
    monkeypatch.setenv("RBLN_STUDIO_SSH_CONFIG", str(fleet.client_config))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(control_dir))  # the shared connections end with the test
    yield fleet
    registry.configure()


def _window(qtbot: QtBot, settings_file: Path, width: int, height: int) -> MainWindow:
    """A main window filling a screen of this size (tests/gui/offscreen-screens.json has 1280x800, 1024x700 and
    1920x1080 ones)."""
    screen = next((s for s in QGuiApplication.screens() if s.size().toTuple() == (width, height)), None)
    if screen is None:
        pytest.skip("needs the offscreen screens of tests/gui/offscreen-screens.json")
    w = MainWindow(Settings(QSettings(str(settings_file), QSettings.Format.IniFormat)), debounce_ms=50)
    qtbot.addWidget(w, before_close_func=lambda widget: _stop_jobs(qtbot, widget))
    w.setScreen(screen)
    w.setGeometry(screen.geometry())
    w.show()
    return w


def _in_view(table: QTableView) -> tuple[set[int], set[int]]:
    """The columns and rows wholly in the table's viewport."""
    header, rows = table.horizontalHeader(), table.verticalHeader()
    width, height = table.viewport().width(), table.viewport().height()
    columns = {
        c
        for c in range(header.count())
        if header.sectionViewportPosition(c) >= 0 and header.sectionViewportPosition(c) + header.sectionSize(c) <= width
    }
    shown = {r for r in range(rows.count()) if rows.sectionViewportPosition(r) + rows.sectionSize(r) <= height}
    return columns, shown


@pytest.mark.parametrize(
    ("size", "key_columns"),
    [
        ((1024, 700), {Column.NODE, Column.NPU, Column.FREE, Column.MEMORY, Column.HISTORY}),
        ((1920, 1080), {Column.NODE, Column.NPU, Column.FREE, Column.MEMORY, Column.HISTORY, Column.DRIFT}),
    ],
    ids=["1024x700", "1920x1080"],
)
def test_the_console_is_a_tab_showing_every_source_with_its_key_columns_in_view(
    qtbot: QtBot, fleet_env: Fleet, tmp_path: Path, size: tuple[int, int], key_columns: set[int]
) -> None:
    store = tmp_path / "s.ini"
    earlier = Settings(QSettings(str(store), QSettings.Format.IniFormat))
    earlier.session.set_console_sources(["npu-a", "npu-b", "npu-junk"])
    earlier.flush()
    w = _window(qtbot, store, *size)
    console = present(w.server_menu.console, "the console, opened again with its remembered sources")
    with qtbot.waitSignal(console.refreshed, timeout=WAIT):
        w.server_menu.action_servers_view.trigger()
    tabs = present(w.server_menu.tabs)
    assert w.centralWidget() is tabs and tabs.currentWidget() is console  # the main area, not a dock
    columns, rows = _in_view(console.table)
    assert size[0] - 40 <= w.width() <= size[0] and size[1] - 60 <= w.height() <= size[1]  # the screen, less its frame
    assert key_columns <= columns, [console.table.horizontalHeader().sectionSize(c) for c in Column]
    nodes = [console.model.row_at(r).node for r in rows]
    assert sorted(nodes) == ["npu-a", "npu-a", "npu-b", "npu-junk"]  # the whole server and the failing one
    spare = console.table.viewport().height() // console.table.verticalHeader().defaultSectionSize()
    assert spare >= (12 if size[1] < 1000 else 25), "room for a rack of NPUs, not one row beside the jobs"


def test_sources_servers_and_threshold_are_there_again_on_the_next_start(
    qtbot: QtBot, fleet_env: Fleet, tmp_path: Path
) -> None:
    store = tmp_path / "s.ini"
    first = _window(qtbot, store, 1280, 800)
    console = first.server_menu.open_servers_view()
    console.sources.add("npu-b")
    entry = ServerEntry("npu-a", (str(fleet_env.artifact.parent),))
    first.settings.remember_server(entry)
    with qtbot.waitSignal(first.server_menu.servers.connected, timeout=WAIT):
        first.server_menu.servers.connect_server(entry)
    console.short_spin.setValue(140.0)
    _stop_jobs(qtbot, first)  # a refresh may still run: quit without asking
    first.close()
    first.settings.flush()
    assert not first.isVisible()

    again = _window(qtbot, store, 1280, 800)
    with qtbot.waitSignal(again.server_menu.servers.connected, timeout=WAIT) as connected:
        pass
    assert connected.args == ["npu-a"]
    assert again.model.row_of(f"ssh://npu-a{fleet_env.artifact}") is not None  # its folder scanned again
    reopened = present(again.server_menu.console, "the console, opened again")
    assert present(again.server_menu.tabs).currentWidget() is reopened
    assert reopened.sources.own == ["npu-b"] and reopened.sources.texts() == ["npu-a", "npu-b"]
    assert reopened.short_spin.value() == 140.0
    with qtbot.waitSignal(reopened.refreshed, timeout=WAIT):
        reopened.refresh()
    rows = _rows(reopened.model)
    assert {r.node for r in rows} == {"npu-a", "npu-b"}
    # 140 GiB: npu-a's busy NPU (and npu-b's) is short of free memory, npu-a's second (135 GiB free) too, none
    # of them a CR13 with 140 GiB free
    for i, row in enumerate(rows):
        short = row.free is not None and row.free < 140 * GIB
        index = reopened.model.index(i, Column.FREE)
        assert index.data(SHORT) is short
        assert (index.data(Qt.ItemDataRole.ForegroundRole) == qcolor(Tone.WARNING)) is short
    with qtbot.waitSignal(reopened.model.dataChanged):
        reopened.short_spin.setValue(0.0)
    assert not any(reopened.model.index(i, Column.FREE).data(SHORT) for i in range(len(rows)))


def test_the_ssh_config_hosts_are_offered_in_connect_and_preferences_choose_the_file(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    included = tmp_path / "more.conf"
    included.write_text("Host gpu-rack1-npu3 gpu-rack1-npu4\n  HostName 10.0.0.3\n")
    config = tmp_path / "ssh_config"
    config.write_text(
        f"Include {included}\nHost npu1 npu2\n  User ops\nHost *.internal !bastion\n  ProxyJump bastion\n"
        "Host=edge-7\nMatch host foo\n"
    )
    monkeypatch.setenv("RBLN_STUDIO_SSH_CONFIG", str(config))
    window.settings.remember_server(ServerEntry("npu9", ("/srv",)))
    window.server_menu.action_connect.trigger()
    dialog = next(d for d in QApplication.topLevelWidgets() if isinstance(d, ConnectDialog) and d.isVisible())
    with qtbot.waitSignal(window.server_menu.config_hosts_job.finished, timeout=WAIT):
        pass
    assert dialog.hosts() == ["npu9", "gpu-rack1-npu3", "gpu-rack1-npu4", "npu1", "npu2", "edge-7"]
    assert dialog.host_combo.isEditable()
    completer = present(dialog.host_combo.completer())
    completer.setCompletionPrefix("rack1")
    assert completer.completionCount() == 2
    dialog.reject()
    # Preferences: the file is chosen there; the environment variable, set, is said to win
    monkeypatch.delenv("RBLN_STUDIO_SSH_CONFIG")
    prefs = window.dialogs.show_preferences()
    assert isinstance(prefs, PreferencesDialog)
    prefs.ssh_config_edit.setText(str(config))
    prefs.accept()
    assert window.settings.ssh_config() == str(config)
    assert window.server_menu.servers._ssh_config == config  # servers are reached through it from now on
    window.server_menu.action_connect.trigger()
    with qtbot.waitSignal(window.server_menu.config_hosts_job.finished, timeout=WAIT):
        pass
    dialog = next(d for d in QApplication.topLevelWidgets() if isinstance(d, ConnectDialog) and d.isVisible())
    assert "edge-7" in dialog.hosts()
    dialog.reject()


def test_the_console_in_the_window_keeps_its_period_and_opens_resize_to_a_copy(
    qtbot: QtBot, window: MainWindow, cr13_artifact: Path
) -> None:
    console = window.server_menu.open_servers_view()
    assert present(window.server_menu.tabs).currentWidget() is console
    assert "No source yet" in console.state.text()
    console.period.setValue(5)
    assert console.timer.isActive() and console.timer.interval() == 5000
    assert int(window.settings.store.value(SETTING_PERIOD)) == 5
    console.period.setValue(0)
    assert not console.timer.isActive()
    console.resizeCopyRequested.emit(open_artifact(cr13_artifact), 12)
    dialog = next(d for d in QApplication.topLevelWidgets() if isinstance(d, ResizeDialog) and d.isVisible())
    assert dialog.mode_copy.isChecked() and dialog.target_spin.value() == 12
    dialog.reject()


# ---- scale: 1,000 nodes of 8 NPUs -------------------------------------------------------------------------------


def _fleet_rows(nodes: int, npus: int) -> list[ConsoleRow]:
    source = Source(SourceKind.SERVER, "fleet")
    readings = []
    for n in range(nodes):
        devices = tuple(
            Device(
                i,
                "RBLN-CA12",
                f"rbln{i}",
                (n * npus + i) % 16 * GIB // 2,
                16 * GIB,
                "10.0",
                (NpuProcess(i, 1000 + i, f"serve-{n}", GIB),),
                exact=True,
            )
            for i in range(npus)
        )
        name = f"node-{n:04d}"
        readings.append(NodeReading(source, name, DeviceStatus(name, "rbln-stat", devices, ReadForm.JSON)))
    return rows_of(readings)


def test_8000_rows_are_filtered_and_sorted_off_the_gui_thread(qtbot: QtBot) -> None:
    jobs = JobManager()
    model = ConsoleModel(jobs)
    view = QTableView()
    view.setModel(model)
    view.setSortingEnabled(True)
    qtbot.addWidget(view)
    rows = _fleet_rows(1000, 8)
    assert len(rows) == 8000
    threads: list[threading.Thread] = []
    real_keeps = type(model.query).keeps

    def spy(query: object, search: str, free: int | None) -> bool:
        threads.append(threading.current_thread())
        return real_keeps(query, search, free)  # type: ignore[arg-type]

    with qtbot.waitSignal(model.arranged, timeout=WAIT):
        model.set_rows(rows)
    assert model.rowCount() == 8000
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(type(model.query), "keeps", spy)
        model.set_filter("node-0042")
        # the call returned at once: the table still shows the 8,000 rows, the filter is worked out in a worker
        assert model.arranging and model.rowCount() == 8000
        with qtbot.waitSignal(model.arranged, timeout=WAIT):
            pass
    assert model.rowCount() == 8 and {model.row_at(i).node for i in range(8)} == {"node-0042"}
    assert threads and threading.main_thread() not in threads
    view.sortByColumn(Column.FREE, Qt.SortOrder.AscendingOrder)
    assert model.arranging  # sorting too
    with qtbot.waitSignal(model.arranged, timeout=WAIT):
        model.set_filter("")  # a newer filter: the sort's answer is dropped, this one carries the sort in force
    frees = [model.row_at(i).free for i in range(model.rowCount())]
    assert len(frees) == 8000 and frees == sorted(frees)  # type: ignore[type-var]
    jobs.cancel_all()
    jobs.wait()


def test_the_console_model_is_a_sound_qt_model(qtbot: QtBot, qtmodeltester: object) -> None:
    jobs = JobManager()
    model = ConsoleModel(jobs)
    rows = _fleet_rows(5, 8)
    rows.append(node_row("fleet", "node-9999", "did not answer within 60 s."))
    with qtbot.waitSignal(model.arranged, timeout=WAIT):
        model.set_rows(rows)
    assert model.rowCount() == 41
    qtmodeltester.check(model, force_py=True)  # type: ignore[attr-defined]
    jobs.cancel_all()
    jobs.wait()


def test_a_source_added_while_a_read_runs_is_read_when_it_ends(
    qtbot: QtBot,
    console: FleetConsole,
    fleet: Fleet,  # noqa: F811
) -> None:
    first = console.refresh()
    assert first is not None
    console.sources.add("npu-c")  # the read of the three others still runs
    with qtbot.waitSignal(first.finished, timeout=WAIT):
        pass
    qtbot.waitUntil(lambda: "npu-c" in {r.node for r in _rows(console.model)}, timeout=WAIT)


def test_a_console_no_one_sees_reads_nothing_until_it_shows_again(qtbot: QtBot) -> None:
    """Its tab not current, or its window minimized: the refresh period asks no source; shown again, it reads."""
    jobs = JobManager()
    nowhere = f"http://127.0.0.1:{free_port()}"  # nothing listens: each read ends at once, a row saying so
    console = FleetConsole(jobs, lambda: [], lambda: None, [nowhere], period=0, timeout=10)
    tabs = QTabWidget()
    artifacts = QWidget()
    tabs.addTab(artifacts, "Artifacts")
    tabs.addTab(console, "Fleet Console")
    qtbot.addWidget(tabs)
    tabs.show()
    tabs.setCurrentWidget(console)
    with qtbot.waitSignal(console.refreshed, timeout=WAIT):
        console.refresh()
    read = console.state.text()
    assert read.startswith("1 source(s): 1 node(s)")

    console.period.setValue(1)
    for hide, show in ((lambda: tabs.setCurrentWidget(artifacts), lambda: tabs.setCurrentWidget(console)),
                       (tabs.showMinimized, tabs.showNormal)):  # fmt: skip
        hide()
        with qtbot.waitSignal(console.timer.timeout, timeout=WAIT):
            pass  # the period came round while no one could see it
        assert console.state.text() == read, "read while hidden"
        with qtbot.waitSignal(console.refreshed, timeout=WAIT):
            show()  # the read it missed, now
    console.period.setValue(0)
    jobs.cancel_all()
    jobs.wait()


def test_a_console_restored_behind_the_artifacts_reads_once_its_tab_is_shown(qtbot: QtBot, tmp_path: Path) -> None:
    store = tmp_path / "s.ini"
    earlier = Settings(QSettings(str(store), QSettings.Format.IniFormat))
    earlier.session.set_console_sources([f"http://127.0.0.1:{free_port()}"])  # nothing listens there
    earlier.flush()
    w = _window(qtbot, store, 1280, 800)
    console, tabs = present(w.server_menu.console), present(w.server_menu.tabs)
    assert tabs.currentWidget() is not console  # the artifacts in front, as the user left them
    assert "source(s)" not in console.state.text(), "read behind the artifacts"
    with qtbot.waitSignal(console.refreshed, timeout=WAIT):
        tabs.setCurrentWidget(console)
    assert console.state.text().startswith("1 source(s): 1 node(s), 0 NPU(s), 1 not read")
