"""Servers in the main window: Connect dialog, host-key decision, Host column and filter, devices, plan now, resize."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.install import TINY_CA25, fake_compile
from PySide6.QtWidgets import QApplication, QDialogButtonBox
from pytestqt.qtbot import QtBot
from remote.conftest import (  # noqa: F401 (fixtures)
    HOST_ALIAS,
    SshServer,
    control_dir,
    server,
    ssh_server,
    studio_on_server,
)

from rbln_artifact_studio.core.fleet.columns import TITLES
from rbln_artifact_studio.core.location import ServerFolder
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
from rbln_artifact_studio.core.storage.jsonfile import read_block_count
from rbln_artifact_studio.gui.app.settings import ServerEntry, Settings
from rbln_artifact_studio.gui.dialogs.connect_dialog import ConnectDialog
from rbln_artifact_studio.gui.models import operations
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import _stop_jobs, open_folder
from .widgets import present

SECOND_ALIAS = "npu-test-2"  # the same sshd under another name: a second server in the table


@pytest.fixture
def server_window(
    qtbot: QtBot,
    settings: Settings,
    server: SshServer,  # noqa: F811
    control_dir: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[MainWindow]:
    """A main window whose ssh_config (a setting) reaches the test server under two names."""
    config = tmp_path / "ssh_config"
    base = server.client_config.read_text()
    config.write_text(base + base.replace(f"Host {HOST_ALIAS}", f"Host {SECOND_ALIAS}"))
    settings.store.setValue("ssh/configFile", str(config))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(control_dir))  # the shared connections end with the test
    w = MainWindow(settings, debounce_ms=50)
    qtbot.addWidget(w, before_close_func=lambda widget: _stop_jobs(qtbot, widget))
    w.show()
    yield w
    _stop_jobs(qtbot, w)


@pytest.fixture
def server_folder(tmp_path: Path, cr13_artifact: Path, ca25_artifact: Path) -> Path:
    root = tmp_path / "on server"
    root.mkdir()
    shutil.move(cr13_artifact, root / "qwen3-8b-cr13")
    shutil.move(ca25_artifact, root / "qwen3-8b-ca25x4")
    return root


def _connect_through_dialog(qtbot: QtBot, w: MainWindow, host: str, folder: Path) -> None:
    w.server_menu.action_connect.trigger()
    dialog = next(d for d in QApplication.topLevelWidgets() if isinstance(d, ConnectDialog) and d.isVisible())
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    dialog.host_combo.setEditText("")
    dialog.folders_edit.clear()
    assert not ok.isEnabled(), "no host and no folder yet"
    dialog.host_combo.setEditText(host)
    qtbot.keyClicks(dialog.folders_edit, "relative/folder")
    assert not ok.isEnabled() and "absolute path" in dialog.problem.text()
    dialog.folders_edit.setPlainText(str(folder))
    assert ok.isEnabled()
    with qtbot.waitSignal(w.server_menu.servers.connected, timeout=30_000) as connected:
        ok.click()
    assert connected.args == [host]


def _host_cells(w: MainWindow) -> dict[str, str]:
    host_column = TITLES.index("Host")
    return {w.model.summary(r).path: w.model.index(r, host_column).data() for r in range(w.model.rowCount())}


def test_connect_shows_servers_rows_with_their_host_and_the_filter_matches_it(
    qtbot: QtBot, server_window: MainWindow, server_folder: Path, workspace: Path
) -> None:
    w = server_window
    _connect_through_dialog(qtbot, w, HOST_ALIAS, server_folder)
    _connect_through_dialog(qtbot, w, SECOND_ALIAS, server_folder)
    expected = {
        f"ssh://{host}{server_folder}/{name}": host
        for host in (HOST_ALIAS, SECOND_ALIAS)
        for name in ("qwen3-8b-ca25x4", "qwen3-8b-cr13")
    }
    assert _host_cells(w) == expected
    status = TITLES.index("Status")  # the walker's fast check, then the full check (headers read there)
    qtbot.waitUntil(
        lambda: {w.model.index(r, status).data() for r in range(w.model.rowCount())} == {"ok"}, timeout=30_000
    )
    open_folder(qtbot, w, workspace)  # a local folder as well: the servers' rows stay
    qtbot.waitUntil(lambda: len(_host_cells(w)) == 6)
    assert sorted(set(_host_cells(w).values())) == ["local", HOST_ALIAS, SECOND_ALIAS]
    w.browser.filter_edit.setText(SECOND_ALIAS)
    assert w.browser.proxy.rowCount() == 2
    assert {s.path for s in w.browser.shown_summaries()} == {p for p, h in expected.items() if h == SECOND_ALIAS}
    w.browser.filter_edit.clear()
    remembered = w.settings.servers()
    assert remembered[0] == ServerEntry(SECOND_ALIAS, (str(server_folder),))
    w.settings.save()
    stored = json.loads(w.settings.store.value("servers/list"))
    assert stored[1] == {"host": HOST_ALIAS, "folders": [str(server_folder)]}, "host and folders only, no secret"
    with qtbot.waitSignal(w.server_menu.servers.changed):
        w.server_menu.disconnect_menu.actions()[1].trigger()  # SECOND_ALIAS (most recent is listed second)
    assert sorted(set(_host_cells(w).values())) == ["local", HOST_ALIAS]


def test_unknown_host_key_asks_and_trust_connects(
    qtbot: QtBot,
    server_window: MainWindow,
    server: SshServer,  # noqa: F811
    server_folder: Path,
    tmp_path: Path,
) -> None:
    w = server_window
    known = tmp_path / "empty_known_hosts"
    known.write_text("")
    config = Path(w.settings.ssh_config())
    config.write_text(config.read_text().replace(str(server.known_hosts), str(known)))
    sources = w.server_menu.servers
    with qtbot.waitSignal(sources.hostKeyQuestion, timeout=30_000):
        sources.connect_server(ServerEntry(HOST_ALIAS, (str(server_folder),)))
    dialog = w.server_menu.last_host_key_dialog
    assert dialog.isVisible() and "SHA256:" in dialog.details.toPlainText()
    assert known.read_text() == "", "nothing trusted before the user decides"
    # The connection's row waits on the user while the question is open: it does not read "succeeded".
    connecting = next(j for j in w.jobs.jobs if j.title == f"Connect to {HOST_ALIAS}")
    row = present(w.jobs_panel.row_for(connecting))
    assert row.state.text() == f"waiting for your answer: trust {HOST_ALIAS}'s host key?"
    assert "succeeded" not in row.state.text() + row.bar.text()
    trust = next(b for b in dialog.buttons.buttons() if b.objectName() == "hostKeyTrust")
    with qtbot.waitSignal(sources.connected, timeout=30_000):
        trust.click()
    assert row.state.text() == "host key trusted: connecting again"
    assert f"[127.0.0.1]:{server.port} ssh-ed25519" in known.read_text()
    assert len(_host_cells(w)) == 2


def test_remote_artifact_details_devices_and_plan_on_the_server_now(
    qtbot: QtBot, server_window: MainWindow, server_folder: Path, tmp_path: Path
) -> None:
    w = server_window
    _connect_through_dialog(qtbot, w, HOST_ALIAS, server_folder)
    remote = f"ssh://{HOST_ALIAS}{server_folder}/qwen3-8b-cr13"
    assert w.browser.select_path(remote)
    qtbot.waitUntil(lambda: w.artifact is not None and str(w.artifact.where) == remote, timeout=20_000)
    assert w.artifact is not None and w.artifact.config.kvcache_num_blocks == 21
    assert w.artifact.breakdown() is not None  # the detail panel's DRAM breakdown, read over SSH

    devices = w.server_menu.open_devices()
    top = present(devices.tree.topLevelItem(0))
    qtbot.waitUntil(lambda: top.childCount() == 2, timeout=20_000)
    assert top.text(0) == HOST_ALIAS and top.childCount() == 2
    assert present(top.child(0)).text(1) == "RBLN-CA12" and "vllm-serve" in present(top.child(0)).text(5)
    devices.close()

    dialog = w.server_menu.open_server_plan()
    assert dialog is not None
    qtbot.waitUntil(lambda: dialog.plan is not None, timeout=20_000)
    assert dialog.plan is not None and dialog.plan.verdict.value == "does not fit"  # CR13 on ATOM+ NPUs
    assert "RBLN-CR13" in dialog.verdict.text()
    assert dialog.command.edit.text().startswith(f"rbln-studio-cli plan --on ssh://{HOST_ALIAS} ")
    dialog.close()


def test_resize_of_a_server_artifact_runs_there_and_the_row_follows(
    qtbot: QtBot,
    server_window: MainWindow,
    server: SshServer,  # noqa: F811
    tiny_model: Path,
    tmp_path: Path,
) -> None:
    w = server_window
    folder = tmp_path / "srv"
    real = fake_compile(server.toolchain, tiny_model, folder / "real", *TINY_CA25, "--memory-budget", "0.5")
    _connect_through_dialog(qtbot, w, HOST_ALIAS, folder)
    url = f"ssh://{HOST_ALIAS}{real}"
    choice = ResizeRequest(ServerFolder(HOST_ALIAS, str(real)), 12)
    job = operations.resize(w.jobs, choice, w.settings.toolchain().settings())
    with qtbot.waitSignal(job.succeeded, timeout=60_000):
        pass
    assert read_block_count(real) == 12
    blocks_column = TITLES.index("kvcache_num_blocks")
    qtbot.waitUntil(lambda: w.model.index(w.model.row_of(url) or 0, blocks_column).data() == "12", timeout=30_000)
    assert any("started on npu-test" in line for line in job.log_lines)


def test_a_copy_made_on_a_server_shows_its_bytes_in_the_progress_bar(
    qtbot: QtBot,
    server_window: MainWindow,
    server_folder: Path,
    studio_on_server: None,  # noqa: F811
) -> None:
    w = server_window
    source = server_folder / "qwen3-8b-cr13"
    copy = server_folder / "copy 12"
    choice = ResizeRequest(ServerFolder(HOST_ALIAS, str(source)), 12, output=ServerFolder(HOST_ALIAS, str(copy)))
    job = operations.resize(w.jobs, choice, w.settings.toolchain().settings())
    counts: list[tuple[int, int]] = []
    job.progressed.connect(lambda done, total, _message: counts.append((done, total)))
    with qtbot.waitSignal(job.succeeded, timeout=60_000):
        pass
    total = sum(p.stat().st_size for p in source.rglob("*") if p.is_file())
    assert (total, total) in counts, counts  # the bar reached the end of the copy made there
    assert read_block_count(copy) == 12


def test_a_job_that_ended_while_away_is_read_back_on_reconnect(
    qtbot: QtBot,
    server_window: MainWindow,
    server: SshServer,  # noqa: F811
    tiny_model: Path,
    tmp_path: Path,
) -> None:
    from rbln_artifact_studio.remote import registry
    from rbln_artifact_studio.remote.remote_jobs import start_resize

    w = server_window
    folder = tmp_path / "srv"
    real = fake_compile(server.toolchain, tiny_model, folder / "real", *TINY_CA25, "--memory-budget", "0.5")
    sources = w.server_menu.servers
    entry = ServerEntry(HOST_ALIAS, (str(folder),))
    with qtbot.waitSignal(sources.connected, timeout=30_000):
        sources.connect_server(entry)
    qtbot.waitUntil(lambda: w.settings.seen_jobs(HOST_ALIAS) is not None, timeout=20_000)  # first look: history
    # A resize the app started before its connection dropped: it finishes on the server, unwatched.
    s = registry.server(HOST_ALIAS)
    job, _ = start_resize(s, ResizeRequest(ServerFolder(HOST_ALIAS, str(real)), 12))
    qtbot.waitUntil(lambda: (server.jobs / job.id / "result.json").exists(), timeout=30_000)
    sources.disconnect_server(HOST_ALIAS)
    with qtbot.waitSignal(sources.jobsReadBack, timeout=30_000) as read_back:
        sources.connect_server(entry)
    host, [outcome] = read_back.args
    assert host == HOST_ALIAS and outcome.job == job and outcome.kvcache_num_blocks == 12
    box = w.server_menu.last_outcomes_box
    assert box.isVisible() and job.id in box.text() and "16 → 12" in box.text()
    url = f"ssh://{HOST_ALIAS}{real}"
    blocks = TITLES.index("kvcache_num_blocks")
    qtbot.waitUntil(lambda: w.model.index(w.model.row_of(url) or 0, blocks).data() == "12", timeout=30_000)
    box.close()
    qtbot.waitUntil(lambda: not (server.jobs / job.id).exists(), timeout=20_000)  # shown: cleaned on the server
    with qtbot.waitSignal(sources.connected, timeout=30_000):  # seen once: not reported again
        sources.connect_server(entry)
    with qtbot.assertNotEmitted(sources.jobsReadBack, wait=1000):
        pass


def test_a_job_still_running_at_reconnect_is_followed_to_its_outcome(
    qtbot: QtBot,
    server_window: MainWindow,
    server: SshServer,  # noqa: F811
    tiny_model: Path,
    tmp_path: Path,
) -> None:
    from rbln_artifact_studio.remote import registry
    from rbln_artifact_studio.remote.remote_jobs import start_resize

    w = server_window
    folder = tmp_path / "srv"
    real = fake_compile(server.toolchain, tiny_model, folder / "real", *TINY_CA25, "--memory-budget", "0.5")
    sources = w.server_menu.servers
    entry = ServerEntry(HOST_ALIAS, (str(folder),))
    with qtbot.waitSignal(sources.connected, timeout=30_000):
        sources.connect_server(entry)
    qtbot.waitUntil(lambda: w.settings.seen_jobs(HOST_ALIAS) is not None, timeout=20_000)
    server.gate.unlink()  # the tool waits on the server
    job, _ = start_resize(registry.server(HOST_ALIAS), ResizeRequest(ServerFolder(HOST_ALIAS, str(real)), 12))
    sources.disconnect_server(HOST_ALIAS)
    with qtbot.waitSignal(sources.connected, timeout=30_000):
        sources.connect_server(entry)
    qtbot.waitUntil(
        lambda: any(j.title == f"Follow job {job.id} on {HOST_ALIAS}" for j in w.jobs.active()), timeout=20_000
    )
    assert read_block_count(real) == 16
    with qtbot.waitSignal(sources.jobsReadBack, timeout=60_000) as read_back:
        server.gate.touch()
    assert read_back.args[1][0].job == job and read_back.args[1][0].kvcache_num_blocks == 12
    assert read_block_count(real) == 12


def test_resize_dialog_on_a_server_artifact_writes_the_copy_there(
    qtbot: QtBot,
    server_window: MainWindow,
    server: SshServer,  # noqa: F811
    tiny_model: Path,
    tmp_path: Path,
) -> None:
    from rbln_artifact_studio.gui.dialogs.resize_dialog import ResizeDialog

    w = server_window
    folder = tmp_path / "srv"
    real = fake_compile(server.toolchain, tiny_model, folder / "real", *TINY_CA25, "--memory-budget", "0.5")
    _connect_through_dialog(qtbot, w, HOST_ALIAS, folder)
    url = f"ssh://{HOST_ALIAS}{real}"
    assert w.browser.select_path(url)
    qtbot.waitUntil(lambda: w.artifact is not None and str(w.artifact.where) == url, timeout=20_000)
    dialog = w.dialogs.open_resize_dialog()
    assert isinstance(dialog, ResizeDialog)
    dialog.mode_copy.setChecked(True)
    dialog.target_spin.setValue(12)
    dialog.output_edit.setText(f"ssh://other-host{folder}/copy")
    dialog._on_output_edited()
    assert not dialog.apply_button.isEnabled() and "folder on npu-test: ssh://npu-test/PATH" in dialog.message.text()
    dialog.output_edit.setText(f"ssh://{HOST_ALIAS}{folder}/copy 12")
    dialog._on_output_edited()
    assert dialog.apply_button.isEnabled()
    assert dialog.command.edit.text().endswith(f"--output-dir 'ssh://{HOST_ALIAS}{folder}/copy 12'")
    with qtbot.waitSignal(w.jobs.jobAdded, timeout=10_000) as added:
        dialog.apply_button.click()
    with qtbot.waitSignal(added.args[0].succeeded, timeout=60_000):
        pass
    assert read_block_count(folder / "copy 12") == 12 and read_block_count(real) == 16
