"""The planner's target "this server, now": do these artifacts fit in the DRAM the server's NPUs have free?"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rbln_artifact_studio.core.fleet.artifact import Artifact
from rbln_artifact_studio.core.planning.planner import Verdict
from rbln_artifact_studio.core.sizes import format_bytes
from rbln_artifact_studio.remote.devices import Device, DeviceStatus

PLACEMENT = (
    "Node i of every artifact compiled for an SKU goes on the i-th NPU of that SKU with the most free memory, "
    "so artifacts of one SKU are stacked on the same NPUs."
)
GRANULARITY = (
    "The NPU tool reports used memory per NPU (exact from rbln-stat -j, to 0.1 GiB from its text table), not per "
    "chiplet: each NPU's need (the sum of the "
    "artifacts' chiplet usages on it) is checked against that NPU's free memory, and each chiplet's need "
    "against the chiplet's DRAM after the reserve, as plan checks it; how other processes' memory is spread "
    "over the chiplets is not known."
)


@dataclass(frozen=True)
class ChipletNeed:
    """What the planned artifacts would take on one chiplet of an NPU, against the chiplet's DRAM."""

    chiplet: int
    need: int
    available: int  # the chiplet's DRAM after the system reserve (DESIGN section 2): plan's figure

    @property
    def headroom(self) -> int:
        return self.available - self.need


@dataclass(frozen=True)
class NpuNeed:
    """What the planned artifacts would add on one NPU of the server, against what it has free now."""

    device: Device
    needs: tuple[tuple[str, int], ...]  # (artifact label, bytes)
    chiplets: tuple[ChipletNeed, ...] = ()  # from the artifacts' breakdowns, per chiplet

    @property
    def need(self) -> int:
        return sum(n for _, n in self.needs)

    @property
    def headroom(self) -> int:
        return self.device.free - self.need

    @property
    def over_chiplets(self) -> list[ChipletNeed]:
        return [c for c in self.chiplets if c.headroom < 0]

    @property
    def fits(self) -> bool:
        return self.headroom >= 0 and not self.over_chiplets


@dataclass(frozen=True)
class ServerPlan:
    host: str
    labels: tuple[str, ...]
    npus: tuple[NpuNeed, ...]
    problems: tuple[str, ...]  # an SKU the server lacks, or too few NPUs of it: certain misfits
    unknown: tuple[str, ...]  # artifacts whose DRAM is not known: why

    @property
    def verdict(self) -> Verdict:
        if self.problems or any(not n.fits for n in self.npus):
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
                    "chiplets": [
                        {"chiplet": c.chiplet, "need": c.need, "available": c.available, "headroom": c.headroom}
                        for c in n.chiplets
                    ],
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
    chiplets: dict[int, dict[int, int]] = {}  # NPU index -> chiplet -> bytes
    available: dict[int, int] = {}  # NPU index -> its chiplets' DRAM after the reserve
    problems: list[str] = []
    unknown: list[str] = []
    for label, artifact in zip(labels, artifacts, strict=True):
        sku = (artifact.config.npu or "").strip().upper()
        fit, npu, layout = artifact.breakdown(), artifact.npu, artifact.layout()
        if fit is None or npu is None or layout is None:
            unknown.append(f"{label}: {artifact.unknown_reason or 'its NPU is unknown'}")
            continue
        if layout.chiplets != npu.chiplets:  # as plan: the tables must describe this SKU's chiplets
            unknown.append(
                f"{label}: its allocation tables report {layout.chiplets} chiplet(s) per NPU, but {npu.name} has "
                f"{npu.chiplets}."
            )
            continue
        candidates = sorted((d for d in status.devices if d.name.upper() == sku), key=lambda d: (-d.free, d.index))
        nodes = artifact.config.num_devices
        if len(candidates) < nodes:
            have = f"only {len(candidates)}" if candidates else "none"
            problems.append(f"{label} needs {nodes} {sku} NPU(s); {status.host} has {have}.")
            continue
        for node in range(nodes):
            index = candidates[node].index
            used = sum(u.used for u in fit.usages if u.node == node)
            needs.setdefault(index, []).append((label, used))
            available[index] = npu.available_per_chiplet
            per_chiplet = chiplets.setdefault(index, {})
            for u in fit.usages:
                if u.node == node:
                    per_chiplet[u.chiplet] = per_chiplet.get(u.chiplet, 0) + u.used
    npus = tuple(
        NpuNeed(
            d,
            tuple(needs[d.index]),
            tuple(ChipletNeed(c, n, available[d.index]) for c, n in sorted(chiplets[d.index].items())),
        )
        for d in status.devices
        if d.index in needs
    )
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
        for c in n.over_chiplets:
            lines.append(
                f"    chiplet {c.chiplet}: needs {format_bytes(c.need)} of its {format_bytes(c.available)}: "
                f"OVER by {-c.headroom:,} bytes ({format_bytes(-c.headroom)})"
            )
    return "\n".join(lines)
