"""One exit code whatever the place: an invalid artifact in a bucket exits 3 as the same one here (docs/cli.md)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from test_exit_code_rule import DAMAGE

from objectstore.conftest import BucketFixture

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.mark.parametrize("damage", ["string", "truncated"])
def test_an_invalid_artifact_exits_3_in_a_bucket_as_here(
    bucket: BucketFixture, cr13_artifact: Path, run_cli: Run, damage: str
) -> None:
    config = cr13_artifact / "rbln_config.json"
    config.write_bytes(DAMAGE[damage](config.read_bytes()))
    bucket.upload(cr13_artifact, "fleet/bad")
    for command in ("inspect", "serving"):
        here = run_cli(command, cr13_artifact)
        there = run_cli(command, bucket.url("fleet/bad"))
        assert here.returncode == there.returncode == 3, (command, here.stderr, there.stderr)
        assert there.stderr.startswith("error: ") and bucket.url("fleet/bad") in there.stderr, there.stderr
        assert "Traceback" not in there.stderr


def test_a_prefix_without_a_config_is_no_artifact(bucket: BucketFixture, cr13_artifact: Path, run_cli: Run) -> None:
    (cr13_artifact / "rbln_config.json").unlink()
    bucket.upload(cr13_artifact, "fleet/none")
    done = run_cli("inspect", bucket.url("fleet/none"))
    assert done.returncode == 1 and "not an artifact" in done.stderr, done.stderr
