"""What a user sees when a bucket cannot be used: each failure a clear error naming what to check, in bounded time."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from objectstore.conftest import BucketFixture
from objectstore.seaweed import READER_KEY, READER_SECRET, running_seaweed
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import parse_bucket_prefix
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
from rbln_artifact_studio.objectstore.artifacts import open_bucket_artifact
from rbln_artifact_studio.objectstore.client import Unreachable
from rbln_artifact_studio.objectstore.resize import resize_bucket_in_place
from rbln_artifact_studio.objectstore.scan import scan_bucket


def test_wrong_keys_are_refused_with_what_to_check(bucket: BucketFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
    with pytest.raises(StudioError, match="refused the credentials") as err:
        list(scan_bucket(parse_bucket_prefix(bucket.url()), use_cache=False))
    assert "AWS_SECRET_ACCESS_KEY" in str(err.value) and "not-the-secret" not in str(err.value)


def test_missing_bucket_is_named(bucket: BucketFixture) -> None:
    with pytest.raises(StudioError, match="no bucket 'no-such-bucket'") as err:
        list(scan_bucket(parse_bucket_prefix("s3://no-such-bucket/fleet"), use_cache=False))
    assert bucket.store.endpoint in str(err.value)


def test_no_artifact_at_a_prefix(bucket: BucketFixture) -> None:
    with pytest.raises(StudioError) as err:
        open_bucket_artifact(parse_bucket_prefix(bucket.url("nothing/here")))
    assert str(err.value) == f"{bucket.url('nothing/here')} holds no objects; check the bucket name and the prefix."


def test_unreachable_endpoint_fails_fast(bucket: BucketFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once the socket is closed
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{port}")
    with pytest.raises(Unreachable, match=f"Cannot reach the object store at http://127.0.0.1:{port}"):
        list(scan_bucket(parse_bucket_prefix(bucket.url()), use_cache=False))


def test_denied_write_says_which_permission(
    bucket: BucketFixture, cr13_artifact: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bucket.upload(cr13_artifact, "ro/qwen")
    before = bucket.objects("ro/")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", READER_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", READER_SECRET)
    prefix = parse_bucket_prefix(bucket.url("ro/qwen"))
    assert open_bucket_artifact(prefix).status.value == "ok"  # reading is allowed
    with pytest.raises(StudioError, match="denied") as err:
        resize_bucket_in_place(ResizeRequest(prefix, 12))
    assert "s3:PutObject" in str(err.value)
    assert bucket.objects("ro/") == before


def test_store_that_goes_away_mid_scan(tmp_path: Path, cr13_artifact: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A second store of its own, stopped after the first row: the scan ends with an error naming it, promptly."""
    with tempfile.TemporaryDirectory(prefix="rbln-studio-seaweed-") as tmp, running_seaweed(Path(tmp)) as store:
        for name, value in store.env().items():
            monkeypatch.setenv(name, value)
        import boto3

        client = boto3.client("s3", endpoint_url=store.endpoint, region_name="us-east-1")
        for _ in range(300):
            try:
                client.create_bucket(Bucket="going-away")
                break
            except Exception:
                time.sleep(0.2)
        fleet = tmp_path / "fleet"
        for i in range(12):
            shutil.copytree(cr13_artifact, fleet / f"qwen-{i:02d}")
        for path in sorted(fleet.rglob("*")):
            if path.is_file():
                client.upload_file(str(path), "going-away", f"fleet/{path.relative_to(fleet).as_posix()}")
        rows = scan_bucket(parse_bucket_prefix("s3://going-away/fleet"), use_cache=False, window=1)
        first = next(rows)
        assert first.status.value == "ok"
        subprocess.run(["kill", "-KILL", "--", f"-{store.pid}"], check=False)
        with pytest.raises(Unreachable, match=store.endpoint) as err:
            list(rows)
        assert "(3 tries in " in str(err.value)  # bounded: a few tries, each with its limit, not a hang
