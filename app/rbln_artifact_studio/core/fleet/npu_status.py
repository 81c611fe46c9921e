"""A server's NPUs as its driver tool (or its monitoring) reports them: each NPU's memory used/total and the
contexts (or pods) on it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Any


class ReadForm(Enum):
    """How the figures were read: the tool's JSON gives exact bytes, its text table one decimal of GiB;
    rbln-metrics-exporter's gauges, read from Prometheus, give bytes."""

    JSON = "json"
    TEXT = "text"
    PROMETHEUS = "prometheus"


@dataclass(frozen=True)
class NpuProcess:
    """One context the tool lists: the process holding it and the DRAM it allocated (None when not shown).

    From Prometheus, a pod holding the NPU (the exporter's pod labels): pid 0, as no process id is published,
    `name` its container (else the pod), and no memory of its own (there is no per-process series)."""

    npu: int
    pid: int
    name: str
    memory: int | None
    ctx_id: str = ""
    status: str = ""
    namespace: str = ""
    pod: str = ""
    container: str = ""

    @property
    def is_pod(self) -> bool:
        return bool(self.pod)

    def label(self) -> str:
        """How a front end names it: `pid 4242 vllm`, or `pod team-a/llm-0 (vllm)`."""
        if self.is_pod:
            where = f"{self.namespace}/{self.pod}" if self.namespace else self.pod
            return f"pod {where}" + (f" ({self.container})" if self.container else "")
        return f"pid {self.pid} {self.name}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"pid": self.pid, "name": self.name, "memory": self.memory}
        if self.is_pod:
            out.update(namespace=self.namespace, pod=self.pod, container=self.container)
        return out


@dataclass(frozen=True)
class Device:
    """One NPU as the tool reports it; `total` is the DRAM available after the reserve."""

    index: int
    name: str
    device: str
    used: int
    total: int
    util: str
    processes: tuple[NpuProcess, ...]
    exact: bool = False  # True: bytes (the tool's JSON, the exporter); False: the text table's rounding (0.1 GiB)
    group_id: str = ""
    temperature: float | None = None  # °C, where the source gives it
    power: float | None = None  # W, where the source gives it
    peak: int | None = None  # the most used over a window (Prometheus' max_over_time), when one was asked for
    uuid: str = ""
    firmware_version: str = ""

    @property
    def free(self) -> int:
        return self.total - self.used  # never negative: a reading with used above total is refused

    @property
    def free_at_peak(self) -> int:
        """What was free when the window's peak was reached (the free now when no window was read)."""
        return self.total - max(self.used, self.peak or 0)

    def to_json(self) -> dict[str, Any]:
        return {
            "npu": self.index,
            "name": self.name,
            "device": self.device,
            "memory_used": self.used,
            "memory_total": self.total,
            "memory_free": self.free,
            "memory_exact": self.exact,
            "memory_peak": self.peak,
            "group_id": self.group_id,
            "util": self.util,
            "temperature": self.temperature,
            "power": self.power,
            "uuid": self.uuid,
            "firmware_version": self.firmware_version,
            "processes": [p.to_json() for p in self.processes],
        }


@dataclass(frozen=True)
class DeviceStatus:
    host: str
    tool: str
    devices: tuple[Device, ...]
    form: ReadForm = ReadForm.TEXT
    driver_version: str = ""
    source: str = ""  # where it was read when not on the host itself: the Prometheus URL (no credentials)
    window: str = ""  # the window of each device's `peak` (a Prometheus duration such as 1h), if one was read

    @property
    def contexts(self) -> tuple[NpuProcess, ...]:
        return tuple(p for d in self.devices for p in d.processes)

    def at_peak(self) -> DeviceStatus:
        """The same NPUs with each one's used memory at its window's peak: what `place --window` judges room by."""
        if not self.window:
            return self
        devices = tuple(replace(d, used=max(d.used, d.peak or 0)) for d in self.devices)
        return replace(self, devices=devices)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "host": self.host,
            "tool": self.tool,
            "form": self.form.value,
            "driver_version": self.driver_version,
            "devices": [d.to_json() for d in self.devices],
        }
        if self.source:
            out["source"] = self.source
        if self.window:
            out["window"] = self.window
        return out
