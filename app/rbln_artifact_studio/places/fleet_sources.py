"""The one fleet reader of the CLI (devices, place) and the Fleet Console: SSH servers, server groups (@GROUP) and
Prometheus URLs read at once and merged into one list of nodes, each node once, a row of NPUs or the reason it
could not be read; "where does this fit?" across all.

A source kind plugs in by a reader (`READERS`): the SSH kinds read through remote/fleet (one fan-out for every
server and group, each server once), Prometheus through its reader (one or two queries for the whole fleet).
How the readings of one node merge (an SSH server that a Prometheus also scrapes, a node behind two Prometheus):
`one_per_node` below, and docs/servers.md.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from types import ModuleType
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

from rbln_artifact_studio.core.display.fleet_console import ConsoleRow, Npu, NpuKey, Point, node_row, npu_row
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.host_groups import GROUP_PREFIX, check_group_name, expand
from rbln_artifact_studio.core.fleet.npu_status import Device, DeviceStatus
from rbln_artifact_studio.core.location import machine_name, parse_host
from rbln_artifact_studio.core.planning.drift import ContextDrift
from rbln_artifact_studio.core.planning.placement import Placement, place
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.core.sizes import format_bytes
from rbln_artifact_studio.remote.fleet import read_fleet

if TYPE_CHECKING:
    from rbln_artifact_studio.core.fleet.artifact import Artifact
    from rbln_artifact_studio.remote.prometheus import HttpConfig


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
    notes: tuple[str, ...] = ()  # what the CLI prints under the node: how its sources were merged, what failed
    whole: bool = False  # the row of a source that could not be asked at all (a Prometheus URL): no node of it
    partial: bool = False  # with whole: a Prometheus answered in part (its warnings), its nodes read are rows too

    @property
    def label(self) -> str:
        """The sources that see the node, as the console names them."""
        return ", ".join([self.source.name, *(s.name for s in self.also)])


@dataclass(frozen=True)
class ReadOptions:
    """How to read the sources: each server's (and each Prometheus') time limit, a cancel, whether to match the
    processes with their artifacts (drift), and for the Prometheus sources promtool's HTTP config (a file or one
    loaded), label matchers narrowing the series, a window whose peak each NPU is judged by, and whether memory
    alone is read (placing needs no more). longer: how the user gives a server more time (the CLI's --timeout)."""

    timeout: float
    cancel: CancelToken | None = None
    with_drift: bool = True
    http_config: str | HttpConfig = ""
    match: str | None = None
    window: str | None = None
    memory_only: bool = False
    longer: str | None = None


Reader = Callable[[Sequence[Source], ReadOptions], list[NodeReading]]
T = TypeVar("T")


def _at_once(calls: Sequence[Callable[[], T]]) -> list[T]:
    """Each call at once, the last in this thread and the others in daemon threads; their results in order.

    Daemon threads, not a pool: the CLI's Ctrl+C leaves at once instead of waiting for a slow server or
    Prometheus (each call is bounded by its own time limit, and stopped by its cancel token)."""
    results: list[T | None] = [None] * len(calls)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            results[i] = calls[i]()
        except BaseException as exc:  # handed to the caller's thread, never lost in this one
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,), name="fleet-source", daemon=True) for i in range(len(calls) - 1)]
    for thread in threads:
        thread.start()
    if calls:
        run(len(calls) - 1)
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return [r for r in results if r is not None]


def _prometheus() -> ModuleType:
    """remote/prometheus, loaded with the first Prometheus source read."""
    # A reading of SSH servers alone (devices npu1) loads no HTTP client.
    # deferred: the Prometheus reader brings http.client, ssl and msgspec, which only a Prometheus source uses
    from rbln_artifact_studio.remote import prometheus

    return prometheus


def _read_ssh(sources: Sequence[Source], options: ReadOptions) -> list[NodeReading]:
    """Every server of the servers and groups given, each once (the first source naming it shows it)."""
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
    readings = read_fleet(
        list(owner), options.timeout, with_drift=options.with_drift, cancel=options.cancel, longer=options.longer
    )
    return failed + [NodeReading(owner[r.host], r.host, r.status, r.error, r.drifts, notes=r.notes) for r in readings]


def _read_prometheus(sources: Sequence[Source], options: ReadOptions) -> list[NodeReading]:
    """Every node each Prometheus knows (one query each, all at once); one that cannot be asked is a row."""
    prometheus = _prometheus()
    redact = prometheus.redact
    gauges = prometheus.MEMORY if options.memory_only else prometheus.GAUGES

    def ask(source: Source) -> list[NodeReading]:
        if options.cancel is not None and options.cancel.cancelled:
            return [NodeReading(source, redact(source.name), None, "Cancelled.", whole=True)]
        try:
            fleet = prometheus.read_fleet(
                source.name, options.match, options.window, options.timeout, options.http_config or None, gauges=gauges
            )
        except StudioError as exc:
            return [NodeReading(source, redact(source.name), None, exc.one_line(), whole=True)]
        rows = [NodeReading(source, r.host, r.status, r.error) for r in fleet.readings]
        url = redact(source.name)
        if fleet.infos:
            first = next((i for i, r in enumerate(rows) if r.status is not None), None)
            if first is not None:
                notes = tuple(f"Prometheus at {url} notes: {info}" for info in fleet.infos)
                rows[first] = replace(rows[first], notes=(*rows[first].notes, *notes))
        if fleet.warnings:  # a partial answer: said as a row of its own, ahead of the nodes it did give
            why = "; ".join(fleet.warnings)
            text = (
                f"Prometheus at {url} answered in part ({why}): nodes it could not reach are missing from the "
                "rows read from it. Ask again, or ask the Prometheus behind it."
            )
            rows.insert(0, NodeReading(source, url, None, text, whole=True, partial=True))
        return rows

    return [reading for readings in _at_once([functools.partial(ask, s) for s in sources]) for reading in readings]


def _prometheus_history(source: Source, window: float, options: ReadOptions) -> dict[NpuKey, list[Point]]:
    duration = f"{round(window)}s"
    series = _prometheus().memory_history(source.name, None, duration, options.timeout, options.http_config or None)
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

    def read(reader: Reader, group: list[Source]) -> list[NodeReading]:
        try:
            return reader(group, options)
        except StudioError as exc:
            return [NodeReading(s, shown(s), None, exc.one_line(), whole=True) for s in group]

    calls = [functools.partial(read, reader, group) for reader, group in by_reader.items()]
    readings = [reading for found in _at_once(calls) for reading in found]
    order = {s: i for i, s in enumerate(sources)}
    readings.sort(key=lambda r: order.get(r.source, len(order)))  # stable: each source's own order kept
    return one_per_node(readings)


# ---- each node once ------------------------------------------------------------------------------------------
#
# A node is one machine whatever sources see it. Identity: its NPUs' uuids where both readings give them (another
# uuid is another NPU, so two clusters' "node-1" stay two nodes), else its machine name (core/location.machine_name:
# an ssh host without user and port, a Prometheus node's hostname label). Two SSH readings are never merged: two
# ports of one address are often two machines (containers), and the SSH readers already read each server once.
#
# Which figure wins:
# - SSH and Prometheus: the SSH tool's exact figures (and its processes, drift); Prometheus adds utilization,
#   temperature and pods where the tool gives none, and with a window each NPU's peak over it, so the node is
#   judged at the higher of the peak and the tool's figure now (DeviceStatus.at_peak) whatever other source
#   joined. Where the server cannot be read, Prometheus' reading stands in.
# - Two Prometheus (an HA pair scraping one exporter): each NPU's used memory and peak at the higher of the two.
#   Not "the freshest": an instant query's answer carries the evaluation time, not the scrape's, so which is
#   fresher is not in the answer; both figures were true within one scrape interval, and the higher one never
#   claims room that one of them saw taken. The higher peak is the peak over both servers' samples (one may
#   have missed some while it restarted).


def _uuids(reading: NodeReading) -> frozenset[str]:
    if reading.status is None:
        return frozenset()
    return frozenset([d.uuid for d in reading.status.devices if d.uuid])


def _is_ssh(reading: NodeReading) -> bool:
    return reading.source.kind is not SourceKind.PROMETHEUS


def _alone(reading: NodeReading) -> bool:
    """A row that names no node (a source that could not be asked, a group that could not be expanded)."""
    return reading.whole or reading.node.startswith(GROUP_PREFIX)


@dataclass
class _Node:
    """The readings of one node so far, with what identifies it."""

    readings: list[NodeReading]
    machines: set[str]
    uuids: set[str]

    def takes(self, reading: NodeReading, machine: str, uuids: frozenset[str]) -> bool:
        if any(r.source == reading.source or (_is_ssh(r) and _is_ssh(reading)) for r in self.readings):
            return False  # a source shows a node once; two SSH servers stay two (see above)
        if uuids and self.uuids:
            return not uuids.isdisjoint(self.uuids)
        return machine in self.machines


def one_per_node(readings: list[NodeReading]) -> list[NodeReading]:
    """Each node once, where its first reading stood (see above for identity and which figure wins).

    One pass with indexes by machine name and uuid: 10,000 nodes of one Prometheus, or of an HA pair, merge in
    a small part of what reading them takes."""
    sources = {r.source for r in readings}
    if len(sources) < 2 or all(s.kind is not SourceKind.PROMETHEUS for s in sources):
        return list(readings)  # nothing to merge: one source, or SSH servers alone (each read once)
    nodes: list[_Node] = []
    by_machine: dict[str, list[_Node]] = {}
    by_uuid: dict[str, _Node] = {}
    for r in readings:
        if _alone(r):
            nodes.append(_Node([r], set(), set()))
            continue
        machine, uuids = machine_name(r.node), _uuids(r)
        node = next((n for n in by_machine.get(machine, ()) if n.takes(r, machine, uuids)), None)
        if node is None and uuids:  # another name for a node seen (an ssh alias, an address): its uuids tell
            node = next((n for n in (by_uuid.get(u) for u in uuids) if n and n.takes(r, machine, uuids)), None)
        if node is None:
            node = _Node([], set(), set())
            nodes.append(node)
        node.readings.append(r)
        if machine not in node.machines:
            node.machines.add(machine)
            by_machine.setdefault(machine, []).append(node)
        node.uuids.update(uuids)
        for u in uuids:
            by_uuid.setdefault(u, node)
    return [n.readings[0] if len(n.readings) == 1 else _one_node(n.readings) for n in nodes]


def _one_node(group: list[NodeReading]) -> NodeReading:
    """One node's readings as one: Prometheus' folded together, then joined to the SSH server's, if any."""
    ssh = [r for r in group if _is_ssh(r)]
    seen = [r for r in group if not _is_ssh(r)]
    if not seen:
        return group[0]
    scraped = seen[0]
    for other in seen[1:]:
        scraped = _both_scraped(scraped, other)
    if ssh:
        return _joined(ssh[0], scraped)
    if scraped.also:
        note = f"also scraped by Prometheus at {', '.join(shown(s) for s in scraped.also)}; shown once"
        scraped = replace(scraped, notes=(note, *scraped.notes))
    return scraped


@functools.lru_cache(maxsize=64)  # asked again for every node a source sees
def shown(source: Source) -> str:
    """A source's name as printed (a Prometheus URL without credentials)."""
    if source.kind is not SourceKind.PROMETHEUS:
        return source.name
    return str(_prometheus().redact(source.name))


def _both_scraped(first: NodeReading, other: NodeReading) -> NodeReading:
    """A node two Prometheus scrape: each NPU's used memory and peak at the higher of the two, the pods of both;
    the one that read it where the other could not."""
    if first.status is None and other.status is not None:
        why = f"Prometheus at {shown(first.source)}: {first.error}"
        return replace(other, also=(*other.also, first.source, *first.also), notes=(*other.notes, why))
    also = (*first.also, other.source, *other.also)
    if other.status is None:
        return replace(first, also=also, notes=(*first.notes, f"Prometheus at {shown(other.source)}: {other.error}"))
    notes = (*first.notes, *other.notes)
    if first.status is None:
        return replace(first, also=also, notes=notes)
    if first.status.devices == other.status.devices:  # an HA pair's usual answer: the same samples
        return replace(first, also=also, notes=notes)
    devices = []
    for device in first.status.devices:
        twin = _same_npu(device, other.status.devices)
        if twin is not None and (twin.used, twin.peak, twin.processes) != (device.used, device.peak, device.processes):
            device = replace(
                device,
                used=max(device.used, twin.used),
                peak=_higher(device.peak, twin.peak),
                processes=tuple(dict.fromkeys((*device.processes, *twin.processes))),
            )
        devices.append(device)
    window = first.status.window or other.status.window
    return replace(first, status=replace(first.status, devices=tuple(devices), window=window), also=also, notes=notes)


def _higher(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)


def _joined(server: NodeReading, seen: NodeReading) -> NodeReading:
    """An SSH server's reading with what Prometheus says of the same node: the server's figures (its tool and
    its processes) where it was read, Prometheus' where the tool gives none (utilization, temperature), its pods
    and, with a window, each NPU's peak; Prometheus' reading where the server could not be read. Both sources
    named."""
    url = ", ".join(shown(s) for s in (seen.source, *seen.also))
    if server.status is None and seen.status is not None:
        why = f"{server.node} could not be read over SSH ({server.error}); Prometheus at {url} shown instead"
        return replace(seen, also=(*seen.also, server.source, *server.also), notes=(*seen.notes, why))
    also = (*server.also, seen.source, *seen.also)
    if server.status is None:
        assert seen.status is None
        return replace(server, also=also, error=f"{server.error}; Prometheus at {url}: {seen.error}")
    if seen.status is None:
        return replace(server, also=also, notes=(*server.notes, f"Prometheus at {url}: {seen.error}"))
    extras = dict(server.extras)
    devices = []
    for device in server.status.devices:
        other = _same_npu(device, seen.status.devices)
        if other is None:
            devices.append(device)
            continue
        known = extras.get(device.index, NpuExtras())
        pods = tuple(p.label() for p in other.processes)
        extras[device.index] = NpuExtras(
            known.util if known.util is not None or device.util else _number(other.util),
            known.temperature if known.temperature is not None or device.temperature is not None else other.temperature,
            tuple(dict.fromkeys((*(known.holders or [p.label() for p in device.processes]), *pods))),
        )
        if other.peak is not None:  # the tool's total is the one judged by (the text form rounds it)
            device = replace(device, peak=min(other.peak, device.total))
        devices.append(device)
    status = server.status
    if seen.status.window:  # judged at the higher of the tool's figure now and the window's peak (at_peak)
        status = replace(status, devices=tuple(devices), window=seen.status.window)
    note = f"also scraped by Prometheus at {url}; shown once"
    return replace(server, status=status, extras=extras, also=also, notes=(*server.notes, note, *seen.notes))


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
    readings = read_sources(sources, replace(options, with_drift=False, memory_only=True))
    statuses, failures = to_place(readings)
    return place(artifact, statuses, failures, label=str(artifact.where))  # as `place` names it


def to_place(readings: Sequence[NodeReading]) -> tuple[list[DeviceStatus], dict[str, str]]:
    """The nodes as placing judges them, each at its window's peak where one was read (whatever sources joined
    it), and the nodes not read with why."""
    statuses = [r.status.at_peak() for r in readings if r.status is not None]
    failures = {r.node: r.error or "not read" for r in readings if r.status is None}
    return statuses, failures
