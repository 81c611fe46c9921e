"""Where a store ignores conditional writes, a resize in place is refused (found by the probe write) and the copy it
offers works: the real SeaweedFS behind a gateway that drops If-Match / If-None-Match (unconditional.py)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from objectstore.conftest import BucketFixture
from objectstore.unconditional import unconditional_gateway

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def gateway(bucket: BucketFixture, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with unconditional_gateway(bucket.store) as endpoint:
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        # Plain request bodies (no aws-chunked trailers), so the gateway can sign a PUT again without its conditions.
        monkeypatch.setenv("AWS_REQUEST_CHECKSUM_CALCULATION", "when_required")
        yield endpoint


def test_the_gateway_really_ignores_conditions(bucket: BucketFixture, gateway: str) -> None:
    """What the refusal rests on: through the gateway a second create-only PUT overwrites; directly it is refused."""
    import boto3
    from botocore.config import Config

    through = boto3.client(
        "s3", endpoint_url=gateway, region_name="us-east-1", config=Config(s3={"addressing_style": "path"})
    )
    through.put_object(Bucket=bucket.name, Key="k", Body=b"one", IfNoneMatch="*")
    through.put_object(Bucket=bucket.name, Key="k", Body=b"two", IfNoneMatch="*")
    assert bucket.get("k") == b"two"
    with pytest.raises(Exception, match="PreconditionFailed"):
        bucket.client.put_object(Bucket=bucket.name, Key="k", Body=b"three", IfNoneMatch="*")


def test_in_place_is_refused_and_the_copy_offered_works(
    bucket: BucketFixture, gateway: str, cr13_artifact: Path, run_cli: Run
) -> None:
    bucket.upload(cr13_artifact, "fleet/qwen")
    before = bucket.objects("fleet/qwen/")
    url = bucket.url("fleet/qwen")
    refused = run_cli("set-kvcache-num-blocks", url, "12")
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert f"The object store at {gateway} ignores conditional writes" in refused.stderr
    assert "--output-dir s3://" in refused.stderr  # the copy, offered
    assert bucket.objects("fleet/qwen/") == before and not [k for k in bucket.objects() if ".rbln-studio" in k]
    copied = run_cli("set-kvcache-num-blocks", url, "12", "--output-dir", "fleet/qwen-12")
    assert copied.returncode == 0, copied.stderr
    assert run_cli("get-kvcache-num-blocks", bucket.url("fleet/qwen-12")).stdout.strip() == "12"
    assert bucket.objects("fleet/qwen/") == before
