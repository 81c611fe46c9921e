"""A copy inside a bucket moves its payload server-side: the wire carries headers, the configs and the one part of
each rewritten graph that S3 must be sent (its first 5 MiB, the smallest part of a multipart upload), never the
rest of a payload. Measured on the real SeaweedFS through a gateway that records every request (unconditional.py)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from objectstore.conftest import BucketFixture
from objectstore.unconditional import Exchange, recording_gateway

Run = Callable[..., subprocess.CompletedProcess[str]]
PART = 5 << 20  # the smallest part of a multipart upload but the last


def test_a_copy_in_the_bucket_sends_headers_and_copies_payloads_there(
    bucket: BucketFixture, weighty_artifact: Path, run_cli: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    bucket.upload(weighty_artifact, "fleet/w")
    sizes = {
        k: bucket.client.head_object(Bucket=bucket.name, Key=k)["ContentLength"] for k in bucket.objects("fleet/w/")
    }
    log: list[Exchange] = []
    with recording_gateway(bucket.store, log) as endpoint:
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        done = run_cli("set-kvcache-num-blocks", bucket.url("fleet/w"), "12", "--output-dir", "fleet/w-12")
    assert done.returncode == 0, done.stderr
    monkeypatch.setenv("AWS_ENDPOINT_URL", bucket.store.endpoint)
    assert run_cli("get-kvcache-num-blocks", bucket.url("fleet/w-12")).stdout.strip() == "12"
    path = f"/{bucket.name}/"

    def on_the_wire(key: str) -> int:
        """Bytes of key's object, read from the source or written to the copy, that crossed the wire (the copy's
        headers read back afterwards, the command's confirmation of the count it holds, are not the copy's)."""
        copy_key = key.replace("fleet/w/", "fleet/w-12/", 1)
        return sum(
            e.sent + e.received
            for e in log
            if e.target.split("?")[0] == path + key or (e.target.split("?")[0] == path + copy_key and e.method != "GET")
        )

    def copied_there(key: str) -> bool:
        return any(e.copy_source == f"{bucket.name}/{key}" for e in log)

    assert on_the_wire("fleet/w/config.json") < 1024 and copied_there("fleet/w/config.json")  # CopyObject
    big = "fleet/w/prefill.rbln"  # 15 MB: its header rewritten in the first part, the rest UploadPartCopy
    assert sizes[big] > 2 * PART + 64 * 1024  # more than what may cross: the rest can only have been copied there
    assert copied_there(big) and on_the_wire(big) <= 2 * PART + 64 * 1024, on_the_wire(big)
    writes = [e.target.split("?")[0] for e in log if e.method == "PUT" and "/fleet/w-12/" in e.target]
    assert writes[-1] == path + "fleet/w-12/rbln_config.json"  # written last: a half copy never passes the check
