"""A resize killed at each named step (the store stays up, our process dies): a reader never sees a half-done
artifact, and running the same command again finishes it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from harness import ENV_STEP, cli_env

from objectstore.conftest import BucketFixture
from rbln_artifact_studio.core.location import parse_bucket_prefix
from rbln_artifact_studio.objectstore.artifacts import open_bucket_artifact
from rbln_artifact_studio.objectstore.scan import scan_bucket

DRIVER = Path(__file__).with_name("driver.py")
COPY_STEPS = ["copy.locked", "copy.object.0", "copy.object.1", "copy.object.2", "copy.copied", "copy.config_written"]
IN_PLACE_STEPS = ["resize.locked", "resize.header_written.0", "resize.header_written.1", "resize.config", "resize.done"]


def drive(*args: str, step: str | None = None) -> subprocess.CompletedProcess[str]:
    env = cli_env({ENV_STEP: step} if step else {})
    env.update((k, v) for k, v in os.environ.items() if k.startswith("AWS_"))
    return subprocess.run(
        [sys.executable, str(DRIVER), *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def rows(bucket: BucketFixture) -> dict[str, tuple[str, int | None, list[str]]]:
    found = scan_bucket(parse_bucket_prefix(bucket.url()), use_cache=False)
    return {row.path: (row.status.value, row.kvcache_num_blocks, row.problems) for row in found}


@pytest.mark.parametrize("step", COPY_STEPS)
def test_killed_copy_is_incomplete_then_finished(bucket: BucketFixture, cr13_artifact: Path, step: str) -> None:
    bucket.upload(cr13_artifact, "fleet/qwen")
    source = bucket.objects("fleet/qwen/")
    src, out = bucket.url("fleet/qwen"), bucket.url("fleet/qwen-12")
    killed = drive("copy", src, out, "12", step=step)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    seen = rows(bucket)
    assert seen[src][:2] == ("ok", 21)
    assert seen[out][0] == "invalid"  # never taken for an artifact, and named for what stopped
    assert f"{out} is incomplete: a resize to a copy (process " in seen[out][2][0], seen[out][2]
    again = drive("copy", src, out, "12")
    assert again.returncode == 0, again.stderr
    assert rows(bucket)[out][:2] == ("ok", 12)
    assert bucket.objects("fleet/qwen/") == source
    assert not [k for k in bucket.objects() if ".rbln-studio" in k]


@pytest.mark.parametrize("step", IN_PLACE_STEPS)
def test_killed_in_place_keeps_one_count_then_finishes(bucket: BucketFixture, cr13_artifact: Path, step: str) -> None:
    bucket.upload(cr13_artifact, "fleet/qwen")
    url = bucket.url("fleet/qwen")
    killed = drive("in-place", url, "12", step=step)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    artifact = open_bucket_artifact(parse_bucket_prefix(url))
    assert artifact.status.value == "ok"
    assert artifact.config.kvcache_num_blocks == (12 if step == "resize.done" else 21)
    again = drive("in-place", url, "12")  # its lock was left by a process that is gone: taken over
    assert again.returncode == 0, again.stderr
    assert open_bucket_artifact(parse_bucket_prefix(url)).config.kvcache_num_blocks == 12
    assert not [k for k in bucket.objects() if ".rbln-studio" in k]
