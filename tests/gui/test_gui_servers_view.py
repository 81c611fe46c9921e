"""Server ▸ Servers View: every server's NPUs, processes, matched artifacts and drift, with the numbers the CLI's
JSON gives; "Where does this fit?" with Resize to a Copy… where a smaller count fits; the refresh period kept."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QProgressBar, QPushButton, QTreeWidgetItem
from pytestqt.qtbot import QtBot
from remote.conftest import control_dir  # noqa: F401 (fixture)
from remote.fleet_harness import CR13, GIB, Fleet, default_setups, fleet  # noqa: F401 (fixture)

from rbln_artifact_studio.core.fleet.artifact import Artifact, open_artifact
from rbln_artifact_studio.core.sizes import format_bytes
from rbln_artifact_studio.gui.app.tones import Tone, qcolor
from rbln_artifact_studio.gui.dialogs.resize_dialog import ResizeDialog
from rbln_artifact_studio.gui.models.jobs import JobManager
from rbln_artifact_studio.gui.window.main_window import MainWindow
from rbln_artifact_studio.gui.window.servers_view import BYTES, SETTING_PERIOD, ServersView
from rbln_artifact_studio.remote import registry
from rbln_artifact_studio.remote.transport import SshOptions

Run = Callable[..., subprocess.CompletedProcess[str]]
HOSTS = ["npu-a", "npu-b", "npu-junk"]


@pytest.fixture
def view(qtbot: QtBot, fleet: Fleet, control_dir: Path) -> Iterator[ServersView]:  # noqa: F811
    default_setups(fleet)
    registry.configure(SshOptions(config_file=fleet.client_config, control_dir=control_dir))
    jobs = JobManager()
    artifact = open_artifact(fleet.artifact)
    v = ServersView(jobs, lambda: list(HOSTS), lambda: artifact, period=0, timeout=30)
    qtbot.addWidget(v)
    v.show()
    yield v
    jobs.cancel_all()
    jobs.wait()
    registry.configure()


def _children(item: QTreeWidgetItem) -> list[QTreeWidgetItem]:
    return [c for c in (item.child(i) for i in range(item.childCount())) if c is not None]


def test_the_view_shows_the_numbers_of_the_cli_json(
    qtbot: QtBot,
    view: ServersView,
    run_cli: Run,
    fleet: Fleet,  # noqa: F811
    control_dir: Path,  # noqa: F811
) -> None:
    with qtbot.waitSignal(view.refreshed, timeout=90_000):
        view.refresh()
    done = run_cli("devices", *(f"ssh://{h}" for h in HOSTS), "--json", env=fleet.env(control_dir), timeout=90)
    cli = {r["host"]: r for r in json.loads(done.stdout)}
    assert view.tree.topLevelItemCount() == len(HOSTS)
    for i, host in enumerate(HOSTS):
        top = view.tree.topLevelItem(i)
        assert top is not None and top.text(0) == host
        data = cli[host]
        if data["error"] is not None:
            assert top.text(1) == data["error"] and "cannot be true" in top.text(1)
            continue
        npus = _children(top)
        assert len(npus) == len(data["devices"])
        drift = {(c["npu"], c["pid"]): c for c in data["contexts"]}
        for item, device in zip(npus, data["devices"], strict=True):
            assert [item.data(c, BYTES) for c in (2, 3, 4)] == [
                device["memory_used"],
                device["memory_free"],
                device["memory_total"],
            ]
            assert item.text(3) == format_bytes(device["memory_free"])
            bar = view.tree.itemWidget(item, 5)
            assert isinstance(bar, QProgressBar)
            assert bar.value() == round(1000 * device["memory_used"] / device["memory_total"])
            for row, process in zip(_children(item), device["processes"], strict=True):
                expected = drift[(device["npu"], process["pid"])]
                assert row.data(0, BYTES) == process["pid"]
                assert row.text(6) == (expected["artifact"] or "unknown")
                assert row.data(7, BYTES) == expected["predicted"]
                assert row.data(8, BYTES) == expected["difference"]
                if expected["flagged"]:
                    assert row.foreground(8).color() == qcolor(Tone.WARNING)
                if expected["difference"] is None:
                    assert row.text(8) == "unknown" and row.toolTip(8) == expected["unknown"]
    a = view.tree.topLevelItem(0)
    assert a is not None
    served = _children(_children(a)[0])[0]
    assert served.text(6) == f"ssh://npu-a{fleet.artifact}" and "+25.0%" in served.text(8)
    assert "1 context(s) past their drift threshold" in view.state.text()


def test_where_does_this_fit_offers_a_resize_to_a_copy(
    qtbot: QtBot,
    view: ServersView,
    run_cli: Run,
    fleet: Fleet,  # noqa: F811
    control_dir: Path,  # noqa: F811
) -> None:
    full = {"form": "json", "devices": [{"name": "RBLN-CR13", "used": CR13 - fleet.need + GIB, "total": CR13}]}
    fleet.setup("npu-b", full)
    with qtbot.waitSignal(view.placed, timeout=90_000):
        view.fit_button.click()
    done = run_cli(
        "place", str(fleet.artifact), "--on", *(f"ssh://{h}" for h in HOSTS), "--json", env=fleet.env(control_dir)
    )
    [cli] = json.loads(done.stdout)["placements"]
    shown = [view.place_tree.topLevelItem(i) for i in range(view.place_tree.topLevelItemCount())]
    assert [o["host"] for o in cli["options"]] == ["npu-a"]
    first = shown[0]
    assert first is not None and first.text(0) == "1. npu-a" and first.data(2, BYTES) == cli["options"][0]["headroom"]
    blocked = {b["host"]: b for b in cli["blocked"]}
    assert blocked["npu-b"]["block"] == "free_dram" and blocked["npu-b"]["fits_kvcache_num_blocks"]
    button = view.place_tree.findChild(QPushButton, "serversResizeCopy-npu-b")
    assert button is not None and str(blocked["npu-b"]["fits_kvcache_num_blocks"]) in button.text()
    with qtbot.waitSignal(view.resizeCopyRequested) as asked:
        button.click()
    artifact, blocks = asked.args
    assert isinstance(artifact, Artifact) and artifact.path == fleet.artifact
    assert blocks == blocked["npu-b"]["fits_kvcache_num_blocks"]
    assert view.place_tree.findChild(QPushButton, "serversResizeCopy-npu-junk") is None  # unreachable: nothing to size


def test_the_servers_view_in_the_window_keeps_its_period_and_opens_resize_to_a_copy(
    qtbot: QtBot, window: MainWindow, cr13_artifact: Path
) -> None:
    window.server_menu.action_servers_view.trigger()
    dock = window.server_menu.servers_dock
    assert dock is not None and dock.isVisible()
    top = dock.view.tree.topLevelItem(0)
    assert top is not None and "No server is connected" in top.text(0)
    dock.view.period.setValue(5)
    assert dock.view.timer.isActive() and dock.view.timer.interval() == 5000
    assert int(window.settings.store.value(SETTING_PERIOD)) == 5
    dock.view.period.setValue(0)
    assert not dock.view.timer.isActive()
    dock.view.resizeCopyRequested.emit(open_artifact(cr13_artifact), 12)
    dialog = next(d for d in QApplication.topLevelWidgets() if isinstance(d, ResizeDialog) and d.isVisible())
    assert dialog.mode_copy.isChecked() and dialog.target_spin.value() == 12
    dialog.reject()


def test_the_view_is_drawn_for_the_docs(qtbot: QtBot, view: ServersView) -> None:
    """Both trees filled (readings, then a placement), drawn into build/screenshots/servers-view.png: the picture
    docs/servers.md and the README show (copied to docs/screenshots/ when the view changes)."""
    with qtbot.waitSignal(view.refreshed, timeout=90_000):
        view.refresh()
    with qtbot.waitSignal(view.placed, timeout=90_000):
        view.fit_button.click()
    view.resize(1100, 620)
    view.tree.expandAll()
    out = Path(__file__).resolve().parents[2] / "build" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    header = view.tree.header()  # a server's long error does not push the bars and the drift out of view
    assert header.sectionViewportPosition(8) < view.tree.viewport().width(), [header.sectionSize(c) for c in range(9)]
    image = view.grab().toImage()
    assert not image.isNull() and image.width() == 1100
    assert image.save(str(out / "servers-view.png"))
