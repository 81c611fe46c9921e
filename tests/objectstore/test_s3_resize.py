"""Resizing artifacts in a bucket gives what the same resize gives on disk: in place, and into copies across kinds."""

from __future__ import annotations

import shutil
from pathlib import Path

from harness import artifact_state, tree_digest

from objectstore.conftest import BucketFixture
from rbln_artifact_studio.core.location import LocalFolder, parse_bucket_prefix
from rbln_artifact_studio.core.operations.resize import resize_in_place
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
from rbln_artifact_studio.objectstore.artifacts import open_bucket_artifact
from rbln_artifact_studio.objectstore.resize import (
    resize_bucket_in_place,
    resize_bucket_to_copy,
    resize_bucket_to_folder,
    resize_folder_to_bucket,
)


def download(bucket: BucketFixture, prefix: str, folder: Path) -> Path:
    """The objects below prefix as a local folder (what `aws s3 cp --recursive` leaves)."""
    for key in bucket.objects(prefix + "/"):
        path = folder / key[len(prefix) + 1 :]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(bucket.get(key))
    return folder


def locally_resized(source: Path, target: int, tmp_path: Path) -> dict[str, object]:
    reference = Path(shutil.copytree(source, tmp_path / "reference"))
    resize_in_place(reference, target)
    return artifact_state(reference)


def test_resize_in_place_matches_the_local_resize(
    bucket: BucketFixture, weighty_artifact: Path, tmp_path: Path
) -> None:
    bucket.upload(weighty_artifact, "fleet/tiny")
    prefix = parse_bucket_prefix(bucket.url("fleet/tiny"))
    result = resize_bucket_in_place(ResizeRequest(prefix, 3))
    assert (result.previous, result.target, str(result.where)) == (4, 3, bucket.url("fleet/tiny"))
    assert open_bucket_artifact(prefix).config.kvcache_num_blocks == 3
    after = download(bucket, "fleet/tiny", tmp_path / "after")
    assert artifact_state(after) == locally_resized(weighty_artifact, 3, tmp_path)  # payloads byte for byte too
    assert not [k for k in bucket.objects() if ".rbln-studio" in k]  # no lock or probe left behind


def test_resize_to_a_copy_in_the_bucket_leaves_the_source(
    bucket: BucketFixture, weighty_artifact: Path, tmp_path: Path
) -> None:
    bucket.upload(weighty_artifact, "fleet/tiny")
    before = bucket.objects("fleet/tiny/")
    source, output = parse_bucket_prefix(bucket.url("fleet/tiny")), parse_bucket_prefix(bucket.url("fleet/tiny-3"))
    result = resize_bucket_to_copy(ResizeRequest(source, 3, output=output))
    assert (result.target, result.bytes_copied) == (3, sum(p.stat().st_size for p in weighty_artifact.iterdir()))
    assert bucket.objects("fleet/tiny/") == before
    copy = download(bucket, "fleet/tiny-3", tmp_path / "copy")
    assert artifact_state(copy) == locally_resized(weighty_artifact, 3, tmp_path)
    again = resize_bucket_to_copy(ResizeRequest(source, 3, output=output))  # the same: found there, nothing written
    assert again.already_done
    assert not [k for k in bucket.objects() if ".rbln-studio" in k]


def test_copy_from_a_bucket_to_a_folder_and_back(bucket: BucketFixture, weighty_artifact: Path, tmp_path: Path) -> None:
    up = parse_bucket_prefix(bucket.url("up/tiny"))
    resize_folder_to_bucket(ResizeRequest(LocalFolder(weighty_artifact), 3, output=up))
    expected = locally_resized(weighty_artifact, 3, tmp_path)
    assert artifact_state(download(bucket, "up/tiny", tmp_path / "uploaded")) == expected
    source_digest = tree_digest(weighty_artifact)
    down = resize_bucket_to_folder(ResizeRequest(up, 4, output=LocalFolder(tmp_path / "down")))
    assert down.where == LocalFolder(tmp_path / "down")
    reference = Path(shutil.copytree(weighty_artifact, tmp_path / "reference-4"))
    assert artifact_state(tmp_path / "down")["count"] == 4
    assert artifact_state(tmp_path / "down")["bodies"] == artifact_state(reference)["bodies"]
    assert tree_digest(weighty_artifact) == source_digest


def test_output_beside_a_bucket_is_a_prefix_or_a_folder_here() -> None:
    from rbln_artifact_studio.core.location import BucketPrefix, LocalFolder, parse_beside

    source = BucketPrefix("models", "fleet/a")
    assert parse_beside("fleet/a-12", source) == BucketPrefix("models", "fleet/a-12")
    assert parse_beside("/srv/copies/a-12", source) == LocalFolder(Path("/srv/copies/a-12"))
    assert parse_beside("./a-12", source) == LocalFolder(Path("./a-12"))
