"""A resize on a server reports progress as a local one does: byte counts of a copy, the tool's steps."""

from __future__ import annotations

import os
import pty
import shutil
import signal
import subprocess
import threading
from pathlib import Path

import pytest
from conftest import cli_command, cli_env
from fakes.helpers import wait_for
from fakes.install import TINY_CA25, fake_compile

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import ServerFolder
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
from rbln_artifact_studio.core.storage.jsonfile import read_block_count
from rbln_artifact_studio.remote.job_progress import PREFIX
from rbln_artifact_studio.remote.remote_jobs import RemoteJob, follow, list_jobs, resize_remote
from rbln_artifact_studio.remote.server import Server
from rbln_artifact_studio.remote.transport import SshConnection
from remote.conftest import HOST_ALIAS, SshServer, url

Update = tuple[int, int, str]


class Updates(list[Update]):
    """A progress callback that keeps every (done, total, message)."""

    def __call__(self, done: int, total: int, message: str) -> None:
        self.append((done, total, message))


def tree_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def test_a_simulator_copy_on_the_server_counts_its_bytes(
    server: SshServer, control_dir: Path, cr13_artifact: Path, studio_on_server: None, tmp_path: Path
) -> None:
    s = Server(SshConnection(HOST_ALIAS, server.options(control_dir)))
    updates = Updates()
    lines: list[str] = []
    copy = tmp_path / "copy 12"
    source = ServerFolder(HOST_ALIAS, str(cr13_artifact))
    outcome = resize_remote(s, ResizeRequest(source, 12, output=source.at(str(copy))), lines.append, None, updates)
    assert outcome.ok and read_block_count(copy) == 12
    counts = [(done, total) for done, total, _ in updates if total]
    total = tree_size(cr13_artifact)
    assert counts[0] == (0, total) and counts[-1] == (total, total), counts  # the copy, start to end
    assert [d for d, _ in counts] == sorted(d for d, _ in counts)
    assert any(m.startswith("Copying") for _, t, m in updates if t)
    assert not any(PREFIX in line for line in lines), "byte counts are progress, not log lines"
    assert not any(PREFIX in w for w in outcome.warnings)


def test_a_real_resize_on_the_server_reports_the_tools_steps(
    server: SshServer, control_dir: Path, tiny_model: Path, tmp_path: Path
) -> None:
    real = fake_compile(server.toolchain, tiny_model, tmp_path / "srv" / "real", *TINY_CA25, "--memory-budget", "0.5")
    s = Server(SshConnection(HOST_ALIAS, server.options(control_dir)))
    updates = Updates()
    outcome = resize_remote(s, ResizeRequest(ServerFolder(HOST_ALIAS, str(real)), 12), None, None, updates)
    assert outcome.ok
    steps = [m for done, total, m in updates if (done, total) == (0, 0)]  # indeterminate, as the local backend's
    assert steps[0].startswith("Job ") and "started on npu-test" in steps[0]
    assert any(m.startswith("Loaded") for m in steps) and any(
        m.startswith("Set kvcache_num_blocks to 12") for m in steps
    )


def test_progress_then_a_dropped_connection_leaves_the_job_running(
    server: SshServer, control_dir: Path, tiny_model: Path, tmp_path: Path
) -> None:
    real = fake_compile(server.toolchain, tiny_model, tmp_path / "srv" / "real", *TINY_CA25, "--memory-budget", "0.5")
    server.gate.unlink()  # the tool waits after loading the graphs
    s = Server(SshConnection(HOST_ALIAS, server.options(control_dir)))
    s.transport.connect()
    updates = Updates()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            resize_remote(s, ResizeRequest(ServerFolder(HOST_ALIAS, str(real)), 12), None, None, updates)
        except BaseException as exc:
            failure.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    wait_for(lambda: any(m.startswith("Loaded") for _, _, m in updates), timeout=30, what="the tool's first steps")
    [running] = [j for j, spec in list_jobs(s) if j.state == "running" and spec["artifact"] == str(real)]
    check = subprocess.run(
        [*SshConnection(HOST_ALIAS, server.options(control_dir)).base_argv(), "-O", "check", "--", HOST_ALIAS],
        capture_output=True,
        text=True,
    )
    os.kill(int(check.stderr.split("pid=")[1].split(")")[0]), signal.SIGKILL)  # the network goes away
    worker.join(60)
    assert len(failure) == 1 and isinstance(failure[0], StudioError)
    assert running.job.read_back in str(failure[0])
    assert [j.state for j, _ in list_jobs(s) if j.job == running.job] == ["running"], "the job goes on, detached"
    server.gate.touch()
    again = Updates()
    outcome = follow(s, RemoteJob(HOST_ALIAS, running.job.id), on_progress=again)  # read back later
    assert outcome.ok and outcome.kvcache_num_blocks == 12 and read_block_count(real) == 12
    assert any(m.startswith("Loaded") for _, _, m in again)  # its steps, from the job's log


def test_the_cli_draws_a_servers_copy_as_a_progress_bar(
    server: SshServer, control_dir: Path, cr13_artifact: Path, studio_on_server: None, tmp_path: Path
) -> None:
    if shutil.which("ssh") is None:
        pytest.skip("needs ssh")
    env = {**cli_env(), "RBLN_STUDIO_SSH_CONFIG": str(server.client_config), "XDG_RUNTIME_DIR": str(control_dir)}
    copy = tmp_path / "copy 12"
    master, terminal = pty.openpty()  # stderr is a terminal: the bar is drawn there, as for a local copy
    with open(terminal, "wb", closefd=True) as stderr:
        done = subprocess.run(
            [*cli_command(), "set-kvcache-num-blocks", url(cr13_artifact), "12", "--output-dir", url(copy)],
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=env,
            timeout=120,
        )
    drawn = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        drawn += chunk
    os.close(master)
    assert done.returncode == 0, drawn.decode("utf-8", "replace")
    text = drawn.decode("utf-8", "replace")
    assert "100%" in text and "[####" in text, text
    assert PREFIX not in text
