"""The fleet's NPUs as Prometheus holds rbln-metrics-exporter's gauges: an instant query per name family for every
node now (and per family for each NPU's peak over a window), mapped onto the same records the SSH reading
produces and held to the same bounds (npu_status.figure_problem)."""

from __future__ import annotations

import functools
import json
import math
import operator
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import msgspec

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.npu_status import Device, DeviceStatus, NpuProcess, ReadForm, figure_problem
from rbln_artifact_studio.core.numbers import MAX_SECONDS
from rbln_artifact_studio.remote.devices import catalog_total
from rbln_artifact_studio.remote.fleet import ServerReading
from rbln_artifact_studio.remote.prometheus.client import (
    DEFAULT_TIMEOUT,
    Deadline,
    PrometheusClient,
    PrometheusError,
)
from rbln_artifact_studio.remote.prometheus.http_config import HttpConfig, load_http_config

TOOL = "rbln-metrics-exporter"
# The exporter's two spellings (its PROMETHEUS_METRIC_NAMES setting): legacy, its default, and current.
LEGACY = {
    "used": "RBLN_DEVICE_STATUS:DRAM_USED",
    "total": "RBLN_DEVICE_STATUS:DRAM_TOTAL",
    "util": "RBLN_DEVICE_STATUS:UTILIZATION",
    "temperature": "RBLN_DEVICE_STATUS:TEMPERATURE",
    "power": "RBLN_DEVICE_STATUS:CARD_POWER",
}
CURRENT = {
    "used": "rbln_npu_memory_used",
    "total": "rbln_npu_memory_total",
    "util": "rbln_npu_utilization",
    "temperature": "rbln_npu_temperature",
    "power": "rbln_npu_power",
}
KIND = {name: kind for names in (LEGACY, CURRENT) for kind, name in names.items()}
FAMILY = {**{n: "legacy" for n in LEGACY.values()}, **{n: "current" for n in CURRENT.values()}}
HISTORY_POINTS = 240  # a small chart's width: one point per 15 s over an hour
MIN_STEP = 1.0

_MATCHER = re.compile(
    r"""\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)\s*"""
)
_DURATION = re.compile(r"(?:\d+(?:ms|s|m|h|d|w|y))+")
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}


# ---- what the user gives: label matchers and a window --------------------------------------------------------


def check_match(match: str | None) -> str:
    """--match's label matchers, without braces ("" for none); StudioError for anything else (a query, a name)."""
    text = (match or "").strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    text = text.rstrip(",").strip()
    if not text:
        return ""
    position = 0
    while position < len(text):
        found = _MATCHER.match(text, position)
        if found is None:
            break
        position = found.end()
        if position == len(text):
            return text
        if text[position] != ",":
            break
        position += 1
    raise StudioError(
        f"--match {match!r} is not a list of label matchers.",
        hint='Give matchers as in a PromQL selector, e.g. --match \'hostname=~"node-1.*",job="rbln"\'.',
    )


def duration_seconds(window: str) -> float:
    """A Prometheus duration (`90m`, `1h30m`, `2d`) in seconds; StudioError naming the form otherwise."""
    text = window.strip()
    if not _DURATION.fullmatch(text):
        raise StudioError(
            f"--window {window!r} is not a duration.", hint="Give it as Prometheus does: 30m, 1h, 1h30m, 2d, 1w."
        )
    seconds = sum(int(n) * _UNITS[u] for n, u in re.findall(r"(\d+)(ms|s|m|h|d|w|y)", text))
    if seconds <= 0:
        raise StudioError(f"--window {window!r} is empty; give a duration such as 1h.")
    if seconds > MAX_SECONDS:  # core's one bound on a typed duration (beyond it, deadlines overflow)
        raise StudioError(f"--window {window[:40]!r} is more than ten years; give a duration such as 1h.")
    return seconds


def _selector(names: Iterable[str], match: str) -> str:
    names = sorted(set(names))
    # The names hold no regex characters (":" and "_" only): joined as they are.
    head = f'__name__="{names[0]}"' if len(names) == 1 else '__name__=~"' + "|".join(names) + '"'
    return "{" + head + (f",{match}" if match else "") + "}"


GAUGES = ("used", "total", "util", "temperature", "power")
MEMORY = ("used", "total")  # what placing needs: a fleet's answer is then two fifths of the series
DOWN = "up == 0"  # every target Prometheus could not scrape


def status_queries(match: str, gauges: Sequence[str] = GAUGES) -> list[str]:
    """The exporter's gauges now, one query per name family (each answer keeps its names; no `or` between them).

    `up == 0` is asked apart and not narrowed: a down target has only its target's labels, so --match is applied
    to it by down_target_matches (its hostname taken from its instance), not by Prometheus."""
    unknown = set(gauges) - set(GAUGES)
    if unknown or not {"used", "total"} <= set(gauges):
        raise ValueError(f"gauges must include used and total, from {GAUGES}; got {gauges}")
    return [_selector([family[g] for g in gauges], match) for family in (LEGACY, CURRENT)]


def _unquote(text: str) -> str:
    if text.startswith("`"):
        return text[1:-1]
    if text.startswith("'"):
        text = '"' + text[1:-1].replace("\\'", "'").replace('"', '\\"') + '"'
    try:
        value: str = json.loads(text)
    except ValueError:
        return text[1:-1]
    return value


def down_target_matches(match: str, labels: dict[str, str]) -> bool:
    """Whether a down target's `up` series meets --match as the exporter's series of that node would: its
    `hostname` is its instance without the port (the exporter's gateway mode: target HOST:50051); a label it
    lacks is empty, as in PromQL (so `card="RBLN-CR13"` leaves it out, and a regex is anchored)."""
    if not match:
        return True
    seen = dict(labels)
    seen.setdefault("hostname", labels.get("instance", "").rsplit(":", 1)[0])
    for name, op, quoted in _MATCHER.findall(match):
        value, have = _unquote(quoted), seen.get(name, "")
        if op in ("=", "!="):
            ok = have == value
        else:
            try:
                ok = re.fullmatch(value, have) is not None
            except re.error:
                return False  # Prometheus took it (RE2); what Python cannot read leaves the target out
        if ok == (op in ("!=", "!~")):
            return False
    return True


def peak_queries(match: str, window: str) -> list[str]:
    """Each NPU's most used memory over the window, one query per name family: a function drops the metric's
    name, so `or` between the two would drop one family's series wherever the other's labels match (an exporter
    that switched names inside the window lost its peak). Merged per NPU by _Peaks."""
    return [f"max_over_time({_selector([names['used']], match)}[{window}])" for names in (LEGACY, CURRENT)]


# ---- the answer ------------------------------------------------------------------------------------------------


class Labels(msgspec.Struct, gc=False):
    """The labels of the exporter's series the reader uses (the decoder skips the others)."""

    metric: str = msgspec.field(default="", name="__name__")
    card: str = ""
    name: str = ""
    uuid: str = ""
    deviceID: str = ""
    hostname: str = ""
    instance: str = ""
    job: str = ""
    driver_version: str = ""
    firmware_version: str = ""
    namespace: str = ""
    pod: str = ""
    container: str = ""

    @property
    def node(self) -> str:
        return self.hostname or self.instance or self.job or "?"

    @property
    def device(self) -> str:
        return self.name or self.uuid or self.deviceID or "?"


class Gauge(msgspec.Struct, gc=False):
    """One series of an instant query: its labels and [time, "value"]."""

    metric: Labels
    value: tuple[float, str] | None = None


class Target(msgspec.Struct, gc=False):
    """One `up` series: every label its target has (--match is applied to them here)."""

    metric: dict[str, str]
    value: tuple[float, str] | None = None


class Range(msgspec.Struct, gc=False):
    """One series of a range query: its labels and [[time, "value"], ...]."""

    metric: Labels
    values: list[tuple[float, str]] = msgspec.field(default_factory=list)


@dataclass(frozen=True)
class PrometheusFleet:
    """A Prometheus' view of the fleet: a reading per node (a node Prometheus cannot scrape is one with its reason).

    warnings: what Prometheus said beside its answer (a Thanos-style partial response: some nodes may be missing);
    infos: its notes (e.g. a query's oddity), shown and nothing else."""

    source: str  # the URL, without credentials
    at: float  # the moment the queries were evaluated (Unix seconds, Prometheus' clock)
    readings: tuple[ServerReading, ...]
    families: tuple[str, ...]  # the exporter's name families seen: "legacy", "current"
    window: str = ""
    match: str = ""
    queries: tuple[str, ...] = field(default=())
    warnings: tuple[str, ...] = ()
    infos: tuple[str, ...] = ()

    @property
    def partial(self) -> bool:
        return bool(self.warnings)

    @property
    def statuses(self) -> list[DeviceStatus]:
        return [r.status for r in self.readings if r.status is not None]

    @property
    def failures(self) -> dict[str, str]:
        return {r.host: r.error or "not read" for r in self.readings if r.status is None}

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "time": self.at,
            "window": self.window or None,
            "match": self.match or None,
            "families": list(self.families),
            "partial": self.partial,
            "warnings": list(self.warnings),
            "infos": list(self.infos),
            "nodes": [r.to_json() for r in self.readings],
        }


@dataclass(frozen=True)
class NpuHistory:
    """One NPU's used memory over time, as (Unix seconds, bytes) points oldest first."""

    host: str
    device: str  # rbln0
    uuid: str
    points: tuple[tuple[float, int], ...]

    def to_json(self) -> dict[str, Any]:
        return {"host": self.host, "device": self.device, "uuid": self.uuid, "points": [list(p) for p in self.points]}


class _Impossible(Exception):
    """Series of a node that cannot all be true: the node is a row with this reason, nothing is guessed."""


# The labels one NPU's series all carry alike (its pod labels may name several pods sharing it).
IDENTITY = ("card", "uuid", "deviceID", "firmware_version", "driver_version")
WHAT = {
    "used": "memory used",
    "total": "memory total",
    "util": "utilization",
    "temperature": "temperature",
    "power": "power",
    "peak": "peak",
}


@functools.lru_cache(maxsize=4096)  # the same few device names (rbln0 ... rbln7) on every node
def _natural(text: str) -> tuple[Any, ...]:
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


def _number(text: str, device: str, kind: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise _Impossible(f"{device}'s {WHAT[kind]} is {text!r}, not a number") from None


def _gauge(text: str, device: str, kind: str) -> float:
    value = _number(text, device, kind)
    if not 0 <= value < math.inf:  # NaN, infinities and negatives are no reading
        raise _Impossible(f"{device}'s {WHAT[kind]} is {text}")
    return value


def _fmt(text: str, kind: str) -> str:
    value = float(text)
    return f"{value:,.0f} bytes" if kind in ("used", "total") and abs(value) < 2**53 else f"{value:g}"


# What one NPU's series all carry alike (pods aside), compared at once for each series that arrives.
_SAME = operator.attrgetter(*IDENTITY, "instance")


class _Npu:
    """One NPU's series as they arrive: the first one's labels, each gauge's value as exported, its pods, and the
    first thing about them that cannot be true (a value reported twice differently, else a label that differs)."""

    __slots__ = ("instances", "labels", "other", "pods", "problem", "same", "values")

    def __init__(self, labels: Labels, kind: str, value: tuple[float, str] | None) -> None:
        self.labels = labels
        self.same = _SAME(labels)
        self.values: dict[str, str] = {}
        self.pods: set[tuple[str, str, str]] | None = None
        self.problem: str | None = None
        self.other: Labels | None = None  # a series' labels that name the NPU otherwise than the first's
        self.instances: set[str] | None = None  # beside the first's, where its series come from several
        if labels.pod or value is None:
            self.add(kind, labels, value)
        else:
            self.values[kind] = value[1]

    def add(self, kind: str, m: Labels, value: tuple[float, str] | None) -> None:
        """A further series of the NPU (the loop in _Gauges.take stores the plain ones itself)."""
        if m.pod:
            if self.pods is None:
                self.pods = set()
            self.pods.add((m.namespace, m.pod, m.container))
        if m.instance != self.labels.instance:
            if self.instances is None:
                self.instances = set()
            self.instances.add(m.instance)
        if self.problem is not None:
            return
        first = self.labels
        if value is None:
            self.problem = f"{first.device}'s {WHAT[kind]} series has no value"
            return
        text = value[1]
        known = self.values.setdefault(kind, text)
        if known != text and not _same_number(known, text):
            low, high = sorted((known, text), key=_sort_key)
            self.problem = (
                f"{first.device} is reported twice with different {WHAT[kind]} ({_fmt(low, kind)} and "
                f"{_fmt(high, kind)})"
            )
        elif self.other is None and _SAME(m)[:-1] != self.same[:-1]:
            self.other = m

    def check(self) -> None:
        """_Impossible for the first thing about its series that cannot be true."""
        if self.problem is not None:
            raise _Impossible(self.problem)
        if self.other is not None:
            first, other = self.labels, self.other
            label = next(n for n in IDENTITY if getattr(other, n) != getattr(first, n))
            values = ", ".join(sorted({getattr(other, label), getattr(first, label)}))
            raise _Impossible(f"{first.device} is reported twice with different {label} ({values})")


def _same_number(a: str, b: str) -> bool:
    try:
        return float(a) == float(b)
    except ValueError:
        return False


def _sort_key(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.inf


class _Gauges:
    """The gauges of every NPU as the answers' steps arrive, by (node, device): grouped at once, so the answer's
    series are never all held; which names were seen, and when Prometheus evaluated them.

    Written for 10,000 nodes' 400,000 series: a series like its NPU's first (the usual case) costs a lookup, one
    comparison of its identity labels and a store; anything else takes _Npu.add."""

    def __init__(self) -> None:
        self.npus: dict[tuple[str, str], _Npu] = {}
        self.names: set[str] = set()
        self.at = 0.0

    def take(self, batch: list[Gauge]) -> None:
        npus, kind_of, names, same = self.npus, KIND.get, self.names, _SAME
        for sample in batch:
            m = sample.metric
            kind = kind_of(m.metric)
            if kind is None:
                continue  # --match may select another metric; only the exporter's are read
            key = (m.hostname or m.instance or m.job or "?", m.name or m.uuid or m.deviceID or "?")
            npu = npus.get(key)
            value = sample.value
            if npu is None:
                npus[key] = _Npu(m, kind, value)
                names.add(m.metric)
            elif value is None or m.pod or kind in npu.values or same(m) != npu.same:
                npu.add(kind, m, value)
                names.add(m.metric)
            else:
                npu.values[kind] = value[1]
                names.add(m.metric)
        if batch and batch[-1].value is not None:
            self.at = max(self.at, batch[-1].value[0])

    def nodes(self) -> dict[str, dict[str, _Npu]]:
        """Each node's NPUs by device name."""
        out: dict[str, dict[str, _Npu]] = {}
        for (node, device), npu in self.npus.items():
            devices = out.get(node)
            if devices is None:
                devices = out[node] = {}
            devices[device] = npu
        return out


class _Peaks:
    """Each NPU's peak over the window, the higher of both name families' (an exporter that switched names inside
    the window has series in both): by uuid where the series give one, else by node and device."""

    def __init__(self) -> None:
        self.by_uuid: dict[str, float] = {}
        self.by_name: dict[tuple[str, str], float] = {}
        self.broken: dict[str, str] = {}

    def take(self, batch: list[Gauge]) -> None:
        for sample in batch:
            m = sample.metric
            node, device = m.node, m.device
            if sample.value is None:
                self.broken.setdefault(node, f"{device}'s peak series has no value")
                continue
            try:
                value = _number(sample.value[1], device, "peak")
            except _Impossible as exc:
                self.broken.setdefault(node, str(exc))
                continue
            if m.uuid:
                self.by_uuid[m.uuid] = max(value, self.by_uuid.get(m.uuid, -math.inf))
            key = (node, device)
            self.by_name[key] = max(value, self.by_name.get(key, -math.inf))

    def of(self, node: str, device: str, uuid: str) -> float | None:
        found = [
            p for p in (self.by_uuid.get(uuid) if uuid else None, self.by_name.get((node, device))) if p is not None
        ]
        return max(found) if found else None


def _device(
    name: str, npu: _Npu, peak: float | None, fallback_index: int, totals: dict[tuple[str, int], int]
) -> tuple[Device, str]:
    """One NPU from all its series (and the driver version they name); _Impossible for what cannot all be true."""
    npu.check()
    values = npu.values
    if "used" not in values or "total" not in values:
        missing = "used" if "used" not in values else "total"
        raise _Impossible(f"{name} has no memory {missing} series beside its others")
    m = npu.labels
    used, total = _number(values["used"], name, "used"), _number(values["total"], name, "total")
    problem = figure_problem(m.card, used, total, peak)  # the same bounds as every other source's
    if problem is not None:
        raise _Impossible(f"{name}'s {problem}")
    key = (m.card, round(total))
    exact = totals.get(key)
    if exact is None:  # the exporter rounds the daemon's GiB: the catalog's bytes where that is what it rounded
        exact = totals[key] = catalog_total(m.card, key[1])
    digits = name[len(name.rstrip("0123456789")) :]  # rbln3's 3
    index = int(digits) if digits else int(m.deviceID) if m.deviceID.isdigit() else fallback_index
    util = _gauge(values["util"], name, "util") if "util" in values else None
    device = Device(
        index,
        m.card,
        name,
        min(round(used), exact),
        exact,
        f"{util:.1f}" if util is not None else "",
        tuple(
            NpuProcess(index, 0, c or p, None, namespace=ns, pod=p, container=c) for ns, p, c in sorted(npu.pods or ())
        ),
        exact=True,
        temperature=_gauge(values["temperature"], name, "temperature") if "temperature" in values else None,
        power=_gauge(values["power"], name, "power") if "power" in values else None,
        peak=min(round(max(peak, used)), exact) if peak is not None else None,
        uuid=m.uuid,
        firmware_version=m.firmware_version,
    )
    return device, m.driver_version


def _node_status(
    host: str,
    devices: dict[str, _Npu],
    peaks: _Peaks | None,
    source: str,
    window: str,
    totals: dict[tuple[str, int], int],
) -> DeviceStatus:
    ordered = sorted(devices.items(), key=lambda item: _natural(item[0]))
    read = [
        _device(name, npu, None if peaks is None else peaks.of(host, name, npu.labels.uuid), i, totals)
        for i, (name, npu) in enumerate(ordered)
    ]
    out = [d for d, _ in read]
    if len({d.index for d in out}) != len(out):
        out = [replace(d, index=i) for i, d in enumerate(out)]  # names without distinct numbers: their order
    versions = sorted({v for _, v in read} - {""})
    return DeviceStatus(host, TOOL, tuple(out), ReadForm.PROMETHEUS, ", ".join(versions), source, window)


def _no_series(client: PrometheusClient, match: str, down: dict[str, str]) -> PrometheusError:
    narrowed = f" matching {{{match}}}" if match else ""
    hint = (
        "Prometheus needs a scrape job for the exporter (docs/servers.md shows one for its gateway mode); "
        "its Targets page shows whether it is scraped."
    )
    if match:
        hint = "Check --match (or leave it out), and " + hint[0].lower() + hint[1:]
    if down:
        jobs = sorted(set(down.values()))
        hint += f" Prometheus cannot scrape {len(down)} target(s) now (up == 0), of job(s) {', '.join(jobs)}."
    return PrometheusError(
        f"No rbln-metrics-exporter series at {client.url}{narrowed}: is the exporter scraped?", hint=hint
    )


def fleet_from_answers(
    client: PrometheusClient,
    gauges: _Gauges,
    targets: Sequence[Target],
    peaks: _Peaks | None,
    match: str = "",
    window: str = "",
) -> list[ServerReading]:
    """Every node's reading from the gauges, the targets Prometheus cannot scrape, and with a window the peaks."""
    down: dict[str, str] = {}  # instance -> job, of every target Prometheus cannot scrape
    for target in targets:
        if target.metric.get("__name__") == "up" and down_target_matches(match, target.metric):
            down[target.metric.get("instance", "?")] = target.metric.get("job", "")
    if not gauges.npus:
        raise _no_series(client, match, down)
    jobs = {npu.labels.job for npu in gauges.npus.values()}
    down = {i: job for i, job in down.items() if job in jobs}  # other jobs' targets are no NPU nodes
    totals: dict[tuple[str, int], int] = {}
    readings: list[ServerReading] = []
    shown_down: set[str] = set()
    for host, devices in gauges.nodes().items():
        if down:
            instances = {npu.labels.instance for npu in devices.values()}
            instances.update(i for npu in devices.values() for i in npu.instances or ())
            gone = sorted(instances & down.keys())
            if gone:  # its series linger (not yet stale) while Prometheus fails to scrape it: the failure is news
                shown_down.update(gone)
                readings.append(ServerReading(host, None, error=_down_reason(client, gone, down)))
                continue
        try:
            if peaks is not None and host in peaks.broken:
                raise _Impossible(peaks.broken[host])
            status = _node_status(host, devices, peaks, client.url, window, totals)
        except _Impossible as exc:
            readings.append(ServerReading(host, None, error=_impossible(client, host, str(exc))))
            continue
        readings.append(ServerReading(host, status))
    for instance in sorted(down.keys() - shown_down):
        readings.append(ServerReading(instance, None, error=_down_reason(client, [instance], down)))
    readings.sort(key=lambda r: _natural(r.host))
    return readings


def _down_reason(client: PrometheusClient, instances: list[str], down: dict[str, str]) -> str:
    job = down[instances[0]]
    return (
        f"Prometheus ({client.url}) cannot scrape its exporter at {', '.join(instances)} (up == 0, job {job}): "
        "its NPUs are not known now. Its Targets page says why; check the exporter (or its rbln daemon) there."
    )


def _impossible(client: PrometheusClient, node: str, what: str) -> str:
    return (
        f"rbln-metrics-exporter's series for {node} in {client.url} cannot all be true ({what}); nothing was read "
        f"from them. Run rbln-smi on {node}: a driver that reports this needs a look before anything is placed there."
    )


# ---- the API ---------------------------------------------------------------------------------------------------


def _config(http_config: HttpConfig | str | Path | None) -> HttpConfig | None:
    if http_config is None or isinstance(http_config, HttpConfig):
        return http_config
    return load_http_config(http_config)


def read_fleet(
    url: str,
    match: str | None = None,
    window: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    http_config: HttpConfig | str | Path | None = None,
    at: float | None = None,
    gauges: Sequence[str] = GAUGES,
) -> PrometheusFleet:
    """Every NPU node Prometheus knows from rbln-metrics-exporter: a query per name family and one for the
    targets it cannot scrape (two more with a window).

    url: Prometheus' base URL (http(s)://[user:password@]HOST[:PORT][/PREFIX]); credentials in it are used,
    never shown. match: label matchers narrowing the series (`hostname=~"node-1.*",job="rbln"`). window: a
    Prometheus duration; each Device's `peak` is then its most used memory over it (DeviceStatus.at_peak()
    judges room by it). timeout: seconds for the whole read, every request and its decoding together.
    http_config: an HttpConfig or the path of a promtool --http.config.file YAML. at: the evaluation time
    (default: Prometheus' own now, never this computer's clock). gauges: which of GAUGES to read (MEMORY: used
    and total only, all that placing needs; fewer series).

    Returns a PrometheusFleet whose `readings` are remote.fleet.ServerReading rows, one per node (its
    `hostname` label, else its `instance`), sorted by name: a node's NPUs as Device records (pods as
    NpuProcess with pid 0), or `error` for a target Prometheus cannot scrape (up == 0) and for series that
    cannot all be true (npu_status.figure_problem's bounds among them); its `warnings` are Prometheus' (a
    partial answer). Raises PrometheusError (a StudioError) when Prometheus cannot be asked or holds no
    exporter series; blocking: call it off a GUI thread.
    """
    deadline = Deadline(timeout)
    matchers = check_match(match)
    span = window.strip() if window else ""
    if span:
        duration_seconds(span)
    client = PrometheusClient(url, _config(http_config))
    found, peaks = _Gauges(), _Peaks() if span else None
    targets: list[Target] = []
    queries = status_queries(matchers, gauges) + [DOWN] + (peak_queries(matchers, span) if span else [])
    replies = [client.query(q, Gauge, found.take, deadline, at) for q in queries[:2]]
    replies.append(client.query(DOWN, Target, targets.extend, deadline, at))
    if peaks is not None:
        replies += [client.query(q, Gauge, peaks.take, deadline, at) for q in queries[3:]]
    readings = fleet_from_answers(client, found, targets, peaks, matchers, span)
    return PrometheusFleet(
        client.url,
        at if at is not None else found.at,
        tuple(readings),
        tuple(sorted({FAMILY[n] for n in found.names})),
        span,
        matchers,
        tuple(queries),
        tuple(dict.fromkeys(w for r in replies for w in r.warnings)),
        tuple(dict.fromkeys(i for r in replies for i in r.infos)),
    )


def memory_history(
    url: str,
    match: str | None = None,
    duration: str = "1h",
    timeout: float = DEFAULT_TIMEOUT,
    http_config: HttpConfig | str | Path | None = None,
    end: float | None = None,
    points: int = HISTORY_POINTS,
) -> list[NpuHistory]:
    """Each NPU's used memory over the last `duration` (default an hour), for a small chart: one range query per
    name family, ending at Prometheus' own now (asked first) unless `end` is given.

    About `points` samples per NPU (the step is duration / points, at least 1 s); a node Prometheus could not
    scrape has gaps where it was down. Sorted by host, then device. Raises PrometheusError as read_fleet does.
    """
    deadline = Deadline(timeout)
    matchers = check_match(match)
    seconds = duration_seconds(duration)
    client = PrometheusClient(url, _config(http_config))
    stop = client.server_time(deadline) if end is None else end
    step = max(seconds / max(points, 1), MIN_STEP)
    merged: dict[tuple[str, str], dict[float, float]] = defaultdict(dict)
    uuids: dict[tuple[str, str], str] = {}

    def take(batch: list[Range]) -> None:
        for s in batch:
            key = (s.metric.node, s.metric.device)
            uuids.setdefault(key, s.metric.uuid)
            points_of = merged[key]
            for t, v in s.values:
                try:
                    value = float(v)
                except ValueError:
                    continue
                if not math.isnan(value):  # a pod's change (or a rename) splits a series: the higher of them
                    points_of[t] = max(value, points_of.get(t, 0.0))

    for names in (LEGACY, CURRENT):
        client.query_range(_selector([names["used"]], matchers), stop - seconds, stop, step, Range, take, deadline)
    if not merged:
        raise _no_series(client, matchers, {})
    return [
        NpuHistory(
            host, device, uuids[(host, device)], tuple((t, round(v)) for t, v in sorted(merged[(host, device)].items()))
        )
        for host, device in sorted(merged, key=lambda k: (_natural(k[0]), _natural(k[1])))
    ]
