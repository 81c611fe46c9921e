"""One odd object never ends a bucket scan: keys holding TAB, LF or DEL (legal in S3) are listed and read like any
other, and an object removed between the listing and its read is one row saying so, not a store that is down."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from objectstore.conftest import BucketFixture
from rbln_artifact_studio.core.location import parse_bucket_prefix
from rbln_artifact_studio.objectstore.scan import scan_bucket

Run = Callable[..., subprocess.CompletedProcess[str]]


def test_keys_with_control_characters_do_not_end_the_scan(
    bucket: BucketFixture, cr13_artifact: Path, run_cli: Run
) -> None:
    bucket.upload(cr13_artifact, "fleet/qwen")
    bucket.upload(cr13_artifact, "fleet/odd\nname")  # an artifact whose prefix holds a line feed
    for key in ("fleet/qwen/notes\tdraft.txt", "fleet/stray\x7f", "fleet/tab\there/readme"):
        bucket.client.put_object(Bucket=bucket.name, Key=key, Body=b"not an artifact")
    scanned = run_cli("scan", bucket.url("fleet"), "--json", "--no-cache")
    assert scanned.returncode == 0, scanned.stderr
    rows = {row["path"]: row for row in json.loads(scanned.stdout)}
    assert set(rows) == {bucket.url("fleet/odd\nname"), bucket.url("fleet/qwen")}
    assert all((row["status"], row["kvcache_num_blocks"]) == ("ok", 21) for row in rows.values())
    text = run_cli("scan", bucket.url("fleet"), "--no-cache")  # the text table: one line per row, escaped
    assert text.returncode == 0, text.stderr
    assert "credentials" not in text.stderr


def test_an_object_removed_mid_scan_is_one_row(bucket: BucketFixture, cr13_artifact: Path) -> None:
    for name in ("a", "b", "c", "d"):
        bucket.upload(cr13_artifact, f"fleet/{name}")
    rows = scan_bucket(parse_bucket_prefix(bucket.url("fleet")), use_cache=False, window=1)
    first = next(rows)  # listed; "b" is being read, "c" not yet
    bucket.client.delete_object(Bucket=bucket.name, Key="fleet/c/rbln_config.json")
    rest = list(rows)
    assert [first.status.value] + [r.status.value for r in rest] == ["ok", "ok", "invalid", "ok"]
    [problem] = rest[1].problems
    gone = bucket.url("fleet/c/rbln_config.json")
    assert problem.startswith(f"{gone} was listed but is gone now"), problem
    assert "Cannot reach" not in problem and "credentials" not in problem
