"""Job folders on a server are cleaned once their outcome is read back, or a week after they ended unread;
never while the job runs."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from fakes.helpers import wait_for
from fakes.install import TINY_CA25, fake_compile

from rbln_artifact_studio.core.location import ServerFolder
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
from rbln_artifact_studio.core.storage.jsonfile import read_block_count
from rbln_artifact_studio.remote.remote_jobs import (
    UNREAD_JOBS_KEPT_DAYS,
    RemoteJob,
    follow,
    forget_jobs,
    list_jobs,
    start_resize,
)
from rbln_artifact_studio.remote.server import Server
from rbln_artifact_studio.remote.transport import SshConnection
from remote.conftest import HOST_ALIAS, Run, SshServer


@pytest.fixture
def real(server: SshServer, tiny_model: Path, tmp_path: Path) -> Path:
    """A real-compiler artifact (16 blocks, floor 9) on the server."""
    return fake_compile(server.toolchain, tiny_model, tmp_path / "srv" / "real", *TINY_CA25, "--memory-budget", "0.5")


def age(folder: Path, days: float) -> None:
    """Make every file of a job folder look `days` old."""
    then = time.time() - days * 24 * 3600
    for path in folder.iterdir():
        os.utime(path, (then, then))


def finished_unread(s: Server, server: SshServer, real: Path, target: int) -> RemoteJob:
    """A job that ran to its end with nobody following it."""
    job, _ = start_resize(s, ResizeRequest(ServerFolder(HOST_ALIAS, str(real)), target))
    wait_for(lambda: (server.jobs / job.id / "result.json").exists(), timeout=30, what="the job to finish")
    return job


def test_a_job_unread_for_a_week_is_cleaned_a_recent_one_stays_listed(
    server: SshServer, control_dir: Path, real: Path, remote_cli: Run
) -> None:
    s = Server(SshConnection(HOST_ALIAS, server.options(control_dir)))
    old = finished_unread(s, server, real, 12)
    recent = finished_unread(s, server, real, 14)
    age(server.jobs / old.id, UNREAD_JOBS_KEPT_DAYS + 1)
    age(server.jobs / recent.id, UNREAD_JOBS_KEPT_DAYS - 1)
    job, _ = start_resize(s, ResizeRequest(ServerFolder(HOST_ALIAS, str(real)), 10))
    assert follow(s, job).ok  # read back: cleans it, and what ended unread too long ago
    assert not (server.jobs / job.id).exists() and not (server.jobs / old.id).exists()
    assert (server.jobs / recent.id / "result.json").exists()
    listed = {j["job"]: j["state"] for j in json.loads(remote_cli("jobs", f"ssh://{HOST_ALIAS}", "--json").stdout)}
    assert listed[recent.id] == "done" and old.id not in listed and job.id not in listed
    assert read_block_count(real) == 10


def test_a_running_job_is_never_cleaned(server: SshServer, control_dir: Path, real: Path) -> None:
    server.gate.unlink()  # the tool waits on the server
    s = Server(SshConnection(HOST_ALIAS, server.options(control_dir)))
    job, _ = start_resize(s, ResizeRequest(ServerFolder(HOST_ALIAS, str(real)), 12))
    wait_for(lambda: any(j.job == job and j.state == "running" for j, _ in list_jobs(s)), timeout=30, what="a start")
    age(server.jobs / job.id, UNREAD_JOBS_KEPT_DAYS + 30)
    assert forget_jobs(s, [job]) == []  # named, and old: still running, so kept
    assert (server.jobs / job.id / "spec.json").exists()
    server.gate.touch()
    outcome = follow(s, job)
    assert outcome.ok and outcome.kvcache_num_blocks == 12
    assert not (server.jobs / job.id).exists()


def test_reading_a_cleaned_job_says_why_it_is_gone(
    server: SshServer, control_dir: Path, real: Path, remote_cli: Run
) -> None:
    s = Server(SshConnection(HOST_ALIAS, server.options(control_dir)))
    job = finished_unread(s, server, real, 12)
    first = remote_cli("jobs", f"ssh://{HOST_ALIAS}", job.id)
    assert first.returncode == 0 and "Set kvcache_num_blocks to 12" in first.stdout
    again = remote_cli("jobs", f"ssh://{HOST_ALIAS}", job.id)
    assert again.returncode == 1 and "cleaned once its outcome was read back" in again.stderr
    assert "Traceback" not in again.stderr


def test_a_folder_that_is_not_a_job_is_left_alone(server: SshServer, control_dir: Path) -> None:
    server.jobs.mkdir(parents=True, exist_ok=True)
    stranger = server.jobs / "notes"
    stranger.mkdir(exist_ok=True)
    (stranger / "result.json").write_text("{}")
    age(stranger, UNREAD_JOBS_KEPT_DAYS + 1)
    forget_jobs(Server(SshConnection(HOST_ALIAS, server.options(control_dir))), [])
    assert stranger.exists()
