"""What was open when the studio last quit, opened again on the next start: the connected servers, the buckets,
the fleet console's sources, its threshold and how its Prometheus sources are reached (part of the app's settings,
written by their writer thread)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QSettings

MAX_SERVERS = 16
MAX_SOURCES = 64  # the console's own sources (servers, @groups, Prometheus URLs)
DEFAULT_SHORT_FREE = 8 << 30  # bytes: an NPU with less free memory is coloured in the console


@dataclass(frozen=True)
class BucketEntry:
    """A bucket prefix the user opened, with the endpoint and profile it was reached through (no key, ever)."""

    url: str
    endpoint: str = ""
    profile: str = ""


def read_texts(store: QSettings, key: str, limit: int = MAX_SERVERS) -> list[str]:
    """A stored JSON list of texts (hosts, sources); a damaged value reads as empty."""
    value = store.value(key, "")
    try:
        data = json.loads(value) if isinstance(value, str) and value else []
    except ValueError:
        return []
    return [str(v) for v in data if isinstance(v, str) and v][:limit] if isinstance(data, list) else []


def read_buckets(store: QSettings) -> list[BucketEntry]:
    """The buckets open when the studio last quit; a damaged list reads as empty."""
    value = store.value("buckets/opened", "")
    try:
        data = json.loads(value) if isinstance(value, str) and value else []
        return [
            BucketEntry(str(e["url"]), str(e.get("endpoint") or ""), str(e.get("profile") or ""))
            for e in data[:MAX_SERVERS]
            if isinstance(e, dict) and isinstance(e.get("url"), str) and e["url"]
        ]
    except (ValueError, TypeError, KeyError, AttributeError):
        return []


def read_bytes_value(store: QSettings, key: str, default: int) -> int:
    """A stored byte count; the default for anything that is not a non-negative integer."""
    try:
        value = int(str(store.value(key, default)))
    except ValueError:
        return default
    return value if value >= 0 else default


class SessionSettings:
    """Typed values of what was open; each change written at once through the settings' writer."""

    def __init__(self, store: QSettings, write: Callable[[Callable[[QSettings], None]], None]) -> None:
        self._write = write
        self._connected = read_texts(store, "servers/connected")
        self._console_sources = read_texts(store, "console/sources", MAX_SOURCES)
        self._buckets = read_buckets(store)
        self._short_free = read_bytes_value(store, "console/shortFreeBytes", DEFAULT_SHORT_FREE)
        self._console_current = store.value("console/current", False) in (True, "true")
        value = store.value("prometheus/httpConfig", "")
        self._http_config = value.strip() if isinstance(value, str) else ""

    def _set_json(self, key: str, value: object) -> None:
        text = json.dumps(value)
        self._write(lambda store: store.setValue(key, text))

    def connected_hosts(self) -> list[str]:
        """The servers connected when the studio last quit: connected again on start."""
        return list(self._connected)

    def set_connected_hosts(self, hosts: list[str]) -> None:
        self._connected = list(dict.fromkeys(hosts))[:MAX_SERVERS]
        self._set_json("servers/connected", self._connected)

    def console_sources(self) -> list[str]:
        """The fleet console's own sources (servers, @groups, Prometheus URLs), as the user typed them."""
        return list(self._console_sources)

    def set_console_sources(self, sources: list[str]) -> None:
        self._console_sources = list(dict.fromkeys(sources))[:MAX_SOURCES]
        self._set_json("console/sources", self._console_sources)

    def opened_buckets(self) -> list[BucketEntry]:
        """The buckets open when the studio last quit: opened again on start."""
        return list(self._buckets)

    def add_opened_bucket(self, entry: BucketEntry) -> None:
        self._buckets = [*(b for b in self._buckets if b.url != entry.url), entry][-MAX_SERVERS:]
        self._set_json("buckets/opened", [b.__dict__ for b in self._buckets])

    def console_current(self) -> bool:
        """The fleet console was the tab in front when the studio last quit: it opens in front again."""
        return self._console_current

    def set_console_current(self, current: bool) -> None:
        self._console_current = value = bool(current)
        self._write(lambda store: store.setValue("console/current", value))

    def short_free_bytes(self) -> int:
        """Below this much free memory the console colours an NPU."""
        return self._short_free

    def set_short_free_bytes(self, nbytes: int) -> None:
        self._short_free = max(int(nbytes), 0)
        value = self._short_free
        self._write(lambda store: store.setValue("console/shortFreeBytes", value))

    def prometheus_http_config(self) -> str:
        """promtool's --http.config.file for the console's Prometheus sources (basic auth, a token, TLS); empty: none."""
        return self._http_config

    def set_prometheus_http_config(self, path: str) -> None:
        self._http_config = value = path.strip()
        self._write(lambda store: store.setValue("prometheus/httpConfig", value))
