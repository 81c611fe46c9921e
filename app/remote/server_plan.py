"""The planner's target "this server, now": do these artifacts fit in the DRAM the server's NPUs have free?"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rbln_artifact_studio.core.display.sizes import format_bytes
from rbln_artifact_studio.core.fleet.artifact import Artifact
from rbln_artifact_studio.core.planning.planner import Verdict
from rbln_artifact_studio.remote.devices import Device, DeviceStatus

PLACEMENT = (
    "Node i of every artifact compiled for an SKU goes on the i-th NPU of that SKU with the most free memory, "
    "so artifacts of one SKU are stacked on the same NPUs."
)
GRANULARITY = (
    "rbln-smi reports used memory per NPU (to 0.1 GiB), not per chiplet: each NPU's need is the sum of the "
    "artifacts' chiplet usages on it, checked against that NPU's free memory; the artifacts' own breakdowns "
    "check each chiplet against its DRAM."
)


@dataclass(frozen=True)
class NpuNeed:
    """What the planned artifacts would add on one NPU of the server, against what it has free now."""

    device: Device
    needs: tuple[tuple[str, int], ...]  # (artifact label, bytes)

    @property
    def need(self) -> int:
        return sum(n for _, n in self.needs)

    @property
    def headroom(self) -> int:
        return self.device.free - self.need


@dataclass(frozen=True)
class ServerPlan:
    host: str
    labels: tuple[str, ...]
    npus: tuple[NpuNeed, ...]
    problems: tuple[str, ...]  # an SKU the server lacks, or too few NPUs of it: certain misfits
    unknown: tuple[str, ...]  # artifacts whose DRAM is not known: why

    @property
    def verdict(self) -> Verdict:
        if self.problems or any(n.headroom < 0 for n in self.npus):
            return Verdict.DOES_NOT_FIT
        return Verdict.UNKNOWN if self.unknown else Verdict.FIT

    @property
    def fits(self) -> bool:
        return self.verdict is Verdict.FIT

    def to_json(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "verdict": self.verdict.value,
            "fits": self.fits,
            "placement": PLACEMENT,
            "granularity": GRANULARITY,
            "artifacts": list(self.labels),
            "problems": list(self.problems),
            "unknown": list(self.unknown),
            "npus": [
                {
                    "npu": n.device.index,
                    "name": n.device.name,
                    "memory_free": n.device.free,
                    "need": n.need,
                    "headroom": n.headroom,
                    "artifacts": dict(n.needs),
                }
                for n in self.npus
            ],
        }


def _label(artifact: Artifact, taken: set[str]) -> str:
    label, i = artifact.name, 1
    while label in taken:
        i += 1
        label = f"{artifact.name}#{i}"
    taken.add(label)
    return label


def plan_on_server(artifacts: list[Artifact], status: DeviceStatus) -> ServerPlan:
    """Place each artifact's nodes on the server's NPUs of its SKU (see PLACEMENT) and compare with free memory."""
    taken: set[str] = set()
    labels = [_label(a, taken) for a in artifacts]
    needs: dict[int, list[tuple[str, int]]] = {}
    problems: list[str] = []
    unknown: list[str] = []
    for label, artifact in zip(labels, artifacts, strict=True):
        sku = (artifact.config.npu or "").strip().upper()
        fit = artifact.breakdown()
        if fit is None:
            unknown.append(f"{label}: {artifact.unknown_reason or 'its NPU is unknown'}")
            continue
        candidates = sorted((d for d in status.devices if d.name.upper() == sku), key=lambda d: (-d.free, d.index))
        nodes = artifact.config.num_devices
        if len(candidates) < nodes:
            have = f"only {len(candidates)}" if candidates else "none"
            problems.append(f"{label} needs {nodes} {sku} NPU(s); {status.host} has {have}.")
            continue
        for node in range(nodes):
            used = sum(u.used for u in fit.usages if u.node == node)
            needs.setdefault(candidates[node].index, []).append((label, used))
    npus = tuple(NpuNeed(d, tuple(needs[d.index])) for d in status.devices if d.index in needs)
    return ServerPlan(status.host, tuple(labels), npus, tuple(problems), tuple(unknown))


def server_plan_text(p: ServerPlan) -> str:
    lines = [f"{len(p.labels)} artifact(s) on {p.host} now: {p.verdict.value}"]
    lines += [f"  {problem}" for problem in p.problems]
    lines += [f"  The plan cannot be computed for {u}" for u in p.unknown]
    lines.append(f"  Placement: {PLACEMENT}")
    lines.append(f"  Note: {GRANULARITY}")
    for n in p.npus:
        parts = " + ".join(f"{label} {format_bytes(b)}" for label, b in n.needs)
        room = (
            f"headroom {n.headroom:,} bytes ({format_bytes(n.headroom)})"
            if n.headroom >= 0
            else f"OVER by {-n.headroom:,} bytes ({format_bytes(-n.headroom)})"
        )
        lines.append(
            f"  NPU {n.device.index} ({n.device.name}, {format_bytes(n.device.free)} free of "
            f"{format_bytes(n.device.total)}): {parts}: {room}"
        )
    return "\n".join(lines)
