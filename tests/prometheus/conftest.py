"""What the session's Prometheus servers serve (prometheus/servers.py starts them): the exporter stand-in's nodes,
each a case (both name families, pods, down, impossible series, a node whose figures a test changes)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prometheus.promserver import Prometheus

GIB = 2**30
CR13 = 150_323_855_360  # RBLN-CR13's DRAM after the reserve, in bytes (what the exporter reports as total)


def _devices(used0: int, used1: int, pod: dict[str, str] | None = None) -> list[dict[str, Any]]:
    return [
        {
            "card": "RBLN-CR13",
            "used": used0,
            "total": CR13,
            "util": 55.5,
            "temperature": 47,
            "power": 120.5,
            "pod": pod,
        },
        {"card": "RBLN-CR13", "used": used1, "total": CR13, "util": 0, "temperature": 38, "power": 61},
    ]


POD = {"namespace": "team-a", "pod": "llm-0", "container": "vllm"}
NODES: dict[str, dict[str, Any]] = {
    "legacy-1": {"family": "legacy", "devices": _devices(40 * GIB, 0)},
    "current-1": {"family": "current", "devices": _devices(40 * GIB, 0)},
    "pods-1": {"family": "current", "devices": _devices(40 * GIB, 0, POD)},
    "down-1": {"family": "legacy", "down": True, "devices": _devices(0, 0)},
    "junk-1": {"family": "legacy", "devices": _devices(CR13 + GIB, 0)},
    "twice-1": {
        "family": "legacy",
        "devices": [
            {"card": "RBLN-CR13", "name": "rbln0", "used": 10 * GIB, "total": CR13, "pod": {**POD, "container": "a"}},
            {"card": "RBLN-CR13", "name": "rbln0", "used": 30 * GIB, "total": CR13, "pod": {**POD, "container": "b"}},
        ],
    },
    "peak-1": {"family": "current", "devices": _devices(GIB, GIB)},
    # Figures no NPU has: an ATOM (16 GiB of DRAM) reporting 200 GiB, a total the exporter writes as 1e+31.
    "atom-200g": {"family": "current", "devices": [{"card": "RBLN-CA12", "used": 10 * GIB, "total": 200 * GIB}]},
    "vast-1": {"family": "legacy", "devices": [{"card": "RBLN-CR13", "used": 10 * GIB, "total": 1e31}]},
    # Switched from legacy to current names by a test, its peak in the legacy series.
    "renamed-1": {"family": "legacy", "devices": _devices(GIB, GIB)},
}


@dataclass(frozen=True)
class Monitoring:
    """The session's Prometheus, the stand-in's address and its state file."""

    prometheus: Prometheus
    gateway: str
    state: Path

    @property
    def url(self) -> str:
        return self.prometheus.url

    def set_node(self, host: str, node: dict[str, Any]) -> None:
        """Change what the stand-in serves for one node (the file is replaced whole: never read half-written)."""
        data = json.loads(self.state.read_text())
        data["nodes"][host] = node
        tmp = self.state.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, self.state)

    def wait_used(self, host: str, used: int) -> None:
        """Until Prometheus' newest sample of the node's rbln0 is `used` (a scrape after the change)."""
        query = f'rbln_npu_memory_used{{hostname="{host}",name="rbln0"}}'
        self.prometheus.wait_for(
            query, lambda r: bool(r) and float(r[0]["value"][1]) == used, what=f"{host}'s rbln0 at {used} bytes"
        )
