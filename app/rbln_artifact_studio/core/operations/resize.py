"""Resize the KV cache of a compiled artifact, in place or into a copy, crash-safely (docs/crash-safety.md)."""

from __future__ import annotations

import os
from pathlib import Path

from rbln_artifact_studio.core.errors import TO_A_COPY, Remedy, ResizeError, StudioError
from rbln_artifact_studio.core.estimation.estimator import rescale_allocations
from rbln_artifact_studio.core.fleet.artifact import GRAPH_SUFFIX, Artifact, GraphInspector, open_artifact
from rbln_artifact_studio.core.fleet.targets import resolve_target
from rbln_artifact_studio.core.model.budget import MemoryBudget
from rbln_artifact_studio.core.model.kinds import KvLocation, kv_location, nested_count
from rbln_artifact_studio.core.model.rbln_config import CONFIG_NAME, with_block_count
from rbln_artifact_studio.core.model.upstream import OUR_OLD_KEYS
from rbln_artifact_studio.core.operations.resize_request import ResizeResult as ResizeResult  # its users ask it here
from rbln_artifact_studio.core.progress import Progress
from rbln_artifact_studio.core.simulator.container import GraphHeader, write_pending_header
from rbln_artifact_studio.core.storage import faults
from rbln_artifact_studio.core.storage.fsutil import (
    NotDurableError,
    StagingDir,
    atomic_write_bytes,
    check_new_output_dir,
    copy_tree,
    describe_os_error,
    is_internal_name,
    owner_not_kept,
    remove_stale_temp_files,
    tree_size,
)
from rbln_artifact_studio.core.storage.json_style import detect_style, dumps_styled
from rbln_artifact_studio.core.storage.jsonfile import (
    decode_json,
    read_bytes,
    require_current_format,
)
from rbln_artifact_studio.core.storage.lock import ArtifactLock
from rbln_artifact_studio.core.storage.sharing import SharedFile, break_sharing, sharing_of

SMALL_FILE = 1 << 20  # files up to this size are compared byte for byte; larger ones (graphs, weights) by size


def _files(folder: Path) -> dict[str, int]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if not is_internal_name(d)]
        for name in filenames:
            if not is_internal_name(name):
                path = Path(dirpath, name)
                out[str(path.relative_to(folder))] = path.stat().st_size
    return out


def holds_resized_copy(output: Path, source: Artifact, target: int) -> bool:
    """True when output opens valid with target blocks, records the source's config with that count, and
    holds the same files: the other files byte for byte (sizes for the large ones)."""
    if not output.is_dir():
        return False
    try:
        copy = open_artifact(output)
        ours, theirs = _files(output), _files(source.path)
    except (StudioError, OSError):
        return False
    if copy.status.value == "invalid" or copy.loaded.raw != with_block_count(source.loaded.raw, target):
        return False
    if ours != theirs:
        return False
    for name, size in ours.items():
        if name == CONFIG_NAME or name.endswith(".rbln") or size > SMALL_FILE:
            continue  # graph headers differ by design (the new count); the container check above read them
        if (output / name).read_bytes() != (source.path / name).read_bytes():
            return False
    return True


def require_simulated(artifact: Artifact) -> None:
    """Refuse (ResizeError) an artifact the studio's own resize must not touch: an invalid one, one with caches of
    unknown kinds, or one the real compiler wrote; the local and the bucket resize both ask this first."""
    if artifact.status.value == "invalid":  # first: a damaged file is named, not taken for real-compiler output
        reasons = "; ".join(p.message for p in artifact.problems if p.severity.value == "invalid")
        raise ResizeError(f"{artifact.name} is not valid, so it cannot be resized: {reasons}", unchanged=True)
    if artifact.config.unknown_cache_kinds:
        raise ResizeError(
            f"{artifact.name}: {artifact.config.kv_unknown_reason} A resize could leave those caches wrong",
            unchanged=True,
        )
    location = artifact.location
    if location is not None and location.vlm_root is not None and not artifact.is_simulated:
        raise ResizeError(
            f"{artifact.name}: the language model of this multimodal model was compiled by the real compiler, and "
            "optimum-rbln-cli 0.12.0 resizes only top-level decoder-only artifacts: run on "
            f"{location.section}/ it would leave the {location.section} section of the model's rbln_config.json "
            "at the old count. Nothing was changed."
        )
    if not artifact.is_simulated:
        raise ResizeError(
            f"{artifact.name}: its .rbln files were written by the real compiler; resizing them needs optimum-rbln-cli",
            remedy=Remedy("Resize them with it ({option}).", "backend", "optimum"),
            unchanged=True,
        )


def resized_header(artifact: Artifact, header: GraphHeader, target: int) -> GraphHeader:
    """A graph's header at target blocks: its KV buffers rescaled from the artifact's recorded count."""
    scaled = rescale_allocations(header.allocations, artifact.resizable, artifact.config.kvcache_num_blocks, target)
    return header.model_copy(
        update={
            "kvcache_num_blocks": target,
            "alloc_per_chiplet_by_key": scaled.alloc_per_chiplet_by_key,
            "dram_tensor_sizes": scaled.dram_tensor_sizes,
        }
    )


def rewrite_in_folder(artifact: Artifact, target: int) -> None:
    """Write every graph's new header beside its current one, then commit by replacing rbln_config.json (a VLM's
    nested section first). The artifact is a folder on this computer; callers hold its lock or own its staging."""
    for i, graph in enumerate(artifact.graph_files):
        assert graph.slot is not None and graph.container is not None
        write_pending_header(graph.container, graph.slot, resized_header(artifact, graph.slot.header, target))
        faults.checkpoint(f"resize.header_written.{i}")
    location = artifact.location
    if location is not None and location.vlm_root is not None and location.section:
        # The parent's nested copy first: the language model's own file is the commit point (optimum-rbln loads
        # the subfolder's count), so a crash in between leaves the old count with a nested copy that is flagged.
        parent = location.vlm_root / CONFIG_NAME
        parent_raw = require_current_format(decode_json(read_bytes(parent), parent), parent)
        nested = parent_raw.get(location.section)
        if isinstance(nested, dict):
            updated = {k: v for k, v in parent_raw.items() if k not in OUR_OLD_KEYS}
            updated[location.section] = with_block_count(nested, target)
            atomic_write_bytes(parent, _styled_like(parent, updated), step="resize.parent_config")
    path = artifact.model_dir / CONFIG_NAME
    atomic_write_bytes(path, _styled_like(path, with_block_count(artifact.loaded.raw, target)), step="resize.config")


def _styled_like(path: Path, raw: dict[str, object]) -> bytes:
    """raw serialized in the layout of the file it replaces, so a diff shows only what changed."""
    return dumps_styled(raw, detect_style(read_bytes(path)))


def _in_step(artifact: Artifact, count: int) -> bool:
    """The artifact records count everywhere (for a VLM: its language model's file and the nested section too)."""
    location = artifact.location
    if artifact.config.kvcache_num_blocks != count:
        return False
    if location is None or location.vlm_root is None or not location.section:
        return True
    return nested_count(location.vlm_root, location.section) == count


def _check_writable(folder: Path, location: KvLocation | None) -> KvLocation:
    """Refuse a read-only artifact before anything is written there, not even the lock file; where its KV cache is
    (location, when the caller read it already)."""
    if not folder.is_dir():
        raise ResizeError(f"{folder} is not a folder", unchanged=True)
    location = location or kv_location(folder)
    model_dir = location.model_dir
    dirs = [model_dir, *([location.vlm_root] if location.vlm_root else [])]
    files = [model_dir / CONFIG_NAME, *sorted(model_dir.glob(f"*{GRAPH_SUFFIX}"))]
    if location.vlm_root:
        files.append(location.vlm_root / CONFIG_NAME)
    # A shared file is copied before the write (copy-on-write): a read-only cache blob behind a link is fine.
    owned = [p for p in files if p.exists() and sharing_of(p) is None]
    blocked = [p for p in [*dirs, *owned] if not os.access(p, os.W_OK)]
    if blocked:
        which = "" if blocked[0] == folder else f" ({blocked[0].relative_to(location.lock_dir)})"
        raise ResizeError(f"{folder} is read-only{which}", remedy=TO_A_COPY, unchanged=True)
    # The configs are replaced by a rename: the new file must keep the old one's owner, group and mode.
    # A shared file is copied before the write: the copy, too, replaces it by a rename.
    replaced = [p for p in files if p.exists() and (p.name == CONFIG_NAME or sharing_of(p) is not None)]
    for config in replaced:
        reason = owner_not_kept(config)
        if reason is not None:
            raise ResizeError(
                reason,
                remedy=Remedy("Resize it as its owner (or as root), or to a copy ({option}).", "output"),
                unchanged=True,
            )
    return location


def _plan(
    folder: Path, target: int | None, budget: MemoryBudget | None, inspector: GraphInspector | None
) -> tuple[Artifact, int, list[str]]:
    """Open the artifact and validate the request: the artifact, the new count and its warnings."""
    artifact = open_artifact(folder, inspector)
    if artifact.incomplete is not None:
        raise ResizeError(f"{artifact.incomplete} Nothing was changed.")
    require_simulated(artifact)
    return (artifact, *resolve_target(artifact, target, budget))


def resize_in_place(
    folder: Path,
    target: int | None = None,
    budget: MemoryBudget | None = None,
    inspector: GraphInspector | None = None,
    location: KvLocation | None = None,
) -> ResizeResult:
    """Resize under the artifact's lock; a crash at any instant leaves the old or the new count. location: where
    the KV cache is, when the caller read it already (backends.registry does, to choose the backend)."""
    folder = Path(folder)
    location = _check_writable(folder, location)
    _plan(folder, target, budget, inspector)  # a bad request fails here, before the lock file is written
    try:
        # One lock for the whole model: a VLM and its language_model/ folder are the same artifact.
        with ArtifactLock(location.lock_dir, "resize in place"):
            faults.checkpoint("resize.locked")
            for written in {location.model_dir, location.lock_dir}:
                remove_stale_temp_files(written)
            artifact, new_count, warnings = _plan(folder, target, budget, inspector)  # again, now under the lock
            previous = artifact.config.kvcache_num_blocks
            shared: list[SharedFile] = []
            if not _in_step(artifact, new_count):
                try:
                    shared = artifact.shared  # read under the lock, just now
                    break_sharing(artifact.model_dir, shared)  # the other path (backup, cache blob) is only read
                    rewrite_in_folder(artifact, new_count)
                except NotDurableError as exc:
                    raise NotDurableError(f"{folder} now records kvcache_num_blocks={new_count}: {exc}") from None
            faults.checkpoint("resize.done")
    except OSError as exc:
        raise StudioError(describe_os_error(exc, f"resizing {folder}") + " The artifact keeps its old count.") from None
    return ResizeResult(folder, previous, new_count, warnings, unshared=tuple(f.describe() for f in shared))


def resize_to_copy(
    folder: Path,
    output_dir: Path,
    target: int | None = None,
    budget: MemoryBudget | None = None,
    progress: Progress | None = None,
    inspector: GraphInspector | None = None,
    location: KvLocation | None = None,
) -> ResizeResult:
    """Copy every file to a staging folder, resize the copy, publish it by rename; the source is only read.
    location: where the source's KV cache is, when the caller read it already."""
    folder = Path(folder)
    progress = progress or Progress()
    source, new_count, warnings = _plan(folder, target, budget, inspector)  # a bad request fails before any write
    if holds_resized_copy(Path(os.path.abspath(output_dir)), source, new_count):
        progress.say(f"{output_dir} already holds this copy with kvcache_num_blocks={new_count}; nothing to do")
        return ResizeResult(
            Path(os.path.abspath(output_dir)),
            source.config.kvcache_num_blocks,
            new_count,
            warnings,
            0,
            already_done=True,
        )
    output = check_new_output_dir(output_dir, folder)
    # A read-only source cannot be changed by anyone through us, so it needs no lock (and cannot hold one).
    lock_dir = (location or kv_location(folder)).lock_dir  # a VLM's lock also guards its language_model/ folder
    lock = ArtifactLock(lock_dir, "copy for resize") if os.access(lock_dir, os.W_OK) else None
    try:
        if lock:
            lock.acquire()
            faults.checkpoint("copy.locked")
        artifact, new_count, warnings = _plan(folder, target, budget, inspector)  # again, under the lock
        total = tree_size(folder, dereference=True)
        progress.start(total, f"Copying {folder.name} to {output.name}")
        with StagingDir(output, what="resize to a copy") as staging:
            copy_tree(folder, staging.path, progress.advance, dereference=True)
            faults.checkpoint("copy.copied")
            copied = open_artifact(staging.path, inspector)
            if not _in_step(copied, new_count):
                rewrite_in_folder(copied, new_count)
            progress.check()
            staging.publish()
    except OSError as exc:
        raise StudioError(
            describe_os_error(exc, f"copying to {output}"), unchanged=True
        ) from None  # staged: nothing kept
    finally:
        if lock:
            lock.release()
    progress.say(f"Wrote {output} with kvcache_num_blocks={new_count}")
    return ResizeResult(output, artifact.config.kvcache_num_blocks, new_count, warnings, total)
