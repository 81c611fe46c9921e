"""The transport seam: a server reached by a second transport (this machine, as subprocesses) behaves as over SSH."""

from __future__ import annotations

import dataclasses
import shutil
import sys
from pathlib import Path

import pytest
from fakes.helpers import wait_for

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.scan import scan
from rbln_artifact_studio.core.location import ServerFolder
from rbln_artifact_studio.remote.local import LocalTransport
from rbln_artifact_studio.remote.scan import scan_remote
from rbln_artifact_studio.remote.server import Server


def test_a_scan_through_the_local_transport_gives_the_local_rows(
    cr13_artifact: Path, ca25_artifact: Path, tmp_path: Path
) -> None:
    """The on-server scan program, run by the Server through a transport that is not SSH, finds what core finds."""
    root = tmp_path / "fleet"
    root.mkdir()
    shutil.move(cr13_artifact, root / "cr13")
    shutil.move(ca25_artifact, root / "ca25")
    (root / "broken").mkdir()
    (root / "broken" / "rbln_config.json").write_text("{not json")
    local = list(scan(root, use_cache=False))
    rows = list(scan_remote(Server(LocalTransport("npu-7"), python=sys.executable), ServerFolder("npu-7", str(root))))
    assert [r.path for r in rows] == [f"ssh://npu-7{r.path}" for r in local]
    assert {r.name: r.status.value for r in rows} == {"cr13": "ok", "ca25": "ok", "broken": "invalid"}
    assert [dataclasses.replace(r, path="", problems=[]) for r in rows] == [
        dataclasses.replace(r, path="", problems=[]) for r in local
    ]


def test_a_call_that_outlives_its_limit_stops_what_it_started(tmp_path: Path) -> None:
    """A program given up on is stopped with everything it started, as the SSH transport stops it on the server."""
    pid_file = tmp_path / "child.pid"
    script = f'sleep 60 & echo $! > "{pid_file}"; wait'
    with pytest.raises(StudioError, match="did not answer within"):
        Server(LocalTransport("npu-7")).run(["sh", "-c", script], timeout=0.5)
    wait_for(pid_file.exists)
    child = int(pid_file.read_text())

    def gone() -> bool:  # ended: no such process, or a zombie its new parent has not reaped yet
        try:
            return Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
        except FileNotFoundError:
            return True

    wait_for(gone)
