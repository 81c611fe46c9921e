"""A server's NPUs right now, from `rbln-smi` / `rbln-stat`: exact bytes from its JSON (`-j`), else its text table."""

from __future__ import annotations

import json
from dataclasses import replace

from rbln_artifact_studio.core.errors import StudioError, UnknownNpuError
from rbln_artifact_studio.core.fleet.npu_status import Device, DeviceStatus, NpuProcess, ReadForm
from rbln_artifact_studio.core.model.npu import FAMILIES, get_npu
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.core.shown import lines_shown, name_shown
from rbln_artifact_studio.core.sizes import format_bytes, parse_bytes
from rbln_artifact_studio.remote.server import NOT_FOUND, Server

__all__ = ["Device", "DeviceStatus", "NpuProcess", "parse_device_json", "parse_device_table", "read_devices"]

TOOLS = ("rbln-smi", "rbln-stat")
JSON_FLAGS = (("-j", "-g"), ("-j",))  # groups where the driver knows them; plain JSON on older drivers
# A fixed script (nothing interpolated): the first tool found prints its JSON (when it offers JSON) or its table,
# after a marker line that names the tool and the form.
SCRIPT = (
    "for tool in rbln-smi rbln-stat; do "
    'if command -v "$tool" >/dev/null 2>&1; then '
    'for flags in "-j -g" "-j"; do '
    'if out=$("$tool" $flags 2>/dev/null); then '
    'case $out in *\'"devices"\'*) echo "#tool $tool json"; printf \'%s\\n\' "$out"; exit 0;; esac; '
    "fi; done; "
    'echo "#tool $tool text"; exec "$tool"; fi; '
    "done; echo 'neither rbln-smi nor rbln-stat is on the PATH' >&2; exit 127"
)
ROUNDING = int(0.05 * 2**30)  # the text table prints one decimal of GiB
# How far the contexts' allocations may exceed the NPU's used figure before it cannot be true: the two tables are
# read a moment apart and rounded (a context starting meanwhile); a whole GiB more is no rounding.
CONTEXT_SLACK = 2**30
DEFAULT_TIMEOUT = 60.0


def _gauge(text: object, unit: str) -> float | None:
    """`38C`, `43.9W`, 38 or "38.0" as a number; None where the tool shows none or something else (`N/A`)."""
    if isinstance(text, bool) or text is None:
        return None
    cleaned = str(text).strip().removesuffix(unit).removesuffix("°").strip()
    try:
        value = float(cleaned)
    except ValueError:
        return None
    return value if value == value and value >= 0 else None  # NaN and negatives are no reading


def _where(line: int | None) -> str:
    return f"line {line}: " if line is not None else ""


def _bad(tool: str, host: str, line: int | None, what: str) -> StudioError:
    return StudioError(
        f"{tool} on {host} printed something that cannot be true ({_where(line)}{what}); nothing was read from it.",
        hint=f"Run `{tool}` on {host} in a terminal: a driver that reports this needs a look before anything is "
        "placed on those NPUs.",
    )


def catalog_total(name: str, shown: int) -> int:
    """The catalog's available DRAM when the printed total is its rounding (15.7 GiB is 16,877,879,296 B)."""
    try:
        available = get_npu(name).available_per_npu
    except UnknownNpuError:
        return shown
    return available if abs(available - shown) <= ROUNDING else shown


def _largest_dram(name: str) -> tuple[int, str]:
    """The most DRAM an NPU of this name can have (its family's; any known family's for an unknown name)."""
    try:
        family = get_npu(name).family
    except UnknownNpuError:
        family = max(FAMILIES, key=lambda f: f.dram_bytes)
    return family.dram_bytes, family.name


def _check_figures(
    devices: list[Device], device_at: dict[int, str], context_at: list[str], tool: str, host: str
) -> None:
    """Refuse figures no NPU can have, naming where they were printed (device_at: an NPU's line, context_at: each
    context's, in the order of the devices' processes): a total beyond any NPU the catalog knows, a context larger
    than its NPU, contexts allocating far more than the NPU reports used."""
    places = iter(context_at)
    for device in devices:
        largest, family = _largest_dram(device.name)
        if device.total > largest:
            raise _bad(
                tool,
                host,
                None,
                f"{device_at[device.index]}NPU {device.index} reports {format_bytes(device.total)} in all, more than "
                f"any {family} NPU has ({format_bytes(largest)})",
            )
        allocated = 0
        for ctx in device.processes:
            where = next(places)
            if ctx.memory is None:
                continue
            allocated += ctx.memory
            if ctx.memory > device.total:
                raise _bad(
                    tool,
                    host,
                    None,
                    f"{where}the context of process {ctx.pid} allocates {format_bytes(ctx.memory)}, more than its "
                    f"NPU {device.index} has ({format_bytes(device.total)})",
                )
            if allocated > device.used + CONTEXT_SLACK:
                raise _bad(
                    tool,
                    host,
                    None,
                    f"{where}the contexts on NPU {device.index} allocate {format_bytes(allocated)}, while the NPU "
                    f"reports {format_bytes(device.used)} used",
                )


# ---- the text table --------------------------------------------------------------------------------------------


def _cells(line: str) -> list[str] | None:
    line = line.strip()
    if not line.startswith("|") or not line.endswith("|"):
        return None
    return [c.strip() for c in line.strip("|").split("|")]


def _tables(text: str) -> list[tuple[list[str], list[tuple[int, list[str]]]]]:
    """Each table as (header cells, [(line number, row cells)]); borders and one-cell title lines are skipped."""
    tables: list[tuple[list[str], list[tuple[int, list[str]]]]] = []
    for number, line in enumerate(text.splitlines(), 1):
        cells = _cells(line)
        if cells is None or len(cells) < 2:
            continue  # a border, a title ("Device Infomation ..."), or text around the tables
        if cells[0] == "NPU":
            tables.append((cells, []))
        elif tables:
            tables[-1][1].append((number, cells))
    return tables


def _size_cell(text: str, tool: str, host: str, line: int, what: str) -> int:
    text = text.strip()
    if text.startswith("-"):
        raise _bad(tool, host, line, f"{what} is negative: {text!r}")
    try:
        return parse_bytes(text)  # binary units: the ecosystem's "GB" is GiB
    except ValueError:
        raise _bad(tool, host, line, f"cannot read {what} {text!r}") from None


def _npu_cell(text: str, tool: str, host: str, line: int) -> int:
    if not text.isdigit():
        raise _bad(tool, host, line, f"{text!r} is not an NPU number")
    return int(text)


def parse_device_table(text: str, tool: str = "rbln-smi", host: str = "the server") -> list[Device]:
    """The Device and Context Information tables of rbln-smi / rbln-stat; StudioError naming the line of a row
    that cannot be true (an NPU listed twice, used above total, a negative size, a row that is no row)."""
    devices: dict[int, tuple[int, Device]] = {}  # NPU -> (line, device)
    processes: dict[int, list[NpuProcess]] = {}
    context_lines: list[tuple[int, int]] = []  # (line, NPU) of each context, checked once every device is known
    for header, rows in _tables(text):
        col = {name: i for i, name in enumerate(header)}
        memory_col = next((i for name, i in col.items() if name.startswith("Memory")), None)
        if "Name" in col and memory_col is not None:
            for line, cells in rows:
                if len(cells) != len(header):
                    raise _bad(tool, host, line, f"a device row of {len(cells)} columns under {len(header)} titles")
                index = _npu_cell(cells[0], tool, host, line)
                if index in devices:
                    raise _bad(tool, host, line, f"NPU {index} is listed twice (first on line {devices[index][0]})")
                used_text, slash, total_text = cells[memory_col].partition("/")
                if not slash:
                    raise _bad(tool, host, line, f"NPU {index}'s memory {cells[memory_col]!r} is not used / total")
                used = _size_cell(used_text, tool, host, line, f"NPU {index}'s used memory")
                shown_total = _size_cell(total_text, tool, host, line, f"NPU {index}'s total memory")
                if used > shown_total:
                    raise _bad(tool, host, line, f"NPU {index} uses {used_text.strip()} of {total_text.strip()}")
                name = cells[col["Name"]]
                total = catalog_total(name, shown_total)
                device = Device(
                    index,
                    name,
                    cells[col["Device"]] if "Device" in col else "",
                    min(used, total),  # the shown used is rounded as the shown total is
                    total,
                    cells[col["Util"]] if "Util" in col else "",
                    (),
                    temperature=_gauge(cells[col["Temp"]], "C") if "Temp" in col else None,
                    power=_gauge(cells[col["Power"]], "W") if "Power" in col else None,
                )
                devices[index] = (line, device)
        elif "PID" in col:
            memory = next((i for name, i in col.items() if name.lower().startswith(("mem", "alloc"))), None)
            name_col = col.get("Process", 1)
            ctx_col = next((i for name, i in col.items() if name.upper().startswith("CTX")), None)
            for line, cells in rows:
                if len(cells) != len(header):
                    raise _bad(tool, host, line, f"a context row of {len(cells)} columns under {len(header)} titles")
                npu = _npu_cell(cells[0], tool, host, line)
                pid_text = cells[col["PID"]]
                if not pid_text.isdigit():
                    raise _bad(tool, host, line, f"{pid_text!r} is not a process id")
                processes.setdefault(npu, []).append(
                    NpuProcess(
                        npu,
                        int(pid_text),
                        cells[name_col],
                        _size_cell(cells[memory], tool, host, line, "the context's memory")
                        if memory is not None
                        else None,
                        cells[ctx_col] if ctx_col is not None else "",
                    )
                )
                context_lines.append((line, npu))
    for line, npu in context_lines:
        if npu not in devices:
            raise _bad(tool, host, line, f"a context on NPU {npu}, which the device table does not list")
    out = [replace(d, processes=tuple(processes.get(i, ()))) for i, (_, d) in sorted(devices.items())]
    lines_of: dict[int, list[str]] = {}
    for line, npu in context_lines:
        lines_of.setdefault(npu, []).append(_where(line))
    context_at = [where for d in out for where in lines_of.get(d.index, [])]
    _check_figures(out, {i: _where(line) for i, (line, _) in devices.items()}, context_at, tool, host)
    return out


# ---- the JSON form ---------------------------------------------------------------------------------------------


def _json_bytes(value: object, tool: str, host: str, where: str) -> int:
    """`memory.used` / `total` / `memalloc`: integer strings of bytes (a number or a size with a unit accepted)."""
    text = str(value).strip() if isinstance(value, (str, int)) and not isinstance(value, bool) else None
    if text is None or not text:
        raise _bad(tool, host, None, f"{where} is {value!r}, not a size")
    if text.startswith("-"):
        raise _bad(tool, host, None, f"{where} is negative: {text!r}")
    if text.isdigit():
        return int(text)
    try:
        return parse_bytes(text)
    except ValueError:
        raise _bad(tool, host, None, f"{where} is {text!r}, not a size") from None


def _json_int(value: object, tool: str, host: str, where: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    raise _bad(tool, host, None, f"{where} is {value!r}, not a number")


def parse_device_json(text: str, tool: str = "rbln-stat", host: str = "the server") -> tuple[list[Device], str]:
    """`rbln-stat -j` (Backend.AI's form): the devices with exact bytes, and the driver version."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _bad(tool, host, exc.lineno, f"not JSON: {exc.msg}") from None
    if not isinstance(data, dict) or not isinstance(data.get("devices"), list):
        raise _bad(tool, host, None, 'no "devices" list in its JSON')
    devices: dict[int, Device] = {}
    device_places: dict[int, str] = {}  # where each NPU was listed, for a figure refused later
    context_places: dict[int, list[int]] = {}  # each NPU's contexts' indexes, in order
    for i, entry in enumerate(data["devices"]):
        where = f"devices[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("memory"), dict):
            raise _bad(tool, host, None, f"{where} has no memory figures")
        index = _json_int(entry.get("npu"), tool, host, f"{where}.npu")
        if index in devices:
            raise _bad(tool, host, None, f"{where}: NPU {index} is listed twice")
        used = _json_bytes(entry["memory"].get("used"), tool, host, f"{where}.memory.used")
        total = _json_bytes(entry["memory"].get("total"), tool, host, f"{where}.memory.total")
        if used > total:
            raise _bad(tool, host, None, f"{where}: NPU {index} uses {used:,} bytes of {total:,}")
        device_places[index] = f"{where}: "
        devices[index] = Device(
            index,
            str(entry.get("name", "")),
            str(entry.get("device", "")),
            used,
            total,
            str(entry.get("util", "")),
            (),
            exact=True,
            group_id=str(entry.get("group_id", "") or ""),
            temperature=_gauge(entry.get("temperature"), "C"),
            uuid=str(entry.get("uuid", "") or ""),
        )
    processes: dict[int, list[NpuProcess]] = {}
    contexts = data.get("contexts") or []
    if not isinstance(contexts, list):
        raise _bad(tool, host, None, '"contexts" is not a list')
    for i, ctx in enumerate(contexts):
        where = f"contexts[{i}]"
        if not isinstance(ctx, dict):
            raise _bad(tool, host, None, f"{where} is not an object")
        npu = _json_int(ctx.get("npu"), tool, host, f"{where}.npu")
        if npu not in devices:
            raise _bad(tool, host, None, f'{where} is on NPU {npu}, which "devices" does not list')
        memalloc = ctx.get("memalloc")
        context_places.setdefault(npu, []).append(i)
        processes.setdefault(npu, []).append(
            NpuProcess(
                npu,
                _json_int(ctx.get("pid"), tool, host, f"{where}.pid"),
                str(ctx.get("process", "")),
                None if memalloc in (None, "") else _json_bytes(memalloc, tool, host, f"{where}.memalloc"),
                str(ctx.get("ctx_id", "")),
                str(ctx.get("status", "")),
            )
        )
    out = [replace(d, processes=tuple(processes.get(d.index, ()))) for _, d in sorted(devices.items())]
    context_at = [f"contexts[{i}]: " for _, places in sorted(context_places.items()) for i in places]
    _check_figures(out, device_places, context_at, tool, host)
    return out, str(data.get("KMD_version", ""))


# ---- reading a server ------------------------------------------------------------------------------------------


def parse_tool_output(host: str, out: str) -> DeviceStatus:
    """What SCRIPT printed (its marker line, then the tool's JSON or table) as the server's device status."""
    first, _, body = out.partition("\n")
    marker = first.removeprefix("#tool ").split()
    tool, form = [*marker, "rbln-smi", "text"][:2] if first.startswith("#tool") else ("rbln-smi", "text")
    if form == "json":
        devices, version = parse_device_json(body, tool, host)
        status = DeviceStatus(host, tool, tuple(devices), ReadForm.JSON, version)
    else:
        status = DeviceStatus(host, tool, tuple(parse_device_table(body, tool, host)), ReadForm.TEXT)
    if not status.devices:
        shown = next((line.strip() for line in body.splitlines() if line.strip()), "")
        raise StudioError(
            f"{tool} on {host} listed no NPUs"
            + (f" (it printed: {shown[:120]!r})." if shown else " (it printed nothing)."),
            hint=f"Run `{tool}` on {host} in a terminal: the driver may not see its NPUs.",
        )
    return status


def read_devices(server: Server, cancel: CancelToken | None = None, timeout: float = DEFAULT_TIMEOUT) -> DeviceStatus:
    """The server's NPUs now; StudioError when neither tool is installed, it fails, or it prints what cannot be."""
    result = server.run(["sh", "-c", SCRIPT], timeout=timeout, cancel=cancel)
    return status_from_tool(server.host, result.returncode, result.stdout.decode("utf-8", "replace"), result.stderr)


def status_from_tool(host: str, returncode: int, out: str, stderr: str) -> DeviceStatus:
    """What SCRIPT ended with (however it was run there) as the server's device status, or why there is none."""
    if returncode == NOT_FOUND and not out.startswith("#tool"):
        raise StudioError(
            f"{host} has neither rbln-smi nor rbln-stat on its PATH, so its NPUs cannot be listed.",
            hint="They come with the RBLN driver package; check that the driver is installed there.",
        )
    if returncode != 0:
        first, _, table = out.partition("\n")
        tool = first.removeprefix("#tool ").split()[0] if first.startswith("#tool") else "rbln-smi"
        why = (stderr.strip() or table.strip()).splitlines()[-1:] or ["it printed no reason"]
        raise StudioError(f"{tool} failed on {host} (status {returncode}): {why[0]}")
    return parse_tool_output(host, out)


def _how(status: DeviceStatus) -> str:
    if status.form is ReadForm.PROMETHEUS:
        return f"{status.tool} via {status.source}, bytes" if status.source else f"{status.tool}, bytes"
    return f"{status.tool}, " + ("exact bytes" if status.form is ReadForm.JSON else "text table, to 0.1 GiB")


def device_line(d: Device, window: str = "") -> str:
    """One NPU's line: memory, then utilization, temperature and the window's peak where the source gives them."""
    line = (
        f"  NPU {d.index} {d.name:10} {d.device:7} used {format_bytes(d.used):>10} of {format_bytes(d.total):>10}, "
        f"free {format_bytes(d.free):>10}"
    )
    if d.util:
        line += f"  util {d.util:>5}%"
    if d.temperature is not None:
        line += f"  {d.temperature:>4.0f}C"
    if d.peak is not None:
        line += f"  peak {format_bytes(d.peak)}" + (f" over {window}" if window else "")
    return line


def devices_text(status: DeviceStatus) -> str:
    """A node's NPUs and what holds each, one line each; its names (from the node or Prometheus' labels)
    escaped, so a CR or a newline in a label cannot draw over a row or fake one."""
    lines = [f"{name_shown(status.host)}: {len(status.devices)} NPU(s) ({_how(status)})"]
    for d in status.devices:
        lines.append(device_line(d, status.window))
        lines += [
            f"      {p.label()}" + (f" {format_bytes(p.memory)}" if p.memory is not None else "") for p in d.processes
        ]
    return lines_shown(lines)
