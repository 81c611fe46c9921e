"""The fleet's NPUs as Prometheus holds rbln-metrics-exporter's gauges: one instant query for every node now
(and one for each NPU's peak over a window), mapped onto the same records the SSH reading produces."""

from __future__ import annotations

import json
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


def status_query(match: str, gauges: Sequence[str] = GAUGES) -> str:
    """The exporter's gauges now (both name families) and every target Prometheus could not scrape: one query.

    `up` is not narrowed here: a down target has only its target's labels, so --match is applied to it by
    down_target_matches (its hostname taken from its instance), not by Prometheus."""
    unknown = set(gauges) - set(GAUGES)
    if unknown or not {"used", "total"} <= set(gauges):
        raise ValueError(f"gauges must include used and total, from {GAUGES}; got {gauges}")
    names = [family[g] for family in (LEGACY, CURRENT) for g in gauges]
    return f"{_selector(names, match)} or (up == 0)"


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
Entry = tuple[str, Any, dict[str, str]]  # (kind, [time, "value"], labels) of one series


def _natural(text: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def _value(pair: Any, device: str, kind: str) -> float:
    try:
        value = float(pair[1])
    except (IndexError, TypeError, ValueError):
        raise _Impossible(f"{device}'s {WHAT[kind]} series has no value") from None
    if not 0 <= value < math.inf:  # NaN, infinities and negatives are no reading
        raise _Impossible(f"{device}'s {WHAT[kind]} is {pair[1]}")
    return value


def _node_of(labels: dict[str, str]) -> str:
    return labels.get("hostname") or labels.get("instance") or labels.get("job") or "?"


def _device_of(labels: dict[str, str]) -> str:
    return labels.get("name") or labels.get("uuid") or labels.get("deviceID") or "?"


def _fmt(value: float, kind: str) -> str:
    return f"{int(value):,} bytes" if kind in ("used", "total") else f"{value:g}"


def _identity(entries: list[Entry], device: str) -> tuple[str, ...]:
    """The identity labels every series of the device agrees on; _Impossible naming one they differ in."""
    seen = {
        (
            s.get("card", ""),
            s.get("uuid", ""),
            s.get("deviceID", ""),
            s.get("firmware_version", ""),
            s.get("driver_version", ""),
        )
        for _, _, s in entries
    }  # spelled out rather than a loop over IDENTITY: this runs for every NPU of the fleet
    if len(seen) == 1:
        return next(iter(seen))
    for i, label in enumerate(IDENTITY):
        values = sorted({t[i] for t in seen})
        if len(values) > 1:
            raise _Impossible(f"{device} is reported twice with different {label} ({', '.join(values)})")
    raise AssertionError("unreachable: distinct tuples differ in some label")


def _device(
    name: str, entries: list[Entry], peak: float | None, fallback_index: int, totals: dict[tuple[str, int], int]
) -> tuple[Device, str]:
    """One NPU from all its series (and the driver version they name); _Impossible for what cannot all be true."""
    values: dict[str, float] = {}
    for kind, pair, _ in entries:
        value = _value(pair, name, kind)
        known = values.setdefault(kind, value)
        if known != value:
            low, high = sorted((known, value))
            raise _Impossible(
                f"{name} is reported twice with different {WHAT[kind]} ({_fmt(low, kind)} and {_fmt(high, kind)})"
            )
    if "used" not in values or "total" not in values:
        missing = "used" if "used" not in values else "total"
        raise _Impossible(f"{name} has no memory {missing} series beside its others")
    used, total = values["used"], values["total"]
    if used > total:
        raise _Impossible(f"{name} uses {int(used):,} bytes of {int(total):,} (used above total)")
    if peak is not None and peak > total:
        raise _Impossible(f"{name}'s peak over the window, {int(peak):,} bytes, is above its total {int(total):,}")
    product, uuid, device_id, firmware, driver = _identity(entries, name)
    key = (product, round(total))
    exact = totals.get(key)
    if exact is None:  # the exporter rounds the daemon's GiB: the catalog's bytes where that is what it rounded
        exact = totals[key] = catalog_total(product, key[1])
    pods = sorted({(s.get("namespace", ""), s["pod"], s.get("container", "")) for _, _, s in entries if s.get("pod")})
    digits = _DEVICE_INDEX.search(name)
    index = int(digits.group(1)) if digits else int(device_id) if device_id.isdigit() else fallback_index
    util = values.get("util")
    device = Device(
        index,
        product,
        name,
        min(round(used), exact),
        exact,
        f"{util:.1f}" if util is not None else "",
        tuple(NpuProcess(index, 0, c or p, None, namespace=ns, pod=p, container=c) for ns, p, c in pods),
        exact=True,
        temperature=values.get("temperature"),
        power=values.get("power"),
        peak=min(round(max(peak, used)), exact) if peak is not None else None,
        uuid=uuid,
        firmware_version=firmware,
    )
    return device, driver


def _node_status(
    host: str,
    devices: dict[str, list[Entry]],
    peaks: dict[str, float] | None,
    source: str,
    window: str,
    totals: dict[tuple[str, int], int],
) -> DeviceStatus:
    ordered = sorted(devices.items(), key=lambda item: _natural(item[0]))
    read = [
        _device(name, entries, None if peaks is None else peaks.get(name), i, totals)
        for i, (name, entries) in enumerate(ordered)
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


def _peaks(peaks: Sequence[dict[str, Any]]) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    """Each node's NPUs' peaks (a device whose pod changed has several series: its peak is theirs), and the
    nodes whose peak series cannot be true."""
    out: dict[str, dict[str, float]] = defaultdict(dict)
    broken: dict[str, str] = {}
    for s in peaks:
        labels = s.get("metric") or {}
        node, device = _node_of(labels), _device_of(labels)
        try:
            value = _value(s.get("value"), device, "peak")
        except _Impossible as exc:
            broken.setdefault(node, str(exc))
            continue
        out[node][device] = max(value, out[node].get(device, 0.0))
    return out, broken


def fleet_from_series(
    client: PrometheusClient,
    series: Sequence[dict[str, Any]],
    peaks: Sequence[dict[str, Any]] | None,
    at: float,
    match: str = "",
    window: str = "",
) -> PrometheusFleet:
    """The rows of an instant query's answer (status_query) and, with a window, of peak_query's.

    Written for a thousand nodes' 40,000 series: one pass groups them by node and NPU, then each NPU is read."""
    down: dict[str, str] = {}  # instance -> job, of every target Prometheus cannot scrape
    nodes: dict[str, dict[str, list[Entry]]] = {}
    kind_of = KIND.get
    for s in series:
        labels: dict[str, str] = s.get("metric") or {}
        name = labels.get("__name__", "")
        kind = kind_of(name)
        if kind is None:
            if name == "up" and down_target_matches(match, labels):
                down[labels.get("instance", "?")] = labels.get("job", "")
            continue  # --match may select another metric; only the exporter's are read
        node = labels.get("hostname") or labels.get("instance") or labels.get("job") or "?"
        device = labels.get("name") or labels.get("uuid") or labels.get("deviceID") or "?"
        per_node = nodes.get(node)
        if per_node is None:
            per_node = nodes[node] = {}
        entries = per_node.get(device)
        if entries is None:
            per_node[device] = [(kind, s.get("value"), labels)]
        else:
            entries.append((kind, s.get("value"), labels))
    if not nodes:
        raise _no_series(client, match, down)
    families: set[str] = set()
    jobs: set[str] = set()
    instances: dict[str, set[str]] = {}
    for node, per_node in nodes.items():
        seen = instances[node] = set()
        for entries in per_node.values():
            for _, _, labels in entries:
                seen.add(labels.get("instance", ""))
                jobs.add(labels.get("job", ""))
                families.add(FAMILY[labels["__name__"]])
    down = {i: job for i, job in down.items() if job in jobs}  # other jobs' targets are no NPU nodes
    peak_by, broken = _peaks(peaks) if peaks is not None else ({}, {})
    totals: dict[tuple[str, int], int] = {}
    readings: list[ServerReading] = []
    shown_down: set[str] = set()
    for node, per_node in nodes.items():
        gone = sorted(instances[node] & down.keys())
        if gone:  # its series linger (not yet stale) while Prometheus fails to scrape it: the failure is the news
            shown_down.update(gone)
            readings.append(ServerReading(node, None, error=_down_reason(client, gone, down)))
            continue
        try:
            if node in broken:
                raise _Impossible(broken[node])
            node_peaks = peak_by.get(node, {}) if peaks is not None else None
            status = _node_status(node, per_node, node_peaks, client.url, window, totals)
        except _Impossible as exc:
            readings.append(ServerReading(node, None, error=_impossible(client, node, str(exc))))
            continue
        readings.append(ServerReading(node, status))
    for instance in sorted(down.keys() - shown_down):
        readings.append(ServerReading(instance, None, error=_down_reason(client, [instance], down)))
    readings.sort(key=lambda r: _natural(r.host))
    return PrometheusFleet(client.url, at, tuple(readings), tuple(sorted(families)), window, match, ())


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
    """Every NPU node Prometheus knows from rbln-metrics-exporter, in one query (two with a window).

    url: Prometheus' base URL (http(s)://[user:password@]HOST[:PORT][/PREFIX]); credentials in it are used,
    never shown. match: label matchers narrowing the series (`hostname=~"node-1.*",job="rbln"`). window: a
    Prometheus duration; each Device's `peak` is then its most used memory over it (DeviceStatus.at_peak()
    judges room by it). timeout: seconds for the whole read, both requests together. http_config: an
    HttpConfig or the path of a promtool --http.config.file YAML. at: the evaluation time (default now).
    gauges: which of GAUGES to read (MEMORY: used and total only, all that placing needs; fewer series).

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
    queries = [status_query(matchers, gauges)] + ([peak_query(matchers, span)] if span else [])
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
