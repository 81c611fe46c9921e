"""The fleet's NPUs as Prometheus holds rbln-metrics-exporter's gauges: one instant query for every node now
(and one for each NPU's peak over a window), mapped onto the same records the SSH reading produces."""

from __future__ import annotations

import math
import re
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.npu_status import Device, DeviceStatus, NpuProcess, ReadForm
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
    r"""\s*[A-Za-z_][A-Za-z0-9_]*\s*(?:=~|!~|!=|=)\s*(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)\s*"""
)
_DURATION = re.compile(r"(?:\d+(?:ms|s|m|h|d|w|y))+")
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
_DEVICE_INDEX = re.compile(r"(\d+)$")


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
    return seconds


def _selector(names: Iterable[str], match: str) -> str:
    names = sorted(set(names))
    # The names hold no regex characters (":" and "_" only): joined as they are.
    head = f'__name__="{names[0]}"' if len(names) == 1 else '__name__=~"' + "|".join(names) + '"'
    return "{" + head + (f",{match}" if match else "") + "}"


def status_query(match: str) -> str:
    """Every exporter series now, both name families, and every target Prometheus could not scrape: one query."""
    up = "up{" + match + "}" if match else "up"
    return f"{_selector(KIND, match)} or ({up} == 0)"


def peak_query(match: str, window: str) -> str:
    """Each NPU's most used memory over the window, either family (functions drop the name; `or` keeps one)."""
    return " or ".join(f"max_over_time({_selector([names['used']], match)}[{window}])" for names in (CURRENT, LEGACY))


# ---- the answer ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PrometheusFleet:
    """A Prometheus' view of the fleet: a reading per node (a node Prometheus cannot scrape is one with its reason)."""

    source: str  # the URL, without credentials
    at: float  # the moment the queries were evaluated (Unix seconds)
    readings: tuple[ServerReading, ...]
    families: tuple[str, ...]  # the exporter's name families seen: "legacy", "current"
    window: str = ""
    match: str = ""
    queries: tuple[str, ...] = field(default=())

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


def _natural(text: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def _number(series: dict[str, Any], node: str, what: str) -> float:
    try:
        value = float(series["value"][1])
    except (KeyError, IndexError, TypeError, ValueError):
        raise _Impossible(f"its {what} series has no value") from None
    if math.isnan(value) or math.isinf(value) or value < 0:
        raise _Impossible(f"its {what} is {series['value'][1]}")
    return value


def _node_of(labels: dict[str, str]) -> str:
    return labels.get("hostname") or labels.get("instance") or labels.get("job") or "?"


def _device_of(labels: dict[str, str]) -> str:
    return labels.get("name") or labels.get("uuid") or labels.get("deviceID") or "?"


def _one(values: dict[float, list[str]], device: str, what: str) -> float:
    """The one value a device's series agree on; _Impossible naming both when they do not."""
    if len(values) == 1:
        return next(iter(values))
    shown = sorted(values)
    raise _Impossible(
        f"{device} is reported twice with different {what} ({_fmt(shown[0], what)} and {_fmt(shown[-1], what)})"
    )


def _fmt(value: float, what: str) -> str:
    return f"{int(value):,} bytes" if "memory" in what else f"{value:g}"


def _same_label(series: list[dict[str, str]], label: str, device: str) -> str:
    seen = {s.get(label, "") for s in series} - {""}
    if len(seen) > 1:
        raise _Impossible(f"{device} is reported twice with different {label} ({', '.join(sorted(seen))})")
    return next(iter(seen), "")


class _DeviceSeries:
    def __init__(self) -> None:
        self.values: dict[str, dict[float, list[str]]] = defaultdict(dict)  # kind -> value -> instances
        self.labels: list[dict[str, str]] = []


def _device(name: str, found: _DeviceSeries, peak: float | None, fallback_index: int) -> Device:
    kinds = found.values
    if "used" not in kinds or "total" not in kinds:
        missing = "used" if "used" not in kinds else "total"
        raise _Impossible(f"{name} has no memory {missing} series beside its others")
    used, total = _one(kinds["used"], name, "memory used"), _one(kinds["total"], name, "memory total")
    if used > total:
        raise _Impossible(f"{name} uses {int(used):,} bytes of {int(total):,} (used above total)")
    if peak is not None and peak > total:
        raise _Impossible(f"{name}'s peak over the window, {int(peak):,} bytes, is above its total {int(total):,}")
    product = _same_label(found.labels, "card", name)
    uuid = _same_label(found.labels, "uuid", name)
    exact = catalog_total(product, round(total))  # the exporter rounds the daemon's GiB: the catalog's bytes
    pods = sorted(
        {(s.get("namespace", ""), s.get("pod", ""), s.get("container", "")) for s in found.labels if s.get("pod")}
    )
    digits = _DEVICE_INDEX.search(name)
    device_id = _same_label(found.labels, "deviceID", name)
    index = int(digits.group(1)) if digits else int(device_id) if device_id.isdigit() else fallback_index
    util = _one(kinds["util"], name, "utilization") if "util" in kinds else None
    temperature = _one(kinds["temperature"], name, "temperature") if "temperature" in kinds else None
    power = _one(kinds["power"], name, "power") if "power" in kinds else None
    return Device(
        index,
        product,
        name,
        min(round(used), exact),
        exact,
        f"{util:.1f}" if util is not None else "",
        tuple(NpuProcess(index, 0, c or p, None, namespace=ns, pod=p, container=c) for ns, p, c in pods),
        exact=True,
        temperature=temperature,
        power=power,
        peak=min(round(max(peak, used)), exact) if peak is not None else None,
        uuid=uuid,
        firmware_version=_same_label(found.labels, "firmware_version", name),
    )


def _node_status(
    host: str, devices: dict[str, _DeviceSeries], peaks: dict[str, float] | None, source: str, window: str
) -> DeviceStatus:
    ordered = sorted(devices.items(), key=lambda item: _natural(item[0]))
    out = [
        _device(name, found, None if peaks is None else peaks.get(name), i) for i, (name, found) in enumerate(ordered)
    ]
    if len({d.index for d in out}) != len(out):
        out = [replace(d, index=i) for i, d in enumerate(out)]  # names without distinct numbers: their order
    versions = sorted({s.get("driver_version", "") for found in devices.values() for s in found.labels} - {""})
    return DeviceStatus(host, TOOL, tuple(out), ReadForm.PROMETHEUS, ", ".join(versions), source, window)


def _no_series(client: PrometheusClient, match: str, down: dict[str, tuple[str, str]]) -> PrometheusError:
    narrowed = f" matching {{{match}}}" if match else ""
    hint = (
        "Prometheus needs a scrape job for the exporter (docs/servers.md shows one for its gateway mode); "
        "its Targets page shows whether it is scraped."
    )
    if match:
        hint = "Check --match (or leave it out), and " + hint[0].lower() + hint[1:]
    if down:
        jobs = sorted({job for job, _ in down.values()})
        hint += f" Prometheus cannot scrape {len(down)} target(s) now (up == 0), of job(s) {', '.join(jobs)}."
    return PrometheusError(
        f"No rbln-metrics-exporter series at {client.url}{narrowed}: is the exporter scraped?", hint=hint
    )


def fleet_from_series(
    client: PrometheusClient,
    series: Sequence[dict[str, Any]],
    peaks: Sequence[dict[str, Any]] | None,
    at: float,
    match: str = "",
    window: str = "",
) -> PrometheusFleet:
    """The rows of an instant query's answer (status_query) and, with a window, of peak_query's."""
    down: dict[str, tuple[str, str]] = {}  # instance -> (job, hostname seen on its series)
    nodes: dict[str, dict[str, _DeviceSeries]] = defaultdict(lambda: defaultdict(_DeviceSeries))
    node_instances: dict[str, set[str]] = defaultdict(set)
    jobs: set[str] = set()
    families: set[str] = set()
    broken: dict[str, str] = {}
    for s in series:
        labels: dict[str, str] = s.get("metric") or {}
        name = labels.get("__name__", "")
        if name == "up":
            down[labels.get("instance", "?")] = (labels.get("job", ""), "")
            continue
        kind = KIND.get(name)
        if kind is None:
            continue  # --match may name another metric's labels; only the exporter's are read
        node = _node_of(labels)
        families.add(FAMILY[name])
        jobs.add(labels.get("job", ""))
        node_instances[node].add(labels.get("instance", ""))
        found = nodes[node][_device_of(labels)]
        try:
            found.values[kind].setdefault(_number(s, node, kind), []).append(labels.get("instance", ""))
        except _Impossible as exc:
            broken.setdefault(node, str(exc))
        found.labels.append(labels)
    every_down, down = down, {i: v for i, v in down.items() if v[0] in jobs}  # other jobs' targets are no NPU nodes
    if not nodes:
        raise _no_series(client, match, every_down)
    peak_by: dict[str, dict[str, float]] = defaultdict(dict)
    for s in peaks or ():
        labels = s.get("metric") or {}
        node, device = _node_of(labels), _device_of(labels)
        try:
            value = _number(s, node, "peak")
        except _Impossible as exc:
            broken.setdefault(node, str(exc))
            continue
        peak_by[node][device] = max(value, peak_by[node].get(device, 0.0))  # pods change labels: the device's peak
    readings: list[ServerReading] = []
    shown_down = set()
    for node, devices in nodes.items():
        gone = sorted(node_instances[node] & set(down))
        if gone:  # its series linger (not yet stale) while Prometheus fails to scrape it: the failure is the news
            shown_down.update(gone)
            readings.append(ServerReading(node, None, error=_down_reason(client, gone, down)))
            continue
        if node in broken:
            readings.append(ServerReading(node, None, error=_impossible(client, node, broken[node])))
            continue
        try:
            status = _node_status(
                node, devices, peak_by.get(node, {}) if peaks is not None else None, client.url, window
            )
        except _Impossible as exc:
            readings.append(ServerReading(node, None, error=_impossible(client, node, str(exc))))
            continue
        readings.append(ServerReading(node, status))
    for instance in sorted(set(down) - shown_down):
        readings.append(ServerReading(instance, None, error=_down_reason(client, [instance], down)))
    readings.sort(key=lambda r: _natural(r.host))
    return PrometheusFleet(client.url, at, tuple(readings), tuple(sorted(families)), window, match, ())


def _down_reason(client: PrometheusClient, instances: list[str], down: dict[str, tuple[str, str]]) -> str:
    job = down[instances[0]][0]
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
) -> PrometheusFleet:
    """Every NPU node Prometheus knows from rbln-metrics-exporter, in one query (two with a window).

    url: Prometheus' base URL (http(s)://[user:password@]HOST[:PORT][/PREFIX]); credentials in it are used,
    never shown. match: label matchers narrowing the series (`hostname=~"node-1.*",job="rbln"`). window: a
    Prometheus duration; each Device's `peak` is then its most used memory over it (DeviceStatus.at_peak()
    judges room by it). timeout: seconds for the whole read, both requests together. http_config: an
    HttpConfig or the path of a promtool --http.config.file YAML. at: the evaluation time (default now).

    Returns a PrometheusFleet whose `readings` are remote.fleet.ServerReading rows, one per node (its
    `hostname` label, else its `instance`), sorted by name: a node's NPUs as Device records (pods as
    NpuProcess with pid 0), or `error` for a target Prometheus cannot scrape (up == 0) and for series that
    cannot all be true. Raises PrometheusError (a StudioError) when Prometheus cannot be asked or holds no
    exporter series; blocking: call it off a GUI thread.
    """
    deadline = Deadline(timeout)
    matchers = check_match(match)
    span = window.strip() if window else ""
    if span:
        duration_seconds(span)
    client = PrometheusClient(url, _config(http_config))
    when = time.time() if at is None else at
    queries = [status_query(matchers)] + ([peak_query(matchers, span)] if span else [])
    series = client.query(queries[0], when, deadline)
    peaks = client.query(queries[1], when, deadline) if span else None
    fleet = fleet_from_series(client, series, peaks, when, matchers, span)
    return PrometheusFleet(fleet.source, when, fleet.readings, fleet.families, span, matchers, tuple(queries))


def memory_history(
    url: str,
    match: str | None = None,
    duration: str = "1h",
    timeout: float = DEFAULT_TIMEOUT,
    http_config: HttpConfig | str | Path | None = None,
    end: float | None = None,
    points: int = HISTORY_POINTS,
) -> list[NpuHistory]:
    """Each NPU's used memory over the last `duration` (default an hour), for a small chart: one range query.

    About `points` samples per NPU (the step is duration / points, at least 1 s); a node Prometheus could not
    scrape has gaps where it was down. Sorted by host, then device. Raises PrometheusError as read_fleet does.
    """
    deadline = Deadline(timeout)
    matchers = check_match(match)
    seconds = duration_seconds(duration)
    client = PrometheusClient(url, _config(http_config))
    stop = time.time() if end is None else end
    step = max(seconds / max(points, 1), MIN_STEP)
    names = [LEGACY["used"], CURRENT["used"]]
    result = client.query_range(_selector(names, matchers), stop - seconds, stop, step, deadline)
    if not result:
        raise _no_series(client, matchers, {})
    merged: dict[tuple[str, str], dict[float, float]] = defaultdict(dict)
    uuids: dict[tuple[str, str], str] = {}
    for s in result:
        labels = s.get("metric") or {}
        key = (_node_of(labels), _device_of(labels))
        uuids.setdefault(key, labels.get("uuid", ""))
        for t, v in s.get("values") or []:
            try:
                value = float(v)
            except (TypeError, ValueError):
                continue
            if not math.isnan(value):
                merged[key][float(t)] = max(value, merged[key].get(float(t), 0.0))  # a pod's change splits a series
    return [
        NpuHistory(
            host, device, uuids[(host, device)], tuple((t, round(v)) for t, v in sorted(merged[(host, device)].items()))
        )
        for host, device in sorted(merged, key=lambda k: (_natural(k[0]), _natural(k[1])))
    ]
