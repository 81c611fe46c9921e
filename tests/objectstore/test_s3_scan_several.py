"""`scan` of several places at once takes buckets too: each prefix read through its kind, as `scan` reads it alone,
one table; a bucket that cannot be read is an invalid row with its reason."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from objectstore.conftest import BucketFixture

Run = Callable[..., subprocess.CompletedProcess[str]]


def test_several_bucket_prefixes_in_one_scan(bucket: BucketFixture, cr13_artifact: Path, run_cli: Run) -> None:
    bucket.upload(cr13_artifact, "a/qwen")
    bucket.upload(cr13_artifact, "b/qwen")
    alone = [json.loads(run_cli("scan", bucket.url(p), "--json").stdout) for p in ("a", "b")]
    both = run_cli("scan", bucket.url("a"), bucket.url("b"), "--json")
    assert both.returncode == 0, both.stderr
    assert json.loads(both.stdout) == alone[0] + alone[1]
    assert [r["path"] for r in json.loads(both.stdout)] == [bucket.url("a/qwen"), bucket.url("b/qwen")]

    missing = run_cli("scan", bucket.url("a"), "s3://no-such-bucket/x", "--json")
    assert missing.returncode == 3
    ok, failed = json.loads(missing.stdout)
    assert ok == alone[0][0] and failed["path"] == "s3://no-such-bucket/x" and failed["status"] == "invalid"
    assert "no bucket 'no-such-bucket'" in json.dumps(failed), failed
