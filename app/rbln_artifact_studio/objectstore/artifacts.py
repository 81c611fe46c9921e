"""Open an artifact that lives in a bucket from its metadata only: configs whole, the used bytes of each .rbln header.

A listing groups keys into artifacts (a prefix holding rbln_config.json). Each artifact's configs and graph headers
are fetched with ranged GETs (the preamble and the start of slot 0 in one, the start of slot 1 in another; a longer
header reads on), never a payload; the studio's own reader then checks them from memory (sent_files.SentFiles), every
layout (a VLM's language_model/ part, a pipeline) read where it lives, its paths the keys' (nothing is copied here),
so a bucket's artifact gets exactly the verdict a local folder would.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rbln_artifact_studio.core.errors import NotAnArtifactError, StudioError, reworded
from rbln_artifact_studio.core.fleet.artifact import GRAPH_SUFFIX, Artifact, open_from
from rbln_artifact_studio.core.fleet.file_access import AccessFiles, Entry, path_there
from rbln_artifact_studio.core.fleet.sent_files import Pieces
from rbln_artifact_studio.core.location import BucketPrefix
from rbln_artifact_studio.core.model.kinds import PIPELINE_INDEX, NoKvCacheError
from rbln_artifact_studio.core.simulator.container import MAGIC, PREAMBLE_SIZE, SLOT_READ
from rbln_artifact_studio.core.status import Problem
from rbln_artifact_studio.core.storage.fsutil import INCOMPLETE_MARKER, is_internal_name
from rbln_artifact_studio.core.storage.jsonfile import CONFIG_NAME, MAX_JSON_BYTES
from rbln_artifact_studio.objectstore.claim import describe_incomplete, read_owner
from rbln_artifact_studio.objectstore.store import Bucket, Obj

TEXTS = frozenset({CONFIG_NAME, "config.json", PIPELINE_INDEX})
"""Files fetched whole: what the checks read of a config."""


@dataclass
class Found:
    """An artifact a listing shows: its prefix and its objects (names relative to it), or why it is incomplete."""

    prefix: BucketPrefix
    objects: dict[str, Obj] = field(default_factory=dict)
    incomplete: bool = False

    @property
    def size(self) -> int:
        return sum(o.size for o in self.objects.values())

    @property
    def modified(self) -> int | None:
        """When its newest object was written (compiled, resized), Unix seconds, as the Modified column shows it."""
        newest = max((o.modified for o in self.objects.values() if o.modified is not None), default=None)
        return None if newest is None else int(newest)

    def signature(self) -> list[list[Any]]:
        """What a cached row is keyed by: every object's name, size and ETag (the scan cache's 5-field form)."""
        return sorted([name, o.size, 0, 0, o.etag] for name, o in self.objects.items())


def _hidden(part: str) -> bool:
    return part.startswith(".") or is_internal_name(part)


def group(root: BucketPrefix, objects: list[Obj]) -> list[Found]:
    """The artifacts below root, in key order: every prefix holding rbln_config.json (or a pipeline's index), not
    inside another; its objects are those of that prefix and of its parts' subfolders (language_model/, unet/)."""
    folders: dict[str, dict[str, Obj]] = {}
    base = root.key_prefix
    for obj in objects:
        if not obj.key.startswith(base) or obj.key.endswith("/"):
            continue
        folder, _, name = obj.key.rpartition("/")
        if any(_hidden(part) for part in folder[len(base) :].split("/") if part):
            continue  # hidden folders, and our staging, are never artifacts
        folders.setdefault(folder, {})[name] = obj
    # Each folder's own objects and its direct subfolders', in listing order: one pass, not a pass per artifact
    # (a fleet's listing holds thousands of folders).
    members: dict[str, list[str]] = {}
    for sub in folders:
        members.setdefault(sub, []).append(sub)
        parent = sub.rpartition("/")[0]
        if sub and (parent or not sub.startswith("/")):  # '/x' is no part of an artifact at the bucket's root
            members.setdefault(parent, []).append(sub)
    found: list[Found] = []
    claimed: set[str] = set()
    for folder in sorted(folders):
        names = folders[folder]
        if "" in claimed or any(folder[:i] in claimed for i, c in enumerate(folder) if c == "/"):
            continue  # inside an artifact already found
        if INCOMPLETE_MARKER in names:
            found.append(Found(root._replace(prefix=folder), incomplete=True))
            claimed.add(folder)
        elif CONFIG_NAME in names or PIPELINE_INDEX in names:
            claimed.add(folder)
            item = Found(root._replace(prefix=folder))
            for sub in members[folder]:
                if sub == folder:
                    item.objects.update((n, o) for n, o in folders[sub].items() if not is_internal_name(n))
                    continue
                rel = sub.rpartition("/")[2]
                if not _hidden(rel):
                    item.objects.update((f"{rel}/{n}", o) for n, o in folders[sub].items() if not is_internal_name(n))
            found.append(item)
    return found


def fetch(bucket: Bucket, found: Found) -> Pieces:
    """What the checks read of the artifact: its configs whole, each graph's preamble and header slots' used bytes."""
    pieces: Pieces = {}
    base = found.prefix.key_prefix
    for name, obj in found.objects.items():
        own = name.rsplit("/", 1)[-1]
        if own in TEXTS and obj.size <= MAX_JSON_BYTES:
            pieces[name] = [(0, bucket.read(obj.key))]
        elif own.endswith(GRAPH_SUFFIX) and obj.size:
            head = bucket.read(obj.key, 0, min(obj.size, PREAMBLE_SIZE + SLOT_READ))
            got = [(0, head)]
            if head[: len(MAGIC)] == MAGIC and len(head) >= 16:
                start = PREAMBLE_SIZE + int.from_bytes(head[12:16], "little")  # slot 1, after slot 0
                if start < obj.size:
                    got.append((start, bucket.read(obj.key, start, min(obj.size, start + SLOT_READ))))
            pieces[name] = got
    assert all(obj.key.startswith(base) for obj in found.objects.values())
    return pieces


class BucketAccess:
    """A bucket as the reader's file access (file_access.FileAccess): a path is a key with a / before it ('/a/b'
    is the key 'a/b'), a folder the keys below its prefix; a range is one ranged GET. keys: paths whose objects a
    listing found, read by their exact keys."""

    def __init__(self, bucket: Bucket, keys: dict[str, str] | None = None) -> None:
        self.bucket, self.keys = bucket, keys or {}

    def _key(self, path: str) -> str:
        return self.keys.get(path) or path.lstrip("/")

    def list(self, path: str) -> list[Entry]:
        prefix = self.bucket.where.at(path)
        files: dict[str, int] = {}
        folders: set[str] = set()
        for obj in self.bucket.listing(prefix):
            name, slash, _ = obj.key[len(prefix.key_prefix) :].partition("/")
            if slash:
                folders.add(name)
            elif name:
                files[name] = obj.size
        if not files and not folders:
            raise StudioError(f"{prefix} holds no objects; check the bucket name and the prefix.")
        return [Entry(n, True, 0) for n in sorted(folders)] + [Entry(n, False, s) for n, s in sorted(files.items())]

    def read(self, path: str, limit: int) -> bytes:
        key = self._key(path)
        obj = self.bucket.head(key)
        if obj is None:
            raise StudioError(f"{self.bucket.url(key)} does not exist.")
        if obj.size > limit:
            raise StudioError(f"{self.bucket.url(key)} is {obj.size:,} bytes, far too large for a config file.")
        return self.bucket.read(key, if_match=obj.etag)

    def read_range(self, path: str, offset: int, length: int) -> bytes:
        return self.bucket.read(self._key(path), offset, offset + length)


def check(bucket: Bucket, found: Found, pieces: Pieces) -> Artifact:
    """The artifact as the studio's reader sees it, whatever its layout, every path the keys' (a VLM's language_model/
    part and its graphs too, so a resize finds the objects to rewrite); NoKvCacheError for a model without a
    resizable KV cache, its messages naming the bucket's URLs."""
    root = Path("/" + found.prefix.prefix)  # the reader's path: the key prefix; `where` says which bucket
    try:
        sizes = {name: obj.size for name, obj in found.objects.items()}
        access = BucketAccess(bucket, {path_there(root, name): obj.key for name, obj in found.objects.items()})
        artifact = open_from(root, AccessFiles(root, sizes, access, pieces))
    except NoKvCacheError as exc:
        d = exc.description
        problems = tuple(Problem(p.severity, _named_there(p.message, root, found.prefix)) for p in d.problems)
        raise NoKvCacheError(replace(d, path=found.prefix, problems=problems)) from None
    except StudioError as exc:
        raise reworded(exc, lambda text: _named_there(text, root, found.prefix)) from None
    return _in_bucket(artifact, root, found.prefix)


_AT_BUCKET_ROOT = re.compile(r"(?:^|(?<=[\s'\"(]))/(?=[^\s/])")
"""A path the reader names below an artifact at a bucket's root ('/language_model/x'): a / opening a word."""


def _named_there(text: str, root: Path, prefix: BucketPrefix) -> str:
    """A message of the reader, which names the key prefix as a path, with it written as the bucket's URL."""
    if prefix.prefix:
        return text.replace(str(root), prefix.url)
    return _AT_BUCKET_ROOT.sub(lambda _: prefix.url + "/", text)  # the root is '/': every path's start


def _in_bucket(artifact: Artifact, root: Path, prefix: BucketPrefix) -> Artifact:
    """An artifact read from the bucket's pieces, its messages naming the bucket's URLs, `where` the bucket."""
    artifact.problems = [Problem(p.severity, _named_there(p.message, root, prefix)) for p in artifact.problems]
    if artifact.unknown_reason:
        artifact.unknown_reason = _named_there(artifact.unknown_reason, root, prefix)
    artifact.where = prefix
    return artifact


def find(prefix: BucketPrefix, bucket: Bucket | None = None) -> tuple[Bucket, Found]:
    """The artifact at prefix, listed (StudioError when there is none, or when a copy there is unfinished)."""
    bucket = bucket or Bucket(prefix)
    objects = bucket.listing(prefix)
    for item in group(prefix, objects):
        if item.prefix == prefix:
            if item.incomplete:
                raise StudioError(incomplete_message(prefix, bucket))
            return bucket, item
    if not objects:
        raise StudioError(f"{prefix} holds no objects; check the bucket name and the prefix.")
    raise NotAnArtifactError(f"{prefix} is not an artifact: there is no {CONFIG_NAME} directly below it.")


def incomplete_message(prefix: BucketPrefix, bucket: Bucket | None = None) -> str:
    """Why the prefix is no artifact: its marker's writer (read from the bucket when given) is at work, or stopped."""
    try:
        found = read_owner(bucket, prefix) if bucket is not None else None
    except StudioError:
        found = None  # the words then name no writer
    return describe_incomplete(prefix, found)


def open_bucket_artifact(prefix: BucketPrefix) -> Artifact:
    """The artifact at prefix, read from its metadata only; writes nothing."""
    bucket, item = find(prefix)
    return check(bucket, item, fetch(bucket, item))


def fetched(
    bucket: Bucket, items: list[Found], threads: int = 32, window: int = 128
) -> Generator[tuple[Found, Pieces | StudioError], None, None]:
    """Each artifact with its pieces (or the error that stopped them), in order, many artifacts in flight."""

    def one(item: Found) -> Pieces | StudioError:
        try:
            return fetch(bucket, item)
        except StudioError as exc:
            return exc

    with ThreadPoolExecutor(threads) as pool:
        queue: list[tuple[Found, Future[Pieces | StudioError]]] = []
        todo = iter(items)
        for item in todo:
            queue.append((item, pool.submit(one, item)))
            if len(queue) >= window:
                break
        while queue:
            item, future = queue.pop(0)
            nxt = next(todo, None)
            if nxt is not None:
                queue.append((nxt, pool.submit(one, nxt)))
            try:
                yield item, future.result()
            except GeneratorExit:
                for _, pending in queue:
                    pending.cancel()
                raise
