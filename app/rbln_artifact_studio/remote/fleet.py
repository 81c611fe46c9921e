"""Many servers at once: each read in its own thread, bounded in parallelism and each in time; a failure is a row.

A server that does not answer within its limit is reported as such and left behind: its thread is a daemon and
its cancel token is set, so the transport stops its ssh (and with it the program on the server) while the
answer for the others is already printed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from rbln_artifact_studio.backends import rebel_probe
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.artifact import Artifact
from rbln_artifact_studio.core.fleet.npu_status import DeviceStatus
from rbln_artifact_studio.core.location import ServerFolder
from rbln_artifact_studio.core.planning.drift import (
    DRIFT_THRESHOLD_PERCENT,
    ContextDrift,
    ProcessArtifact,
    choose_artifact,
    drifts,
    path_arguments,
)
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.core.shown import line_shown, name_shown
from rbln_artifact_studio.core.storage.jsonfile import CONFIG_NAME
from rbln_artifact_studio.remote import registry
from rbln_artifact_studio.remote.artifact import RULES, artifact_from_record, open_remote_artifacts
from rbln_artifact_studio.remote.devices import SCRIPT, devices_text, read_devices, status_from_tool
from rbln_artifact_studio.remote.server import Server, assembled_program
from rbln_artifact_studio.remote.transport import TimedOutError

T = TypeVar("T")
DEFAULT_PARALLEL = 16  # servers read at once: ssh processes are cheap, the waiting is on the servers
DEFAULT_TIMEOUT = 60.0  # seconds per server, for everything the command asks of it
GRACE = 2.0  # beyond a server's limit, for its own calls to end with their own message first
POLL = 0.05


@dataclass(frozen=True)
class HostResult(Generic[T]):
    host: str
    value: T | None
    error: str | None  # why there is no value: the server's error, or that it did not answer in time


class _Slot:
    def __init__(self) -> None:
        self.started: float | None = None
        self.done = threading.Event()
        self.value: Any = None
        self.error: str | None = None
        self.cancel = CancelToken()


def fan_out(
    hosts: Sequence[str],
    work: Callable[[str, CancelToken, float], T],
    timeout: float = DEFAULT_TIMEOUT,
    parallel: int = DEFAULT_PARALLEL,
    cancel: CancelToken | None = None,
    longer: str | None = None,
) -> list[HostResult[T]]:
    """work(host, cancel, timeout) for every host, at most `parallel` at once, each given `timeout` seconds from
    its start; the results in the order of `hosts`, a failure or a timeout as the error of its row. longer: how
    the caller's user gives a longer limit (a command's `--timeout`), named where a server ran out of time."""
    gate = threading.Semaphore(max(parallel, 1))
    slots = {host: _Slot() for host in dict.fromkeys(hosts)}

    def run(host: str, slot: _Slot) -> None:
        with gate:
            if slot.cancel.cancelled:
                slot.error = "Cancelled before it was read."
                slot.done.set()
                return
            slot.started = time.monotonic()
            try:
                slot.value = work(host, slot.cancel, timeout)
            except TimedOutError as exc:
                slot.error = (exc.with_longer(longer) if longer else exc).one_line()
            except StudioError as exc:
                slot.error = exc.one_line()
            except Exception as exc:  # a bug must not take the other servers' rows with it
                slot.error = f"internal error: {type(exc).__name__}: {exc}"
            slot.done.set()

    for host, slot in slots.items():
        threading.Thread(target=run, args=(host, slot), name=f"fleet-{host}", daemon=True).start()
    late: set[str] = set()
    while True:
        pending = [h for h, s in slots.items() if not s.done.is_set() and h not in late]
        if not pending:
            break
        if cancel is not None and cancel.cancelled:  # the caller gave up: stop every server's work, wait for none
            for slot in slots.values():
                slot.cancel.cancel()
            break
        now = time.monotonic()
        for host in pending:
            slot = slots[host]
            if slot.started is not None and now - slot.started > timeout + GRACE:
                slot.cancel.cancel()  # the transport stops its ssh at its next look
                late.add(host)
        slots[pending[0]].done.wait(POLL)
    out: list[HostResult[T]] = []
    for host, slot in slots.items():
        if host in late:  # what its stopped call says ("Cancelled…") is not why: the limit is
            more = f" A slow server may need a longer limit: {longer}." if longer else ""
            out.append(HostResult(host, None, f"{host} did not answer within {timeout:g} s.{more}"))
        elif slot.done.is_set():
            out.append(HostResult(host, slot.value if slot.error is None else None, slot.error))
        else:
            out.append(HostResult(host, None, "Cancelled."))
    return out


# ---- one server's NPUs with what its processes serve ----------------------------------------------------------


@dataclass(frozen=True)
class ServerReading:
    """A server's NPUs now and, per context, its artifact's prediction against the allocation; or why not."""

    host: str
    status: DeviceStatus | None
    drifts: tuple[ContextDrift, ...] = ()
    error: str | None = None
    notes: tuple[str, ...] = field(default=())
    partial: bool = False  # the row of a Prometheus that answered in part (its warnings are the error)

    def to_json(self) -> dict[str, Any]:
        if self.status is None:
            out: dict[str, Any] = {"host": self.host, "error": self.error, "devices": [], "contexts": []}
            if self.partial:
                out["partial"] = True
            return out
        return {
            **self.status.to_json(),
            "error": None,
            "contexts": [d.to_json() for d in self.drifts],
            "notes": list(self.notes),
        }


def _why_no_folder(record: dict[str, Any], argv: Sequence[str]) -> str:
    """Why no argument of a process names an artifact: the login may not read it, or there is none."""
    unreadable = {str(k): str(v) for k, v in (record.get("unreadable") or {}).items()}
    for arg in path_arguments(argv):
        if arg in unreadable:
            return f"this login cannot read {unreadable[arg]}, which its command line names"
    relative = [a for a in path_arguments(argv) if not a.startswith("/")]
    if record.get("cwd_error") and relative:
        return (
            f"this login cannot read its working folder ({record['cwd_error']}), which its command line's "
            f"{relative[0]} is relative to"
        )
    return "its command line names no artifact folder"


def _named_folders(records: Sequence[dict[str, Any]]) -> tuple[dict[int, ProcessArtifact], dict[int, str]]:
    """From processes.py's records: the processes with no artifact (and why), and the folder each other names."""
    unmatched: dict[int, ProcessArtifact] = {}
    paths: dict[int, str] = {}
    for record in records:
        pid = int(record.get("pid", -1))
        if "error" in record:
            unmatched[pid] = ProcessArtifact(pid, None, None, f"the process cannot be read there: {record['error']}")
            continue
        argv = [str(a) for a in record.get("argv", [])]
        folders = {str(k): str(v) for k, v in (record.get("folders") or {}).items()}
        path = choose_artifact(argv, folders)
        if path is None:
            unmatched[pid] = ProcessArtifact(pid, None, None, _why_no_folder(record, argv))
        else:
            paths[pid] = path
    return unmatched, paths


def _open_folders(
    server: Server, paths: Iterable[str], cancel: CancelToken | None
) -> dict[str, Artifact | StudioError]:
    wanted = sorted(set(paths))
    if not wanted:
        return {}
    targets = [ServerFolder(server.host, p) for p in wanted]
    return dict(zip(wanted, open_remote_artifacts(server, targets, cancel), strict=False))


def _served(host: str, paths: dict[int, str], opened: dict[str, Artifact | StudioError]) -> dict[int, ProcessArtifact]:
    out: dict[int, ProcessArtifact] = {}
    for pid, path in paths.items():
        found = opened.get(path)
        url = str(ServerFolder(host, path))
        if isinstance(found, Artifact):
            out[pid] = ProcessArtifact(pid, url, found)
        else:
            why = found.one_line() if found is not None else "it was not read"
            out[pid] = ProcessArtifact(pid, url, None, f"{url} cannot be read: {why}")
    return out


def match_processes(
    server: Server, pids: Sequence[int], cancel: CancelToken | None = None
) -> dict[int, ProcessArtifact]:
    """Each process's artifact: the folder its command line names (read on the server), opened there."""
    if not pids:
        return {}
    records = server.run_program("processes", [CONFIG_NAME, *(str(p) for p in pids)], cancel)
    unmatched, paths = _named_folders(records)
    out = {**unmatched, **_served(server.host, paths, _open_folders(server, paths.values(), cancel))}
    for pid in pids:
        out.setdefault(pid, ProcessArtifact(pid, None, None, "the server did not report the process"))
    return out


@dataclass
class _OneTrip:
    """What on_server/devices.py answered, as far as it got."""

    status: DeviceStatus | None = None
    processes: list[dict[str, Any]] | None = None
    folders: list[str] = field(default_factory=list)
    snapshots: dict[str, dict[str, Any]] = field(default_factory=dict)
    failed: StudioError | None = None  # why it stopped after the NPUs were read


def _python_unusable(server: Server, exc: StudioError) -> bool:
    """The server's Python cannot run the program at all (remote/server.py's words): the NPUs need no Python."""
    said = exc.one_line()
    return said.startswith(
        (
            f"{server.host} has no {server.python} on its PATH",
            f"{server.host}'s {server.python} is too old",
            f"The studio's helper failed on {server.host} ",
        )
    )


def _one_trip(server: Server, cancel: CancelToken | None, timeout: float) -> _OneTrip | None:
    """The tool, the processes and their folders in one session (None: the server's Python cannot run it)."""
    probe = Path(rebel_probe.__file__).read_text(encoding="utf-8")
    args = [SCRIPT, CONFIG_NAME, assembled_program("processes"), assembled_program("snapshot"), RULES, probe]
    trip = _OneTrip()
    answers = server.stream("devices", args, cancel, timeout, total=timeout)  # the server's --timeout, in all
    try:
        for record in answers:
            if trip.status is None:
                out, err = str(record.get("tool", "")), str(record.get("stderr", ""))
                trip.status = status_from_tool(server.host, int(record.get("status", -1)), out, err)
            elif trip.processes is None:
                trip.processes = list(record.get("processes") or [])
            elif not trip.folders:
                trip.folders = [str(f) for f in record.get("folders") or []]
            elif len(trip.snapshots) < len(trip.folders):
                trip.snapshots[trip.folders[len(trip.snapshots)]] = record
    except StudioError as exc:
        if trip.status is None:
            if _python_unusable(server, exc):
                return None
            raise
        trip.failed = exc
    finally:
        answers.close()
    if trip.status is None:
        raise StudioError(f"{server.host} ended the NPU reading without an answer.")
    return trip


def _matches(server: Server, trip: _OneTrip, cancel: CancelToken | None) -> dict[int, ProcessArtifact]:
    """Each context's process and artifact from what the trip read; what it missed is read the old way."""
    assert trip.status is not None
    pids = sorted({c.pid for c in trip.status.contexts})
    unmatched, paths = _named_folders(trip.processes or [])
    opened: dict[str, Artifact | StudioError] = {}
    for path, record in trip.snapshots.items():
        try:
            opened[path] = artifact_from_record(server.host, ServerFolder(server.host, path), record)
        except StudioError as exc:
            opened[path] = exc
    opened.update(_open_folders(server, (p for p in paths.values() if p not in opened), cancel))
    out = {**unmatched, **_served(server.host, paths, opened)}
    missed = [pid for pid in pids if pid not in out]  # the tool's output said more than the server found in it
    out.update(match_processes(server, missed, cancel))
    return {pid: out[pid] for pid in pids}


def read_server(
    host: str,
    cancel: CancelToken | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    threshold: float = DRIFT_THRESHOLD_PERCENT,
    with_drift: bool = True,
) -> ServerReading:
    """A server's NPUs (StudioError when they cannot be read) and the drift of each context on them.

    With drift, one session reads it all (on_server/devices.py); a server whose Python cannot run it has its
    NPUs read by the shell alone, as without drift, and the drift unknown with the reason."""
    server = registry.server(host)
    trip = _one_trip(server, cancel, timeout) if with_drift else None
    status = trip.status if trip is not None and trip.status is not None else read_devices(server, cancel, timeout)
    if not with_drift or not status.contexts:
        return ServerReading(host, status)
    pids = sorted({c.pid for c in status.contexts})
    notes: tuple[str, ...] = ()
    try:
        if trip is None:
            matches = match_processes(server, pids, cancel)
        elif trip.failed is not None:
            raise trip.failed
        else:
            matches = _matches(server, trip, cancel)
    except StudioError as exc:  # the NPUs are known; only what their processes serve is not
        why = f"the processes could not be looked up: {exc.one_line()}"
        matches = {pid: ProcessArtifact(pid, None, None, why) for pid in pids}
        notes = (why,)
    return ServerReading(host, status, drifts(status, matches, threshold), notes=notes)


def read_fleet(
    hosts: Sequence[str],
    timeout: float = DEFAULT_TIMEOUT,
    parallel: int = DEFAULT_PARALLEL,
    threshold: float = DRIFT_THRESHOLD_PERCENT,
    with_drift: bool = True,
    cancel: CancelToken | None = None,
    longer: str | None = None,
) -> list[ServerReading]:
    """Every server's reading, in the order given; a server that failed or timed out is a reading with its error
    (longer: how to give it more time, as fan_out names it)."""

    def work(host: str, token: CancelToken, limit: float) -> ServerReading:
        return read_server(host, token, limit, threshold, with_drift)

    return [
        r.value if r.value is not None else ServerReading(r.host, None, error=r.error)
        for r in fan_out(hosts, work, timeout, parallel, cancel, longer)
    ]


def fleet_text(readings: Sequence[ServerReading]) -> str:
    """One table for every server: its NPUs, its contexts with their drift, or its reason."""
    lines: list[str] = []
    for r in readings:
        if r.status is None:
            lines.append(line_shown(f"{name_shown(r.host)}: FAILED: {r.error}"))
            continue
        lines.append(devices_text(r.status))  # escaped there, line by line
        lines += [line_shown(f"    {d.text()}") for d in r.drifts]
        lines += [line_shown(f"    note: {n}") for n in r.notes]
    return "\n".join(lines)
