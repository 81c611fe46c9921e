"""A server's NPUs as its driver tool reports them: each NPU's memory used/total and the contexts on it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any


class ReadForm(Enum):
    """How the figures were read: the tool's JSON gives exact bytes, its text table one decimal of GiB."""

    JSON = "json"
    TEXT = "text"


@dataclass(frozen=True)
class NpuProcess:
    """One context the tool lists: the process holding it and the DRAM it allocated (None when not shown)."""

    npu: int
    pid: int
    name: str
    memory: int | None
    ctx_id: str = ""
    status: str = ""


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
    exact: bool = False  # True: bytes from the tool's JSON; False: the text table's rounding (to 0.1 GiB)
    group_id: str = ""

    @property
    def free(self) -> int:
        return self.total - self.used  # never negative: a reading with used above total is refused

    def to_json(self) -> dict[str, Any]:
        return {
            "npu": self.index,
            "name": self.name,
            "device": self.device,
            "memory_used": self.used,
            "memory_total": self.total,
            "memory_free": self.free,
            "memory_exact": self.exact,
            "group_id": self.group_id,
            "util": self.util,
            "processes": [{"pid": p.pid, "name": p.name, "memory": p.memory} for p in self.processes],
        }


@dataclass(frozen=True)
class DeviceStatus:
    host: str
    tool: str
    devices: tuple[Device, ...]
    form: ReadForm = ReadForm.TEXT
    driver_version: str = ""

    @property
    def contexts(self) -> tuple[NpuProcess, ...]:
        return tuple(p for d in self.devices for p in d.processes)

    def to_json(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "tool": self.tool,
            "form": self.form.value,
            "driver_version": self.driver_version,
            "devices": [d.to_json() for d in self.devices],
        }
