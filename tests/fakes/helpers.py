"""Small test helpers for the backend tests: process liveness, condition waits, leftovers, the fake's argv log."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rbln_artifact_studio.core.storage.fsutil import PARTIAL_TAG

FAKE_GRAPH_MAGIC = b"FAKE-REBEL-COMPILED-MODEL\n"  # tests/fakes/rebel_site/rebel MAGIC


def running(pid: int) -> bool:
    """True while the process exists and is not a zombie (dead, waiting to be reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def wait_for(condition: Callable[[], bool], timeout: float = 20.0, what: str = "condition") -> None:
    """Poll a condition until it holds; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def leftovers(parent: Path) -> list[str]:
    """Staging folders (ours) left in a folder."""
    return sorted(p.name for p in parent.iterdir() if PARTIAL_TAG in p.name)


def argv_runs(log: Path) -> list[list[str]]:
    """Every argv the fake optimum-rbln-cli was run with (FAKE_OPTIMUM_ARGV_LOG)."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def pids(pidfile: Path) -> list[int]:
    """The leader and worker pids a hanging fake wrote (FAKE_OPTIMUM_PIDFILE)."""
    return [int(p) for p in pidfile.read_text().split()]


def graph_header(graph: Path) -> dict[str, Any]:
    """What a fake .rbln file records (allocations, KV tensor sizes), read without the fake rebel."""
    data = graph.read_bytes()
    assert data.startswith(FAKE_GRAPH_MAGIC), f"{graph} is not a fake compiled graph"
    return json.loads(data[len(FAKE_GRAPH_MAGIC) :].partition(b"\n")[0])
