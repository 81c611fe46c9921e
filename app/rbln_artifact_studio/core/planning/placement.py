"""Where can this artifact go now: the servers and NPUs with room for it, best first, and what blocks the rest."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from rbln_artifact_studio.core.errors import UnknownNpuError
from rbln_artifact_studio.core.estimation.estimator import MemoryLayout, largest_fitting
from rbln_artifact_studio.core.fleet.artifact import Artifact
from rbln_artifact_studio.core.fleet.npu_status import Device, DeviceStatus
from rbln_artifact_studio.core.model.npu import Npu, get_npu
from rbln_artifact_studio.core.shown import lines_shown, name_shown
from rbln_artifact_studio.core.sizes import format_bytes

ORDER = (
    "Best first: the most DRAM left on the tightest of the NPUs it would take; node i of the artifact goes on the "
    "NPU of its SKU with the i-th most free memory."
)


class Block(Enum):
    """Why a server cannot take the artifact now."""

    FREE_DRAM = "too little free DRAM"
    FAMILY = "another NPU family"
    SKU = "another NPU SKU"
    TOO_FEW_NPUS = "too few NPUs"
    CHIPLET = "a chiplet too small"
    UNREACHABLE = "server not read"
    UNKNOWN = "artifact's DRAM unknown"


@dataclass(frozen=True)
class ChipletNeed:
    chiplet: int
    need: int
    available: int  # the chiplet's DRAM after the system reserve

    @property
    def headroom(self) -> int:
        return self.available - self.need


@dataclass(frozen=True)
class NpuChoice:
    """One NPU the artifact's node would load on, with what it has free now and what would be left."""

    node: int
    device: Device
    need: int
    chiplets: tuple[ChipletNeed, ...]

    @property
    def headroom(self) -> int:
        return self.device.free - self.need

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "npu": self.device.index,
            "name": self.device.name,
            "memory_free": self.device.free,
            "need": self.need,
            "headroom": self.headroom,
            "chiplets": [
                {"chiplet": c.chiplet, "need": c.need, "available": c.available, "headroom": c.headroom}
                for c in self.chiplets
            ],
        }


@dataclass(frozen=True)
class ServerOption:
    """A server that can hold the artifact now, on these NPUs."""

    host: str
    npus: tuple[NpuChoice, ...]

    @property
    def headroom(self) -> int:
        """What is left on the tightest of its NPUs."""
        return min(n.headroom for n in self.npus)

    def to_json(self) -> dict[str, Any]:
        return {"host": self.host, "headroom": self.headroom, "npus": [n.to_json() for n in self.npus]}


@dataclass(frozen=True)
class Blocked:
    """A server that cannot hold the artifact now, and why; `fits_blocks` is a smaller count that would fit."""

    host: str
    block: Block
    reason: str
    fits_blocks: int | None = None
    npus: tuple[NpuChoice, ...] = ()  # the NPUs it would take, for too little free DRAM

    def to_json(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "block": self.block.name.lower(),
            "reason": self.reason,
            "fits_kvcache_num_blocks": self.fits_blocks,
            "npus": [n.to_json() for n in self.npus],
        }


@dataclass(frozen=True)
class Placement:
    """The answer for one artifact across the servers asked."""

    artifact: str
    npu: str
    num_devices: int
    kvcache_num_blocks: int
    need_per_npu: tuple[int, ...]  # per node, weights + workspace + KV at the recorded block count
    options: tuple[ServerOption, ...]
    blocked: tuple[Blocked, ...]

    @property
    def fits(self) -> bool:
        return bool(self.options)

    def to_json(self) -> dict[str, Any]:
        return {
            "artifact": self.artifact,
            "npu": self.npu,
            "num_devices": self.num_devices,
            "kvcache_num_blocks": self.kvcache_num_blocks,
            "need_per_npu": list(self.need_per_npu),
            "fits": self.fits,
            "order": ORDER,
            "options": [o.to_json() for o in self.options],
            "blocked": [b.to_json() for b in self.blocked],
        }


def node_need(layout: MemoryLayout, node: int, num_blocks: int) -> tuple[int, tuple[int, ...]]:
    """A node's bytes at a block count: in all, and per chiplet."""
    per_chiplet = tuple(layout.non_kv(node, c) + layout.kv_bytes(node, c, num_blocks) for c in range(layout.chiplets))
    return sum(per_chiplet), per_chiplet


def _choices(layout: MemoryLayout, npu: Npu, devices: Sequence[Device], num_blocks: int) -> tuple[NpuChoice, ...]:
    out = []
    for node, device in enumerate(devices):
        need, per_chiplet = node_need(layout, node, num_blocks)
        chiplets = tuple(ChipletNeed(c, n, npu.available_per_chiplet) for c, n in enumerate(per_chiplet))
        out.append(NpuChoice(node, device, need, chiplets))
    return tuple(out)


def _fits(choices: Sequence[NpuChoice]) -> bool:
    return all(c.headroom >= 0 and all(ch.headroom >= 0 for ch in c.chiplets) for c in choices)


def _family(name: str) -> str:
    try:
        return get_npu(name).family.name
    except UnknownNpuError:
        return "unknown"


def _place_on(artifact: Artifact, layout: MemoryLayout, npu: Npu, status: DeviceStatus) -> ServerOption | Blocked:
    host, sku, nodes = status.host, npu.name, layout.nodes
    same = sorted((d for d in status.devices if d.name.upper() == sku), key=lambda d: (-d.free, d.index))
    if not same:
        names = sorted({d.name for d in status.devices})
        families = {_family(n) for n in names}
        if npu.family.name not in families:
            return Blocked(
                host,
                Block.FAMILY,
                f"{host} has {', '.join(names)} ({'/'.join(sorted(families))}); the artifact is compiled for {sku} "
                f"({npu.family.name}).",
            )
        return Blocked(
            host, Block.SKU, f"{host} has {', '.join(names)}; the artifact is compiled for {sku}, another SKU."
        )
    if len(same) < nodes:
        return Blocked(host, Block.TOO_FEW_NPUS, f"needs {nodes} {sku} NPUs; {host} has {len(same)}.")
    current = artifact.config.kvcache_num_blocks
    choices = _choices(layout, npu, same[:nodes], current)
    if _fits(choices):
        return ServerOption(host, choices)
    over_chiplet = [(c, ch) for c in choices for ch in c.chiplets if ch.headroom < 0]
    if over_chiplet:
        c, ch = over_chiplet[0]
        where = f" on chiplet {ch.chiplet}" if len(c.chiplets) > 1 else ""  # an ATOM NPU is one chiplet
        return Blocked(
            host,
            Block.CHIPLET,
            f"node {c.node} needs {format_bytes(ch.need)}{where}, which has "
            f"{format_bytes(ch.available)} after the reserve.",
            npus=choices,
        )
    floor = artifact.sequence_shape.floor
    smaller = largest_fitting(
        lambda n: _fits(_choices(layout, npu, same[:nodes], n)), max(floor, 1), current - 1, otherwise=0
    )
    tight = min(choices, key=lambda c: c.headroom)
    reason = (
        f"NPU {tight.device.index} has {format_bytes(tight.device.free)} free; node {tight.node} needs "
        f"{format_bytes(tight.need)} (short by {format_bytes(-tight.headroom)})."
    )
    if smaller:
        reason += f" It would fit with kvcache_num_blocks {smaller} (resize a copy)."
    elif floor < current:
        reason += f" Not even its minimum of {floor} blocks fits."
    return Blocked(host, Block.FREE_DRAM, reason, smaller or None, choices)


def place(
    artifact: Artifact,
    statuses: Sequence[DeviceStatus],
    failures: Mapping[str, str] | None = None,
    label: str | None = None,
) -> Placement:
    """Each server's answer for one artifact: options best first (see ORDER), then the blocked servers in order."""
    name = label or str(artifact.where)
    npu, layout = artifact.npu, artifact.layout()
    c = artifact.config
    unreachable = tuple(Blocked(h, Block.UNREACHABLE, why) for h, why in (failures or {}).items())
    if npu is None or layout is None or layout.chiplets != npu.chiplets:
        why = artifact.unknown_reason or (
            "its NPU is unknown" if npu is None else "its allocation tables do not describe its NPU's chiplets"
        )
        unknown = tuple(Blocked(s.host, Block.UNKNOWN, f"cannot be placed: {why}") for s in statuses)
        return Placement(name, c.npu or "", c.num_devices, c.kvcache_num_blocks, (), (), unknown + unreachable)
    need = tuple(node_need(layout, node, c.kvcache_num_blocks)[0] for node in range(layout.nodes))
    options: list[ServerOption] = []
    blocked: list[Blocked] = []
    for status in statuses:
        answer = _place_on(artifact, layout, npu, status)
        if isinstance(answer, ServerOption):
            options.append(answer)
        else:
            blocked.append(answer)
    options.sort(key=lambda o: -o.headroom)
    return Placement(
        name, npu.name, c.num_devices, c.kvcache_num_blocks, need, tuple(options), (*blocked, *unreachable)
    )


def placement_text(p: Placement) -> str:
    """An artifact's placement, a line per option and per blocked server; names from outside (hosts, labels) and
    reasons escaped and redacted line by line."""
    head = f"{name_shown(p.artifact)} ({p.npu} x{p.num_devices}, {p.kvcache_num_blocks} blocks"
    if p.need_per_npu:
        head += f", needs {format_bytes(max(p.need_per_npu))} per NPU"
    lines = [head + f"): {'fits on ' + str(len(p.options)) + ' server(s)' if p.fits else 'fits nowhere now'}"]
    for rank, o in enumerate(p.options, 1):
        npus = ", ".join(
            f"NPU {n.device.index} ({format_bytes(n.device.free)} free -> {format_bytes(n.headroom)} left)"
            for n in o.npus
        )
        lines.append(
            f"  {rank}. {name_shown(o.host)}: {npus}; headroom {o.headroom:,} bytes ({format_bytes(o.headroom)})"
        )
        for n in o.npus:
            if len(n.chiplets) > 1:
                # Only the chiplets' need is known: the tool reports other processes' memory per NPU.
                parts = ", ".join(f"{ch.chiplet}: {format_bytes(ch.need)}" for ch in n.chiplets)
                lines.append(
                    f"       NPU {n.device.index} needs per chiplet (of {format_bytes(n.chiplets[0].available)} each): {parts}"
                )
    for b in p.blocked:
        lines.append(f"  x  {name_shown(b.host)}: {b.block.value}: {b.reason}")
    return lines_shown(lines)
