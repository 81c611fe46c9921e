"""The requests the studio makes of a bucket: list, ranged reads, conditional writes, server-side copies.

Objects are immutable: a rewrite is a new object, conditional on the ETag read (If-Match) or on absence
(If-None-Match). A large object whose header changes is rebuilt by a multipart upload whose first part is uploaded
(the header, patched, padded to the 5 MiB a non-last part must hold) and whose other parts are copied server-side
(UploadPartCopy): a 20 GB graph never crosses the network.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rbln_artifact_studio.core.errors import StudioError

if TYPE_CHECKING:
    from mypy_boto3_s3.type_defs import ObjectIdentifierTypeDef
from rbln_artifact_studio.core.location import BucketPrefix
from rbln_artifact_studio.objectstore.client import ConditionFailed, Endpoint, endpoint

MIN_PART = 5 << 20  # S3's smallest part but the last
COPY_PART = 128 << 20  # a server-side copy part: a store that moves the bytes itself answers each within seconds
UPLOAD_PART = 64 << 20  # a part uploaded from a local file
COPY_OBJECT_LIMIT = 5 << 30  # CopyObject's largest source; larger ones are copied in parts
PARALLEL_PARTS = 8

Patch = tuple[int, bytes]
"""Bytes to write at an offset of an object as it is rewritten."""


@dataclass(frozen=True)
class Obj:
    """One object of a listing: its key, size and ETag (quoted, as the store sends it)."""

    key: str
    size: int
    etag: str


def url(bucket: str, key: str) -> str:
    return BucketPrefix(bucket, key).url


class Bucket:
    """The requests on one bucket of the chain's endpoint; every request bounded (client.py's timeouts)."""

    def __init__(self, name: str, ep: Endpoint | None = None) -> None:
        self.name = name
        self.ep = ep or endpoint()
        self.s3 = self.ep.s3
        self.copier = self.ep.copier  # the same, with room for a server-side copy's silence (COPY_TIMEOUT)
        self.bytes_read = 0  # what reads fetched (the benchmark compares it with a local check's reads)
        self.reads = 0
        self._count = threading.Lock()

    def _fail(self, exc: BaseException, key: str) -> StudioError:
        return self.ep.explain(exc, url(self.name, key), self.name)

    def listing(self, prefix: BucketPrefix) -> list[Obj]:
        """Every object below the prefix (keys starting with its key_prefix), in key order."""
        import obstore

        self.ep.credentials()
        found: list[Obj] = []
        try:
            stream = obstore.list(self.ep.reader(self.name), prefix=prefix.prefix or None, chunk_size=1000)
            for batch in stream:
                found += [Obj(str(o["path"]), int(o["size"]), str(o.get("e_tag") or "")) for o in batch]
        except Exception as exc:
            self._diagnose(prefix)  # the precise reason (bucket, keys, endpoint) when botocore sees it too
            raise self._fail(exc, prefix.key_prefix) from None
        found.sort(key=lambda o: o.key)
        return found

    def _diagnose(self, prefix: BucketPrefix) -> None:
        try:
            self.s3.list_objects_v2(Bucket=self.name, Prefix=prefix.key_prefix, MaxKeys=1)
        except Exception as exc:
            raise self.ep.explain(exc, prefix.url, self.name) from None

    def read(self, key: str, start: int = 0, end: int | None = None) -> bytes:
        """Bytes [start, end) of the object (to its end when end is None)."""
        import obstore

        try:
            store = self.ep.reader(self.name)
            if end is None and start == 0:
                data = bytes(obstore.get(store, key).bytes())
            else:
                if end is None:
                    end = int(obstore.head(store, key)["size"])
                data = bytes(obstore.get_range(store, key, start=start, end=end)) if end > start else b""
        except Exception as exc:
            raise self._fail(exc, key) from None
        with self._count:
            self.bytes_read += len(data)
            self.reads += 1
        return data

    def head(self, key: str) -> Obj | None:
        """The object's size and ETag, or None when there is none."""
        try:
            meta = self.s3.head_object(Bucket=self.name, Key=key)
        except Exception as exc:
            if getattr(exc, "response", {}).get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return None
            raise self._fail(exc, key) from None
        return Obj(key, int(meta["ContentLength"]), str(meta["ETag"]))

    def put(self, key: str, data: bytes, if_match: str | None = None, create: bool = False) -> str:
        """Write the object, only if it still has ETag if_match, or (create) only if there is none; its new ETag."""
        args: dict[str, Any] = {"Bucket": self.name, "Key": key, "Body": data}
        if if_match:
            args["IfMatch"] = if_match
        if create:
            args["IfNoneMatch"] = "*"
        try:
            return str(self.s3.put_object(**args)["ETag"])
        except Exception as exc:
            raise self._fail(exc, key) from None

    def delete(self, keys: list[str]) -> None:
        for start in range(0, len(keys), 1000):
            chunk: list[ObjectIdentifierTypeDef] = [{"Key": k} for k in keys[start : start + 1000]]
            try:
                answer = self.s3.delete_objects(Bucket=self.name, Delete={"Objects": chunk, "Quiet": True})
            except Exception as exc:
                raise self._fail(exc, keys[start]) from None
            for error in answer.get("Errors", []):
                raise StudioError(f"Cannot delete {url(self.name, str(error.get('Key')))}: {error.get('Message')}.")

    def copy(self, source: Obj, key: str, create: bool = True) -> None:
        """A server-side copy of source (as of its ETag) to key; in parts when CopyObject cannot take it."""
        if source.size <= COPY_OBJECT_LIMIT:
            args: dict[str, Any] = {
                "Bucket": self.name,
                "Key": key,
                "CopySource": {"Bucket": self.name, "Key": source.key},
                "CopySourceIfMatch": source.etag,
            }
            if create:
                args["IfNoneMatch"] = "*"
            try:
                self.copier.copy_object(**args)
            except Exception as exc:
                raise self._fail(exc, key) from None
            return
        self.rewrite(source, key, [], create=create)

    def rewrite(
        self, source: Obj, key: str, patches: list[Patch], if_match: str | None = None, create: bool = False
    ) -> str:
        """source with patches applied, written to key (conditional as put is); its new ETag.

        Small objects are read and written whole; a large one is rebuilt from an uploaded first part holding every
        patch and server-side copies of the rest.
        """
        reach = max((offset + len(data) for offset, data in patches), default=0)
        first = max(MIN_PART, reach)
        if source.size <= first + MIN_PART:
            body = bytearray(self.read(source.key))
            if len(body) != source.size:
                raise ConditionFailed(f"{url(self.name, source.key)} changed while it was read; nothing was written.")
            for offset, data in patches:
                body[offset : offset + len(data)] = data
            return self.put(key, bytes(body), if_match, create)
        head = bytearray(self.read(source.key, 0, first))
        for offset, data in patches:
            head[offset : offset + len(data)] = data
        ranges = [(start, min(start + COPY_PART, source.size)) for start in range(first, source.size, COPY_PART)]

        def copy_part(number: int, start: int, end: int, upload: str) -> str:
            answer = self.copier.upload_part_copy(
                Bucket=self.name,
                Key=key,
                UploadId=upload,
                PartNumber=number,
                CopySource={"Bucket": self.name, "Key": source.key},
                CopySourceRange=f"bytes={start}-{end - 1}",
                CopySourceIfMatch=source.etag,
            )
            return str(answer["CopyPartResult"]["ETag"])

        def parts(upload: str) -> Iterator[tuple[int, Callable[[], str]]]:
            yield (
                1,
                lambda: str(
                    self.s3.upload_part(Bucket=self.name, Key=key, UploadId=upload, PartNumber=1, Body=bytes(head))[
                        "ETag"
                    ]
                ),
            )
            for number, (start, end) in enumerate(ranges, 2):
                yield number, partial(copy_part, number, start, end, upload)

        return self._multipart(key, parts, if_match, create)

    def upload(self, path: Path, key: str, patches: list[Patch], create: bool = True) -> str:
        """A local file, with patches applied, as the object key (in parts when large); its ETag."""
        size = os.path.getsize(path)

        def piece(start: int, end: int) -> bytes:
            with open(path, "rb") as f:
                f.seek(start)
                data = bytearray(f.read(end - start))
            for offset, patch in patches:
                low, high = max(offset, start), min(offset + len(patch), end)
                if low < high:
                    data[low - start : high - start] = patch[low - offset : high - offset]
            return bytes(data)

        if size <= UPLOAD_PART + MIN_PART:
            return self.put(key, piece(0, size), create=create)
        ranges = [(start, min(start + UPLOAD_PART, size)) for start in range(0, size, UPLOAD_PART)]

        def parts(upload: str) -> Iterator[tuple[int, Callable[[], str]]]:
            for number, (start, end) in enumerate(ranges, 1):

                def send(number: int = number, start: int = start, end: int = end) -> str:
                    body = piece(start, end)
                    return str(
                        self.s3.upload_part(Bucket=self.name, Key=key, UploadId=upload, PartNumber=number, Body=body)[
                            "ETag"
                        ]
                    )

                yield number, send

        return self._multipart(key, parts, None, create)

    def download(self, obj: Obj, path: Path, on_bytes: Callable[[int], None] | None = None) -> None:
        """The object into a new local file (the caller's staging folder), as of its ETag (If-Match)."""
        try:
            body = self.s3.get_object(Bucket=self.name, Key=obj.key, IfMatch=obj.etag)["Body"]
            with open(path, "xb") as f:
                while chunk := body.read(UPLOAD_PART // 8):
                    f.write(chunk)
                    if on_bytes is not None:
                        on_bytes(len(chunk))
        except OSError:
            raise
        except Exception as exc:
            raise self._fail(exc, obj.key) from None

    def _multipart(
        self,
        key: str,
        parts: Callable[[str], Iterator[tuple[int, Callable[[], str]]]],
        if_match: str | None,
        create: bool,
    ) -> str:
        """A multipart upload of the parts (each a call giving its ETag, several in flight), completed under the
        condition, or aborted on any failure so no parts are left behind."""
        try:
            upload = str(self.s3.create_multipart_upload(Bucket=self.name, Key=key)["UploadId"])
        except Exception as exc:
            raise self._fail(exc, key) from None
        try:
            with ThreadPoolExecutor(PARALLEL_PARTS) as pool:
                futures = [(number, pool.submit(call)) for number, call in parts(upload)]
                done = [{"PartNumber": number, "ETag": future.result()} for number, future in futures]
            args: dict[str, Any] = {
                "Bucket": self.name,
                "Key": key,
                "UploadId": upload,
                "MultipartUpload": {"Parts": done},
            }
            if if_match:
                args["IfMatch"] = if_match
            if create:
                args["IfNoneMatch"] = "*"
            return str(self.copier.complete_multipart_upload(**args)["ETag"])
        except BaseException as exc:
            with contextlib.suppress(Exception):  # the first failure is the one to report; a stale upload expires
                self.s3.abort_multipart_upload(Bucket=self.name, Key=key, UploadId=upload)
            if isinstance(exc, Exception):
                raise self._fail(exc, key) from None
            raise
