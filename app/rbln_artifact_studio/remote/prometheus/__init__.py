"""The fleet's NPUs from Prometheus (rbln-metrics-exporter's gauges), for the CLI and the desktop alike.

read_fleet(url, match, window, timeout, http_config) -> PrometheusFleet: a ServerReading per node, now (and
each NPU's peak over a window); memory_history(url, match, duration, ...) -> [NpuHistory]: each NPU's used
memory over the last hour, for a chart. Both block (bounded by `timeout` for the whole call): run them off the
GUI thread. Errors are PrometheusError (a StudioError) whose text names no credentials.
"""

from __future__ import annotations

from rbln_artifact_studio.remote.prometheus.client import DEFAULT_TIMEOUT, PrometheusError, redact
from rbln_artifact_studio.remote.prometheus.http_config import HttpConfig, load_http_config
from rbln_artifact_studio.remote.prometheus.reader import (
    CURRENT,
    GAUGES,
    LEGACY,
    MEMORY,
    NpuHistory,
    PrometheusFleet,
    check_match,
    duration_seconds,
    memory_history,
    read_fleet,
)

__all__ = [
    "CURRENT",
    "DEFAULT_TIMEOUT",
    "GAUGES",
    "LEGACY",
    "MEMORY",
    "HttpConfig",
    "NpuHistory",
    "PrometheusError",
    "PrometheusFleet",
    "check_match",
    "duration_seconds",
    "load_http_config",
    "memory_history",
    "read_fleet",
    "redact",
]
