"""Reading artifacts in a bucket: scan rows and inspect verdicts equal the local ones, from metadata only."""

from __future__ import annotations

import shutil
from pathlib import Path

from objectstore.conftest import BucketFixture
from rbln_artifact_studio.core.fleet.artifact import open_artifact
from rbln_artifact_studio.core.fleet.scan import scan
from rbln_artifact_studio.core.location import parse_bucket_prefix
from rbln_artifact_studio.objectstore.artifacts import open_bucket_artifact
from rbln_artifact_studio.objectstore.scan import scan_bucket


def test_scan_rows_match_the_local_scan(bucket: BucketFixture, cr13_artifact: Path, tmp_path: Path) -> None:
    fleet = tmp_path / "fleet"
    shutil.copytree(cr13_artifact, fleet / "team-a" / "qwen-a")
    shutil.copytree(cr13_artifact, fleet / "team-b" / "qwen-b")
    (fleet / "team-b" / "qwen-b" / "prefill.rbln").write_bytes(b"")  # damaged: empty
    bucket.upload(fleet, "fleet")
    local = {row.name: row for row in scan(fleet, use_cache=False)}
    remote = {row.name: row for row in scan_bucket(parse_bucket_prefix(bucket.url("fleet")), use_cache=False)}
    assert set(remote) == {"qwen-a", "qwen-b"}
    for name, row in remote.items():
        assert row.path == bucket.url(f"fleet/{local[name].path.split('/fleet/', 1)[1]}")
        assert (row.status, row.kvcache_num_blocks, row.size_on_disk) == (
            local[name].status,
            local[name].kvcache_num_blocks,
            local[name].size_on_disk,
        )
        assert [p.replace(bucket.url("fleet"), "") for p in row.problems] == [
            p.replace(str(fleet), "") for p in local[name].problems
        ]
    assert remote["qwen-a"].status.value == "ok"
    assert remote["qwen-b"].status.value == "invalid"


def test_inspect_reads_headers_only(bucket: BucketFixture, cr13_artifact: Path) -> None:
    bucket.upload(cr13_artifact, "models/qwen")
    prefix = parse_bucket_prefix(bucket.url("models/qwen"))
    artifact = open_bucket_artifact(prefix)
    local = open_artifact(cr13_artifact)
    assert str(artifact.where) == bucket.url("models/qwen")
    assert artifact.config.kvcache_num_blocks == local.config.kvcache_num_blocks
    assert artifact.headers == local.headers
    assert artifact.status == local.status


def test_a_scan_never_fetches_a_payload(bucket: BucketFixture, weighty_artifact: Path) -> None:
    """A 15 MB prefill.rbln (weights materialized): the scan reads its header's used bytes, not its payload."""
    from rbln_artifact_studio.objectstore.store import Bucket

    bucket.upload(weighty_artifact, "fleet/tiny")
    reader = Bucket(bucket.name)
    [row] = scan_bucket(parse_bucket_prefix(bucket.url("fleet")), use_cache=False, bucket=reader)
    assert row.status.value == "ok" and row.size_on_disk > 15_000_000
    configs = sum(p.stat().st_size for p in weighty_artifact.glob("*.json"))
    assert reader.bytes_read <= configs + 2 * 2 * (4096 + 16 * 1024)  # two graphs: preamble and two slots' starts
