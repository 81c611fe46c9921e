"""Scanning a server's folder over SSH: same rows as a local scan, nothing written there, cancel ends it there."""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from fakes.helpers import wait_for

from rbln_artifact_studio.core.errors import CancelledError, StudioError
from rbln_artifact_studio.core.fleet.scan import scan
from rbln_artifact_studio.core.location import ServerFolder
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.core.status import Status
from rbln_artifact_studio.remote.scan import checked_rows, scan_remote
from rbln_artifact_studio.remote.server import Server
from rbln_artifact_studio.remote.transport import SshConnection
from remote.conftest import HOST_ALIAS, SshServer
from remote.pythons import OLD, SLOW, make_python

HOSTILE_NAME = os.fsdecode(b"it's $(touch pwned) `x`\nline two caf\xe9")


def tree_state(root: Path) -> list[tuple[str, int, int]]:
    """Every path under root with its size and mtime: what a read-only operation must leave as it was."""
    out = []
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            st = os.lstat(os.path.join(folder, name))
            out.append((os.path.join(folder, name), st.st_size, st.st_mtime_ns))
    return sorted(out)


@pytest.fixture
def fleet(cr13_artifact: Path, ca25_artifact: Path, tmp_path: Path) -> Path:
    """A server folder: two simulator artifacts, one under a hostile name, one broken, one half-written."""
    root = tmp_path / "fleet dir"
    (root / "team a").mkdir(parents=True)
    shutil.move(cr13_artifact, root / "team a" / "qwen cr13")
    shutil.copytree(ca25_artifact, root / HOSTILE_NAME)
    broken = root / "broken"
    broken.mkdir()
    (broken / "rbln_config.json").write_text("{not json")
    staging = root / ".x.partial-1-ab"
    shutil.copytree(ca25_artifact, staging)
    return root


def _rows_without_paths(rows: list) -> list:
    return [dataclasses.replace(r, path="") for r in rows]


def test_remote_scan_gives_the_local_rows(server: SshServer, control_dir: Path, fleet: Path) -> None:
    """One round trip: the server sends what the full check reads with each artifact, so its rows come with the
    verdict the local scan gives (paths as ssh:// URLs)."""
    local = list(scan(fleet, use_cache=False))
    before = tree_state(fleet)
    remote = list(
        scan_remote(
            Server(SshConnection(HOST_ALIAS, server.options(control_dir))), ServerFolder(HOST_ALIAS, str(fleet))
        )
    )
    assert [r.path for r in remote] == [f"ssh://{HOST_ALIAS}{r.path}" for r in local]
    relabelled = [
        dataclasses.replace(r, problems=[p.replace(str(fleet), f"ssh://{HOST_ALIAS}{fleet}") for p in r.problems])
        for r in local
    ]
    assert _rows_without_paths(remote) == _rows_without_paths(relabelled)
    assert {r.name for r in remote} == {"qwen cr13", HOSTILE_NAME, "broken"}
    assert {r.name: r.status.value for r in remote} == {"qwen cr13": "ok", HOSTILE_NAME: "ok", "broken": "invalid"}
    assert tree_state(fleet) == before, "a read-only scan wrote on the server"
    assert not (fleet / "pwned").exists() and not Path("pwned").exists()


def test_missing_folder_is_an_error_not_an_empty_scan(server: SshServer, control_dir: Path, tmp_path: Path) -> None:
    """As the local scan: a folder that is not there is no scan of nothing (it was 0 rows and a warning)."""
    issues: list[str] = []
    with pytest.raises(StudioError, match="nowhere is not a folder; give a folder that holds compiled artifacts"):
        scan_remote(
            Server(SshConnection(HOST_ALIAS, server.options(control_dir))),
            ServerFolder(HOST_ALIAS, str(tmp_path / "nowhere")),
            on_issue=lambda _p, m: issues.append(m),
        )
    assert issues == []


def test_server_without_python3_is_told_clearly(server: SshServer, control_dir: Path, fleet: Path) -> None:
    s = Server(SshConnection(HOST_ALIAS, server.options(control_dir)), python="/opt/no-such/python3")
    with pytest.raises(StudioError, match="has no /opt/no-such/python3 on its PATH") as caught:
        list(scan_remote(s, ServerFolder(HOST_ALIAS, str(fleet))))
    assert "install python3 on the server" in caught.value.one_line()
    assert "RBLN_STUDIO_REMOTE_PYTHON=PATH" in caught.value.one_line()  # what to set, and where (no GUI setting)
    assert "['" not in caught.value.message  # the server's words, not a Python list


def test_server_with_an_old_python_is_told_clearly(
    server: SshServer, control_dir: Path, fleet: Path, tmp_path: Path
) -> None:
    old = make_python(tmp_path, "python3.5", OLD)
    s = Server(SshConnection(HOST_ALIAS, server.options(control_dir)), python=str(old))
    with pytest.raises(StudioError, match=r"is too old: rbln-studio: python 3\.5\.2 is too old"):
        list(scan_remote(s, ServerFolder(HOST_ALIAS, str(fleet))))


def _slow_fleet(tmp_path: Path, artifact: Path) -> Path:
    root = tmp_path / "slow"
    for i in range(25):
        shutil.copytree(artifact, root / f"a{i:02}")
    return root


def _remote_pids(marker: str) -> list[int]:
    out = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if marker.encode() in (proc / "cmdline").read_bytes():
                    out.append(int(proc.name))
            except OSError:
                continue
    return out


def test_cancel_mid_scan_stops_the_program_on_the_server(
    server: SshServer, control_dir: Path, tmp_path: Path, ca25_artifact: Path
) -> None:
    slow = make_python(tmp_path, "slow-python3", SLOW)
    root = _slow_fleet(tmp_path, ca25_artifact)
    cancel = CancelToken()
    rows = scan_remote(
        Server(SshConnection(HOST_ALIAS, server.options(control_dir)), str(slow)),
        ServerFolder(HOST_ALIAS, str(root)),
        cancel,
    )
    assert next(rows).name == "a00"
    assert _remote_pids(str(slow)), "the scan runs on the server"
    cancel.cancel()
    with pytest.raises(CancelledError):
        list(rows)
    wait_for(lambda: not _remote_pids(str(slow)), timeout=10, what="the server's scan to end")


def test_connection_killed_mid_scan(server: SshServer, control_dir: Path, tmp_path: Path, ca25_artifact: Path) -> None:
    slow = make_python(tmp_path, "slow-python3", SLOW)
    root = _slow_fleet(tmp_path, ca25_artifact)
    s = Server(SshConnection(HOST_ALIAS, server.options(control_dir)), str(slow))
    s.transport.connect()
    rows = scan_remote(s, ServerFolder(HOST_ALIAS, str(root)))
    assert next(rows).name == "a00"
    check = subprocess.run(
        [*SshConnection(HOST_ALIAS, server.options(control_dir)).base_argv(), "-O", "check", "--", HOST_ALIAS],
        capture_output=True,
        text=True,
    )
    master = int(check.stderr.split("pid=")[1].split(")")[0])
    os.kill(master, signal.SIGKILL)  # the network goes away: the shared connection dies
    with pytest.raises(StudioError, match="connection to npu-test was lost before the answer was complete"):
        list(rows)
    wait_for(lambda: not _remote_pids(str(slow)), timeout=10, what="the server's scan to end")


def test_the_servers_own_studio_scans_when_installed(
    server: SshServer, control_dir: Path, fleet: Path, tmp_path: Path
) -> None:
    from conftest import SRC, cli_command

    log = tmp_path / "studio-argv"
    wrapper = server.bin / "rbln-studio-cli"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {log}\nPYTHONPATH={SRC} exec {cli_command()[0]} "$@"\n')
    wrapper.chmod(0o755)
    try:
        before = tree_state(fleet)
        remote = list(
            scan_remote(
                Server(SshConnection(HOST_ALIAS, server.options(control_dir))), ServerFolder(HOST_ALIAS, str(fleet))
            )
        )
    finally:
        wrapper.unlink()
    assert log.read_text().splitlines() == ["scan", "--no-cache", "--format", "json", str(fleet)]
    local = list(scan(fleet, use_cache=False))
    assert _rows_without_paths(remote) == _rows_without_paths(local)
    assert [r.path for r in remote] == [f"ssh://{HOST_ALIAS}{r.path}" for r in local]
    assert tree_state(fleet) == before


def test_the_full_check_of_a_servers_rows_gives_inspects_verdict(
    server: SshServer, control_dir: Path, fleet: Path, ca25_artifact: Path
) -> None:
    from rbln_artifact_studio.remote.scan import verify_remote_rows

    damaged = fleet / "damaged"
    shutil.copytree(fleet / HOSTILE_NAME, damaged)
    graph = next(damaged.glob("*.rbln"))
    data = bytearray(graph.read_bytes())
    data[12:20] = b"garbage!"  # inside the preamble: its checksum fails, as inspect would find
    graph.write_bytes(bytes(data))
    s = Server(SshConnection(HOST_ALIAS, server.options(control_dir)))
    scanned = list(scan_remote(s, ServerFolder(HOST_ALIAS, str(fleet))))  # checked with what the scan sent
    # The second round trip (for graphs only the server's rebel reads) gives the same verdicts.
    again = list(verify_remote_rows(s, [dataclasses.replace(r, status=Status.CHECKING) for r in scanned]))
    local = {r.name: r for r in scan(fleet, use_cache=False)}  # the local scan runs the full check
    for rows in (scanned, again):
        checked = {r.name: r for r in rows}
        assert set(checked) == {"qwen cr13", HOSTILE_NAME, "damaged", "broken"}
        for name, row in checked.items():
            here = [p.replace(str(fleet), f"ssh://{HOST_ALIAS}{fleet}") for p in local[name].problems]  # as urls
            assert row.status == local[name].status and row.problems == here, name
        assert checked["damaged"].status.value == checked["broken"].status.value == "invalid"


def test_models_of_every_kind_on_a_server_get_the_rows_a_local_scan_gives(
    server: SshServer, control_dir: Path, tmp_path: Path
) -> None:
    """A multimodal model's language_model/, an encoder-decoder's and an encoder's descriptions are read on the
    server (never from this machine's disk at the same path), and their checked rows equal the local scan's."""
    from rbln_artifact_studio.remote.scan import checked_rows

    kinds = Path(__file__).resolve().parents[1] / "fixtures" / "kinds"
    root = tmp_path / "server models"
    for name in ("qwen3", "llava", "whisper", "t5", "bert"):
        shutil.copytree(kinds / name, root / name)
    mirror = {r.name: r for r in scan(root, use_cache=False)}  # read here, before the folder leaves this disk
    s = Server(SshConnection(HOST_ALIAS, server.options(control_dir)))
    served = root.rename(tmp_path / "served")  # the server's folder: the old path no longer exists here
    before = tree_state(served)
    remote = {r.name: r for r in checked_rows(s, scan_remote(s, ServerFolder(HOST_ALIAS, str(served))))}
    assert set(remote) == set(mirror)
    for name, row in remote.items():
        local = mirror[name]
        problems = [p.replace(str(root), f"ssh://{HOST_ALIAS}{served}") for p in local.problems]
        assert dataclasses.replace(row, path="", problems=problems) == dataclasses.replace(
            local, path="", problems=problems
        ), name
        assert row.problems == problems, name
    assert remote["llava"].kind == "multimodal" and remote["llava"].kvcache_num_blocks is not None
    assert remote["whisper"].kind == "encoder-decoder" and remote["whisper"].kv_note
    assert tree_state(served) == before


def test_a_fifo_under_a_graphs_name_on_a_server_is_said_as_here(
    server: SshServer, control_dir: Path, cr13_artifact: Path
) -> None:
    graph = cr13_artifact / "prefill.rbln"
    graph.unlink()
    os.mkfifo(graph)  # never opened there either
    said = "Expected compiled graph 'prefill.rbln' is not a regular file: it is a named pipe (FIFO)."
    [local] = scan(cr13_artifact.parent, use_cache=False)
    s = Server(SshConnection(HOST_ALIAS, server.options(control_dir)))
    [remote] = checked_rows(s, scan_remote(s, ServerFolder(HOST_ALIAS, str(cr13_artifact.parent))))
    assert said in local.problems and remote.problems == local.problems
