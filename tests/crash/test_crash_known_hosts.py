"""Trusting a server's host key writes known_hosts: killed at each of its steps, the file holds the old keys or the
old keys plus the new one, never a part; running it again records the key once. (Only the studio's own write on
this machine: the writes on a server are the job runner's, tested in tests/remote/test_remote_resize.py.)"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from harness import ENV_STEP, ENV_TRACE, cli_env

OLD = "[10.0.0.5]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOLDOLDOLDOLDOLDOLDOLDOLDOLDOLDOLDOLDOLDOLD\n"
OFFERED = "[10.0.0.6]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINEWNEWNEWNEWNEWNEWNEWNEWNEWNEWNEWNEWNEWN"
STEPS = ["known_hosts.tmp_written", "known_hosts.renamed"]

TRUST = """
import sys
from pathlib import Path
from rbln_artifact_studio.remote.transport import HostKeyCheck, accept_host_key
accept_host_key(HostKeyCheck("npu2", "[10.0.0.6]:2222", Path(sys.argv[1]), False, (sys.argv[2],), ("256 SHA256:x",)))
"""


def _trust(known: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", TRUST, str(known), OFFERED], capture_output=True, text=True, env=cli_env(env), timeout=60
    )


def test_trusting_a_key_passes_its_documented_steps(tmp_path: Path) -> None:
    known, trace = tmp_path / "known_hosts", tmp_path / "trace"
    known.write_text(OLD)
    assert _trust(known, {ENV_TRACE: str(trace)}).returncode == 0
    assert [line.split()[0] for line in trace.read_text().splitlines()] == [f"{s}#1" for s in STEPS]
    assert known.read_text() == OLD + OFFERED + "\n"


@pytest.mark.parametrize("step", STEPS)
def test_kill_while_trusting_a_key(tmp_path: Path, step: str) -> None:
    known = tmp_path / "known_hosts"
    known.write_text(OLD)
    killed = _trust(known, {ENV_STEP: step})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert known.read_text() in (OLD, OLD + OFFERED + "\n"), "known_hosts holds a part of a write"
    assert all(p.name.startswith(".") for p in tmp_path.iterdir() if p.name not in ("known_hosts",)), json.dumps(
        [p.name for p in tmp_path.iterdir()]
    )
    done = _trust(known, {})
    assert done.returncode == 0, done.stderr
    assert known.read_text() == OLD + OFFERED + "\n"
