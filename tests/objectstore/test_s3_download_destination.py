"""`download SRC DEST`: DEST is a location parsed once, as every destination is: a bucket's URL is refused with
what to run instead, and nothing is written here (no `s3:` folder made from the URL's text)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import cli_command, cli_env

from objectstore.conftest import BucketFixture


def test_a_bucket_as_the_destination_is_refused_and_nothing_is_made_here(
    bucket: BucketFixture, cr13_artifact: Path, tmp_path: Path
) -> None:
    bucket.upload(cr13_artifact, "fleet/qwen")
    started = tmp_path / "started-here"
    started.mkdir()
    done = subprocess.run(
        [*cli_command(), "download", bucket.url("fleet/qwen"), bucket.url("copies/qwen")],
        capture_output=True,
        text=True,
        env=cli_env(),
        cwd=started,
        timeout=120,
    )
    assert done.returncode == 1 and done.stderr.startswith("error: ") and "Traceback" not in done.stderr
    assert "a prefix in a bucket" in done.stderr and "--output-dir" in done.stderr, done.stderr
    assert list(started.iterdir()) == []  # no ./s3:/… folders
    assert bucket.objects("copies/") == {}  # nor anything in the bucket


def test_a_check_of_a_new_output_folder_makes_no_folder(tmp_path: Path) -> None:
    from rbln_artifact_studio.core.storage.fsutil import check_new_output_dir

    wanted = tmp_path / "a" / "b" / "copy"
    assert check_new_output_dir(wanted) == wanted
    assert list(tmp_path.iterdir()) == []  # the parents are made when the copy is written, not when checked
