"""A user whose AWS CLI is already set up for an S3-compatible store (a named profile with its endpoint_url in
~/.aws/config, its keys in ~/.aws/credentials, AWS_PROFILE naming it) runs `scan s3://…` with no other set-up."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from objectstore.conftest import BucketFixture

Run = Callable[..., subprocess.CompletedProcess[str]]
CHAIN = ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION", "AWS_REGION")


def aws_configured_home(home: Path, bucket: BucketFixture, profile: str) -> dict[str, str]:
    """HOME with ~/.aws as `aws configure --profile` and `aws configure set endpoint_url` leave it; the environment
    of a shell that only exports AWS_PROFILE (no key, no endpoint in it)."""
    aws = home / ".aws"
    aws.mkdir(parents=True)
    store = bucket.store
    (aws / "credentials").write_text(
        f"[{profile}]\naws_access_key_id = {store.access_key}\naws_secret_access_key = {store.secret_key}\n"
    )
    (aws / "config").write_text(
        f"[profile {profile}]\nregion = us-east-1\nendpoint_url = {store.endpoint}\ns3 =\n    addressing_style = path\n"
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in CHAIN and k not in ("AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE")
    }
    return {**env, "HOME": str(home), "AWS_PROFILE": profile}


def without_the_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    """run_cli starts from this process's environment: the chain out of it, as the user's shell has none."""
    for name in (*CHAIN, "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
        monkeypatch.delenv(name, raising=False)


def test_scan_inspect_and_get_with_only_the_aws_cli_profile(
    run_cli: Run, bucket: BucketFixture, cr13_artifact: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bucket.upload(cr13_artifact, "fleet/qwen")
    env = aws_configured_home(tmp_path / "home", bucket, "minio")
    without_the_chain(monkeypatch)
    scanned = run_cli("scan", bucket.url("fleet"), "--json", "--no-cache", env=env)
    assert scanned.returncode == 0, scanned.stderr
    [row] = json.loads(scanned.stdout)
    assert row["status"] == "ok" and row["path"] == bucket.url("fleet/qwen")
    got = run_cli("get-kvcache-num-blocks", bucket.url("fleet/qwen"), env=env)
    assert got.returncode == 0 and got.stdout.strip() == str(row["kvcache_num_blocks"]), got.stderr
    inspected = run_cli("inspect", bucket.url("fleet/qwen"), "--json", env=env)
    assert inspected.returncode == 0 and json.loads(inspected.stdout)["status"] == "ok", inspected.stderr


def test_a_profile_that_is_not_configured_is_named(
    run_cli: Run, bucket: BucketFixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = aws_configured_home(tmp_path / "home", bucket, "minio") | {"AWS_PROFILE": "minoi"}
    without_the_chain(monkeypatch)
    done = run_cli("scan", bucket.url("fleet"), "--json", env=env)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "minoi" in done.stderr and "AWS_PROFILE" in done.stderr, done.stderr
