"""A server that never answers: every remote call kind ends within its limit, exit 1, and leaves nothing running there."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from remote.conftest import HOST_ALIAS, Run, SshServer, url

LIMIT = 3  # seconds (RBLN_STUDIO_SSH_TIMEOUT); the default limits are a minute and more
HANG = "#!/bin/sh\necho $$ >> {pids}\nexec sleep 100000\n"  # answers nothing, reads nothing, never ends


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # killed, waiting for its parent to reap it


def _none_left(pids: Path) -> list[int]:
    started = [int(line) for line in pids.read_text().split()] if pids.exists() else []
    assert started, "the fake was never started: the test reached nothing"
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in started) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [p for p in started if _alive(p)]


@pytest.fixture
def hung_smi(server: SshServer, tmp_path: Path) -> Iterator[Path]:
    """The server's rbln-smi never answers."""
    pids = tmp_path / "pids"
    smi = server.bin / "rbln-smi"
    kept = smi.read_bytes()
    smi.write_text(HANG.format(pids=pids))
    yield pids
    smi.write_bytes(kept)


@pytest.fixture
def hung_python(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The server's python3 never answers (a hung file system, a stuck interpreter)."""
    pids = tmp_path / "pids"
    python = tmp_path / "python3"
    python.write_text(HANG.format(pids=pids))
    python.chmod(0o755)
    return pids, {"RBLN_STUDIO_REMOTE_PYTHON": str(python), "RBLN_STUDIO_SSH_TIMEOUT": str(LIMIT)}


def _ends_in_time(remote_cli: Run, *args: object, env: dict[str, str]) -> None:
    done = remote_cli(*args, env=env)  # a hang would end in pytest-timeout's limit, not here
    assert done.returncode == 1, done
    assert f"error: {HOST_ALIAS} did not answer within {LIMIT} s" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("command", [("devices",), ("plan", "--on")])
def test_devices_of_a_server_whose_rbln_smi_hangs_end_within_the_limit(
    remote_cli: Run, hung_smi: Path, cr13_artifact: Path, command: tuple[str, ...]
) -> None:
    args = [*command, f"ssh://{HOST_ALIAS}"] + ([cr13_artifact] if command[0] == "plan" else [])
    _ends_in_time(remote_cli, *args, env={"RBLN_STUDIO_SSH_TIMEOUT": str(LIMIT)})
    assert _none_left(hung_smi) == [], "rbln-smi still runs on the server"


@pytest.mark.parametrize(
    "command",
    [
        ("scan", "{url}"),
        ("inspect", "{url}"),
        ("get-kvcache-num-blocks", "{url}"),
        ("set-kvcache-num-blocks", "{url}", "12"),
        ("jobs", f"ssh://{HOST_ALIAS}"),
    ],
)
def test_every_call_to_a_server_whose_python_hangs_ends_within_the_limit(
    remote_cli: Run, hung_python: tuple[Path, dict[str, str]], cr13_artifact: Path, command: tuple[str, ...]
) -> None:
    pids, env = hung_python
    _ends_in_time(remote_cli, *(part.format(url=url(cr13_artifact)) for part in command), env=env)
    assert _none_left(pids) == [], "the program still runs on the server"
    assert os.environ.get("RBLN_STUDIO_SSH_TIMEOUT") is None


# Answers a sign of life every 0.2 s forever and never a row: a server that is never silent, never done.
TRICKLE = "#!/bin/sh\necho $$ >> {pids}\nwhile :; do printf '{{\"alive\": true}}\\n'; sleep 0.2; done\n"


def test_a_scan_of_a_server_that_trickles_its_answer_ends_within_its_timeout(
    remote_cli: Run, cr13_artifact: Path, tmp_path: Path
) -> None:
    """The per-answer limit never runs out on a server that keeps talking: `scan ssh://` has a limit of its own
    for the whole call (`--timeout`), and the call ends there, leaving nothing running on the server."""
    pids = tmp_path / "pids"
    python = tmp_path / "python3"
    python.write_text(TRICKLE.format(pids=pids))
    python.chmod(0o755)
    done = remote_cli(
        "scan", url(cr13_artifact.parent), "--timeout", str(LIMIT), env={"RBLN_STUDIO_REMOTE_PYTHON": str(python)}
    )
    assert done.returncode == 1, done
    assert done.stderr.startswith(f"error: {HOST_ALIAS} did not finish within {LIMIT} s; what the studio started "), (
        done.stderr
    )
    assert done.stderr.rstrip().endswith("A slow link may need a longer limit: the command's --timeout SECONDS.")
    assert "Traceback" not in done.stderr
    assert _none_left(pids) == [], "the program still runs on the server"
