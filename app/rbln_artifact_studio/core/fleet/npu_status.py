"""A server's NPUs as its driver tool (or its monitoring) reports them: each NPU's memory used/total and the
contexts (or pods) on it."""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from rbln_artifact_studio.core.errors import UnknownNpuError
from rbln_artifact_studio.core.model.npu import FAMILIES, get_npu


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


# ---- figures no NPU can have ------------------------------------------------------------------------------------
#
# One check for every source (rbln-smi's table, rbln-stat's JSON, rbln-metrics-exporter through Prometheus): a
# reading that fails it is a failed row naming the figure, never a place to fit. The margin covers the rounding of
# the sources (the text table prints 0.1 GiB, the exporter rounds the daemon's GiB), nothing more.
FIGURE_MARGIN = 2**27  # 128 MiB


@functools.lru_cache(maxsize=256)  # asked for every NPU of a fleet, of a few products
def largest_dram(product: str) -> tuple[int, str]:
    """The most DRAM an NPU of this product has, and its family's name (any known family's for an unknown name)."""
    try:
        family = get_npu(product).family
    except UnknownNpuError:
        family = max(FAMILIES, key=lambda f: f.dram_bytes)
    return family.dram_bytes, family.name


def _shown(value: float) -> str:
    return f"{int(value):,}" if value < 2**53 else f"{value:g}"  # beyond 2^53 a float's digits are no figure


def _bytes_problem(what: str, value: float) -> str | None:
    if value != value or value in (float("inf"), float("-inf")):
        return f"{what} is {value}, not a number of bytes"
    if value < 0:
        return f"{what} is negative ({value:g} bytes)"
    if value != int(value):
        return f"{what} is {value!r} bytes, not a whole number"
    return None


def figure_problem(product: str, used: float, total: float, peak: float | None = None) -> str | None:
    """Why an NPU's memory figures cannot be true (NaN/Inf, negative or fractional bytes, a total beyond its
    product's DRAM, used or peak above total), naming the figure; None when they can."""
    largest, family = largest_dram(product)
    if (
        0 <= used <= total <= largest + FIGURE_MARGIN
        and used % 1 == 0 == total % 1
        and (peak is None or (0 <= peak <= total and peak % 1 == 0))
    ):
        return None  # the usual case in a few comparisons (NaN fails each): every NPU of a fleet comes here
    for what, value in (("memory used", used), ("memory total", total), ("peak", peak)):
        if value is not None and (problem := _bytes_problem(what, value)) is not None:
            return problem
    if total > largest + FIGURE_MARGIN:
        return f"memory total {_shown(total)} bytes is more than any {family} NPU has ({largest:,} bytes)"
    if used > total:
        return f"memory used {_shown(used)} bytes is above its total {_shown(total)}"
    if peak is not None and peak > total:
        return f"peak {_shown(peak)} bytes over the window is above its total {_shown(total)}"
    return None
