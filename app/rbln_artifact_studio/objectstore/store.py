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
from typing import TYPE_CHECKING, Any, TypeVar

from rbln_artifact_studio.core.errors import StudioError

if TYPE_CHECKING:
    from mypy_boto3_s3.type_defs import ObjectIdentifierTypeDef
from rbln_artifact_studio.core.location import BucketPrefix
from rbln_artifact_studio.core.storage import faults
from rbln_artifact_studio.objectstore.client import (
    COPY_FACTOR,
    ConditionFailed,
    Endpoint,
    Truncated,
    Unreachable,
    Vanished,
    endpoint,
    sdk,
)

T = TypeVar("T")

MIN_PART = 5 << 20  # S3's smallest part but the last
COPY_PART = 128 << 20  # a server-side copy part: a store that moves the bytes itself answers each within seconds
UPLOAD_PART = 64 << 20  # a part uploaded from a local file
COPY_OBJECT_LIMIT = 5 << 30  # CopyObject's largest source; larger ones are copied in parts
PARALLEL_PARTS = 8
DOWNLOAD_PIECE = 8 << 20  # a download's ranged GET: each bounded as any request is (client.py)


class _Unnamed(StudioError):
    """A key obstore cannot take for a path (a control character in it); botocore reads it."""


Patch = tuple[int, bytes]
"""Bytes to write at an offset of an object as it is rewritten."""


@dataclass(frozen=True)
class Obj:
    """One object of a listing: its key, size and ETag (quoted, as the store sends it), and when it was written
    (Unix seconds; None where the store did not say)."""

    key: str
    size: int
    etag: str
    modified: float | None = None  # its LastModified (seconds since the epoch), where the listing gives it


def _epoch(when: object) -> float | None:
    """A listing's LastModified (a datetime) in seconds since the epoch."""
    stamp = getattr(when, "timestamp", None)
    return float(stamp()) if callable(stamp) else None


class Bucket:
    """The requests on one bucket of one store; every request bounded (client.py's timeouts). where: a location in
    the bucket, whose store is reached (a bare name: the AWS chain's own store)."""

    def __init__(self, where: BucketPrefix | str, ep: Endpoint | None = None) -> None:
        self.where = BucketPrefix(where, "") if isinstance(where, str) else where.at("")
        self.name = self.where.bucket
        self.ep = ep or endpoint(self.where.profile, self.where.endpoint)
        self.s3 = self.ep.s3
        self.copier = self.ep.copier  # the same, with room for a server-side copy's silence (COPY_TIMEOUT)
        self.bytes_read = 0  # what reads fetched (the benchmark compares it with a local check's reads)
        self.reads = 0
        self._count = threading.Lock()

    def url(self, key: str) -> str:
        """The URL of the object key, its store named as the bucket's location names it."""
        return self.where._replace(prefix=key).url

    def _fail(self, exc: BaseException, key: str) -> StudioError:
        return self.ep.explain(exc, self.url(key), self.name)

    def _boto(self, call: Callable[[], T], key: str, factor: float = 1, stop: threading.Event | None = None) -> T:
        """A boto3 request about key, tried and bounded as client.Endpoint.request says; a StudioError otherwise.
        stop: set when the work it is part of stopped (a multipart upload's other part failed, or a cancel)."""
        return self.ep.request(call, self.url(key), self.name, factor=factor, stop=stop)

    def _obstore(self, call: Callable[[], T], key: str) -> T:
        """An obstore request about key (obstore bounds the whole request itself), tried as request() says."""
        return self.ep.request(call, self.url(key), self.name, threaded=False)

    def listing(self, prefix: BucketPrefix) -> list[Obj]:
        """Every object below the prefix (keys starting with its key_prefix), in key order."""
        obstore = sdk().obstore
        self.ep.credentials()

        def pages() -> list[Obj]:
            found: list[Obj] = []
            stream = obstore.list(self.ep.reader(self.name), prefix=prefix.prefix or None, chunk_size=1000)
            for batch in stream:
                found += [
                    Obj(str(o["path"]), int(o["size"]), str(o.get("e_tag") or ""), _epoch(o.get("last_modified")))
                    for o in batch
                ]
            return found

        try:
            found = self._obstore(pages, prefix.key_prefix)
        except Unreachable:
            raise  # botocore would only wait as long again
        except StudioError:
            # obstore refuses a listing holding a key it cannot take for a path (a TAB, LF or DEL in it: legal in
            # S3) and words a refusal vaguely; botocore lists every key, and says precisely why it is refused.
            found = self._listing_by_boto(prefix)
        found.sort(key=lambda o: o.key)
        return found

    def _listing_by_boto(self, prefix: BucketPrefix) -> list[Obj]:
        found: list[Obj] = []
        token: dict[str, str] = {}
        while True:
            args = {"Bucket": self.name, "Prefix": prefix.key_prefix, **token}
            page = self._boto(lambda args=args: self.s3.list_objects_v2(**args), prefix.key_prefix)  # type: ignore[misc]  # mypy cannot type a lambda's default argument
            found += [
                Obj(str(o["Key"]), int(o["Size"]), str(o.get("ETag") or ""), _epoch(o.get("LastModified")))
                for o in page.get("Contents", [])
            ]
            if not page.get("IsTruncated") or not page.get("NextContinuationToken"):
                return found
            token = {"ContinuationToken": str(page["NextContinuationToken"])}

    def read(self, key: str, start: int = 0, end: int | None = None, if_match: str | None = None) -> bytes:
        """Bytes [start, end) of the object (to its end when end is None), as of ETag if_match when given."""
        obstore = sdk().obstore

        def by_obstore() -> bytes:
            store = self.ep.reader(self.name)
            options: dict[str, Any] = {"if_match": if_match} if if_match else {}
            if end is not None or start:
                if end is not None and end <= start:
                    return b""
                options["range"] = (start, end) if end is not None else {"offset": start}
            try:
                return bytes(obstore.get(store, key, options=options).bytes())
            except ValueError as exc:
                if "parse path" in str(exc).lower():
                    raise _Unnamed(key) from None
                raise

        try:
            data = self._obstore(by_obstore, key)
        except _Unnamed:
            data = self._read_by_boto(key, start, end, if_match)
        want = None if end is None else end - start
        if want is not None and len(data) != want:
            raise Truncated(self._truncated(key, start, want, len(data)))
        with self._count:
            self.bytes_read += len(data)
            self.reads += 1
        return data

    def _read_by_boto(self, key: str, start: int, end: int | None, if_match: str | None) -> bytes:
        """A read of a key obstore cannot name (a control character in it); the body read within the try's limit."""
        if end is not None and end <= start:
            return b""
        args: dict[str, Any] = {"Bucket": self.name, "Key": key}
        if start or end is not None:
            args["Range"] = f"bytes={start}-{'' if end is None else end - 1}"
        if if_match:
            args["IfMatch"] = if_match
        return self._boto(lambda: bytes(self.s3.get_object(**args)["Body"].read()), key)

    def _truncated(self, key: str, start: int, want: int, got: int) -> str:
        return (
            f"The object store at {self.ep.shown} sent {got} of the {want} bytes asked of {self.url(key)} "
            f"from byte {start}: its answer was cut short (the object was replaced by a shorter one since it was "
            "listed, or the store or the link dropped it); nothing of it was used. Scan or try again."
        )

    def head(self, key: str) -> Obj | None:
        """The object's size and ETag, or None when there is none."""
        try:
            meta = self._boto(lambda: self.s3.head_object(Bucket=self.name, Key=key), key)
        except Vanished:
            return None
        return Obj(key, int(meta["ContentLength"]), str(meta["ETag"]))

    def put(self, key: str, data: bytes, if_match: str | None = None, create: bool = False) -> str:
        """Write the object, only if it still has ETag if_match, or (create) only if there is none; its new ETag."""
        args: dict[str, Any] = {"Bucket": self.name, "Key": key, "Body": data}
        if if_match:
            args["IfMatch"] = if_match
        if create:
            args["IfNoneMatch"] = "*"
        return str(self._boto(lambda: self.s3.put_object(**args), key)["ETag"])

    def delete(self, keys: list[str]) -> None:
        for start in range(0, len(keys), 1000):
            chunk: list[ObjectIdentifierTypeDef] = [{"Key": k} for k in keys[start : start + 1000]]
            answer = self._boto(
                lambda chunk=chunk: self.s3.delete_objects(  # type: ignore[misc]  # a lambda's default argument
                    Bucket=self.name, Delete={"Objects": chunk, "Quiet": True}
                ),
                keys[start],
            )
            for error in answer.get("Errors", []):
                raise StudioError(f"Cannot delete {self.url(str(error.get('Key')))}: {error.get('Message')}.")

    def uploads(self, prefix: BucketPrefix) -> list[tuple[str, str]]:
        """The multipart uploads begun below the prefix and neither completed nor aborted: (key, upload id)."""
        found: list[tuple[str, str]] = []
        marker: dict[str, str] = {}
        while True:
            args = {"Bucket": self.name, "Prefix": prefix.key_prefix, **marker}
            page = self._boto(
                lambda args=args: self.s3.list_multipart_uploads(**args),  # type: ignore[misc]  # a lambda's default argument
                prefix.key_prefix,
            )
            found += [(str(u["Key"]), str(u["UploadId"])) for u in page.get("Uploads", [])]
            if not page.get("IsTruncated"):
                return found
            marker = {
                "KeyMarker": str(page.get("NextKeyMarker", "")),
                "UploadIdMarker": str(page.get("NextUploadIdMarker", "")),
            }

    def abort_uploads(self, prefix: BucketPrefix, keys: set[str]) -> int:
        """Abort the unfinished multipart uploads below the prefix to these keys (a killed run's: the store keeps,
        and bills, their parts until then); how many."""
        try:
            stale = [(key, upload) for key, upload in self.uploads(prefix) if key in keys]
        except Unreachable:
            raise
        except StudioError:
            # A store without ListMultipartUploads, or an identity not allowed it (s3:ListBucketMultipartUploads):
            # there is nothing this run can find to abort, and that must not stop the work it was asked for.
            return 0
        for key, upload in stale:

            def abort(key: str = key, upload: str = upload) -> object:
                return self.s3.abort_multipart_upload(Bucket=self.name, Key=key, UploadId=upload)

            with contextlib.suppress(Vanished):  # ended meanwhile
                self._boto(abort, key)
        return len(stale)

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
            self._boto(lambda: self.copier.copy_object(**args), key, COPY_FACTOR)
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
            body = bytearray(self.read(source.key, if_match=source.etag))
            if len(body) != source.size:
                raise ConditionFailed(f"{self.url(source.key)} changed while it was read", unchanged=True)
            for offset, data in patches:
                body[offset : offset + len(data)] = data
            return self.put(key, bytes(body), if_match, create)
        head = bytearray(self.read(source.key, 0, first, if_match=source.etag))
        for offset, data in patches:
            head[offset : offset + len(data)] = data
        ranges = [(start, min(start + COPY_PART, source.size)) for start in range(first, source.size, COPY_PART)]

        def copy_part(number: int, start: int, end: int, upload: str, stop: threading.Event) -> str:
            answer = self._boto(
                lambda: self.copier.upload_part_copy(
                    Bucket=self.name,
                    Key=key,
                    UploadId=upload,
                    PartNumber=number,
                    CopySource={"Bucket": self.name, "Key": source.key},
                    CopySourceRange=f"bytes={start}-{end - 1}",
                    CopySourceIfMatch=source.etag,
                ),
                key,
                COPY_FACTOR,
                stop,
            )
            return str(answer["CopyPartResult"]["ETag"])

        def parts(upload: str, stop: threading.Event) -> Iterator[tuple[int, Callable[[], str]]]:
            yield 1, partial(self._part, key, upload, 1, bytes(head), stop)
            for number, (start, end) in enumerate(ranges, 2):
                yield number, partial(copy_part, number, start, end, upload, stop)

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

        def parts(upload: str, stop: threading.Event) -> Iterator[tuple[int, Callable[[], str]]]:
            for number, (start, end) in enumerate(ranges, 1):

                def send(number: int = number, start: int = start, end: int = end) -> str:
                    return self._part(key, upload, number, piece(start, end), stop)

                yield number, send

        return self._multipart(key, parts, None, create)

    def _part(self, key: str, upload: str, number: int, body: bytes, stop: threading.Event) -> str:
        """One uploaded part; its try may take a second per MiB beyond the limit (a slow uplink still moves it)."""
        factor = 1 + len(body) / (1 << 20) / self.ep.timeout
        answer = self._boto(
            lambda: self.s3.upload_part(Bucket=self.name, Key=key, UploadId=upload, PartNumber=number, Body=body),
            key,
            factor,
            stop,
        )
        return str(answer["ETag"])

    def download(self, obj: Obj, path: Path, on_bytes: Callable[[int], None] | None = None) -> None:
        """The object into a new local file (the caller's staging folder), as of its ETag (If-Match), in ranged
        GETs of DOWNLOAD_PIECE: each is a request bounded as any other, so a store that trickles ends the copy."""
        with open(path, "xb") as f:
            for start in range(0, obj.size, DOWNLOAD_PIECE):
                chunk = self.read(obj.key, start, min(obj.size, start + DOWNLOAD_PIECE), if_match=obj.etag)
                f.write(chunk)
                if on_bytes is not None:
                    on_bytes(len(chunk))

    def _multipart(
        self,
        key: str,
        parts: Callable[[str, threading.Event], Iterator[tuple[int, Callable[[], str]]]],
        if_match: str | None,
        create: bool,
    ) -> str:
        """A multipart upload of the parts (each a call giving its ETag, several in flight), completed under the
        condition, or aborted on any failure so no parts are left behind."""
        upload = str(self._boto(lambda: self.s3.create_multipart_upload(Bucket=self.name, Key=key), key)["UploadId"])
        try:
            faults.checkpoint("multipart.started")
            stop = threading.Event()
            pool = ThreadPoolExecutor(PARALLEL_PARTS)
            try:
                futures = [(number, pool.submit(call)) for number, call in parts(upload, stop)]
                done = [{"PartNumber": number, "ETag": future.result()} for number, future in futures]
            finally:
                # On a failure or a cancel no part starts after it, and those in flight are not waited for (their
                # requests end on their own; the abort below drops whatever they send).
                stop.set()
                pool.shutdown(wait=True, cancel_futures=True)
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
            return str(self._boto(lambda: self.copier.complete_multipart_upload(**args), key, COPY_FACTOR)["ETag"])
        except BaseException:
            # On a failure or a cancel: the parts are dropped (the store bills them until then). The first failure
            # is the one to report; an abort that fails too is found by the next run on the prefix (abort_uploads).
            with contextlib.suppress(Exception):
                self._boto(lambda: self.s3.abort_multipart_upload(Bucket=self.name, Key=key, UploadId=upload), key)
            raise
