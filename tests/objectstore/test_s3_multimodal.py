"""A multimodal model (LLaVA, its language model from the simulator) resizes in a bucket as it does on disk: its
language model's graphs and both configs (the model's nested section and the language model's own), in place, into
a copy in the bucket, and across a bucket and a folder here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from harness import tree_digest
from kind_fixtures import simulated_llava

from objectstore.conftest import BucketFixture
from objectstore.test_s3_resize import download
from rbln_artifact_studio.core.fleet.artifact import open_artifact
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
from rbln_artifact_studio.objectstore.scan import scan_bucket


@pytest.fixture
def llava(tmp_path: Path) -> Path:
    return simulated_llava(tmp_path / "made" / "llava")


def counts(folder: Path) -> tuple[int, int]:
    """The language model's count and the model's nested copy of it."""
    own = json.loads((folder / "language_model" / "rbln_config.json").read_text())["kvcache_num_blocks"]
    nested = json.loads((folder / "rbln_config.json").read_text())["language_model"]["kvcache_num_blocks"]
    return own, nested


def resized_here(llava: Path, target: int, tmp_path: Path) -> dict[str, str]:
    reference = Path(shutil.copytree(llava, tmp_path / "reference"))
    resize_in_place(reference, target)
    return tree_digest(reference)


def test_in_place_gives_what_the_local_resize_gives(bucket: BucketFixture, llava: Path, tmp_path: Path) -> None:
    bucket.upload(llava, "fleet/llava")
    prefix = parse_bucket_prefix(bucket.url("fleet/llava"))
    opened = open_bucket_artifact(prefix)
    assert opened.kind.value == "multimodal"  # the bucket's artifact is known for what it is
    previous = opened.config.kvcache_num_blocks
    result = resize_bucket_in_place(ResizeRequest(prefix, previous - 2))
    assert (result.previous, result.target) == (previous, previous - 2)
    after = download(bucket, "fleet/llava", tmp_path / "after")
    assert counts(after) == (previous - 2, previous - 2)
    assert tree_digest(after) == resized_here(llava, previous - 2, tmp_path)  # every byte as on disk
    assert open_bucket_artifact(prefix).status.value == "ok"
    assert not [k for k in bucket.objects() if ".rbln-studio" in k]


def test_copy_in_the_bucket_and_across_to_a_folder_and_back(bucket: BucketFixture, llava: Path, tmp_path: Path) -> None:
    bucket.upload(llava, "fleet/llava")
    before = bucket.objects("fleet/llava/")
    source = parse_bucket_prefix(bucket.url("fleet/llava"))
    previous = open_bucket_artifact(source).config.kvcache_num_blocks
    resize_bucket_to_copy(
        ResizeRequest(source, previous - 1, output=parse_bucket_prefix(bucket.url("fleet/llava-copy")))
    )
    assert bucket.objects("fleet/llava/") == before
    copy = download(bucket, "fleet/llava-copy", tmp_path / "copy")
    assert tree_digest(copy) == resized_here(llava, previous - 1, tmp_path)
    rows = {r.path: r.status.value for r in scan_bucket(parse_bucket_prefix(bucket.url("fleet")), use_cache=False)}
    assert rows == {bucket.url("fleet/llava"): "ok", bucket.url("fleet/llava-copy"): "ok"}

    here = tmp_path / "here"
    resize_bucket_to_folder(ResizeRequest(source, previous - 3, output=LocalFolder(here)))
    assert counts(here) == (previous - 3, previous - 3) and open_artifact(here).status.value == "ok"
    back = parse_bucket_prefix(bucket.url("fleet/back"))
    resize_folder_to_bucket(ResizeRequest(LocalFolder(here), previous, output=back))
    assert sorted(k[len("fleet/back/") :] for k in bucket.objects("fleet/back/")) == sorted(
        p.relative_to(llava).as_posix() for p in llava.rglob("*") if p.is_file()
    )
    assert counts(download(bucket, "fleet/back", tmp_path / "back")) == (previous, previous)
    assert bucket.objects("fleet/llava/") == before


def test_a_multimodal_model_is_read_where_it_lives_through_the_bucket_s_file_access(
    bucket: BucketFixture, llava: Path, cr13_artifact: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bucket's reader copies nothing here (no temporary folder laid out and renamed back): its paths are the
    keys', its verdict the local one; and the bucket as a plain file access (list, read, read a range) gives core's
    generic reader the same rows as the bucket's own scan."""
    import tempfile

    from rbln_artifact_studio.core.fleet.file_access import scan_through
    from rbln_artifact_studio.objectstore.artifacts import BucketAccess
    from rbln_artifact_studio.objectstore.store import Bucket

    bucket.upload(llava, "fleet/llava")
    bucket.upload(cr13_artifact, "fleet/qwen")

    def no_copy(*args: object, **kwargs: object) -> object:
        raise AssertionError("a bucket's artifact was copied into a temporary folder to be read")

    monkeypatch.setattr(tempfile, "TemporaryDirectory", no_copy)
    monkeypatch.setattr(tempfile, "mkdtemp", no_copy)
    prefix = parse_bucket_prefix(bucket.url("fleet/llava"))
    opened, local = open_bucket_artifact(prefix), open_artifact(llava)
    assert opened.where == prefix and opened.kind.value == "multimodal"
    assert opened.model_dir == Path("/fleet/llava/language_model") and opened.status == local.status
    assert [g.path for g in opened.graph_files] == [
        Path("/fleet/llava") / g.path.relative_to(llava) for g in local.graph_files
    ]
    assert opened.breakdown() == local.breakdown() and opened.colocated.stacked == local.colocated.stacked

    root = parse_bucket_prefix(bucket.url("fleet"))
    own = list(scan_bucket(root, use_cache=False))
    generic = list(scan_through(BucketAccess(Bucket(bucket.name)), root, "/fleet"))
    fields = ("path", "name", "status", "kind", "kvcache_num_blocks", "num_full_blocks", "problems", "size_on_disk")
    assert [[getattr(r, f) for f in fields] for r in generic] == [[getattr(r, f) for f in fields] for r in own]
    assert [r.name for r in own] == ["llava", "qwen"]


def test_a_multimodal_model_at_a_bucket_s_root_names_its_files_by_their_urls(
    bucket: BucketFixture, llava: Path
) -> None:
    """Read where it lives, an artifact at the bucket's root still says which object is wrong as a URL."""
    from rbln_artifact_studio.core.errors import StudioError

    (llava / "language_model" / "rbln_config.json").write_text("{not json")
    for path in sorted(p for p in llava.rglob("*") if p.is_file()):  # keys at the bucket's root: "rbln_config.json"
        bucket.client.upload_file(str(path), bucket.name, path.relative_to(llava).as_posix())
    with pytest.raises(StudioError) as caught:
        open_bucket_artifact(parse_bucket_prefix(bucket.url()))
    assert f"{bucket.url()}/language_model/rbln_config.json" in caught.value.message, caught.value.message
