"""A server's NPUs right now, from `rbln-smi` (`rbln-stat` on older drivers): name, memory used/total, processes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rbln_artifact_studio.core.errors import StudioError, UnknownNpuError
from rbln_artifact_studio.core.model.npu import get_npu
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.core.sizes import format_bytes, parse_bytes
from rbln_artifact_studio.remote.server import NOT_FOUND, Server

TOOLS = ("rbln-smi", "rbln-stat")
# A fixed script (nothing interpolated): the first of the tools found prints its table after a marker line.
SCRIPT = (
    "for tool in rbln-smi rbln-stat; do "
    'if command -v "$tool" >/dev/null 2>&1; then echo "#tool $tool"; exec "$tool"; fi; '
    "done; echo 'neither rbln-smi nor rbln-stat is on the PATH' >&2; exit 127"
)
ROUNDING = int(0.05 * 2**30)  # rbln-smi prints one decimal of GiB


@dataclass(frozen=True)
class NpuProcess:
    npu: int
    pid: int
    name: str
    memory: int | None


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

    @property
    def free(self) -> int:
        return max(self.total - self.used, 0)

    def to_json(self) -> dict[str, Any]:
        return {
            "npu": self.index,
            "name": self.name,
            "device": self.device,
            "memory_used": self.used,
            "memory_total": self.total,
            "memory_free": self.free,
            "util": self.util,
            "processes": [{"pid": p.pid, "name": p.name, "memory": p.memory} for p in self.processes],
        }


@dataclass(frozen=True)
class DeviceStatus:
    host: str
    tool: str
    devices: tuple[Device, ...]

    def to_json(self) -> dict[str, Any]:
        return {"host": self.host, "tool": self.tool, "devices": [d.to_json() for d in self.devices]}


def _size(text: str) -> int | None:
    try:
        return parse_bytes(text.strip())  # binary units: the ecosystem's "GB" is GiB
    except ValueError:
        return None


def _exact_total(name: str, shown: int) -> int:
    """The catalog's available DRAM when the printed total is its rounding (15.7 GiB is 16,877,879,296 B)."""
    try:
        available = get_npu(name).available_per_npu
    except UnknownNpuError:
        return shown
    return available if abs(available - shown) <= ROUNDING else shown


def _tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """Each table of the output as (header cells, row cells); border and title lines are skipped."""
    tables: list[tuple[list[str], list[list[str]]]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("|") or not line.endswith("|"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) < 2:
            continue  # a title line ("Device Information ...")
        if cells[0] == "NPU":
            tables.append((cells, []))
        elif tables and cells[0].isdigit():
            tables[-1][1].append(cells)
    return tables


def parse_device_table(text: str) -> list[Device]:
    """The Device and Context Information tables of rbln-smi / rbln-stat."""
    devices: dict[int, Device] = {}
    processes: dict[int, list[NpuProcess]] = {}
    for header, rows in _tables(text):
        col = {name: i for i, name in enumerate(header)}
        memory_col = next((i for name, i in col.items() if name.startswith("Memory")), None)
        if "Name" in col and memory_col is not None:
            for cells in rows:
                used_text, _, total_text = cells[memory_col].partition("/")
                used, total = _size(used_text), _size(total_text)
                if used is None or total is None:
                    raise StudioError(f"Cannot read the memory column of NPU {cells[0]}: {cells[memory_col]!r}.")
                name = cells[col["Name"]]
                devices[int(cells[0])] = Device(
                    int(cells[0]),
                    name,
                    cells[col["Device"]] if "Device" in col else "",
                    used,
                    _exact_total(name, total),
                    cells[col["Util"]] if "Util" in col else "",
                    (),
                )
        elif "PID" in col:
            memory = next((i for name, i in col.items() if name.lower().startswith(("mem", "alloc"))), None)
            name_col = col.get("Process", 1)
            for cells in rows:
                processes.setdefault(int(cells[0]), []).append(
                    NpuProcess(
                        int(cells[0]),
                        int(cells[col["PID"]]) if cells[col["PID"]].isdigit() else -1,
                        cells[name_col],
                        _size(cells[memory]) if memory is not None else None,
                    )
                )
    return [
        Device(d.index, d.name, d.device, d.used, d.total, d.util, tuple(processes.get(i, ())))
        for i, d in sorted(devices.items())
    ]


def read_devices(server: Server, cancel: CancelToken | None = None) -> DeviceStatus:
    """The server's NPUs now; StudioError when neither tool is installed or it fails."""
    result = server.connection.run(["sh", "-c", SCRIPT], timeout=60, cancel=cancel)
    out = result.stdout.decode("utf-8", "replace")
    if result.returncode == NOT_FOUND and not out.startswith("#tool"):
        raise StudioError(
            f"{server.host} has neither rbln-smi nor rbln-stat on its PATH, so its NPUs cannot be listed.",
            hint="They come with the RBLN driver package; check that the driver is installed there.",
        )
    first, _, table = out.partition("\n")
    tool = first.removeprefix("#tool ").strip()
    if result.returncode != 0:
        why = (result.stderr.strip() or table.strip()).splitlines()[-1:] or ["no message"]
        raise StudioError(f"{tool} failed on {server.host} (status {result.returncode}): {why[0]}")
    devices = parse_device_table(table)
    if not devices:
        raise StudioError(f"{tool} on {server.host} listed no NPUs.")
    return DeviceStatus(server.host, tool, tuple(devices))


def devices_text(status: DeviceStatus) -> str:
    lines = [f"{status.host}: {len(status.devices)} NPU(s) ({status.tool})"]
    for d in status.devices:
        lines.append(
            f"  NPU {d.index} {d.name:10} {d.device:7} used {format_bytes(d.used):>10} of {format_bytes(d.total):>10}, "
            f"free {format_bytes(d.free)}"
        )
        lines += [
            f"      pid {p.pid} {p.name}" + (f" {format_bytes(p.memory)}" if p.memory is not None else "")
            for p in d.processes
        ]
    return "\n".join(lines)
