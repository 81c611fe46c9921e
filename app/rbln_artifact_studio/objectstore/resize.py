"""Resize an artifact that lives in a bucket: in place under conditional writes, or into a copy (in the bucket, from a
bucket to a folder here, or from a folder here to a bucket) that a reader can never catch half-done.

In place: a lock object (created with If-None-Match) keeps two runs of the studio apart; every graph object is
rewritten with its new header in the slot that is not current, conditional on the ETag read (If-Match), then
rbln_config.json the same way, which commits the new count. A run killed before that leaves the old count (the
pending slots are ignored, as on disk). A store that ignores the conditions is found by a probe write, and in place
is refused there. A multimodal model's language model is resized as on disk: its graphs, then the model's
rbln_config.json (the nested section), then the language model's own, which commits the count.

To a copy: the prefix claimed first by a marker object naming its writer (claim.py: a prefix another live writer
holds is refused before anything is written; the prefix is incomplete until the marker is gone), the payload
objects copied server-side (the graphs rebuilt around their new header: UploadPartCopy of the rest),
rbln_config.json last, then the marker removed. A copy that fails or is cancelled (Ctrl-C, SIGTERM, the desktop's
Cancel) aborts its multipart uploads and removes the keys it wrote, the marker last, while the marker is its own;
what it could not remove is named in its error. A killed copy leaves a prefix scans call incomplete; the next copy
into it takes the dead writer's marker over, removes what it left and aborts the multipart uploads it began (a
store keeps, and bills, their parts until then). An in-place resize aborts those a killed one left to the
artifact's keys, under its lock.

Each crossing is one function given the ResizeRequest as the CLI or the dialog built it (places/bucket.py picks it
by the pair of kinds): all check the request against the artifact through plan(), before any write, and a copy into
a bucket (from the bucket, or from a folder here) is written by _write_copy alone.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rbln_artifact_studio.core.errors import TO_A_COPY, CancelledError, ResizeError, StudioError
from rbln_artifact_studio.core.fleet.artifact import GRAPH_SUFFIX, Artifact, open_artifact
from rbln_artifact_studio.core.fleet.targets import resolve_target
from rbln_artifact_studio.core.location import BucketPrefix, Location, expect
from rbln_artifact_studio.core.model.rbln_config import CONFIG_NAME, with_block_count
from rbln_artifact_studio.core.model.upstream import OUR_OLD_KEYS
from rbln_artifact_studio.core.operations.resize import (
    ResizeResult,
    require_simulated,
    resized_header,
    rewrite_in_folder,
)
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
from rbln_artifact_studio.core.portable.staging import pid_alive
from rbln_artifact_studio.core.progress import Progress
from rbln_artifact_studio.core.simulator.container import pending_slot
from rbln_artifact_studio.core.stop_signals import say_left
from rbln_artifact_studio.core.storage import faults
from rbln_artifact_studio.core.storage.fsutil import (
    INCOMPLETE_MARKER,
    LOCK_NAME,
    TMP_TAG,
    StagingDir,
    check_new_output_dir,
    is_internal_name,
    iter_files,
)
from rbln_artifact_studio.core.storage.json_style import detect_style, dumps_styled
from rbln_artifact_studio.core.storage.jsonfile import decode_json, require_current_format
from rbln_artifact_studio.objectstore.artifacts import Found, check, fetch, find
from rbln_artifact_studio.objectstore.claim import Claim, held_by, read_owner
from rbln_artifact_studio.objectstore.client import ConditionFailed, Unreachable
from rbln_artifact_studio.objectstore.store import Bucket, Obj, Patch

_conditional: dict[tuple[str, str], bool] = {}


@dataclass(frozen=True)
class BucketResizeResult(ResizeResult):
    """A resize whose result lives in a bucket; `path` is its key prefix there."""

    bucket: str = ""
    profile: str = ""  # the bucket's store, as its location names it
    endpoint: str = ""

    @property
    def where(self) -> Location:
        return BucketPrefix(self.bucket, self.path.as_posix().strip("/"), self.profile, self.endpoint)

    @classmethod
    def at(
        cls, prefix: BucketPrefix, previous: int, target: int, warnings: list[str], **more: Any
    ) -> BucketResizeResult:
        path, bucket, profile, endpoint = Path("/" + prefix.prefix), prefix.bucket, prefix.profile, prefix.endpoint
        return cls(path, previous, target, warnings, bucket=bucket, profile=profile, endpoint=endpoint, **more)


@dataclass(frozen=True)
class Read:
    """An artifact in a bucket as read: its objects (with ETags), its check, and the configs a resize rewrites as
    they were read (by name below the prefix)."""

    bucket: Bucket
    found: Found
    artifact: Artifact
    texts: dict[str, bytes]


def _read(prefix: BucketPrefix, bucket: Bucket | None = None) -> Read:
    bucket, found = find(prefix, bucket)
    pieces = fetch(bucket, found)
    artifact = check(bucket, found, pieces)
    texts = {name: b"".join(data for _, data in pieces.get(name, [])) for name in config_names(artifact)}
    return Read(bucket, found, artifact, texts)


def _name(artifact: Artifact, path: Path) -> str:
    """One of the artifact's files by its name below the artifact's folder (an object's name below its prefix)."""
    return path.relative_to(artifact.path).as_posix()


def config_names(artifact: Artifact) -> list[str]:
    """The configs a resize rewrites, in the order they are written: a multimodal model's own first (its nested
    section of the language model), the language model's last, which commits the count as on disk."""
    location = artifact.location
    if location is None or location.vlm_root is None or not location.section:
        return [_name(artifact, artifact.model_dir / CONFIG_NAME)]
    if not location.vlm_root.is_relative_to(artifact.path):
        raise ResizeError(
            f"{artifact.name} is the language model of the multimodal model at {artifact.where_of(location.vlm_root)}; "
            "resize the model there (its rbln_config.json records the count too). Nothing was changed."
        )
    return [_name(artifact, location.vlm_root / CONFIG_NAME), _name(artifact, artifact.model_dir / CONFIG_NAME)]


def new_configs(artifact: Artifact, texts: dict[str, bytes], count: int) -> dict[str, bytes]:
    """Each config of config_names at count (by name, in write order), in the layout of the file it replaces."""
    *parent, own = config_names(artifact)
    out: dict[str, bytes] = {}
    location = artifact.location
    if parent and location is not None and location.section:
        [name] = parent
        raw = require_current_format(decode_json(texts[name], Path(name)), Path(name))
        nested = raw.get(location.section)
        if isinstance(nested, dict):  # as rewrite_in_folder: the nested copy first, the studio's old keys dropped
            updated = {k: v for k, v in raw.items() if k not in OUR_OLD_KEYS}
            updated[location.section] = with_block_count(nested, count)
            out[name] = dumps_styled(updated, detect_style(texts[name]))
    out[own] = dumps_styled(with_block_count(artifact.loaded.raw, count), detect_style(texts[own]))
    return out


def _header_patches(artifact: Artifact, count: int) -> dict[str, Patch]:
    """Each graph file's name (below the artifact's folder) and the bytes of its new header slot (at the slot that
    is not current)."""
    out: dict[str, Patch] = {}
    for graph in artifact.graph_files:
        assert graph.slot is not None and graph.container is not None
        out[_name(artifact, graph.path)] = pending_slot(
            graph.container, graph.slot, resized_header(artifact, graph.slot.header, count)
        )
    return out


@dataclass(frozen=True)
class Plan:
    """An artifact as read with the request checked against it, before anything is written anywhere: the one core
    every crossing writes from (the count and its warnings here, the new configs and graph headers on demand)."""

    artifact: Artifact
    count: int
    warnings: list[str]

    @property
    def previous(self) -> int:
        return self.artifact.config.kvcache_num_blocks

    def configs(self, text: Callable[[str], bytes]) -> dict[str, bytes]:
        """The new configs by name in write order (new_configs), each read as it was by text(name)."""
        return new_configs(self.artifact, {name: text(name) for name in config_names(self.artifact)}, self.count)

    def patches(self) -> dict[str, Patch]:
        """Each graph's new header slot by name; none when the count stays."""
        return _header_patches(self.artifact, self.count) if self.previous != self.count else {}


def plan(artifact: Artifact, request: ResizeRequest) -> Plan:
    """The request checked against the artifact (ResizeError, BudgetError...) before a byte is written: a simulator
    artifact and a count it takes. A request with neither count nor budget keeps the artifact's own count, whichever
    compiler wrote it (a compile delivered to a bucket)."""
    if request.as_it_is:
        return Plan(artifact, artifact.config.kvcache_num_blocks, [])
    require_simulated(artifact)
    return Plan(artifact, *resolve_target(artifact, request.target, request.budget))


def honours_conditions(bucket: Bucket, prefix: BucketPrefix) -> bool:
    """Whether the store refuses a PUT whose If-None-Match or If-Match fails (found by probe writes once per bucket,
    under the artifact's prefix with a name every scan skips; the probe object is removed)."""
    key = (bucket.ep.url, bucket.name)
    if key not in _conditional:
        probe = f"{prefix.key_prefix}.rbln-studio{TMP_TAG}probe-{uuid.uuid4().hex}"
        bucket.put(probe, b"probe", create=True)
        honoured = True
        try:
            for attempt in ({"create": True}, {"if_match": '"00000000000000000000000000000000"'}):
                try:
                    bucket.put(probe, b"probe again", **attempt)
                    honoured = False
                except ConditionFailed:
                    pass
        finally:
            bucket.delete([probe])
        _conditional[key] = honoured
    return _conditional[key]


class BucketLock:
    """The artifact's lock object (.rbln-studio.lock), created only where none is (If-None-Match)."""

    def __init__(self, bucket: Bucket, prefix: BucketPrefix, purpose: str) -> None:
        self.bucket, self.key, self.purpose = bucket, prefix.key_prefix + LOCK_NAME, purpose
        self.prefix = prefix

    def __enter__(self) -> BucketLock:
        holder = {"host": socket.gethostname(), "pid": os.getpid(), "since": time.time(), "purpose": self.purpose}
        for _ in range(2):
            try:
                self.bucket.put(self.key, json.dumps(holder).encode(), create=True)
                return self
            except ConditionFailed:
                other = self._holder()
                if other.get("host") == holder["host"] and not pid_alive(int(other.get("pid", 0) or 0)):
                    self.bucket.delete([self.key])  # its run on this computer is gone (killed): take over
                    continue
                since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(other.get("since", 0) or 0)))
                raise StudioError(
                    f"{self.prefix} is being changed by another run ({other.get('purpose', 'a resize')}, process "
                    f"{other.get('pid', '?')} on {other.get('host', '?')}, since {since}). Try again when it is done; "
                    f"if that run is gone, delete {self.bucket.url(self.key)}",
                    unchanged=True,
                ) from None
        raise StudioError(f"Cannot take the lock {self.bucket.url(self.key)}; try again.")

    def _holder(self) -> dict[str, Any]:
        try:
            data = json.loads(self.bucket.read(self.key))
        except (StudioError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def __exit__(self, *exc: object) -> None:
        self.bucket.delete([self.key])


def _prefix(where: Location | None) -> BucketPrefix:
    return expect(where, BucketPrefix)  # places/bucket.py sends each crossing its kinds of place


def resize_bucket_in_place(request: ResizeRequest, progress: Progress | None = None) -> ResizeResult:
    """Resize in the bucket; a run killed at any instant leaves the old or the new count, and of two runs at once
    one wins while the other stops with an error, having changed nothing the winner wrote. (No progress is
    reported: only headers and configs are written; progress is taken as every crossing takes it.)"""
    prefix = _prefix(request.source)
    read = _read(prefix)
    plan(read.artifact, request)  # a bad request fails here, before anything is written
    bucket = read.bucket
    if not honours_conditions(bucket, prefix):
        raise StudioError(
            f"The object store at {bucket.ep.shown} ignores conditional writes (If-Match / If-None-Match), so two "
            f"writers could both change {prefix}; it is not resized in place",
            remedy=TO_A_COPY._replace(value=str(prefix.at("NEW-PREFIX"))),
            unchanged=True,
        )
    with BucketLock(bucket, prefix, "resize in place"):
        faults.checkpoint("resize.locked")
        read = _read(prefix, bucket)  # again, now under the lock: these ETags are the conditions
        # A killed run's uploads to these keys: no other run of the studio writes them while the lock is ours.
        bucket.abort_uploads(prefix, {obj.key for obj in read.found.objects.values()})
        made = plan(read.artifact, request)
        previous, count = made.previous, made.count
        if previous != count:
            committing = False
            try:
                for i, (name, patch) in enumerate(made.patches().items()):
                    obj = read.found.objects[name]
                    bucket.rewrite(obj, obj.key, [patch], if_match=obj.etag)
                    faults.checkpoint(f"resize.header_written.{i}")
                faults.checkpoint("resize.config")
                committing = True
                for name, data in made.configs(read.texts.__getitem__).items():
                    config = read.found.objects[name]
                    bucket.put(config.key, data, if_match=config.etag)
            except Unreachable as exc:  # a try that ran out may still land: the commit may be in
                keeps = f"{prefix} keeps kvcache_num_blocks={previous}"
                if committing:
                    keeps += (
                        f" unless the last write reached the store after all: get-kvcache-num-blocks {prefix} "
                        "says which count holds"
                    )
                raise Unreachable(f"{exc.message} {keeps}.") from None
            except StudioError as exc:
                raise type(exc)(f"{exc.message} {prefix} keeps kvcache_num_blocks={previous}.") from None
        faults.checkpoint("resize.done")
    return BucketResizeResult.at(prefix, previous, count, made.warnings)


def _expected_objects(found: Found) -> dict[str, int]:
    return {name: obj.size for name, obj in found.objects.items()}


def _check_output(bucket: Bucket, output: BucketPrefix) -> None:
    """Refuse an output prefix that holds anything but an unfinished copy whose writer is gone (which the copy's
    Claim removes), or that a live writer holds; writes nothing."""
    objects = bucket.listing(output)
    if not objects:
        return
    if not any(o.key == output.key_prefix + INCOMPLETE_MARKER for o in objects):
        raise StudioError(f"The output {output} is not empty; choose a new prefix. Nothing was changed.")
    found = read_owner(bucket, output)
    owner = found[0] if found else None
    if owner is not None and not owner.gone():
        raise StudioError(held_by(output, owner))


class CopyWrites:
    """A copy's writes below the output prefix it claimed: on a failure or a cancel, while the claim is still its
    own, its multipart uploads are aborted and the keys it wrote removed, the marker last; the error then says so,
    or says what is left and how to recover it."""

    def __init__(self, claim: Claim, names: set[str]) -> None:
        self.claim, self.names = claim, names
        self.bucket, self.output = claim.bucket, claim.output

    def __enter__(self) -> CopyWrites:
        return self

    def write(self, key: str, write: Callable[[str], int]) -> int:
        """write(key), the key counted as this copy's unless the store refused it as another's (If-None-Match)."""
        self.claim.written.add(key)
        try:
            return write(key)
        except ConditionFailed:
            self.claim.written.discard(key)
            raise

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, _tb: object) -> None:
        if exc is None:
            return
        try:
            told = self.undo()
        finally:
            self.claim.end()
        if isinstance(exc, StudioError):
            # A cancel's own words ("nothing was changed") would contradict a prefix left incomplete: replaced.
            said = (
                f"Cancelled; {told}"
                if isinstance(exc, CancelledError)
                else f"{exc.problem.rstrip('.')}. {told[0].upper()}{told[1:]}"  # not "Nothing was changed."
            )
            raise type(exc)(said, hint=exc.hint, fixes=exc.fixes, remedy=exc.remedy) from None
        if isinstance(exc, KeyboardInterrupt):
            say_left(exc, told)  # the CLI's "cancelled:" line says it

    def undo(self) -> str:
        """Remove the copy's writes while the prefix is still its own; a sentence saying that they are gone, or
        what is left."""
        try:
            if not self.claim.ours():
                return f"{self.output} was claimed by another writer meanwhile; nothing of it was removed."
            # The prefix is this copy's: the uploads to its keys are its own.
            self.bucket.abort_uploads(self.output, {self.output.key_prefix + name for name in self.names})
            self.bucket.delete(sorted(self.claim.written))
            self.claim.release()
        except (StudioError, KeyboardInterrupt):
            return (
                f"{self.output} is left incomplete (its {INCOMPLETE_MARKER} object stays, so scans call it an "
                "incomplete copy and nothing takes it for an artifact): run the same copy again, which removes it "
                "and its unfinished uploads first, or delete the prefix."
            )
        return f"what this copy had written at {self.output} was removed."


def _already_done(bucket: Bucket, output: BucketPrefix, source: Read, configs: dict[str, bytes]) -> bool:
    """The output holds exactly this copy: the same objects by name and size, the new configs byte for byte, and a
    check that passes."""
    try:
        _, found = find(output, bucket)
    except StudioError:
        return False
    if _expected_objects(found) != {**_expected_objects(source.found), **{n: len(d) for n, d in configs.items()}}:
        return False
    try:
        if any(bucket.read(found.objects[name].key) != data for name, data in configs.items()):
            return False
        return check(bucket, found, fetch(bucket, found)).status.value != "invalid"
    except StudioError:
        return False


def refuse_overlap(source: BucketPrefix, output: BucketPrefix) -> None:
    """Refuse an output that is the source or lies inside it (or holds it), in one bucket of one store."""
    if source.at("") != output.at(""):
        return
    if output == source:
        raise StudioError(f"The output {output} is the source artifact; choose a new prefix.")
    if output.prefix.startswith(source.key_prefix) or source.prefix.startswith(output.key_prefix):
        raise StudioError(f"The output {output} and the source {source} lie inside one another; choose another.")


def _write_copy(
    bucket: Bucket,
    output: BucketPrefix,
    made: Plan,
    configs: dict[str, bytes],
    objects: list[tuple[str, Callable[[str], int]]],
    total: int,
    label: str,
    doing: str,
    what: str,
    progress: Progress,
) -> ResizeResult:
    """The one way a copy is written below output: the prefix claimed (its marker object, claim.py), each object
    but the configs by its writer (given the key to write; the bytes it wrote), the configs last, the marker removed;
    undone by CopyWrites when it fails. total: the bytes of the whole artifact, configs included; doing: the progress
    words; what: the kind of write the marker records ("compile", "resize to a copy")."""
    names = {name for name, _ in objects} | set(configs)
    claim = Claim(bucket, output, what, source=label, kvcache_num_blocks=made.count)
    claim.take(progress)  # refused here, before anything is written, when another live writer holds the prefix
    with CopyWrites(claim, names) as writes:
        faults.checkpoint("copy.locked")
        progress.start(total, doing)
        for i, (name, write) in enumerate(objects):
            if name in configs:
                continue
            progress.advance(writes.write(output.key_prefix + name, write))
            faults.checkpoint(f"copy.object.{i}")
        faults.checkpoint("copy.copied")
        for name, data in configs.items():  # the language model's own last

            def put(key: str, data: bytes = data) -> int:
                bucket.put(key, data, create=True)
                return len(data)

            writes.write(output.key_prefix + name, put)
        faults.checkpoint("copy.config_written")
        if not claim.release():
            raise StudioError(
                f"Another writer claimed {output} while this copy ran (the store at {bucket.ep.shown} may ignore "
                "conditional writes), so what it holds is not this copy alone: check it with inspect, or delete it "
                "and run the copy again."
            )
    progress.say(f"Wrote {output} with kvcache_num_blocks={made.count}")
    return BucketResizeResult.at(output, made.previous, made.count, made.warnings, bytes_copied=total)


def resize_bucket_to_copy(request: ResizeRequest, progress: Progress | None = None) -> ResizeResult:
    """Bucket to the same bucket of the same store: a resized copy at request.output, copied server-side; the source
    is only read. (Another bucket or store: places/bucket_server.bucket_to_bucket, through this computer.)"""
    progress = progress or Progress()
    source, output = _prefix(request.source), _prefix(request.output)
    if output.at("") != source.at(""):
        raise StudioError(
            f"{output} is in another bucket or store than {source}; a server-side copy stays in one bucket. Copy "
            f"into {source.at('NEW-PREFIX')}, or through this computer."
        )
    refuse_overlap(source, output)
    read = _read(source)
    made = plan(read.artifact, request)
    bucket = read.bucket
    configs = made.configs(read.texts.__getitem__)
    if _already_done(bucket, output, read, configs):
        progress.say(f"{output} already holds this copy with kvcache_num_blocks={made.count}; nothing to do")
        return BucketResizeResult.at(output, made.previous, made.count, made.warnings, already_done=True)
    _check_output(bucket, output)
    patches = made.patches()

    def copier(name: str, obj: Obj) -> Callable[[str], int]:
        def write(key: str) -> int:
            try:
                if name in patches:
                    bucket.rewrite(obj, key, [patches[name]], create=True)
                else:
                    bucket.copy(obj, key)
            except ConditionFailed as exc:
                now = bucket.head(obj.key)
                if now is not None and now.etag == obj.etag:
                    raise  # the destination was written by another run meanwhile: its own words name it
                raise ConditionFailed(
                    f"{bucket.url(obj.key)} was changed by another writer while it was copied (a resize in "
                    f"place of {source}?); the copy stopped."
                ) from exc
            return obj.size

        return write

    objects = [(name, copier(name, obj)) for name, obj in sorted(read.found.objects.items())]
    doing = f"Copying {source.name} to {output.name}"
    return _write_copy(
        bucket, output, made, configs, objects, read.found.size, source.url, doing, "resize to a copy", progress
    )


def download_objects(read: Read, folder: Path, progress: Progress) -> None:
    """The artifact's objects as read into the empty local folder (a staging folder), each as of the ETag read."""
    progress.start(read.found.size, f"Downloading {read.found.prefix.name}")
    for name, obj in sorted(read.found.objects.items()):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        read.bucket.download(obj, folder / name, progress.advance)
    faults.checkpoint("copy.copied")


def download_resized(read: Read, made: Plan, folder: Path, progress: Progress) -> None:
    """The artifact's objects as read into the empty local folder (a staging folder), each as of the ETag read,
    then resized there to the planned count."""
    download_objects(read, folder, progress)
    copied = open_artifact(folder)
    if copied.config.kvcache_num_blocks != made.count:
        rewrite_in_folder(copied, made.count)
    progress.check()


def read_planned(source: BucketPrefix, request: ResizeRequest) -> tuple[Read, Plan]:
    """The bucket's artifact read for a copy out of the bucket, and the request checked against it, before anything
    is written anywhere."""
    read = _read(source)
    return read, plan(read.artifact, request)


def resize_bucket_to_folder(request: ResizeRequest, progress: Progress | None = None) -> ResizeResult:
    """Bucket to a folder here: the objects downloaded into a staging folder, resized there, published by rename
    (the local copy's own crash safety)."""
    progress = progress or Progress()
    read, made = read_planned(_prefix(request.source), request)
    assert request.output_folder is not None, request
    output = check_new_output_dir(request.output_folder)
    with StagingDir(output, what="resize to a copy") as staging:
        download_resized(read, made, staging.path, progress)
        staging.publish()
    progress.say(f"Wrote {output} with kvcache_num_blocks={made.count}")
    return ResizeResult(output, made.previous, made.count, made.warnings, read.found.size)


def check_output_prefix(output: BucketPrefix, progress: Progress | None = None) -> Bucket:
    """Refuse an output prefix that holds anything but an unfinished copy whose writer is gone, or that another live
    writer holds; its bucket. A copy into a bucket asks this before it fetches or compiles anything; its claim, when
    it writes, asks again atomically."""
    bucket = Bucket(output)
    _check_output(bucket, output)
    return bucket


def resize_folder_to_bucket(
    request: ResizeRequest, progress: Progress | None = None, folder: Path | None = None, what: str = ""
) -> ResizeResult:
    """A folder here to a bucket: a resized copy uploaded below request.output, each graph with its new header,
    rbln_config.json last (the marker object keeps it incomplete until then); the folder is only read. folder: where
    the source's bytes are here when the source is elsewhere (a server's folder fetched into a staging folder; the
    messages name the source). A request with neither count nor budget uploads the folder as it is, whichever
    compiler wrote it (a compile's delivery). what: the kind of write its marker records (by default a compile's
    delivery for a request without a count, else a resize to a copy)."""
    progress = progress or Progress()
    output = _prefix(request.output)
    folder = folder or request.folder
    label = str(request.source)
    made = plan(open_artifact(folder), request)
    configs = made.configs(lambda name: (folder / name).read_bytes())
    patches = made.patches()
    files = sorted(
        (path.relative_to(folder).as_posix(), path)
        for path, _ in iter_files(folder)
        if path.is_file() and not any(is_internal_name(part) for part in path.relative_to(folder).parts)
    )
    bucket = check_output_prefix(output, progress)

    def uploader(name: str, path: Path) -> Callable[[str], int]:
        def write(key: str) -> int:
            patch = patches.get(name) if name.endswith(GRAPH_SUFFIX) else None
            bucket.upload(path, key, [patch] if patch else [])
            return path.stat().st_size

        return write

    objects = [(name, uploader(name, path)) for name, path in files]
    total = sum(path.stat().st_size for _, path in files)
    doing = f"Uploading {Path(label).name} to {output}"
    what = what or ("compile" if request.as_it_is else "resize to a copy")
    return _write_copy(bucket, output, made, configs, objects, total, label, doing, what, progress)
