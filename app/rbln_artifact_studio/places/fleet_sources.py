"""The fleet console's sources: an SSH server, a server group (@GROUP) or a Prometheus URL, all read at once into
one list of nodes, each a row of NPUs or the reason it could not be read; "where does this fit?" across all.

A source kind plugs in by a reader (`READERS`): the SSH kinds read through remote/fleet (one fan-out for every
server and group, each server once), Prometheus through its reader (one or two queries for the whole fleet).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from rbln_artifact_studio.core.display.fleet_console import ConsoleRow, Npu, NpuKey, Point, node_row, npu_row
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.host_groups import GROUP_PREFIX, check_group_name, expand
from rbln_artifact_studio.core.fleet.npu_status import Device, DeviceStatus
from rbln_artifact_studio.core.location import machine_name, parse_host
from rbln_artifact_studio.core.planning.drift import ContextDrift
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.core.sizes import format_bytes

if TYPE_CHECKING:
    from rbln_artifact_studio.core.fleet.artifact import Artifact
    from rbln_artifact_studio.core.planning.placement import Placement


class SourceKind(str, Enum):
    SERVER = "server"
    GROUP = "group"
    PROMETHEUS = "prometheus"


@dataclass(frozen=True)
class Source:
    """What the user added to the console, as they typed it (a host, @GROUP, a Prometheus URL)."""

    kind: SourceKind
    name: str


def parse_source(text: str) -> Source:
    """A host (npu1, ops@10.0.0.5:2222, a server's URL), @GROUP or an http(s):// Prometheus URL; StudioError if none."""
    text = text.strip()
    if text.startswith(GROUP_PREFIX):
        return Source(SourceKind.GROUP, GROUP_PREFIX + check_group_name(text))
    if text.lower().startswith(("http://", "https://")):
        try:
            parts = urlsplit(text)
            hostname, credentials = parts.hostname, parts.username is not None or parts.password is not None
        except ValueError:
            hostname, credentials = None, False
        if credentials:  # remembered with the sources: a password would end up in the settings file
            raise StudioError(
                "Give Prometheus' credentials in an HTTP config file (Preferences ▸ Prometheus HTTP config, "
                "promtool's --http.config.file format), not in the URL: the console remembers its sources."
            )
        if not hostname:
            raise StudioError(f"{text!r} names no host: give a Prometheus URL as http://prometheus:9090.")
        return Source(SourceKind.PROMETHEUS, text.rstrip("/"))
    try:
        return Source(SourceKind.SERVER, parse_host(text))
    except StudioError:
        raise StudioError(
            f"{text!r} is not a source: give an ssh host (npu1, ops@10.0.0.5:2222), a server group (@rack1) or a "
            "Prometheus URL (http://prometheus:9090)."
        ) from None


@dataclass(frozen=True)
class NpuExtras:
    """What a source knows of an NPU beyond the driver tool's reading: Prometheus' utilization, temperature, pods."""

    util: float | None = None
    temperature: float | None = None
    holders: tuple[str, ...] = ()


@dataclass(frozen=True)
class NodeReading:
    """One node of a source: its NPUs now (a DeviceStatus whose host is the node), or why they are not known."""

    source: Source
    node: str
    status: DeviceStatus | None
    error: str | None = None
    drifts: tuple[ContextDrift, ...] = ()
    extras: Mapping[int, NpuExtras] = field(default_factory=dict)  # per NPU index
    also: tuple[Source, ...] = ()  # the other sources that see the node: it is shown once, naming them all

    @property
    def label(self) -> str:
        """The sources that see the node, as the console names them."""
        return ", ".join([self.source.name, *(s.name for s in self.also)])


@dataclass(frozen=True)
class ReadOptions:
    """How to read the sources: each server's (and each Prometheus') time limit, a cancel, whether to match the
    processes with their artifacts (drift), and promtool's HTTP config file for the Prometheus sources."""

    timeout: float
    cancel: CancelToken | None = None
    with_drift: bool = True
    http_config: str = ""


Reader = Callable[[Sequence[Source], ReadOptions], list[NodeReading]]


def _read_ssh(sources: Sequence[Source], options: ReadOptions) -> list[NodeReading]:
    """Every server of the servers and groups given, each once (the first source naming it shows it)."""
    from rbln_artifact_studio.remote.fleet import read_fleet

    owner: dict[str, Source] = {}
    failed: list[NodeReading] = []
    for source in sources:
        try:
            hosts = [source.name] if source.kind is SourceKind.SERVER else expand([source.name])
        except StudioError as exc:
            failed.append(NodeReading(source, source.name, None, exc.one_line()))
            continue
        for host in hosts:
            owner.setdefault(parse_host(host), source)
    readings = read_fleet(list(owner), options.timeout, with_drift=options.with_drift, cancel=options.cancel)
    return failed + [NodeReading(owner[r.host], r.host, r.status, r.error, r.drifts) for r in readings]


def _read_prometheus(sources: Sequence[Source], options: ReadOptions) -> list[NodeReading]:
    """Every node each Prometheus knows (one query each, all at once); one that cannot be asked is a row."""
    from rbln_artifact_studio.remote.prometheus import read_fleet

    def ask(source: Source) -> list[NodeReading]:
        if options.cancel is not None and options.cancel.cancelled:
            return [NodeReading(source, source.name, None, "Cancelled.")]
        try:
            fleet = read_fleet(source.name, None, None, options.timeout, options.http_config or None)
        except StudioError as exc:
            return [NodeReading(source, source.name, None, exc.one_line())]
        return [NodeReading(source, r.host, r.status, r.error) for r in fleet.readings]

    with concurrent.futures.ThreadPoolExecutor(min(len(sources), 8), thread_name_prefix="prometheus") as pool:
        return [reading for readings in pool.map(ask, sources) for reading in readings]


def _prometheus_history(source: Source, window: float, options: ReadOptions) -> dict[NpuKey, list[Point]]:
    from rbln_artifact_studio.remote.prometheus import memory_history

    duration = f"{round(window)}s"
    series = memory_history(source.name, None, duration, options.timeout, options.http_config or None)
    return {(h.host, h.device): list(h.points) for h in series}


READERS: dict[SourceKind, Reader] = {
    SourceKind.SERVER: _read_ssh,
    SourceKind.GROUP: _read_ssh,
    SourceKind.PROMETHEUS: _read_prometheus,
}
HistoryReader = Callable[[Source, float, ReadOptions], dict[NpuKey, list[Point]]]
HISTORY_READERS: dict[SourceKind, HistoryReader] = {SourceKind.PROMETHEUS: _prometheus_history}  # keep their own


def read_sources(sources: Sequence[Source], options: ReadOptions) -> list[NodeReading]:
    """Every node of every source, each kind's reader at once (SSH servers and groups share one fan-out); in the
    order the sources were given, a reader that failed as a row of its own."""
    by_reader: dict[Reader, list[Source]] = {}
    for source in dict.fromkeys(sources):
        by_reader.setdefault(READERS[source.kind], []).append(source)
    if not by_reader:
        return []
    with concurrent.futures.ThreadPoolExecutor(len(by_reader), thread_name_prefix="fleet-source") as pool:
        futures = {pool.submit(reader, group, options): group for reader, group in by_reader.items()}
        readings: list[NodeReading] = []
        for future, group in futures.items():
            try:
                readings += future.result()
            except StudioError as exc:
                readings += [NodeReading(s, s.name, None, exc.one_line()) for s in group]
    order = {s: i for i, s in enumerate(sources)}
    readings.sort(key=lambda r: order.get(r.source, len(order)))  # stable: each source's own order kept
    return _merged(readings)


def _merged(readings: list[NodeReading]) -> list[NodeReading]:
    """Each node once: a Prometheus node that is also an SSH server joins the server's reading (its utilization,
    temperature and pods beside the tool's figures) instead of being a second row of the same NPUs."""
    ssh_at: dict[str, int] = {}
    for i, r in enumerate(readings):
        if r.source.kind is not SourceKind.PROMETHEUS and not r.node.startswith(GROUP_PREFIX):
            ssh_at.setdefault(machine_name(r.node), i)
    out: list[NodeReading | None] = list(readings)
    for i, r in enumerate(readings):
        if r.source.kind is not SourceKind.PROMETHEUS or r.node == r.source.name:  # a URL not read at all: its row
            continue
        at = ssh_at.get(machine_name(r.node))
        if at is None:
            continue
        server = out[at]
        assert server is not None
        out[at], out[i] = _joined(server, r), None
    return [r for r in out if r is not None]


def _joined(server: NodeReading, seen: NodeReading) -> NodeReading:
    """An SSH server's reading with what a Prometheus says of the same node: the server's figures (its tool and
    its processes) where it was read, Prometheus' where the tool gives none (utilization, temperature) and its
    pods; Prometheus' reading where the server could not be read. Both sources named."""
    if server.status is None and seen.status is not None:
        return replace(seen, also=(*seen.also, server.source, *server.also))
    also = (*server.also, seen.source)
    if server.status is None or seen.status is None:
        return replace(server, also=also)
    extras = dict(server.extras)
    for device in server.status.devices:
        other = _same_npu(device, seen.status.devices)
        if other is None:
            continue
        known = extras.get(device.index, NpuExtras())
        pods = tuple(p.label() for p in other.processes)
        extras[device.index] = NpuExtras(
            known.util if known.util is not None or device.util else _number(other.util),
            known.temperature if known.temperature is not None or device.temperature is not None else other.temperature,
            tuple(dict.fromkeys((*(known.holders or [p.label() for p in device.processes]), *pods))),
        )
    return replace(server, extras=extras, also=also)


def _same_npu(device: Device, others: Sequence[Device]) -> Device | None:
    """The NPU of another reading of the node that is this one: by uuid where both give one (another uuid is
    another NPU), else by device name (rbln0), else by index."""
    if device.uuid and any(o.uuid for o in others):
        return next((o for o in others if o.uuid == device.uuid), None)
    if device.device:
        named = next((o for o in others if o.device == device.device), None)
        if named is not None:
            return named
    return next((o for o in others if o.index == device.index), None)


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def read_history(sources: Sequence[Source], window: float, options: ReadOptions) -> dict[NpuKey, list[Point]]:
    """The sources that keep history (Prometheus): each NPU's used memory over the window, by (node, device); a
    source that cannot be asked has none (its reading says why)."""
    out: dict[NpuKey, list[Point]] = {}
    for source in sources:
        reader = HISTORY_READERS.get(source.kind)
        if reader is not None:
            with contextlib.suppress(StudioError):
                out.update(reader(source, window, options))
    return out


# ---- rows ------------------------------------------------------------------------------------------------------


def _drift_of(drifts: Sequence[ContextDrift]) -> tuple[float | None, str, bool, str]:
    """An NPU's contexts as one cell: the furthest from its prediction, and the artifacts served."""
    artifacts = ", ".join(dict.fromkeys(d.artifact for d in drifts if d.artifact))
    known = [d for d in drifts if d.percent is not None and d.difference is not None]
    if not known:
        return None, ("unknown" if drifts else ""), False, artifacts
    worst = max(known, key=lambda d: abs(d.percent or 0.0))
    assert worst.difference is not None and worst.percent is not None
    text = f"{format_bytes(worst.difference)} ({worst.percent:+.1f}%)"
    return worst.percent, text, any(d.flagged for d in drifts), artifacts


def rows_of(readings: Sequence[NodeReading]) -> list[ConsoleRow]:
    """The console's rows: one per NPU, one per node not read."""
    rows: list[ConsoleRow] = []
    for r in readings:
        label = r.label
        if r.status is None:
            rows.append(node_row(label, r.node, r.error or "not read"))
            continue
        for d in r.status.devices:
            extra = r.extras.get(d.index, NpuExtras())
            drifts = [x for x in r.drifts if x.npu == d.index]
            percent, text, flagged, artifacts = _drift_of(drifts)
            holders = extra.holders or tuple(p.label() for p in d.processes)
            npu = Npu(
                d.index,
                d.device,
                d.name,
                d.used,
                d.total,
                extra.util if extra.util is not None else d.util,
                extra.temperature if extra.temperature is not None else d.temperature,
                holders,
                artifacts,
                percent,
                text,
                flagged,
            )
            rows.append(npu_row(label, r.node, npu))
    return rows


def place_on_sources(artifact: Artifact, sources: Sequence[Source], options: ReadOptions) -> Placement:
    """Where the artifact fits now, across every node of every source (one answer, as `place --on`)."""
    from rbln_artifact_studio.core.planning.placement import place

    readings = read_sources(sources, replace(options, with_drift=False))
    statuses = [r.status for r in readings if r.status is not None]
    failures = {r.node: r.error or "not read" for r in readings if r.status is None}
    return place(artifact, statuses, failures, label=str(artifact.path))
