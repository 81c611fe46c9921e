"""Open a compiled artifact folder: config, graphs, consistency checks, and what can be known about its DRAM."""

from __future__ import annotations

import errno
import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from rbln_artifact_studio.core.errors import (
    CancelledError,
    ChangingError,
    ConfigError,
    ContainerError,
    StudioError,
    UnknownNpuError,
)
from rbln_artifact_studio.core.estimation.estimator import (
    Breakdown,
    ChipletUsage,
    GraphAllocations,
    MemoryLayout,
    SequenceShape,
    breakdown,
)
from rbln_artifact_studio.core.fleet.colocated import Colocated, colocated_parts
from rbln_artifact_studio.core.fleet.damage import damage_without_magic, damaged_message
from rbln_artifact_studio.core.fleet.deferred import DeferredInspector, chosen
from rbln_artifact_studio.core.location import LocalFolder, Location
from rbln_artifact_studio.core.model.budget import UNSET, MemoryBudget
from rbln_artifact_studio.core.model.config_checks import config_problems
from rbln_artifact_studio.core.model.config_fields import ConfigFields
from rbln_artifact_studio.core.model.kinds import (
    LM_SECTIONS,
    KvLocation,
    ModelKind,
    kind_of,
    kv_location,
    missing_graph,
    nested_count,
    out_of_step,
    read_json,
    section_names,
    upstream_problems,
)
from rbln_artifact_studio.core.model.npu import Npu, get_npu
from rbln_artifact_studio.core.model.rbln_config import CONFIG_NAME, LoadedConfig, load_config, read_view
from rbln_artifact_studio.core.simulator.container import ContainerInfo, GraphHeader, Slot, probe_container
from rbln_artifact_studio.core.status import Problem, Status, worst
from rbln_artifact_studio.core.storage.fsutil import INCOMPLETE_MARKER, is_internal_name
from rbln_artifact_studio.core.storage.jsonfile import read_bytes
from rbln_artifact_studio.core.storage.sharing import SharedFile, shared_files
from rbln_artifact_studio.core.storage.tree import DiskTree, Tree

GRAPH_SUFFIX = ".rbln"
DECODER_PREFIX = "decoder_batch_"
DECODER_PREFIX_RE = re.compile(r"decoder_batch_\d+")

GraphInspector = Callable[[Path, list[Path]], dict[str, GraphAllocations]]
"""Reads real compiler .rbln files (through the rebel package); raises StudioError when it cannot."""
Inspector = GraphInspector | DeferredInspector | None
"""A reader, one chosen when first needed (a scan's), or none."""


@dataclass(frozen=True)
class GraphFile:
    """One compiled graph file; `slot` is set for simulator containers, None for real compiler output."""

    name: str
    path: Path
    size: int
    slot: Slot | None = None
    container: ContainerInfo | None = None
    damage: str | None = None  # why the file is damaged (empty, truncated, broken header), None when it is not


@dataclass
class Artifact:
    """A compiled artifact as read from disk in one consistent snapshot."""

    path: Path
    loaded: LoadedConfig
    graph_files: list[GraphFile]
    other_files: list[tuple[str, int]]
    problems: list[Problem] = field(default_factory=list)
    allocations: dict[str, GraphAllocations] | None = None
    unknown_reason: str | None = None
    shared: list[SharedFile] = field(default_factory=list)  # .rbln files another path reaches (copied on write)
    location: KvLocation | None = None  # where the KV cache lives (a VLM: its language_model/ folder)
    incomplete: str | None = None  # why the folder is still being written (its .rbln-studio-incomplete marker)
    colocated: Colocated = field(default_factory=Colocated)  # a multimodal model's other parts on the LM's NPUs
    where: Location = field(init=False)
    """Where the artifact lives, as a user would type it (str() shows it): this computer's folder at `path`, unless
    the reader of a server or a bucket names its place (then `path` and the paths below it are paths there)."""

    def __post_init__(self) -> None:
        self.where = LocalFolder(self.path)

    def where_of(self, path: Path) -> Location:
        """Where one of the artifact's own folders or files lives (its `path` and those below it are paths there)."""
        return self.where.at(path.as_posix())

    @property
    def config(self) -> ConfigFields:
        return self.loaded.model

    @property
    def model_dir(self) -> Path:
        """The folder holding the decoder's rbln_config.json and graphs (language_model/ of a VLM)."""
        return self.location.model_dir if self.location else self.path

    @property
    def kind(self) -> ModelKind:
        described = self.location.description if self.location else None
        return described.kind if described else ModelKind.DECODER

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def status(self) -> Status:
        return worst(self.problems)

    @property
    def npu(self) -> Npu | None:
        try:
            return get_npu(self.config.npu) if self.config.npu else None
        except UnknownNpuError:
            return None

    @property
    def is_simulated(self) -> bool:
        return bool(self.graph_files) and all(g.slot is not None for g in self.graph_files)

    @property
    def is_real(self) -> bool:
        """Every graph has none of the simulator container's marks: the real compiler wrote them."""
        return bool(self.graph_files) and all(g.container is None and g.damage is None for g in self.graph_files)

    @property
    def headers(self) -> dict[str, GraphHeader]:
        return {g.name: g.slot.header for g in self.graph_files if g.slot is not None}

    @property
    def compiled_blocks(self) -> int | None:
        """The count the compiler resolved, when the containers record it."""
        counts = {h.compiled_kvcache_num_blocks for h in self.headers.values()}
        return counts.pop() if len(counts) == 1 else None

    @property
    def resizable(self) -> frozenset[str]:
        return self.config.resizable_names

    @property
    def sequence_shape(self) -> SequenceShape:
        c = self.config
        return SequenceShape(c.batch_size, c.max_seq_len, c.block_size, c.attn)

    def layout(self) -> MemoryLayout | None:
        """Allocation tables for estimation and breakdowns, or None when they are unknown."""
        if self.allocations is None or self.config.kvcache_num_blocks <= 0:
            return None
        graphs = {**self.allocations, **self.colocated.graphs}  # every part on the NPU counts against its DRAM
        if not self.is_simulated:
            return MemoryLayout.from_graphs(graphs, self.resizable, self.config.kvcache_num_blocks)
        return _shared_layout(graphs, self.resizable, self.config.kvcache_num_blocks)

    def breakdown(self, budget: MemoryBudget = UNSET, num_blocks: int | None = None) -> Breakdown | None:
        layout, npu = self.layout(), self.npu
        if layout is None or npu is None:
            return None
        n = self.config.kvcache_num_blocks if num_blocks is None else num_blocks
        return breakdown(layout, npu, budget.bytes_per_npu(npu), n, budget.is_set)

    def overflow(self) -> ChipletUsage | None:
        """The tightest chiplet when weights, workspace and KV cache exceed the DRAM at the recorded count, else
        None (also when the tables or the NPU are unknown). The fit is judged first without a breakdown: a scan
        asks this of every artifact."""
        layout, npu = self.layout(), self.npu
        if layout is None or npu is None:
            return None
        if layout.fits(self.config.kvcache_num_blocks, UNSET.bytes_per_npu(npu) // npu.chiplets):
            return None
        fit = self.breakdown()
        return fit.tightest if fit is not None and not fit.fits else None

    @property
    def kv_bytes_per_npu(self) -> int | None:
        """KV cache on each NPU from rbln_config.json (unaligned; the breakdown gives aligned figures)."""
        return self.config.kv_bytes_per_npu(self.config.kvcache_num_blocks)

    @property
    def size_on_disk(self) -> int:
        return sum(g.size for g in self.graph_files) + sum(size for _, size in self.other_files)


_LAYOUTS: dict[tuple[object, ...], tuple[tuple[GraphAllocations, ...], MemoryLayout]] = {}
_LAYOUTS_MAX = 256  # distinct layouts remembered; forgotten all at once


def _shared_layout(graphs: dict[str, GraphAllocations], resizable: frozenset[str], current_blocks: int) -> MemoryLayout:
    """MemoryLayout.from_graphs, made once per distinct set of simulator headers (with its buckets and fit).

    A container's header read again from identical bytes is the same object with the same GraphAllocations
    (container._known_header), so the key is those objects' identities, kept alive by the entry (an id is never
    reused while it is stored); headers and layouts are never changed once made."""
    key = (tuple((name, id(g)) for name, g in graphs.items()), resizable, current_blocks)
    known = _LAYOUTS.get(key)
    if known is not None:
        return known[1]
    layout = MemoryLayout.from_graphs(graphs, resizable, current_blocks)
    if len(_LAYOUTS) >= _LAYOUTS_MAX:
        _LAYOUTS.clear()
    _LAYOUTS[key] = (tuple(graphs.values()), layout)
    return layout


def _list_files(folder: Path) -> tuple[list[tuple[str, Path, int]], list[tuple[str, int]]]:
    graphs, others = [], []
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        raise StudioError(f"Cannot list {folder}: {exc.strerror or exc}.") from None
    for entry in entries:
        if is_internal_name(entry.name) or not entry.is_file():
            continue
        size = entry.stat().st_size
        if entry.name.endswith(GRAPH_SUFFIX):
            graphs.append((entry.name[: -len(GRAPH_SUFFIX)], Path(entry.path), size))
        else:
            others.append((entry.name, size))
    return graphs, others


Listing = tuple[list[tuple[str, Path, int]], list[tuple[str, int]]]
"""A folder's graphs (name without .rbln, path, size) and other files (name, size), by name."""


class Files(Tree, Protocol):
    """Where the reader finds an artifact's files: this machine's disk (DISK), or what a server sent of them, or a
    bucket's objects (sent_files.SentFiles); every layout is read through it (kinds.kv_location reads the Tree)."""

    def listing(self, folder: Path) -> tuple[list[tuple[str, Path, int]], list[tuple[str, int]]]:
        """The folder's graphs (name without .rbln, path, size) and other files (name, size), by name."""
        ...

    def probe(self, path: Path) -> ContainerInfo | None:
        """container.probe_container of the file."""
        ...

    def damage_without_magic(self, path: Path) -> str | None:
        """damage.damage_without_magic of the file."""
        ...

    def shared(self, folder: Path, names: list[str]) -> list[SharedFile]:
        """sharing.shared_files of the folder's files."""
        ...


class _Disk(DiskTree):
    """This machine's files."""

    listing = staticmethod(_list_files)
    probe = staticmethod(probe_container)
    damage_without_magic = staticmethod(damage_without_magic)
    shared = staticmethod(shared_files)


DISK: Files = _Disk()


def incomplete_reason(folders: list[Path]) -> str | None:
    """What the marker of a compile, copy or resize still writing a folder (or cut short) says, if one is there."""
    for folder in folders:
        if not os.path.lexists(os.path.join(folder, INCOMPLETE_MARKER)):  # no Path: asked for every scan row
            continue
        marker = folder / INCOMPLETE_MARKER
        try:
            info = json.loads(marker.read_text(encoding="utf-8"))
            who = f" by process {int(info['pid'])} on {info['host']}"
            what = f"a {info['what']}" if isinstance(info.get("what"), str) else "a compile, copy or resize"
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            who, what = "", "a compile, copy or resize"
        return (
            f"{folder} is incomplete: {INCOMPLETE_MARKER} marks a folder still being written{who} ({what} stages "
            "here before it publishes), or one left by a run that was cut short. Use the published artifact; "
            "nothing may change this folder."
        )
    return None


def _repeated_keys(data: bytes | None) -> dict[str, list[object]]:
    """Top-level keys a JSON file gives more than once, with each value in file order."""
    seen: dict[str, list[object]] = {}
    top: list[list[tuple[str, object]]] = []

    def pairs(items: list[tuple[str, object]]) -> dict[str, object]:
        top.append(items)
        return dict(items)

    try:
        json.loads(data or b"", object_pairs_hook=pairs)
    except ValueError:
        return {}
    for key, value in top[-1] if top else ():
        seen.setdefault(key, []).append(value)
    return {k: v for k, v in seen.items() if len(v) > 1}


def batch_problems(batch_size: int, graphs: set[str], data: bytes | None) -> list[Problem]:
    """A batch_size no decoder graph was compiled for: the loader reads the file's value, the NPU runs the graphs'.
    Names the cause when the file gives the key twice (optimum-rbln, like json, reads the last)."""
    compiled = sorted(int(n[len(DECODER_PREFIX) :]) for n in graphs if DECODER_PREFIX_RE.fullmatch(n))
    if not compiled or batch_size in compiled:
        return []
    message = (
        f"rbln_config.json says batch_size {batch_size}, but the decoder graphs were compiled for batch "
        f"{', '.join(map(str, compiled))} ({', '.join(f'{DECODER_PREFIX}{b}.rbln' for b in compiled)}); "
        "counts and floors from the file would be wrong. Recompile, or restore the file's batch_size."
    )
    repeated = _repeated_keys(data).get("batch_size")
    if repeated:
        message += f" The file gives batch_size {len(repeated)} times ({', '.join(map(str, repeated))}); the last wins."
    return [Problem(Status.INVALID, message)]


ConfigIdentity = tuple[int, int, int]
"""rbln_config.json's (inode, mtime in ns, size): a change to it while an artifact is read shows here."""


def _config_identity(folder: Path) -> ConfigIdentity | None:
    try:
        st = os.stat(os.path.join(folder, CONFIG_NAME))  # no Path: a scan asks this twice per artifact
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def _location_problems(location: KvLocation, count: int, files: Files) -> list[Problem]:
    """A VLM's other parts, its own file's loadability, and whether its nested section records the same count."""
    problems = list(location.description.problems) if location.description else []
    if location.vlm_root is not None and location.section:
        nested = nested_count(location.vlm_root, location.section, files)
        problem = out_of_step(location.vlm_root, location.section, count, nested)
        if problem is not None:
            problems.append(problem)
    return problems


def _plain_decoder(folder: Path) -> LoadedConfig | None:
    """The config of a decoder-only model with its KV settings at the top level, parsed once; None for any other
    layout (a VLM or its language_model/ folder, a pipeline, an invalid or older file), which kv_location sorts out."""
    if folder.name in LM_SECTIONS:  # perhaps the language model of a VLM: kv_location looks at the parent
        return None
    path = folder / CONFIG_NAME
    try:
        data = read_bytes(path)
    except ConfigError:
        return None
    return _decoder_config(path, data)


def _decoder_config(path: Path, data: bytes) -> LoadedConfig | None:
    view = read_view(data)
    if view is None:
        return None
    stand_in = view.top_level_stand_in()
    if kind_of(stand_in) != (ModelKind.DECODER, "") or section_names(stand_in):  # parts of its own: kv_location
        return None
    return LoadedConfig(path, None, view, data, stand_in)


def _read_once(
    folder: Path,
    inspector: Inspector,
    location: KvLocation,
    loaded: LoadedConfig | None = None,
    files: Files = DISK,
    sharing: bool = True,
    listing: Listing | None = None,
) -> Artifact:
    model_dir = location.model_dir
    loaded = loaded or load_config(model_dir, files.read)
    config = loaded.model
    graph_entries, others = listing if listing is not None else files.listing(model_dir)
    problems = config_problems(config)
    prefix = f"{location.section}/{CONFIG_NAME}: " if location and location.section else ""
    problems += [Problem(p.severity, prefix + p.message) for p in upstream_problems(loaded.top_level)]
    if location is not None:
        problems += _location_problems(location, config.kvcache_num_blocks, files)
    graph_files: list[GraphFile] = []
    sim_errors = []
    listed = listing is not None and files is DISK  # sizes a scan's listing just took: no fstat of each graph
    for name, path, size in graph_entries:
        try:
            info = probe_container(path, size) if listed else files.probe(path)
        except ContainerError as exc:
            broken = str(exc).removeprefix(f"{path.name} ").removeprefix("is ").removeprefix("has ")
            sim_errors.append(damaged_message(path.name, broken))
            graph_files.append(GraphFile(name, path, size, damage=broken))
            continue
        if info is None:  # no container magic: real compiler output, unless damage_without_magic names damage
            why = files.damage_without_magic(path)
            graph_files.append(GraphFile(name, path, size, damage=why))
            if why is not None:
                sim_errors.append(damaged_message(path.name, why))
            continue
        try:
            slot = info.current(config.kvcache_num_blocks)
        except ContainerError as exc:
            sim_errors.append(str(exc))
            graph_files.append(GraphFile(name, path, size, container=info))
            continue
        graph_files.append(GraphFile(name, path, size, slot, info))
    problems += [Problem(Status.INVALID, msg) for msg in sim_errors]
    if not graph_entries:
        problems.append(Problem(Status.INVALID, "No .rbln compiled graphs in this folder."))
    present = {g.name for g in graph_files}
    problems += batch_problems(config.batch_size, present, loaded.data)
    for expected in loaded.graph_names:
        if expected not in present:
            where = model_dir / f"{expected}{GRAPH_SUFFIX}" if files is DISK else None
            problems.append(missing_graph(where, f"{expected}.rbln"))
    artifact = Artifact(folder, loaded, graph_files, others, problems, location=location)
    if files is DISK:
        lock_dir = location.lock_dir
        if model_dir is folder and lock_dir is folder:  # a decoder's own folder (a scan's every row): one to look in
            folders = [folder]
        else:
            folders = list(dict.fromkeys([folder, model_dir, lock_dir]))
        if listed and folders == [folder] and all(name != INCOMPLETE_MARKER for name, _ in others):
            artifact.incomplete = None  # the scan's listing, just taken, has no marker: no lstat (and its error)
        else:
            artifact.incomplete = incomplete_reason(folders)
        if artifact.incomplete is not None:
            problems.insert(0, Problem(Status.INVALID, artifact.incomplete))
    if sharing:
        artifact.shared = files.shared(model_dir, [g.path.name for g in graph_files])
    _attach_allocations(artifact, bool(sim_errors), inspector, files)
    return artifact


def _attach_allocations(artifact: Artifact, damaged: bool, inspector: Inspector, files: Files) -> None:
    config = artifact.config
    if damaged:
        artifact.unknown_reason = "Some .rbln files could not be read (see the problems above)."
    elif artifact.is_simulated:
        headers = artifact.headers
        expected_npu = (config.npu or "").strip().upper()
        for name, header in headers.items():
            if (expected_npu and header.npu != expected_npu) or header.num_devices != config.num_devices:
                artifact.problems.append(
                    Problem(
                        Status.INVALID,
                        f"{name}.rbln was compiled for {header.npu} x{header.num_devices}, "
                        f"but rbln_config.json says {config.npu} x{config.num_devices}.",
                    )
                )
        artifact.allocations = {name: h.allocations for name, h in headers.items()}
    elif not artifact.graph_files:
        artifact.unknown_reason = "There are no .rbln files."
    elif (reader := chosen(inspector)) is None:
        artifact.unknown_reason = (
            "The .rbln files were written by the real compiler; their allocations need the rebel package "
            "(rebel-compiler) to read. Counts, floor, full pool and KV bytes come from rbln_config.json."
        )
    else:
        try:
            artifact.allocations = reader(artifact.path, [g.path for g in artifact.graph_files])
        except CancelledError:
            raise  # the read was cancelled: no artifact, rather than one that says its inspection failed
        except StudioError as exc:
            artifact.unknown_reason = f"Inspecting the .rbln files failed: {exc}"
    if artifact.allocations:
        artifact.colocated = _colocated(artifact, inspector, files)
    if artifact.allocations is not None:
        try:
            t = artifact.overflow()
        except StudioError as exc:
            artifact.problems.append(Problem(Status.INVALID, f"The allocation tables are unusable: {exc}"))
            artifact.allocations, artifact.unknown_reason = None, str(exc)
            return
        if t is not None:
            artifact.problems.append(
                Problem(
                    Status.INVALID,
                    f"Weights, workspace and KV cache exceed the DRAM of {t.label} by "
                    f"{-t.free_in_budget:,} bytes; the artifact will not load.",
                )
            )


def _colocated(artifact: Artifact, inspector: Inspector, files: Files) -> Colocated:
    location = artifact.location
    if location is None or location.description is None:
        return artifact.colocated  # one part: nothing else on its NPUs (the artifact's own, empty)
    assert artifact.allocations is not None
    first = next(iter(next(iter(artifact.allocations.values())).alloc_per_chiplet_by_key.values()), None)
    if first is None:
        return Colocated()
    try:
        root_raw = read_json(location.vlm_root / CONFIG_NAME, files) if location.vlm_root else artifact.loaded.raw
    except StudioError:
        return Colocated()
    return colocated_parts(location, root_raw, [len(row) for row in first], inspector, files.probe)


def _refused_path(folder: Path) -> None:
    """A path the system refuses outright (a name over 255 bytes: ENAMETOOLONG) raises its OSError, which the
    front ends say as such, rather than reading as a folder that is not there."""
    try:
        os.stat(folder)
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise


def open_artifact(
    path: Path,
    inspector: Inspector = None,
    attempts: int = 5,
    sharing: bool = True,
    listing: Listing | None = None,
    identity: ConfigIdentity | None = None,
) -> Artifact:
    """Read an artifact with a KV cache; if rbln_config.json changes while its graphs are read, read again.

    A multimodal model (or its language_model/ folder) opens as its language model; a model without a
    resizable KV cache raises NoKvCacheError, whose description says what the folder holds. sharing=False leaves
    `shared` empty (which files another path reaches: what a resize needs, not a verdict; two stats a graph).
    `listing` is the folder's files as the caller listed them just before (a scan has), read for a decoder with
    its KV settings at the top level instead of listing the folder again; a second attempt lists it anew.
    `identity` is rbln_config.json's as that listing saw it (_config_identity's figures).
    """
    folder = path if isinstance(path, Path) else Path(path)  # a Path is not parsed again (one per scan row)
    if listing is None and not os.path.isdir(folder):  # a scan's listing shows it is a folder
        _refused_path(folder)
        raise StudioError(f"{folder} is not a folder.")
    for attempt in range(attempts):
        if attempt:
            time.sleep(0.01 * 2**attempt)  # a resize rewrites a config in milliseconds: let one end, not race it
        # `identity`: rbln_config.json's as the caller's listing saw it (a scan's: no stat of its own); a change
        # since shows below, as one during the read does, and the next attempt stats it anew.
        own = identity if identity is not None and not attempt else _config_identity(folder)
        loaded = _plain_decoder(folder)  # the common case, its config read once
        given = None
        if loaded is not None:
            location, watched, before, given = KvLocation(folder), [folder], [own], listing
        else:
            location = kv_location(folder)
            watched = [location.model_dir, *([location.vlm_root] if location.vlm_root else [])]
            before = [_config_identity(f) for f in watched]
        listing = None
        artifact = _read_once(folder, inspector, location, loaded, sharing=sharing, listing=given)
        if before == [_config_identity(f) for f in watched]:
            return artifact
    raise ChangingError(f"{folder} kept changing while it was read; try again when the resize is done.")


def open_decoder_from(folder: Path, config: bytes, files: Files, inspector: Inspector = None) -> Artifact | None:
    """open_artifact of a decoder-only model with its KV settings at the top level, its rbln_config.json given and
    its other files read through files (a server's, from what it sent); None for any other layout, which needs
    the folder itself (kv_location reads around it)."""
    if folder.name in LM_SECTIONS:
        return None
    loaded = _decoder_config(folder / CONFIG_NAME, config)
    return None if loaded is None else _read_once(folder, inspector, KvLocation(folder), loaded, files)


def open_from(folder: Path, files: Files, inspector: Inspector = None) -> Artifact:
    """open_artifact of a folder that is not on this computer, its files read through files (what a server sent,
    a bucket's objects, a kind of place's file access), whatever its layout: a multimodal model opens as its
    language model, every path named as there; NoKvCacheError for a model without a resizable KV cache."""
    try:
        config: bytes | None = files.read(folder / CONFIG_NAME)
    except ConfigError:
        config = None  # no config of its own (a pipeline's index), or unreadable: kv_location says which
    artifact = None if config is None else open_decoder_from(folder, config, files, inspector)
    return artifact or _read_once(folder, inspector, kv_location(folder, files), None, files)
