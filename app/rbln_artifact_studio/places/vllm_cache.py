"""vllm-rbln's cache where it lives (a folder here, on an SSH server, in a bucket): its entries with their status,
and their removal. The reading and the removal are each kind's; what each status means is core/vllm_cache's."""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path
from typing import Any

from rbln_artifact_studio.backends.choice import BackendChoice
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import BucketPrefix, LocalFolder, Location, ServerFolder, parse_location
from rbln_artifact_studio.core.model.kinds import NoKvCacheError
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
from rbln_artifact_studio.core.portable.vllm_cache_disk import (
    entry_times,
    is_cache,
    prune,
    restore_used,
    serve_processes,
)
from rbln_artifact_studio.core.portable.vllm_cache_disk import (
    read_cache as read_cache_here,
)
from rbln_artifact_studio.core.status import Status
from rbln_artifact_studio.core.storage.fsutil import INCOMPLETE_MARKER
from rbln_artifact_studio.core.storage.jsonfile import CONFIG_NAME
from rbln_artifact_studio.core.vllm_cache.command import ServeCommand, parse_serve, read_model_info
from rbln_artifact_studio.core.vllm_cache.entries import IN_USE, CacheEntry, entry_from_record
from rbln_artifact_studio.core.vllm_cache.key import COMPILED_MODELS, MEGA_CACHE, split_name
from rbln_artifact_studio.core.vllm_cache.seed import entry_location, mismatches
from rbln_artifact_studio.objectstore.store import Bucket
from rbln_artifact_studio.places import dispatch
from rbln_artifact_studio.places.kind import Report
from rbln_artifact_studio.remote import registry

ENV_CACHE_ROOT = "VLLM_CACHE_ROOT"


def default_root() -> Location:
    """$VLLM_CACHE_ROOT, else ~/.cache/vllm: where vllm-rbln keeps its cache on this computer."""
    return LocalFolder(Path(os.environ.get(ENV_CACHE_ROOT) or Path.home() / ".cache" / "vllm").expanduser())


def cache_root(text: str | None) -> Location:
    return default_root() if not text else parse_location(text)


@dataclass
class CacheListing:
    """A cache's entries, and the optimum-rbln installed where it lives (None: not known)."""

    root: Location
    entries: list[CacheEntry]
    toolchain: str | None


def _installed_here() -> str | None:
    try:
        return metadata.version("optimum-rbln")
    except metadata.PackageNotFoundError:
        return None


def _records(root: Location) -> tuple[list[dict[str, Any]], str | None, list[dict[str, Any]]]:
    """The place's records of its entries (core/portable/vllm_cache_disk.py's shape), its toolchain's version, and
    the `vllm serve` commands running there ({"pid", "argv"})."""
    if isinstance(root, LocalFolder):
        if not root.path.is_dir():
            raise StudioError(f"{root} is no folder: give the cache's root (the folder holding {COMPILED_MODELS}/).")
        if not is_cache(str(root.path)):
            raise StudioError(
                f"{root} holds no {COMPILED_MODELS}/ or {MEGA_CACHE}/ folder, so no vLLM cache. Give the cache's root."
            )
        return read_cache_here(str(root.path), CONFIG_NAME, INCOMPLETE_MARKER), _installed_here(), serve_processes()
    if isinstance(root, ServerFolder):
        lines = registry.server(root.host).run_program(
            "vllm_cache", ["list", CONFIG_NAME, INCOMPLETE_MARKER, root.path]
        )
        for line in lines:
            if "error" in line:
                raise StudioError(f"{root} {line['error']}. Give the cache's root.")
        toolchain = next((line["toolchain"] for line in lines if "toolchain" in line), None)
        serving: list[dict[str, Any]] = next((line["serving"] for line in lines if "serving" in line), [])
        return [line for line in lines if "area" in line], toolchain, serving
    if isinstance(root, BucketPrefix):
        return _bucket_records(root), None, []
    raise StudioError(f"{root}: a vLLM cache is read in a folder here, on an SSH server or in a bucket.")


def _bucket_records(root: BucketPrefix) -> list[dict[str, Any]]:
    bucket = Bucket(root)
    groups: dict[tuple[str, str], dict[str, int]] = {}
    changed: dict[tuple[str, str], int] = {}  # each entry's newest object: a bucket keeps no access time
    for obj in bucket.listing(root):
        rest = obj.key[len(root.key_prefix) :].split("/")
        entry = _bucket_entry(rest)
        if entry is None:
            continue
        inside = rest[2:] if entry[0] == COMPILED_MODELS else rest[3:]
        groups.setdefault(entry, {})["/".join(inside)] = obj.size
        if obj.modified is not None:
            changed[entry] = max(changed.get(entry, 0), int(obj.modified))
    records = []
    for (area, name), files in sorted(groups.items()):
        where = root.child(f"{area}/{name}")
        record: dict[str, Any] = {
            "area": area,
            "name": name,
            "path": where.prefix,
            "files": sorted([f, s] for f, s in files.items()),
            "size": sum(files.values()),
            "marker": INCOMPLETE_MARKER in files,
            "holders": [],
            "modified": changed.get((area, name)),
        }
        if CONFIG_NAME in files:
            record["config"] = bucket.read(f"{where.key_prefix}{CONFIG_NAME}").decode("utf-8", "replace")
        records.append(record)
    if not groups:
        raise StudioError(
            f"{root} holds no {COMPILED_MODELS}/ or {MEGA_CACHE}/ entries, so no vLLM cache. Give the cache's root."
        )
    return records


def _bucket_entry(rest: list[str]) -> tuple[str, str] | None:
    """(area, name) of the entry an object's key below the root (split at /) belongs to; None: no entry's."""
    if rest[0] == COMPILED_MODELS and len(rest) >= 3 and split_name(rest[1]) and not rest[1].startswith("."):
        return COMPILED_MODELS, rest[1]
    if rest[0] == MEGA_CACHE and len(rest) >= 4 and not rest[1].startswith("."):
        return MEGA_CACHE, f"{rest[1]}/{rest[2]}"
    return None


def _where(root: Location, record: dict[str, Any]) -> Location:
    return root.child(f"{record['area']}/{record['name']}")


def _problems(where: Location) -> list[str]:
    """What the studio's check of the artifact at where finds wrong (its invalid problems), as inspect words them."""
    try:
        artifact = dispatch.open_artifact(where)
    except NoKvCacheError:
        return []
    except StudioError as exc:
        return [exc.one_line()]
    return [p.message for p in artifact.problems if p.severity is Status.INVALID]


def read_cache(root: Location) -> CacheListing:
    """Every entry of the cache at root with its status (each compiled artifact checked as inspect checks it)."""
    records, toolchain, serving = _records(root)
    entries = []
    try:
        for record in records:
            where = _where(root, record)
            checked = (
                record["area"] == COMPILED_MODELS and record.get("config") is not None and not record.get("marker")
            )
            problems = _problems(where) if checked and not record.get("link") else []
            entries.append(entry_from_record(record, str(where), problems, toolchain))
    finally:
        _restore_used(root, records)
    _mark_served(entries, serving, here=isinstance(root, LocalFolder))
    return CacheListing(root, entries, toolchain)


def _mark_served(entries: list[CacheEntry], serving: list[dict[str, Any]], here: bool) -> None:
    """Mark in use each entry a running `vllm serve` of that machine hits, its key read from its command line as
    vllm-rbln reads it (here also from its model's config.json; a command the studio cannot read is passed over).
    vllm-rbln may have loaded the entry and closed its files: its command line still names it."""
    by_name = {e.name: e for e in entries if e.area == COMPILED_MODELS}
    for process in serving:
        try:
            name = parse_serve(list(process["argv"]), read_model_info if here else None).key.folder_name
        except StudioError:
            continue
        entry = by_name.get(name)
        if entry is None or any(h["pid"] == process["pid"] for h in entry.holders):
            continue
        command = " ".join(process["argv"])[:200]
        entry.holders.append({"pid": process["pid"], "command": command, "why": "serves it (its vllm serve command)"})
        entry.reasons = [r for r in entry.reasons if r != "ok"]
        program = os.path.basename(process["argv"][0])
        entry.reasons.insert(0, f"pid {process['pid']} ({program}) serves it (its vllm serve command)")
        entry.status = IN_USE


def _restore_used(root: Location, records: list[dict[str, Any]]) -> None:
    """Put back the access times this reading moved: an entry's last use is vllm-rbln's, never the studio's."""
    times = entry_times(records)
    if not times:
        return
    if isinstance(root, LocalFolder):
        restore_used(str(root.path), times)
    elif isinstance(root, ServerFolder):
        registry.server(root.host).run_program("vllm_cache", ["restore", root.path, json.dumps(times)])


def remove_entries(root: Location, entries: list[CacheEntry]) -> list[dict[str, Any]]:
    """Remove the entries (each renamed out of the way first, or in a bucket its rbln_config.json deleted first, so
    an interrupted removal leaves no entry vllm-rbln takes for a hit); one result per entry: {"name", "removed",
    "freed", "reason"}. An entry found in use at that moment is kept."""
    if any(e.status == IN_USE for e in entries):
        raise StudioError("An entry in use is never removed.")  # the plan keeps them: a caller that did not is wrong
    names = [e.key for e in entries]
    if not names:
        return []
    if isinstance(root, LocalFolder):
        return prune(str(root.path), names)
    if isinstance(root, ServerFolder):
        return registry.server(root.host).run_program("vllm_cache", ["prune", root.path, *names])
    if isinstance(root, BucketPrefix):
        return [_remove_from_bucket(root, e) for e in entries]
    raise StudioError(f"{root}: a vLLM cache is pruned in a folder here, on an SSH server or in a bucket.")


def _remove_from_bucket(root: BucketPrefix, entry: CacheEntry) -> dict[str, Any]:
    bucket = Bucket(root)
    prefix = root.child(entry.key)
    keys = [obj.key for obj in bucket.listing(prefix) if obj.key.startswith(prefix.key_prefix)]
    first = [k for k in keys if k == prefix.key_prefix + CONFIG_NAME]  # no longer a hit before anything else goes
    try:
        bucket.delete(first)
        bucket.delete([k for k in keys if k not in first])
    except StudioError as exc:
        return {"name": entry.key, "removed": False, "freed": 0, "reason": exc.one_line()}
    return {"name": entry.key, "removed": True, "freed": entry.size}


def seed(
    root: Location,
    command: ServeCommand,
    blocks: int | None = None,
    source: Location | None = None,
    npu: str | None = None,
) -> tuple[Location, int]:
    """Write the entry command will hit below root, with blocks (None: what its gpu_memory_utilization fits): a
    compile, or a resized copy of source when given (refused when source was compiled with other settings).
    Returns the entry and the count written."""
    entry = entry_location(root, command)
    try:
        there = any(e.name == command.key.folder_name for e in read_cache(root).entries)
    except StudioError:
        there = False  # no cache there yet: the seed makes it one
    if there:
        raise StudioError(
            f"{entry} is there already: the command hits it (vllm-cache lookup says in what state). Prune it first to "
            "write it again",
            unchanged=True,
        )
    if source is not None:
        _refuse_other_settings(command, dispatch.open_artifact(source).loaded.raw, f"{source}")
        budget = None if blocks else str(command.key.memory_budget)
        result = dispatch.resize(ResizeRequest(source, target=blocks, budget_text=budget, output=entry))
        return entry, result.target
    # Listing, pruning and a seed from an artifact need no compiler (vllm-cache list: no pydantic).
    # deferred: the compile's request and delivery bring the simulator's compiler and backends, with pydantic
    from rbln_artifact_studio.core.vllm_cache.lookup import compile_request
    from rbln_artifact_studio.places.delivery import compile_to

    request = compile_request(command, npu)
    if blocks:
        request = replace(request, kvcache_num_blocks=blocks, memory_budget=None)
    compile_to(request, entry, BackendChoice.AUTO, Report())
    return entry, dispatch.read_block_count(entry)


def entry_for(root_text: str, command_text: str, rbln_config: dict[str, Any] | None) -> str:
    """The entry's location as text (worker side: it may read the model's config.json); StudioError saying why not,
    among them an artifact compiled with other settings than the command serves."""
    try:
        words = shlex.split(command_text)
    except ValueError as exc:
        raise StudioError(f"The command line does not parse: {exc}.") from None
    command = parse_serve(words)
    if rbln_config is not None:
        _refuse_other_settings(command, rbln_config, "This artifact")
    return str(entry_location(cache_root(root_text.strip()), command))


def _refuse_other_settings(command: ServeCommand, rbln_config: dict[str, Any], what: str) -> None:
    """StudioError when an artifact (its rbln_config.json) was compiled with other settings than command serves:
    as the command's entry, vllm-rbln would serve the artifact's settings, not the command's."""
    wrong = mismatches(command, rbln_config)
    if wrong:
        raise StudioError(
            f"{what} cannot be this command's entry: it was compiled with {', '.join(wrong)}; vllm-rbln would serve "
            "its settings, not the command's. Compile instead",
            unchanged=True,
        )
