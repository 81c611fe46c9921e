"""Find compiled artifacts under a folder and summarize each from its rbln_config.json, yielding as it goes."""

from __future__ import annotations

import errno
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.artifact import ConfigIdentity, GraphInspector, Listing
from rbln_artifact_studio.core.fleet.damage import empty_graph_problem
from rbln_artifact_studio.core.fleet.deferred import DeferredInspector
from rbln_artifact_studio.core.fleet.listing import GRAPH_SUFFIX, folder_listing
from rbln_artifact_studio.core.fleet.scan_pool import Done, ordered_map
from rbln_artifact_studio.core.fleet.summary import ArtifactSummary as ArtifactSummary  # its users ask it here
from rbln_artifact_studio.core.fleet.summary import architecture
from rbln_artifact_studio.core.fleet.summary import row_values as row_values  # the table asks it here
from rbln_artifact_studio.core.fleet.verify import verify_summary
from rbln_artifact_studio.core.model.config_checks import config_problems, expected_graph_names
from rbln_artifact_studio.core.model.config_fields import ConfigFields
from rbln_artifact_studio.core.model.kinds import (
    PIPELINE_INDEX,
    ModelDescription,
    ModelKind,
    describe_config,
    describe_folder,
    is_pipeline_folder,
    kind_of,
    missing_graph,
    out_of_step,
    read_json,
    upstream_problems,
)
from rbln_artifact_studio.core.model.rbln_config import parse_config, read_view
from rbln_artifact_studio.core.portable.files import read_small
from rbln_artifact_studio.core.portable.walk import Found, VolumeVersions, volume_version, walk
from rbln_artifact_studio.core.portable.walk import is_inside as is_inside  # rescan and the GUI ask it here
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.core.status import Problem, Status
from rbln_artifact_studio.core.storage.fsutil import (
    INCOMPLETE_MARKER,
    PARTIAL_TAG,
    remove_stale_partials,
)
from rbln_artifact_studio.core.storage.jsonfile import CONFIG_NAME, MAX_JSON_BYTES, decode_json, require_current_format

if TYPE_CHECKING:  # the cache module loads only for a scan that uses the cache (see _scan)
    from rbln_artifact_studio.core.fleet.scan_cache import ScanCache, Signature

IssueCallback = Callable[[Path, str], None]
Verifier = Callable[["ArtifactSummary"], "ArtifactSummary"]
FileReader = Callable[[str], bytes]
"""Reads a small file by path, raising OSError; a remote scan passes one that answers from the server's data."""


def _read(path: str) -> bytes:
    """A small config file's bytes (portable.files.read_small: never waits on a pipe); raises OSError."""
    return read_small(path, MAX_JSON_BYTES)


def _model_name(folder: str, cls_name: str | None, read: FileReader = _read) -> str | None:
    """The hub id saved in config.json (_name_or_path), else the architecture from cls_name."""
    try:
        raw = json.loads(read(os.path.join(folder, "config.json")))
        if isinstance(raw, dict) and isinstance(raw.get("_name_or_path"), str) and raw["_name_or_path"]:
            return raw["_name_or_path"]
    except (OSError, ValueError, RecursionError):
        pass
    return architecture(cls_name)


def _described(folder: str, size: int, description: ModelDescription) -> ArtifactSummary:
    """The fast row of a model without a resizable KV cache: its kind, class, target and batch, and why.

    "checking" like every fast row: the verdict is the full check's (verify.py), which describes it as inspect does.
    """
    problems = list(description.problems)
    return ArtifactSummary(
        path=folder,
        name=os.path.basename(folder),
        status=Status.CHECKING,
        problems=[p.message for p in problems],
        model=_model_name(folder, description.cls_name),
        npu=description.npu,
        num_devices=description.num_devices,
        batch_size=description.batch_size,
        size_on_disk=size,
        kind=description.kind.value,
        kv_note=description.kv_note,
    )


def summarize_files(folder: str, size: int, graphs: dict[str, int], read: FileReader) -> ArtifactSummary:
    """A row from an artifact's listing (total size, each graph's size) and only the files `read` returns (a
    folder on a server: nothing else of it is read here); the fast checks only, the full check has the verdict."""
    return _from_config(folder, size, graphs, read, local=False)


def _from_config(
    folder: str, size: int, graphs: dict[str, int], read: FileReader = _read, local: bool = True
) -> ArtifactSummary:
    """The fast row: "checking", with what the config alone shows; the verdict is the full check's (verify.py),
    which reads the config as inspect does (the fast reader's JSON parser may word or judge a file otherwise).

    local=False (the folder is elsewhere, its files come through `read`): a model other than a decoder, whose
    parts are told from its subfolders, gets a row with its name, kind and size until the full check."""
    name = os.path.basename(folder)
    path = Path(folder, CONFIG_NAME)
    pending = ArtifactSummary(folder, name, Status.CHECKING, size_on_disk=size)  # all the full check will tell
    try:
        if local and not os.path.exists(path) and os.path.exists(os.path.join(folder, PIPELINE_INDEX)):
            return _described(folder, size, describe_folder(Path(folder)))
        data = read(os.path.join(folder, CONFIG_NAME))
    except StudioError as exc:
        return ArtifactSummary(folder, name, Status.CHECKING, [str(exc)], size_on_disk=size)
    except OSError as exc:
        if not local and exc.errno == errno.ENOENT:
            return pending  # a pipeline (model_index.json), or a config gone since the listing
        message = f"Cannot read {folder}: {exc.strerror or exc}."
        return ArtifactSummary(folder, name, Status.CHECKING, [message], size_on_disk=size)
    view = read_view(data)
    config: ConfigFields
    kind: ModelKind = ModelKind.DECODER
    section: str | None = ""  # where the KV settings are: "" at the top level, "language_model" in a VLM
    extra: list[Problem] = []
    model_cls: str | None = None  # a VLM's own class (the row names the VLM, not its language model)
    stand_in = view.top_level_stand_in() if view is not None else None
    if view is not None and stand_in is not None and kind_of(stand_in) == (ModelKind.DECODER, ""):
        config, expected = view, view.expected_graph_names  # a decoder with its KV settings at the top level
        extra = upstream_problems(stand_in)
    else:  # another kind, invalid, or older key names: the full model words the error and applies the renaming rules
        # deferred: pydantic_core (a compiled library) only for a config the fast reader does not take
        from pydantic_core import from_json

        try:
            raw: dict[str, Any] = require_current_format(decode_json(data, path, from_json), path)
            kind, section = kind_of(raw)
            if kind is not ModelKind.DECODER and not local:  # its parts are in subfolders: the full check reads them
                cls = raw.get("cls_name") if isinstance(raw.get("cls_name"), str) else None
                return replace(pending, model=_model_name(folder, cls, read), kind=kind.value)
            if kind is not ModelKind.DECODER:
                description = describe_config(Path(folder), raw)
                if not section:
                    return _described(folder, size, description)
                extra = list(description.problems)
                model_cls = description.cls_name
                nested = raw[section]
                raw = nested if isinstance(nested, dict) else {}
                lm_file = Path(folder, section, CONFIG_NAME)
                if lm_file.is_file():  # what optimum-rbln loads; a missing one is among the description's problems
                    raw = read_json(lm_file)
                    lm_count = raw.get("kvcache_num_blocks")
                    if isinstance(lm_count, int):
                        skew = out_of_step(Path(folder), section, lm_count, nested.get("kvcache_num_blocks"))
                        extra += [skew] if skew else []
                    extra += [
                        Problem(p.severity, f"{section}/{CONFIG_NAME}: {p.message}") for p in upstream_problems(raw)
                    ]
            else:
                extra = upstream_problems(raw)
            loaded = parse_config(raw, path if not section else Path(folder, section, CONFIG_NAME))
        except StudioError as exc:
            return ArtifactSummary(folder, name, Status.CHECKING, [str(exc)], size_on_disk=size, kind=kind.value)
        config, expected = loaded.model, expected_graph_names(loaded.raw)
    problems = config_problems(config)
    if kind is ModelKind.DECODER:  # a VLM's language model graphs are checked by its description
        if not graphs:
            problems.append(Problem(Status.INVALID, "No .rbln compiled graphs in this folder."))
        problems += [empty_graph_problem(graph) for graph, graph_size in sorted(graphs.items()) if graph_size == 0]
        for graph in expected:
            if graph not in graphs:
                where = Path(folder, f"{graph}{GRAPH_SUFFIX}") if local else None
                problems.append(missing_graph(where, f"{graph}.rbln"))
    problems += extra
    kv_per_npu = config.kv_bytes_per_npu(config.kvcache_num_blocks)
    return ArtifactSummary(
        path=folder,
        name=name,
        status=Status.CHECKING,
        problems=[p.message for p in problems],
        model=_model_name(folder, model_cls or config.cls_name, read),
        npu=config.npu,
        num_devices=config.num_devices,
        batch_size=config.batch_size,
        max_seq_len=config.max_seq_len,
        block_size=config.block_size,
        attn_impl=config.attn.value,
        kvcache_num_blocks=config.kvcache_num_blocks,
        num_min_blocks=config.num_min_blocks,
        num_full_blocks=config.num_full_blocks,
        kv_bytes_per_npu=kv_per_npu,
        size_on_disk=size,
        kind=kind.value,
        kv_note=config.kv_unknown_reason if kv_per_npu is None else None,
    )


def failed_row(path: str, exc: OSError, action: str = "read") -> ArtifactSummary:
    """The row for an entry that could not be read: its path, and why, instead of losing the whole listing."""
    reason = exc.strerror or str(exc)
    if exc.errno == errno.ELOOP:
        reason += " (a symbolic link that leads back to itself)"
    return ArtifactSummary(path, os.path.basename(path), Status.INVALID, [f"Cannot {action} {path}: {reason}."])


def default_verifier(inspector: Callable[[], GraphInspector | None] = lambda: None) -> Verifier:
    """The full check inspect runs, as a Verifier; `inspector` gives the reader of real compiler graphs, asked with
    the first graph of the real compiler (a scan of simulator artifacts never loads the backends)."""
    return _FullCheck(inspector)


class _FullCheck:
    """default_verifier's check; a scan also hands it the folder's files as its walk listed them (_listing_of)."""

    def __init__(self, inspector: Callable[[], GraphInspector | None]) -> None:
        self._deferred = DeferredInspector(inspector)  # asks for the reader when the first real graph is read

    def __call__(
        self,
        row: ArtifactSummary,
        listing: Listing | None = None,
        folder: Path | None = None,
        identity: ConfigIdentity | None = None,
    ) -> ArtifactSummary:
        return verify_summary(row, self._deferred, listing, folder, identity)


def _listing_of(task: _RowTask, base: Path) -> tuple[Listing, ConfigIdentity | None]:
    """The folder's own files as the scan's listing has them, in the reader's form (artifact.Files.listing): the
    same names, sizes and order a second scandir would give, without it; and rbln_config.json's identity as listed
    (artifact.open_artifact's `identity`: no stat of its own)."""
    graphs: list[tuple[str, Path, int]] = []
    others: list[tuple[str, int]] = []
    identity = None
    for name, size, mtime, _, inode in task.signature:
        if "/" in name:  # a compiled part's file in a subfolder
            continue
        if name.endswith(GRAPH_SUFFIX):
            graphs.append((name[: -len(GRAPH_SUFFIX)], base / name, size))  # base: task.folder's Path, parsed once
        else:
            others.append((name, size))
            if name == CONFIG_NAME:
                identity = (inode, mtime, size)
    return (graphs, others), identity


def summarize(
    folder: str | os.PathLike[str],
    cache: ScanCache | None = None,
    verify: Verifier | bool | None = True,
    link_target: str | None = None,
) -> ArtifactSummary:
    """A table row from rbln_config.json and the folder listing; never raises for a bad artifact.

    verify=True runs the full check (default_verifier); False leaves a row the fast checks pass as "checking".
    """
    folder = os.fspath(Path(folder))
    try:
        with os.scandir(folder) as it:
            entries = list(it)
    except OSError as exc:
        return failed_row(folder, exc, "list")
    verifier = default_verifier() if verify is True else (verify or None)
    return _summarize(folder, entries, cache, verifier, link_target)


@dataclass(frozen=True)
class _RowTask:
    """An artifact whose row must be read from its files (no cached row): what its listing already told."""

    folder: str
    signature: Signature
    size: int
    graphs: dict[str, int]
    link_target: str | None
    volume: str | None = None  # the Kubernetes volume it is read through (a swap of its `..data` is looked for)

    @property
    def modified(self) -> int | None:
        return newest_change(self.signature)


def newest_change(signature: Signature) -> int | None:
    """When the newest file of a listing was last written (Unix seconds): a compile, a resize, an edit."""
    return max((mtime for _, _, mtime, _, _ in signature), default=0) // 1_000_000_000 or None


def _read_row(task: _RowTask, verify: Verifier | None) -> ArtifactSummary:
    """The row and, when asked, its verdict; what scan_pool runs in whichever process reads the artifact.

    With a verifier the artifact is read once, by the full check (it fills every field the fast row would);
    without one the fast checks give a "checking" row.
    """
    if verify is not None:
        folder = task.folder
        name = os.path.basename(folder)
        link_target, modified = task.link_target, task.modified
        found = ArtifactSummary(
            folder,
            name,
            Status.CHECKING,
            model=_model_name(folder, None),
            size_on_disk=task.size,
            link_target=link_target,
            modified=modified,
        )
        # The full check keeps them; a verifier that makes a new row gets them here.
        if isinstance(verify, _FullCheck):
            base = Path(folder)  # the artifact's path, parsed once for the check and its graphs
            listing, identity = _listing_of(task, base)
            verified = verify(found, listing, base, identity)
        else:
            verified = verify(found)
        if verified.link_target == link_target and verified.modified == modified:
            return verified
        return replace(verified, link_target=link_target, modified=modified)
    return replace(
        _from_config(task.folder, task.size, task.graphs), link_target=task.link_target, modified=task.modified
    )


def _listed(
    folder: str, entries: list[os.DirEntry[str]], cache: ScanCache | None, link_target: str | None
) -> _RowTask | Done[ArtifactSummary]:
    """The row when the listing settles it (unreadable, or unchanged since it was cached), else the task to read it."""
    try:
        signature, size, graphs = folder_listing(entries)
    except OSError as exc:
        return Done(failed_row(folder, exc, "list"))
    if cache is not None:
        row = cache.get(folder, signature)
        if row is not None:
            cached = ArtifactSummary.validated(row)
            if cached is not None:
                return Done(replace(cached, link_target=link_target, modified=newest_change(signature)))
            cache.forget(folder)  # validated, not trusted: a row that does not hold is read again and rewritten
    return _RowTask(folder, signature, size, graphs, link_target)


def _remember(task: _RowTask | None, summary: ArtifactSummary, cache: ScanCache | None) -> ArtifactSummary:
    if cache is not None and task is not None and summary.status is not Status.CHECKING:
        cache.put(task.folder, task.signature, summary.to_json())  # only finished verdicts are remembered
    return summary


def _summarize(
    folder: str,
    entries: list[os.DirEntry[str]],
    cache: ScanCache | None,
    verify: Verifier | None,
    link_target: str | None = None,
) -> ArtifactSummary:
    item = _listed(folder, entries, cache, link_target)
    if isinstance(item, Done):
        return item.result
    return _remember(item, _read_row(item, verify), cache)


def find_artifacts(
    root: Path, cancel: CancelToken | None = None, on_issue: IssueCallback | None = None
) -> Iterator[Path]:
    """Every folder under root holding an rbln_config.json; never loops, never leaves root through a link."""
    return (Path(found.folder) for found in _walk(os.fspath(Path(root)), cancel, on_issue) if found.entries is not None)


def _is_artifact(names: Iterable[str], folder: str) -> bool:
    """A compiled model's folder: rbln_config.json, or an optimum-rbln pipeline's model_index.json."""
    names = set(names)
    if INCOMPLETE_MARKER in names:
        return False
    return CONFIG_NAME in names or (PIPELINE_INDEX in names and is_pipeline_folder(folder))


def _walk(
    root: str,
    cancel: CancelToken | None,
    on_issue: IssueCallback | None,
    boundary: str | None = None,
    skip_children: frozenset[str] = frozenset(),
    seen: set[tuple[int, int]] | None = None,
) -> Iterator[Found]:
    """The portable walk (core/portable/walk.py, the one a server's scan runs too) with this scan's rules.

    Here, unlike on a server, a folder that is not an artifact also loses the staging folders that killed resizes
    or compiles of this host left in it (only inside the opened folder)."""
    report = None if on_issue is None else (lambda path, message: on_issue(Path(path), message))
    check = None if cancel is None else cancel.raise_if_cancelled
    inside = os.path.realpath(boundary or root)

    def is_artifact_sweeping(names: Iterable[str], folder: str) -> bool:
        names = list(names)
        if _is_artifact(names, folder):
            return True
        if any(PARTIAL_TAG in n and n.startswith(".") for n in names) and is_inside(os.path.realpath(folder), inside):
            remove_stale_partials(Path(folder))
        return False

    return walk(root, is_artifact_sweeping, report, boundary, skip_children, seen, check)


def _failure(found: Found) -> ArtifactSummary:
    assert found.error is not None
    return failed_row(found.folder, found.error, found.action)


def _one_version(
    row: ArtifactSummary,
    volume: str,
    version: str | None,
    after: str | None,
    versions: VolumeVersions,
    cache: ScanCache | None,
    verify: Verifier | None,
) -> ArtifactSummary:
    """A Kubernetes volume's row read while one version was current: read again when `..data` was swapped under it
    (its files could come from both), and noted with its version so the scan can say which rows are from which."""
    for _ in range(3):  # a volume updated faster than a row is read: the last reading, said to be mixed below
        if after == version:
            break
        version = after
        row = replace(summarize(row.path, cache, verify or False, row.link_target), modified=row.modified)
        after = volume_version(volume)
    versions.note(volume, version, row.path)
    return row


def scan(
    root: Path,
    cancel: CancelToken | None = None,
    on_issue: IssueCallback | None = None,
    use_cache: bool = True,
    verify: Verifier | bool | None = True,
    boundary: Path | None = None,
    skip_children: frozenset[str] = frozenset(),
    seen: set[tuple[int, int]] | None = None,
    processes: int = 1,
) -> Iterator[ArtifactSummary]:
    """Summaries of every artifact under root, in path order, as they are found (cached rows when unchanged).

    processes > 1 reads artifacts in that many processes in all (scan_pool: only where forking is safe, e.g. the
    single-threaded CLI); every row, and its verification, goes through the same _read_row whichever process
    reads it.

    verify=True gives every row its final verdict (the check inspect runs; cached once done); False yields
    rows the fast checks pass as "checking", for a caller that verifies them in the background (verify.py).
    boundary is the opened folder when root is one of its subfolders (links are judged against it).
    """
    if "logging" not in sys.modules:  # no log can have been set up (core.logs.setup imports it): nothing to say
        return _scan(root, cancel, on_issue, use_cache, verify, boundary, skip_children, seen, processes)
    # deferred: logging (~4 ms) only where a log may have been set up: a plain CLI scan never loads it
    from rbln_artifact_studio.core.logs import logged, logger

    log = logger(__name__)
    rows = _scan(root, cancel, on_issue, use_cache, verify, boundary, skip_children, seen, processes, log.debug)
    return logged(log, f"Scan of {root}", rows)


def _scan(
    root: Path,
    cancel: CancelToken | None,
    on_issue: IssueCallback | None,
    use_cache: bool,
    verify: Verifier | bool | None,
    boundary: Path | None,
    skip_children: frozenset[str],
    seen: set[tuple[int, int]] | None,
    processes: int,
    note: Callable[[str], object] | None = None,
) -> Iterator[ArtifactSummary]:
    cache_root = Path(boundary or root)
    cache = None
    if use_cache:
        # deferred: hashlib's OpenSSL and the app's folders (~4 ms), which a scan with --no-cache never needs
        from rbln_artifact_studio.core.fleet.scan_cache import ScanCache

        cache = ScanCache(cache_root)
    whole = os.path.realpath(cache_root) == os.path.realpath(root) and not skip_children
    verifier = default_verifier() if verify is True else (verify or None)
    complete = False
    read_from: dict[str, tuple[str, str | None]] = {}  # a Kubernetes volume's row: the volume, its version listed
    versions = VolumeVersions()

    def listed(found: Found) -> _RowTask | Done[tuple[ArtifactSummary, str | None]]:
        version = None if found.volume is None else volume_version(found.volume)
        if found.volume is not None:
            read_from[found.folder] = (found.volume, version)
        item = (
            Done(_failure(found))
            if found.entries is None
            else _listed(found.folder, found.entries, cache, found.link_target)
        )
        if isinstance(item, Done):
            return Done((item.result, version))
        return item if found.volume is None else replace(item, volume=found.volume)  # no copy for a plain folder

    def read(task: _RowTask) -> tuple[ArtifactSummary, str | None]:
        row = _read_row(task, verifier)
        return row, None if task.volume is None else volume_version(task.volume)  # which version it ended in

    try:
        walk = _walk(os.fspath(Path(root)), cancel, on_issue, os.fspath(cache_root), skip_children, seen)
        for task, (summary, after) in ordered_map(read, (listed(found) for found in walk), processes, note=note):
            row = _remember(task, summary, cache)
            if row.path in read_from:
                volume, before = read_from.pop(row.path)
                row = _one_version(row, volume, before, after, versions, cache, verifier)
            yield row
        complete = True
        if on_issue is not None:
            for message in versions.messages():
                on_issue(Path(root), message)
    finally:
        if cache is not None:
            cache.save(complete and whole)
            cache.release()
