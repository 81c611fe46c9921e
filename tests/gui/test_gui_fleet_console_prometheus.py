"""The fleet console with a real Prometheus (scraping the exporter stand-in) beside the real sshd fleet: its nodes
and pods shown with utilization and temperature, its NPUs' last hour from a range query, "Where does this fit?"
across both, credentials kept out of the remembered URL; and the console drawn for docs/servers.md with 60 nodes
at 1280x800 in both themes."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus.conftest import CR13, NODES, Monitoring
from prometheus.promserver import PASSWORD, USER, Prometheus, running_exporter, running_prometheus
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot
from remote.conftest import control_dir  # noqa: F401 (fixture)
from remote.fleet_harness import GIB, Fleet, default_setups, fleet  # noqa: F401 (fixture)

from rbln_artifact_studio.core.display.fleet_console import Column, ConsoleRow, MemoryHistory
from rbln_artifact_studio.core.fleet.artifact import open_artifact
from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.app.theme import Theme
from rbln_artifact_studio.gui.models import console_reading
from rbln_artifact_studio.gui.models.console_model import ConsoleModel
from rbln_artifact_studio.gui.models.jobs import JobManager
from rbln_artifact_studio.gui.window.fleet_console import FleetConsole
from rbln_artifact_studio.gui.window.main_window import MainWindow
from rbln_artifact_studio.remote import registry
from rbln_artifact_studio.remote.transport import SshOptions

from .conftest import _stop_jobs
from .widgets import present

WAIT = 90_000
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def mixed(
    qtbot: QtBot,
    fleet: Fleet,  # noqa: F811
    control_dir: Path,  # noqa: F811
    monitoring: Monitoring,
) -> Iterator[FleetConsole]:
    """npu-a over SSH and the session's Prometheus, in one console."""
    default_setups(fleet)
    registry.configure(SshOptions(config_file=fleet.client_config, control_dir=control_dir))
    jobs = JobManager()
    artifact = open_artifact(fleet.artifact)
    c = FleetConsole(jobs, lambda: ["npu-a"], lambda: artifact, [monitoring.url], period=0, timeout=30)
    qtbot.addWidget(c)
    c.resize(1600, 800)
    c.show()
    yield c
    jobs.cancel_all()
    jobs.wait()
    registry.configure()


def _rows(model: ConsoleModel) -> list[ConsoleRow]:
    return [model.row_at(i) for i in range(model.rowCount())]


def test_prometheus_nodes_and_ssh_servers_in_one_table_with_their_last_hour(
    qtbot: QtBot,
    mixed: FleetConsole,
    monitoring: Monitoring,
) -> None:
    with qtbot.waitSignals([mixed.refreshed, mixed.historyShown], timeout=WAIT):
        mixed.refresh()
    rows = _rows(mixed.model)
    by_node: dict[str, list[ConsoleRow]] = {}
    for row in rows:
        by_node.setdefault(row.node, []).append(row)
    # every Prometheus node (one it cannot scrape under its target's name) and the SSH server, at once
    assert (set(NODES) - {"down-1"}) | {"down-1:50051", "npu-a"} <= set(by_node)
    legacy = by_node["legacy-1"][0]
    assert legacy.used == 40 * GIB and legacy.total == CR13 and legacy.source == monitoring.url
    assert legacy.texts[Column.UTIL] == "56%" and legacy.texts[Column.TEMPERATURE] == "47 °C"
    assert by_node["current-1"][0].texts[Column.TEMPERATURE] == "47 °C"  # the other name family
    assert by_node["pods-1"][0].texts[Column.HOLDERS] == "pod team-a/llm-0 (vllm)"
    [down] = by_node["down-1:50051"]
    assert down.error and "up == 0" in down.error
    [junk] = by_node["junk-1"]
    assert "cannot all be true" in junk.error
    npu_a = by_node["npu-a"][0]
    assert npu_a.texts[Column.UTIL] == "0%" and npu_a.texts[Column.TEMPERATURE] == "38 °C"  # rbln-stat -j's
    # the last hour from Prometheus' range query (the console samples only the SSH servers itself)
    assert mixed.model.history.points(legacy.key) and all(
        used == 40 * GIB for _, used in mixed.model.history.points(legacy.key)
    )
    assert len(mixed.model.history.points(npu_a.key)) == 1  # sampled: one reading so far
    with qtbot.waitSignal(mixed.model.arranged, timeout=WAIT):
        mixed.filter_edit.setText("llm-0")  # a pod
    assert [r.node for r in _rows(mixed.model)] == ["pods-1"]


def test_the_last_hour_is_made_in_the_workers_and_shown_as_it_was_made(
    qtbot: QtBot, mixed: FleetConsole, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The GUI thread does no work per NPU on the history: every snapshot (an SSH server's samples, Prometheus'
    range query) is made in a worker from the newest one, and the window shows the one it is handed as it is. The
    range query is read once the new rows are shown (their repaint has the interpreter to itself)."""
    made: list[tuple[str, threading.Thread, MemoryHistory]] = []
    for name in ("sampled", "with_series"):
        real = getattr(MemoryHistory, name)

        def spy(self: MemoryHistory, *args: object, real: Any = real, name: str = name) -> MemoryHistory:
            out: MemoryHistory = real(self, *args)
            made.append((name, threading.current_thread(), out))
            return out

        monkeypatch.setattr(MemoryHistory, name, spy)
    order: list[str] = []
    read_history = console_reading.read_history

    def reading_the_last_hour(*args: Any) -> Any:
        order.append("last hour")
        return read_history(*args)

    monkeypatch.setattr(console_reading, "read_history", reading_the_last_hour)
    qtbot.waitUntil(lambda: not mixed.model.arranging, timeout=WAIT)  # the empty table's first sort, at its start
    mixed.model.arranged.connect(lambda: order.append("rows shown"))
    for _ in range(2):
        with qtbot.waitSignals([mixed.refreshed, mixed.historyShown], timeout=WAIT):
            mixed.refresh()
    assert [m[0] for m in made] == ["sampled", "with_series"] * 2  # each from the one before
    assert threading.main_thread() not in {m[1] for m in made}
    assert mixed.model.history is made[-1][2]  # shown as the worker made it: no copy, no record, no sort here
    assert order == ["rows shown", "last hour"] * 2


def test_where_does_this_fit_across_prometheus_and_ssh(
    qtbot: QtBot,
    mixed: FleetConsole,
) -> None:
    with qtbot.waitSignal(mixed.placed, timeout=WAIT) as placed:
        mixed.fit_button.click()
    placement = placed.args[0]
    hosts = {o.host for o in placement.options}
    assert {"npu-a", "legacy-1", "current-1"} <= hosts  # 40 GiB used of a CR13: room for the 8B model
    blocked = {b.host: b for b in placement.blocked}
    assert blocked["down-1:50051"].block.name == "UNREACHABLE"
    tree = mixed.place.tree
    shown = [present(tree.topLevelItem(i)).text(0) for i in range(tree.topLevelItemCount())]
    assert any(text.endswith("legacy-1") for text in shown) and any(text.endswith("npu-a") for text in shown)


def test_a_node_seen_over_ssh_and_by_prometheus_shows_once_naming_both(
    qtbot: QtBot,
    fleet: Fleet,  # noqa: F811
    control_dir: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    """npu-a read over SSH and scraped by a Prometheus (its exporter's hostname npu-a): one row per NPU, the tool's
    figures and processes with the exporter's pods, and both sources named."""
    default_setups(fleet)
    registry.configure(SshOptions(config_file=fleet.client_config, control_dir=control_dir))
    pod = {"namespace": "team-a", "pod": "llm-0", "container": "vllm"}
    devices = [
        {"card": "RBLN-CR13", "uuid": "0000-0", "used": 40 * GIB, "total": CR13, "util": 55.5, "pod": pod},
        {"card": "RBLN-CR13", "uuid": "0000-1", "used": 0, "total": CR13, "util": 0},
    ]
    state = tmp_path / "exporter.json"
    state.write_text(json.dumps({"nodes": {"npu-a": {"family": "legacy", "devices": devices}}}))
    jobs = JobManager()
    with running_exporter(state) as gateway, running_prometheus(tmp_path / "prometheus", gateway, ["npu-a"]) as server:
        console = FleetConsole(jobs, lambda: ["npu-a"], lambda: None, [server.url], period=0, timeout=30)
        qtbot.addWidget(console)
        console.show()
        with qtbot.waitSignal(console.refreshed, timeout=WAIT):
            console.refresh()
        jobs.cancel_all()
        jobs.wait()
    registry.configure()
    rows = _rows(console.model)
    assert [(r.node, r.texts[Column.NPU]) for r in rows] == [("npu-a", "rbln0"), ("npu-a", "rbln1")]
    assert {r.source for r in rows} == {f"npu-a, {server.url}"}
    served, idle = rows
    assert (served.used, idle.used) == (fleet.need + fleet.need // 4, 5 * GIB)  # rbln-stat's, not the exporter's
    assert served.texts[Column.HOLDERS] == f"pid {fleet.serving} vllm, pod team-a/llm-0 (vllm)"
    assert served.texts[Column.ARTIFACT] == f"ssh://npu-a{fleet.artifact}"  # the server's drift stays
    assert "2 source(s): 1 node(s), 2 NPU(s), 0 not read" in console.state.text()


def test_a_prometheus_behind_basic_auth_is_read_with_the_http_config_and_no_password_is_remembered(
    qtbot: QtBot,
    guarded: Prometheus,
    tmp_path: Path,
) -> None:
    config = tmp_path / "http.yml"
    config.write_text(f"basic_auth:\n  username: {USER}\n  password: {PASSWORD}\n")
    jobs = JobManager()
    console = FleetConsole(jobs, list, lambda: None, [], period=0, timeout=30, http_config=lambda: str(config))
    qtbot.addWidget(console)
    host = guarded.url.split("://", 1)[1]
    assert not console.sources.add(f"http://{USER}:{PASSWORD}@{host}")
    assert "HTTP config file" in console.state.text() and console.sources.own == []
    with qtbot.waitSignal(console.refreshed, timeout=WAIT):
        assert console.sources.add(guarded.url)
    [row] = [r for r in _rows(console.model) if r.node == "legacy-1"][:1]
    assert row.used == 40 * GIB and not row.error
    jobs.cancel_all()
    jobs.wait()


def test_one_node_behind_two_prometheus_is_one_row_per_npu_naming_both(
    qtbot: QtBot,
    monitoring: Monitoring,
    guarded: Prometheus,
    tmp_path: Path,
    cr13_artifact: Path,
) -> None:
    """legacy-1 scraped by the session's Prometheus and by the one behind basic auth (an HA pair scraping one
    exporter): its NPUs once, both URLs named; where the artifact fits counts it once."""
    config = tmp_path / "http.yml"  # the guarded server's credentials; the open one ignores them
    config.write_text(f"basic_auth:\n  username: {USER}\n  password: {PASSWORD}\n")
    jobs = JobManager()
    artifact = open_artifact(cr13_artifact)
    sources = [monitoring.url, guarded.url]
    console = FleetConsole(jobs, list, lambda: artifact, sources, period=0, timeout=30, http_config=lambda: str(config))
    qtbot.addWidget(console)
    console.show()
    with qtbot.waitSignal(console.refreshed, timeout=WAIT):
        console.refresh()
    rows = [r for r in _rows(console.model) if r.node == "legacy-1"]
    assert [(r.texts[Column.NPU], r.used) for r in rows] == [("rbln0", 40 * GIB), ("rbln1", 0)]
    assert {r.source for r in rows} == {f"{monitoring.url}, {guarded.url}"}
    with qtbot.waitSignal(console.placed, timeout=WAIT) as placed:
        console.fit_button.click()
    assert [o.host for o in placed.args[0].options].count("legacy-1") == 1
    jobs.cancel_all()
    jobs.wait()


# ---- the picture in docs/servers.md ----------------------------------------------------------------------------


def _rack(n: int) -> dict[str, object]:
    """A node of 8 RBLN-CR13: some busy, one short of memory now and then, one hot."""
    devices = []
    for i in range(8):
        used = ((n * 7 + i * 13) % 17) * 8 * GIB
        if (n + i) % 23 == 0:
            used = CR13 - 3 * GIB  # 3 GiB free: short
        pod = {"namespace": "serving", "pod": f"llm-{n}-{i}", "container": "vllm"} if used > 40 * GIB else None
        devices.append(
            {
                "card": "RBLN-CR13",
                "name": f"rbln{i}",
                "used": min(used, CR13),
                "total": CR13,
                "util": float((n * 11 + i * 5) % 100),
                "temperature": 35 + (n + i * 3) % 40,
                "power": 60.0,
                "pod": pod,
            }
        )
    return {"family": "legacy" if n % 2 else "current", "devices": devices}


@pytest.fixture(scope="module")
def big_prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """60 nodes of 8 NPUs behind one Prometheus (one down), scraped through the stand-in's gateway mode."""
    if shutil.which("prometheus") is None:
        pytest.skip("needs the prometheus binary (tools/system_packages.sh installs it when root)")
    root = tmp_path_factory.mktemp("big-prometheus")
    nodes: dict[str, dict[str, object]] = {f"rack{n // 20 + 1}-node{n % 20 + 1:02d}": _rack(n) for n in range(60)}
    nodes["rack2-node07"] = {**nodes["rack2-node07"], "down": True}
    state = root / "exporter.json"
    state.write_text(json.dumps({"nodes": nodes}))
    with (
        running_exporter(state) as gateway,
        running_prometheus(root / "server", gateway, list(nodes), wait_targets=False) as prometheus,
    ):
        prometheus.wait_scraped(len(nodes))
        yield prometheus.url


@pytest.mark.parametrize("theme", [Theme.LIGHT, Theme.DARK], ids=["light", "dark"])
def test_the_console_is_drawn_for_the_docs(
    qtbot: QtBot,
    big_prometheus: str,
    fleet: Fleet,  # noqa: F811
    control_dir: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    theme: Theme,
) -> None:
    """60 Prometheus nodes and three SSH servers (one failing) at 1280x800, drawn into
    build/screenshots/console-<theme>.png: the pictures docs/servers.md shows (copied to docs/screenshots/ when
    the console changes)."""
    default_setups(fleet)
    monkeypatch.setenv("RBLN_STUDIO_SSH_CONFIG", str(fleet.client_config))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(control_dir))
    screen = next((s for s in QGuiApplication.screens() if s.size().toTuple() == (1280, 800)), None)
    if screen is None:
        pytest.skip("needs the offscreen screens of tests/gui/offscreen-screens.json")
    settings = Settings(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    settings.session.set_console_sources([big_prometheus, "npu-a", "npu-b", "npu-junk"])
    settings.session.set_short_free_bytes(8 * GIB)
    settings.session.set_console_current(True)  # in front when the studio last quit
    settings.flush()
    w = MainWindow(Settings(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)), debounce_ms=50)
    qtbot.addWidget(w, before_close_func=lambda widget: _stop_jobs(qtbot, widget))
    w.theme.choose(theme, remember=False)
    w.setScreen(screen)
    w.setGeometry(screen.geometry())
    w.show()
    console = present(w.server_menu.console)
    with qtbot.waitSignals([console.refreshed, console.historyShown], timeout=WAIT):
        console.refresh()  # asked while the start's read runs: read once more when it ends
    qtbot.waitUntil(lambda: console._reading is None and not console.state.text().startswith("Reading"), timeout=WAIT)
    with qtbot.waitSignal(console.model.arranged, timeout=WAIT):
        console.table.sortByColumn(Column.FREE, Qt.SortOrder.AscendingOrder)  # the short ones first
    nodes = {console.model.row_at(i).node for i in range(console.model.rowCount())}
    assert len(nodes) >= 50 + 3
    out = REPO / "build" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    image = w.grab().toImage()
    assert not image.isNull() and image.width() >= 1200
    assert image.save(str(out / f"console-{theme.value}.png"))
