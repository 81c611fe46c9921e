"""Resizes on a server: detached jobs, staged swap there, refusal reasons, cancel, and a connection cut mid-way."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path

import pytest
from conftest import cli_command, cli_env
from fakes.helpers import leftovers, wait_for
from fakes.install import TINY_CA25, fake_compile

from rbln_artifact_studio.core.errors import CancelledError, StudioError
from rbln_artifact_studio.core.location import LocalFolder, ServerFolder
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.core.storage.jsonfile import read_block_count
from rbln_artifact_studio.remote.remote_jobs import follow, list_jobs, resize_remote, start_resize
from rbln_artifact_studio.remote.server import Server
from rbln_artifact_studio.remote.transport import SshConnection
from remote.conftest import HOST_ALIAS, Run, SshServer, url
from remote.test_remote_scan import HOSTILE_NAME, tree_state


@pytest.fixture
def real(server: SshServer, tiny_model: Path, tmp_path: Path) -> Path:
    """A real-compiler artifact (16 blocks, floor 9) on the server, under a hostile name."""
    plain = fake_compile(server.toolchain, tiny_model, tmp_path / "srv" / "real", *TINY_CA25, "--memory-budget", "0.5")
    return plain.rename(plain.parent / HOSTILE_NAME)


def graphs(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.glob("*.rbln")}


def test_real_artifact_resized_in_place_by_the_servers_toolchain(remote_cli: Run, real: Path) -> None:
    before = graphs(real)
    done = remote_cli("set-kvcache-num-blocks", url(real), "12", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["path"] == url(real) and data["previous_kvcache_num_blocks"] == 16 and data["kvcache_num_blocks"] == 12
    assert read_block_count(real) == 12
    after = graphs(real)
    assert after.keys() == before.keys() and all(after[k] != before[k] for k in before), "every graph rescaled"
    assert leftovers(real.parent) == [] and not (real / ".rbln-studio.lock").exists()
    assert "Job " in done.stderr and "started on npu-test" in done.stderr  # the log streamed


def test_real_artifact_resized_to_a_copy(remote_cli: Run, real: Path) -> None:
    before = tree_state(real)
    copy = real.parent / "copy 12"
    done = remote_cli("set-kvcache-num-blocks", url(real), "12", "--output-dir", url(copy))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"Set kvcache_num_blocks to 12 for artifact at {url(copy)}"
    assert read_block_count(copy) == 12 and tree_state(real) == before
    assert leftovers(real.parent) == []
    assert sorted(p.name for p in copy.iterdir()) == sorted(p.name for p in real.iterdir())


def test_simulator_artifact_is_refused_without_the_studio_on_the_server(
    remote_cli: Run, cr13_artifact: Path, server: SshServer
) -> None:
    before = tree_state(cr13_artifact)
    jobs_before = list(server.jobs.iterdir()) if server.jobs.exists() else []
    done = remote_cli("set-kvcache-num-blocks", url(cr13_artifact), "12")
    assert done.returncode == 1
    assert "rbln-studio-cli is not on the server's PATH, and it is a simulator artifact" in done.stderr
    assert "Nothing was changed." in done.stderr
    assert tree_state(cr13_artifact) == before
    assert (list(server.jobs.iterdir()) if server.jobs.exists() else []) == jobs_before, "no job was started"


def test_a_backend_that_cannot_resize_the_artifact_is_refused_before_a_job_starts(
    remote_cli: Run, cr13_artifact: Path, real: Path, server: SshServer, studio_on_server: None
) -> None:
    """--backend reaches a server's resize as it does a local one: optimum-rbln-cli named for the simulator's
    artifact, or the simulator for the real compiler's, is refused in the same words, and no job starts."""
    jobs_before = list(server.jobs.iterdir()) if server.jobs.exists() else []
    before = tree_state(cr13_artifact)
    optimum = remote_cli("set-kvcache-num-blocks", url(cr13_artifact), "12", "--backend", "optimum")
    assert optimum.returncode == 1
    assert "was written by the built-in simulator; optimum-rbln-cli cannot read its .rbln files" in optimum.stderr
    assert tree_state(cr13_artifact) == before
    sim = remote_cli("set-kvcache-num-blocks", url(real), "12", "--backend", "sim")
    assert sim.returncode == 1
    assert "its .rbln files were written by the real compiler; resizing them needs optimum-rbln-cli" in sim.stderr
    assert read_block_count(real) == 16
    assert (list(server.jobs.iterdir()) if server.jobs.exists() else []) == jobs_before, "no job was started"


def test_simulator_artifact_resized_by_the_studio_on_the_server(
    remote_cli: Run, cr13_artifact: Path, studio_on_server: None
) -> None:
    done = remote_cli("set-kvcache-num-blocks", url(cr13_artifact), "12", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["kvcache_num_blocks"] == 12
    assert read_block_count(cr13_artifact) == 12
    assert json.loads(remote_cli("inspect", cr13_artifact, "--json").stdout)["status"] == "ok"


def test_a_count_below_the_floor_is_refused_before_anything_starts(remote_cli: Run, real: Path) -> None:
    done = remote_cli("set-kvcache-num-blocks", url(real), "3")
    assert done.returncode == 1
    assert "below the minimum required" in done.stderr and done.stderr.endswith("Nothing was changed.\n")
    assert read_block_count(real) == 16


def test_cancel_mid_resize_leaves_the_artifact_unchanged(server: SshServer, control_dir: Path, real: Path) -> None:
    server.gate.unlink()  # the tool stops after loading the graphs, until the gate opens
    before = tree_state(real)
    s = Server(SshConnection(HOST_ALIAS, server.options(control_dir)))
    cancel = CancelToken()
    lines: list[str] = []

    def on_log(line: str) -> None:
        lines.append(line)
        if line.startswith("Loaded"):
            cancel.cancel()

    with pytest.raises(CancelledError, match="Nothing was changed"):
        resize_remote(s, ResizeRequest(ServerFolder(HOST_ALIAS, str(real)), 12), on_log, cancel)
    assert tree_state(real) == before
    assert leftovers(real.parent) == []


def _master_pid(s: Server) -> int:
    assert isinstance(s.transport, SshConnection)
    check = subprocess.run(
        [*s.transport.base_argv(), "-O", "check", "--", HOST_ALIAS],
        capture_output=True,
        text=True,
    )
    return int(check.stderr.split("pid=")[1].split(")")[0])


def test_connection_killed_mid_resize_the_job_finishes_and_is_read_back(
    server: SshServer, control_dir: Path, real: Path, run_cli: Run
) -> None:
    server.gate.unlink()
    s = Server(SshConnection(HOST_ALIAS, server.options(control_dir)))
    source = ServerFolder(HOST_ALIAS, str(real))
    env = {**cli_env(), "RBLN_STUDIO_SSH_CONFIG": str(server.client_config), "XDG_RUNTIME_DIR": str(control_dir)}
    cli = subprocess.Popen(
        [*cli_command(), "set-kvcache-num-blocks", source.url, "12"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    wait_for(lambda: any(j.state == "running" for j, _ in list_jobs(s)), timeout=30, what="the job to start")
    [(running, spec)] = [(j, sp) for j, sp in list_jobs(s) if j.state == "running"]
    assert spec["artifact"] == str(real)
    log = server.jobs / running.job.id / "log"
    wait_for(lambda: b"Loaded" in log.read_bytes(), timeout=30, what="the tool to load the graphs")
    for sock in [p for p in control_dir.rglob("*") if p.is_socket()]:  # cut every connection to the server
        out = subprocess.run(["ssh", "-o", f"ControlPath={sock}", "-O", "check", "x"], capture_output=True, text=True)
        os.kill(int(out.stderr.split("pid=")[1].split(")")[0]), signal.SIGKILL)
    _, err = cli.communicate(timeout=60)
    assert cli.returncode == 1
    assert "The job goes on on npu-test" in err and running.job.read_back in err
    assert read_block_count(real) == 16, "not yet: the job waits at the gate"
    server.gate.touch()
    folder = server.jobs / running.job.id
    wait_for(lambda: (folder / "result.json").exists(), timeout=30, what="the job to finish on its own")
    assert read_block_count(real) == 12 and leftovers(real.parent) == []
    listed = json.loads(run_cli("jobs", f"ssh://{HOST_ALIAS}", "--json", env=env).stdout)
    assert {"job": running.job.id, "state": "done"}.items() <= next(
        j for j in listed if j["job"] == running.job.id
    ).items()  # not read back yet: still listed
    shown = run_cli("jobs", f"ssh://{HOST_ALIAS}", running.job.id, "--json", env=env)  # a new connection
    assert json.loads(shown.stdout)["kvcache_num_blocks"] == 12 and shown.returncode == 0
    assert not folder.exists(), "read back: the job's folder is cleaned"
    listed = json.loads(run_cli("jobs", f"ssh://{HOST_ALIAS}", "--json", env=env).stdout)
    assert running.job.id not in [j["job"] for j in listed]


def test_start_resize_reports_the_job(server: SshServer, control_dir: Path, real: Path) -> None:
    s = Server(SshConnection(HOST_ALIAS, server.options(control_dir)))
    job, warnings = start_resize(s, ResizeRequest(ServerFolder(HOST_ALIAS, str(real)), 20))
    assert any("above" in w for w in warnings)  # more than the compiled count: DESIGN section 6's warning
    spec = json.loads((server.jobs / job.id / "spec.json").read_text())
    assert spec["kind"] == "real" and spec["artifact"] == str(real)
    outcome = follow(s, job)
    assert outcome.ok and outcome.kvcache_num_blocks == 20
    assert not (server.jobs / job.id).exists(), "its outcome was read back: the folder is cleaned"


def test_the_request_reaches_the_job_as_the_user_gave_it(server: SshServer, control_dir: Path, real: Path) -> None:
    """One ResizeRequest from the CLI or the dialog to the job: the budget as typed, the copy's folder there."""
    s = Server(SshConnection(HOST_ALIAS, server.options(control_dir)))
    source = ServerFolder(HOST_ALIAS, str(real))
    copy = real.parent / "copy by budget"
    job, _ = start_resize(s, ResizeRequest(source, budget_text="0.25", output=source.at(str(copy))))
    spec = json.loads((server.jobs / job.id / "spec.json").read_text())
    assert (spec["target"], spec["budget"], spec["output_dir"]) == (None, "0.25", str(copy))
    assert follow(s, job).ok and copy.is_dir() and read_block_count(real) == 16


def test_a_copy_on_another_place_is_refused_before_a_job_starts(
    server: SshServer, control_dir: Path, real: Path, tmp_path: Path
) -> None:
    s = Server(SshConnection(HOST_ALIAS, server.options(control_dir)))
    jobs_before = list(server.jobs.iterdir()) if server.jobs.exists() else []
    for elsewhere in (LocalFolder(tmp_path / "here"), ServerFolder("other-host", str(real.parent / "copy"))):
        request = ResizeRequest(ServerFolder(HOST_ALIAS, str(real)), 12, output=elsewhere)
        with pytest.raises(StudioError, match=f"writes its copy there too; {re.escape(str(elsewhere))} is not on"):
            resize_remote(s, request)
    assert (list(server.jobs.iterdir()) if server.jobs.exists() else []) == jobs_before
    assert read_block_count(real) == 16
