"""Outputs on a server or in a bucket, from the CLI (a real sshd and a real SeaweedFS): a compile for ssh:// or s3://
lands there and nowhere here, a local artifact's copy reaches a server, and an output that cannot take it is refused
before anything is compiled or written."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import cli_command, cli_env
from fakes.helpers import leftovers
from remote.conftest import (  # noqa: F401 (the server's fixtures, used by name)
    SshServer,
    control_dir,
    server,
    ssh_server,
    url,
)

from objectstore.conftest import BucketFixture
from rbln_artifact_studio.core.fleet.artifact import open_artifact
from rbln_artifact_studio.core.location import parse_bucket_prefix
from rbln_artifact_studio.core.storage.jsonfile import read_block_count
from rbln_artifact_studio.objectstore.artifacts import open_bucket_artifact
from rbln_artifact_studio.objectstore.scan import scan_bucket


@pytest.fixture
def here(tmp_path: Path) -> Path:
    """The folder the CLI runs in: a compile for a URL must leave nothing in it (no folder named ssh: or s3:)."""
    folder = tmp_path / "cwd"
    folder.mkdir()
    return folder


@pytest.fixture
def cli(server: SshServer, control_dir: Path, here: Path, tmp_path: Path):  # noqa: F811
    """The CLI as a user runs it: the test server's ssh_config, its own temp folder, started in `here`."""
    staging = tmp_path / "tmp"
    staging.mkdir()

    def run(*args: object) -> subprocess.CompletedProcess[str]:
        env = {
            **cli_env(),
            "RBLN_STUDIO_SSH_CONFIG": str(server.client_config),
            "XDG_RUNTIME_DIR": str(control_dir),
            "TMPDIR": str(staging),
        }
        return subprocess.run(
            [*cli_command(), *map(str, args)], capture_output=True, text=True, env=env, cwd=here, timeout=180
        )

    run.staging = staging  # type: ignore[attr-defined]
    return run


def _compile(cli, model: Path, output: str) -> subprocess.CompletedProcess[str]:
    return cli("compile", "--model-id", model, "-o", output, "--max-seq-len", "8192", "--json")


def nothing_staged(folder: Path) -> bool:
    return not [p for p in folder.rglob("*") if p.is_file()]


def test_a_compile_for_a_server_lands_there_and_nothing_here(cli, tiny_model: Path, here: Path, tmp_path: Path) -> None:
    on_server = tmp_path / "srv" / "compiled" / "tiny-cr13"  # its parent does not exist yet: made there
    made = _compile(cli, tiny_model, url(on_server))
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["path"] == url(on_server)
    assert open_artifact(on_server).status.value == "ok"
    assert os.listdir(here) == [] and nothing_staged(cli.staging)
    assert leftovers(on_server.parent) == []


def test_a_compile_for_a_bucket_lands_there_whole_and_nothing_here(
    cli, tiny_model: Path, here: Path, bucket: BucketFixture
) -> None:
    made = _compile(cli, tiny_model, bucket.url("fleet/tiny"))
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["path"] == bucket.url("fleet/tiny")
    rows = list(scan_bucket(parse_bucket_prefix(bucket.url("fleet")), use_cache=False))
    assert [(r.path, r.status.value) for r in rows] == [(bucket.url("fleet/tiny"), "ok")]
    artifact = open_bucket_artifact(parse_bucket_prefix(bucket.url("fleet/tiny")))
    assert artifact.config.kvcache_num_blocks == json.loads(made.stdout)["kvcache_num_blocks"]
    assert not [k for k in bucket.objects() if ".rbln-studio" in k]
    assert os.listdir(here) == [] and nothing_staged(cli.staging)


def test_a_compile_for_a_taken_place_is_refused_before_it_runs(
    cli, tiny_model: Path, here: Path, tmp_path: Path, bucket: BucketFixture
) -> None:
    taken = tmp_path / "srv" / "taken"
    taken.mkdir(parents=True)
    (taken / "notes.txt").write_text("someone's")
    refused = _compile(cli, tiny_model, url(taken))
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert "exists and is not empty" in refused.stderr
    assert [p.name for p in taken.iterdir()] == ["notes.txt"]

    bucket.client.put_object(Bucket=bucket.name, Key="fleet/full/readme", Body=b"x")
    refused = _compile(cli, tiny_model, bucket.url("fleet/full"))
    assert refused.returncode == 1 and f"The output {bucket.url('fleet/full')} is not empty" in refused.stderr
    assert list(bucket.objects("fleet/full/")) == ["fleet/full/readme"]
    assert os.listdir(here) == [] and nothing_staged(cli.staging)


def test_a_local_artifacts_copy_reaches_a_server(cli, cr13_artifact: Path, tmp_path: Path) -> None:
    on_server = tmp_path / "srv" / "qwen-12"
    copied = cli("set-kvcache-num-blocks", cr13_artifact, "12", "--output-dir", url(on_server), "--json")
    assert copied.returncode == 0, copied.stderr
    assert json.loads(copied.stdout)["path"] == url(on_server)
    assert read_block_count(on_server) == 12 and read_block_count(cr13_artifact) == 21
    assert nothing_staged(cli.staging) and leftovers(on_server.parent) == []
