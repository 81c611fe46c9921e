"""`rbln-studio-cli download`: a bucket's artifact copied here as it is, whole; a destination that holds files, an
artifact that is not there and a local folder are refused with the reason, and nothing is written."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from conftest import same_files

from objectstore.conftest import BucketFixture

Run = Callable[..., subprocess.CompletedProcess[str]]


def test_a_bucket_artifact_downloads_whole(
    run_cli: Run, bucket: BucketFixture, cr13_artifact: Path, tmp_path: Path
) -> None:
    bucket.upload(cr13_artifact, "fleet/qwen")
    dest = tmp_path / "here" / "qwen"
    done = run_cli("download", bucket.url("fleet/qwen"), dest, "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["output"] == str(dest) and answer["bytes"] == sum(
        p.stat().st_size for p in cr13_artifact.rglob("*") if p.is_file()
    )
    assert same_files(cr13_artifact, dest)
    assert [p.name for p in dest.parent.iterdir()] == ["qwen"]  # no staging folder left beside it
    got = run_cli("get-kvcache-num-blocks", dest)
    assert got.returncode == 0 and got.stdout.strip() == run_cli("get-kvcache-num-blocks", cr13_artifact).stdout.strip()

    again = run_cli("download", bucket.url("fleet/qwen"), dest)
    assert again.returncode == 1 and again.stderr.startswith("error: ") and "Traceback" not in again.stderr
    assert same_files(cr13_artifact, dest)  # the earlier copy is untouched


def test_what_cannot_be_downloaded_is_refused_and_nothing_written(
    run_cli: Run, bucket: BucketFixture, cr13_artifact: Path, tmp_path: Path
) -> None:
    bucket.upload(cr13_artifact, "fleet/qwen")
    missing = run_cli("download", bucket.url("fleet/nothing-here"), tmp_path / "a")
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert missing.stderr.startswith(f"error: {bucket.url('fleet/nothing-here')}"), missing.stderr
    local = run_cli("download", cr13_artifact, tmp_path / "b")
    assert local.returncode == 1
    assert "is already on this computer; copy it with the file manager. Nothing was changed." in local.stderr
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging folder left either
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
