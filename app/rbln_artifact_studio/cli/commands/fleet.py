"""The CLI's commands across many servers (devices, place, plan --on, scan: each server a row of one answer) and
the server groups they take as @GROUP (server-groups, set-server-group, remove-server-group); devices and place
also read the nodes a Prometheus knows (--prometheus URL), beside the servers or alone."""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic_core import to_json

from rbln_artifact_studio.cli.commands.common import open_artifact, usage_error
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.artifact import Artifact
from rbln_artifact_studio.core.fleet.host_groups import (
    GROUP_PREFIX,
    check_group_name,
    expand,
    groups_file,
    load_groups,
    remove_group,
    save_group,
)
from rbln_artifact_studio.core.fleet.npu_status import DeviceStatus
from rbln_artifact_studio.core.fleet.scan import ArtifactSummary
from rbln_artifact_studio.core.location import (
    Location,
    ServerFolder,
    is_local,
    names_a_server,
    parse_host,
    parse_location,
    server_url,
)
from rbln_artifact_studio.core.numbers import seconds_from_environment
from rbln_artifact_studio.core.planning.placement import place, placement_text
from rbln_artifact_studio.core.planning.planner import require_valid
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.core.shown import line_shown, name_shown, redacted
from rbln_artifact_studio.core.status import Status
from rbln_artifact_studio.places import dispatch
from rbln_artifact_studio.places.fleet_sources import (
    NodeReading,
    ReadOptions,
    Source,
    SourceKind,
    read_sources,
    to_place,
)
from rbln_artifact_studio.places.kind import ScanOptions
from rbln_artifact_studio.remote import registry
from rbln_artifact_studio.remote.fleet import (
    DEFAULT_PARALLEL,
    DEFAULT_TIMEOUT,
    ServerReading,
    fan_out,
    fleet_text,
)
from rbln_artifact_studio.remote.server_plan import plan_on_server, server_plan_text

if TYPE_CHECKING:  # Prometheus' client (http.client, ssl, msgspec): loaded only when --prometheus is given
    from rbln_artifact_studio.remote.prometheus import HttpConfig

ENV_TIMEOUT = "RBLN_STUDIO_SERVER_TIMEOUT"  # seconds per server (the --timeout default), read once per command
LONGER = f"--timeout SECONDS or {ENV_TIMEOUT}=SECONDS"  # what a server that ran out of time is told to need


# Where pydantic_core's text differs from json's: a byte json escapes (non-ASCII, DEL), and a float json spells
# with an exponent (below 1e-4, from 1e16: 1e-05 where pydantic_core writes 0.00001, 1e+16 for 1e16), as a value
# (after `: `), a list's item (after an indent) or the whole text (a bare number). Possessive quantifiers: a few
# ms over 8,000 NPUs' answer.
_FLOAT_JSON_SPELLS_OTHERWISE = rb"-?(?:0\.0000|[0-9]{17,}+\.|[0-9][0-9.]*+[eE])"
_EXPONENT_VALUE = re.compile(rb": " + _FLOAT_JSON_SPELLS_OTHERWISE)
_EXPONENT_ITEM = re.compile(rb"\n *+" + _FLOAT_JSON_SPELLS_OTHERWISE)  # a literal first: found by a fast scan
_EXPONENT_WHOLE = re.compile(_FLOAT_JSON_SPELLS_OTHERWISE)  # matched at the start only


def json_text(data: Any) -> str:
    """json.dumps(data, indent=2), to the byte, for data of str keys: pydantic_core's writer (a dependency already;
    8,000 NPUs' answer in a tenth of json's time, as json's indented writer is Python) where its text is the
    same, else json's."""
    try:
        fast = to_json(data, indent=2, inf_nan_mode="constants")
    except ValueError:  # what it cannot write (a lone surrogate): json says so, or writes it escaped
        return json.dumps(data, indent=2)
    if (
        not fast.isascii()
        or b"\x7f" in fast
        or _EXPONENT_VALUE.search(fast)
        or _EXPONENT_ITEM.search(fast)
        or _EXPONENT_WHOLE.match(fast)
    ):
        return json.dumps(data, indent=2)
    return fast.decode("ascii")


def _print_json(data: Any) -> None:
    sys.stdout.write(redacted(json_text(data)))
    sys.stdout.write("\n")


def _print_json_list(items: Iterable[Any]) -> None:
    """json_text(list(items)) to the byte, written an item at a time: 10,000 nodes' answer is never all one text
    (nor all dicts) in memory."""
    first = True
    for item in items:
        sys.stdout.write("[\n  " if first else ",\n  ")
        sys.stdout.write(json_text(item).replace("\n", "\n  "))
        first = False
    sys.stdout.write("[]\n" if first else "\n]\n")


def default_timeout() -> float:
    return seconds_from_environment(ENV_TIMEOUT, DEFAULT_TIMEOUT)


def is_host_entry(text: str) -> bool:
    """A server URL with no folder, or `@GROUP`: a server to run on, not an artifact."""
    return text.startswith(GROUP_PREFIX) or names_a_server(text)


def hosts_of(entries: Sequence[str]) -> list[str]:
    """The servers named (a server URL, a bare HOST, `@GROUP` from the settings), each once; the CLI's
    ssh configuration is read from the environment first."""
    registry.configure_from_environment()
    hosts = []
    for entry in expand(entries):
        hosts.append(parse_host(entry))
    if not hosts:
        raise StudioError(f"No server named; give {server_url('HOST')} (or @GROUP) one or more times.")
    return list(dict.fromkeys(hosts))


def split_on(on: Sequence[str], dirs: Sequence[str]) -> tuple[list[str], list[str]]:
    """`--on SERVER ART` reads ART as a server's value: hand what is not a server back to the artifacts."""
    hosts = [t for t in on if is_host_entry(t)]
    return hosts, [t for t in on if not is_host_entry(t)] + list(dirs)


@dataclass(frozen=True)
class PrometheusSources:
    """--prometheus URL (each), narrowed by --match, with --window's peak and --prometheus-http-config's credentials."""

    urls: tuple[str, ...] = ()
    match: str | None = None
    window: str | None = None
    http_config: str | None = None

    def check(self) -> HttpConfig | None:
        """StudioError for a flag that cannot be used, before anything is asked of any server."""
        # deferred: Prometheus' client (http.client, ssl, msgspec: ~25 ms) only when --prometheus is given
        from rbln_artifact_studio.remote.prometheus import check_match, duration_seconds, load_http_config

        if not self.urls:
            for flag, value in (
                ("--match", self.match),
                ("--window", self.window),
                ("--prometheus-http-config", self.http_config),
            ):
                if value is not None:
                    raise StudioError(
                        f"{flag} is for the nodes Prometheus knows: give --prometheus URL with it.",
                        hint="Servers read over SSH have no history and take no label matchers.",
                    )
            return None
        check_match(self.match)
        if self.window is not None:
            duration_seconds(self.window)
        return load_http_config(self.http_config) if self.http_config else None


def _read_sources(
    hosts: Sequence[str],
    sources: PrometheusSources,
    config: HttpConfig | None,
    timeout: float,
    placing: bool = False,
) -> tuple[list[NodeReading], list[str]]:
    """Every node of the servers and each Prometheus, read and merged by places/fleet_sources (the Fleet Console's
    reader too): each node once, a Prometheus that cannot be asked a row named by its URL (no credentials); and
    the errors of the Prometheus URLs that failed as a whole."""
    options = ReadOptions(
        timeout,
        with_drift=not placing,  # placing needs the memory gauges alone (and no process drift)
        http_config=config or "",
        match=sources.match,
        window=sources.window,
        memory_only=placing,
        longer=LONGER,
    )
    given = [Source(SourceKind.SERVER, h) for h in hosts] + [Source(SourceKind.PROMETHEUS, u) for u in sources.urls]
    readings = read_sources(given, options)
    return readings, [r.error or "not read" for r in readings if r.whole and not r.partial]


def _server_reading(reading: NodeReading) -> ServerReading:
    """A node as the CLI prints it (remote.fleet's row)."""
    return ServerReading(reading.node, reading.status, reading.drifts, reading.error, reading.notes, reading.partial)


def _need_a_source(entries: Sequence[str], sources: PrometheusSources, command: str) -> None:
    if not entries and not sources.urls:
        raise StudioError(
            f"No server named; give {server_url('HOST')} (or @GROUP) or --prometheus URL to {command}.",
        )


@contextlib.contextmanager
def _no_cycle_collection(pause: bool) -> Iterator[None]:
    """Python's cycle collector paused while a Prometheus' fleet is read and printed: its 40,000 series and 8,000
    NPUs hold no reference cycles, and collecting over them again and again took a fifth of the client's time
    (reference counting still frees them)."""
    if not pause or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _sources(args: argparse.Namespace) -> PrometheusSources:
    urls = tuple(dict.fromkeys(args.prometheus or ()))  # each once, as servers are
    return PrometheusSources(urls, args.match, args.window, args.prometheus_http_config)


def cmd_devices(args: argparse.Namespace) -> int:
    """`devices SERVER [SERVER | @group ...] [--prometheus URL]`: one host as before (its error is the command's);
    several, or a Prometheus' nodes: a row each."""
    if not args.hosts and not args.prometheus:
        return usage_error("devices", f"name the servers ({server_url('HOST')}, @GROUP) or give --prometheus URL")
    sources = _sources(args)
    with _no_cycle_collection(bool(sources.urls)):
        return _devices(args.hosts, args.json, args.timeout, sources)


def _devices(entries: Sequence[str], as_json: bool, timeout: float | None, sources: PrometheusSources) -> int:
    _need_a_source(entries, sources, "devices")
    config = sources.check()
    hosts = hosts_of(entries) if entries else []
    limit = timeout or default_timeout()
    nodes, failed = _read_sources(hosts, sources, config, limit)
    readings = [_server_reading(r) for r in nodes]
    if not sources.urls and len(entries) == 1 and not entries[0].startswith(GROUP_PREFIX):
        [reading] = readings
        if reading.error is not None:
            raise StudioError(reading.error)
    if not hosts and len(sources.urls) == 1 and failed:
        raise StudioError(failed[0])  # Prometheus alone: its error is the command's
    if as_json:
        single = len(readings) == 1 and len(entries) == 1 and not sources.urls
        if single:
            _print_json(readings[0].to_json())
        else:
            _print_json_list(r.to_json() for r in readings)
    else:
        print(fleet_text(readings))
    return 1 if any(r.error is not None for r in readings) else 0


def _statuses(hosts: Sequence[str], timeout: float) -> tuple[list[DeviceStatus], dict[str, str]]:
    return to_place(_read_sources(hosts, PrometheusSources(), None, timeout, placing=True)[0])


def _check(artifacts: list[Artifact]) -> list[Artifact]:
    require_valid(artifacts)  # as plan: an invalid artifact is named, never placed
    return artifacts


def cmd_place(args: argparse.Namespace) -> int:
    """`place ART... --on SERVER... | @group | --prometheus URL`: 0 when every artifact fits somewhere now (with
    --window: at each NPU's peak over it), else 1."""
    hosts, dirs = split_on(args.on or [], args.dirs)
    if not dirs:
        return usage_error("place", f"name the artifacts: place ART... --on {server_url('HOST')} ...")
    if not hosts and not args.prometheus:
        return usage_error("place", f"say where: --on {server_url('HOST')} ... (or @GROUP), or --prometheus URL")
    sources = _sources(args)
    sources.check()  # a wrong flag is said before any artifact is opened
    opened = [open_artifact(d, args) for d in dirs]  # wherever they live
    with _no_cycle_collection(bool(sources.urls)):
        return _place(dirs, opened, hosts, args.json, args.timeout, sources)


def _place(
    targets: Sequence[str],
    opened: list[Artifact],
    entries: Sequence[str],
    as_json: bool,
    timeout: float | None,
    sources: PrometheusSources,
) -> int:
    _need_a_source(entries, sources, "place across")
    config = sources.check()
    hosts = hosts_of(entries) if entries else []
    if not targets:
        raise StudioError(f"Name the artifacts to place: place ART... --on {server_url('HOST')} ...")
    artifacts = _check(opened)
    readings, failed = _read_sources(hosts, sources, config, timeout or default_timeout(), placing=True)
    if not hosts and len(sources.urls) == 1 and failed:
        raise StudioError(failed[0])
    statuses, failures = to_place(readings)  # --window: each node at its peak, whatever sources joined it
    names = [r.node for r in readings]
    placements = [place(a, statuses, failures, label=t) for a, t in zip(artifacts, targets, strict=True)]
    if as_json:
        answer: dict[str, Any] = {"servers": names, "placements": [p.to_json() for p in placements]}
        if sources.urls:
            # deferred: Prometheus' client, as in PrometheusSources.check (loaded there already)
            from rbln_artifact_studio.remote.prometheus import redact

            answer.update(prometheus=[redact(u) for u in sources.urls], window=sources.window)
        _print_json(answer)
    else:
        if sources.window:
            print(f"Free memory of the Prometheus nodes judged at each NPU's peak over the last {sources.window}.")
        print("\n".join(placement_text(p) for p in placements))
    return 0 if all(p.fits for p in placements) else 1


def plan_on(entries: Sequence[str], opened: list[Artifact], as_json: bool, timeout: float | None) -> int:
    """`plan --on SERVER... ART...`: 0 when the artifacts fit together on at least one server, else 1."""
    hosts = hosts_of(entries)
    artifacts = _check(opened)
    statuses, failures = _statuses(hosts, timeout or default_timeout())
    if len(hosts) == 1 and failures:
        raise StudioError(failures[hosts[0]])
    plans = [plan_on_server(artifacts, s) for s in statuses]
    if as_json:
        rows: list[dict[str, Any]] = [p.to_json() for p in plans]
        rows += [{"host": h, "verdict": "unknown", "fits": False, "error": why} for h, why in failures.items()]
        _print_json(rows[0] if len(hosts) == 1 else rows)
    else:
        print("\n".join(server_plan_text(p) for p in plans))
        for host, why in failures.items():
            print(line_shown(f"{name_shown(host)}: FAILED: {why}"))
    return 0 if any(p.fits for p in plans) else 1


def scan_fleet(
    roots: Sequence[str],
    entries: Sequence[str],
    timeout: float | None = None,
    on_issue: Callable[[str, str], None] | None = None,
    failed: list[str] | None = None,
) -> Iterator[ArtifactSummary]:
    """The rows of several places (a server's folder, a bucket, or PATH on every `--on` server), each scanned by
    its kind through places.dispatch, all at once; a place that cannot be read is a row with its reason (its URL
    also appended to `failed`: no artifact)."""
    registry.configure_from_environment()
    places: list[Location] = []
    for root in roots:
        where = parse_location(root)
        if not dispatch.capabilities(where).on_this_computer:
            places.append(where)
        elif entries:
            places += [ServerFolder(h, root) for h in hosts_of(entries)]
        else:
            raise StudioError(f"{root} is a folder here; scan several servers with {server_url('HOST')}/PATH or --on.")
    by_url = {str(p): p for p in places}

    def work(url: str, cancel: CancelToken, limit: float) -> list[ArtifactSummary]:
        issues: list[str] = []
        options = ScanOptions(on_issue=lambda _p, m: issues.append(m), cancel=cancel, timeout=limit)
        rows = list(dispatch.scan(by_url[url], options))
        if issues and not rows:  # the folder itself could not be walked (missing, no permission): a row says so
            raise StudioError(" ".join(issues))
        if on_issue is not None:
            for message in issues:
                on_issue(url, message)
        return rows

    for result in fan_out(
        list(by_url), work, timeout or default_timeout(), DEFAULT_PARALLEL, longer="--timeout SECONDS"
    ):
        if result.value is not None:
            yield from result.value
        else:
            if failed is not None:
                failed.append(result.host)
            name = by_url[result.host].name
            yield ArtifactSummary(result.host, name, Status.INVALID, [f"Cannot scan {result.host}: {result.error}"])


# ---- server groups (@GROUP) ------------------------------------------------------------------------------------


def group_member(entry: str) -> str:
    """A server as a group keeps it (its URL); StudioError for a folder, a bucket, a group or no server name."""
    if entry.startswith(GROUP_PREFIX):
        raise StudioError(f"{entry} is a group; a group lists servers ({server_url('HOST')}), not other groups.")
    if not is_local(entry) and not names_a_server(entry) and dispatch.server_folder(parse_location(entry)) is not None:
        raise StudioError(
            f"{entry} names a folder on a server; a group lists servers: {server_url(parse_host(entry))}."
        )
    return server_url(parse_host(entry))


def cmd_server_groups(args: argparse.Namespace) -> int:
    """`server-groups`: every group and its servers (none yet is no error)."""
    path = groups_file()
    groups = load_groups(path).groups
    if args.json:
        _print_json({"file": str(path), "groups": groups})
    elif not groups:
        print(
            f"No server groups yet ({path}); add one with: rbln-studio-cli set-server-group NAME {server_url('HOST')} ..."
        )
    else:
        print("\n".join(f"{GROUP_PREFIX}{name}: {' '.join(hosts)}" for name, hosts in sorted(groups.items())))
    return 0


def cmd_set_server_group(args: argparse.Namespace) -> int:
    """`set-server-group NAME SERVER...`: add the group, or replace its servers; nothing is written on an error."""
    bare = check_group_name(args.name)
    hosts = list(dict.fromkeys(group_member(e) for e in args.hosts))
    existed = bare in load_groups().groups
    path = save_group(bare, hosts)
    print(f"{'Replaced' if existed else 'Saved'} server group {GROUP_PREFIX}{bare}: {' '.join(hosts)} (in {path}).")
    return 0


def cmd_remove_server_group(args: argparse.Namespace) -> int:
    """`remove-server-group NAME`: StudioError naming the groups there are when there is no such group."""
    name = args.name
    hosts = remove_group(name)
    print(f"Removed server group {GROUP_PREFIX}{name.removeprefix(GROUP_PREFIX)} (it listed {' '.join(hosts)}).")
    return 0
