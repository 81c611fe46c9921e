"""Resized copies between a bucket and a folder on a server (a real SeaweedFS and a real sshd): both directions,
an output that exists refused, clear errors, and a cancel or a kill mid-copy leaving the source as it was and no
copy that a scan calls ok."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.helpers import leftovers, wait_for
from harness import ENV_STEP
from harness import cli_env as fault_env
from remote.conftest import (  # noqa: F401 (the server's fixtures, used by name)
    Run,
    SshServer,
    control_dir,
    remote_cli,
    server,
    ssh_server,
    url,
)
from remote.test_remote_scan import tree_state

from objectstore.conftest import BucketFixture
from objectstore.seaweed import READER_KEY, READER_SECRET
from rbln_artifact_studio.core.errors import CancelledError
from rbln_artifact_studio.core.fleet.artifact import open_artifact
from rbln_artifact_studio.core.location import ServerFolder, parse_bucket_prefix, parse_location
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.core.storage.jsonfile import read_block_count
from rbln_artifact_studio.objectstore.artifacts import open_bucket_artifact
from rbln_artifact_studio.objectstore.scan import scan_bucket
from rbln_artifact_studio.places import dispatch
from rbln_artifact_studio.places.kind import Report
from rbln_artifact_studio.remote import registry


@pytest.fixture
def staging_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temp folder copies pass through on this computer (TMPDIR, for the CLI and for this process)."""
    folder = tmp_path / "here-tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr("tempfile.tempdir", None)  # gettempdir() reads TMPDIR again
    return folder


@pytest.fixture
def in_process(server: SshServer, control_dir: Path) -> Iterator[None]:  # noqa: F811
    """This process reaches the test server as the CLI does (its ssh_config, a private socket folder)."""
    registry.configure(server.options(control_dir))
    yield
    registry.configure()


def nothing_staged(folder: Path) -> bool:
    return not [p for p in folder.rglob("*") if p.is_file()]


def bucket_rows(bucket: BucketFixture, prefix: str) -> dict[str, str]:
    return {row.path: row.status.value for row in scan_bucket(parse_bucket_prefix(bucket.url(prefix)), use_cache=False)}


def test_copy_from_a_bucket_to_a_server_and_back(
    bucket: BucketFixture,
    cr13_artifact: Path,
    remote_cli: Run,  # noqa: F811
    tmp_path: Path,
    staging_here: Path,
) -> None:
    bucket.upload(cr13_artifact, "fleet/qwen")
    source = bucket.objects("fleet/qwen/")
    on_server = tmp_path / "srv" / "copies" / "qwen-12"  # its parent does not exist yet: made there
    down = remote_cli(
        "set-kvcache-num-blocks", bucket.url("fleet/qwen"), "12", "--output-dir", url(on_server), "--json"
    )
    assert down.returncode == 0, down.stderr
    data = json.loads(down.stdout)
    assert (data["path"], data["previous_kvcache_num_blocks"], data["kvcache_num_blocks"]) == (url(on_server), 21, 12)
    copy = open_artifact(on_server)
    assert copy.status.value == "ok" and read_block_count(on_server) == 12
    assert sorted(p.name for p in on_server.iterdir()) == sorted(p.name for p in cr13_artifact.iterdir())
    assert leftovers(on_server.parent) == [] and nothing_staged(staging_here)
    assert bucket.objects("fleet/qwen/") == source  # the bucket was only read

    before = tree_state(on_server)
    up = remote_cli("set-kvcache-num-blocks", url(on_server), "14", "--output-dir", bucket.url("fleet/back"))
    assert up.returncode == 0, up.stderr
    assert up.stdout.strip().endswith(f"Set kvcache_num_blocks to 14 for artifact at {bucket.url('fleet/back')}")
    back = open_bucket_artifact(parse_bucket_prefix(bucket.url("fleet/back")))
    assert back.status.value == "ok" and back.config.kvcache_num_blocks == 14
    assert tree_state(on_server) == before and not (on_server / ".rbln-studio.lock").exists()
    assert not [k for k in bucket.objects() if ".rbln-studio" in k] and nothing_staged(staging_here)


def test_an_output_that_exists_is_refused_both_ways(
    bucket: BucketFixture,
    cr13_artifact: Path,
    remote_cli: Run,  # noqa: F811
    tmp_path: Path,
    staging_here: Path,
) -> None:
    bucket.upload(cr13_artifact, "fleet/qwen")
    taken = tmp_path / "srv" / "taken"
    taken.mkdir(parents=True)
    (taken / "notes.txt").write_text("someone's")
    down = remote_cli("set-kvcache-num-blocks", bucket.url("fleet/qwen"), "12", "--output-dir", url(taken))
    assert down.returncode == 1 and "Traceback" not in down.stderr
    assert f"The output folder {url(taken)} exists and is not empty" in down.stderr
    assert [p.name for p in taken.iterdir()] == ["notes.txt"] and leftovers(taken.parent) == []

    bucket.client.put_object(Bucket=bucket.name, Key="fleet/full/readme", Body=b"x")
    up = remote_cli("set-kvcache-num-blocks", url(cr13_artifact), "12", "--output-dir", bucket.url("fleet/full"))
    assert up.returncode == 1 and "Traceback" not in up.stderr
    assert f"The output {bucket.url('fleet/full')} is not empty" in up.stderr
    assert list(bucket.objects("fleet/full/")) == ["fleet/full/readme"] and nothing_staged(staging_here)


def test_unreachable_server_and_denied_bucket_are_clear_errors(
    bucket: BucketFixture,
    cr13_artifact: Path,
    remote_cli: Run,  # noqa: F811
    tmp_path: Path,
    staging_here: Path,
) -> None:
    bucket.upload(cr13_artifact, "fleet/qwen")
    gone = remote_cli(
        "set-kvcache-num-blocks", bucket.url("fleet/qwen"), "12", "--output-dir", "ssh://no-such-host.invalid/srv/x"
    )
    assert gone.returncode == 1 and "Traceback" not in gone.stderr
    assert "Cannot reach no-such-host.invalid" in gone.stderr
    missing = remote_cli(
        "set-kvcache-num-blocks", "s3://no-such-bucket/qwen", "12", "--output-dir", url(tmp_path / "x")
    )
    assert missing.returncode == 1 and "no bucket 'no-such-bucket'" in missing.stderr, missing.stderr
    reader = {"AWS_ACCESS_KEY_ID": READER_KEY, "AWS_SECRET_ACCESS_KEY": READER_SECRET}
    denied = remote_cli(
        "set-kvcache-num-blocks", url(cr13_artifact), "12", "--output-dir", bucket.url("fleet/up"), env=reader
    )
    assert denied.returncode == 1 and "Traceback" not in denied.stderr
    assert "denied" in denied.stderr.lower(), denied.stderr
    assert not (tmp_path / "x").exists() and nothing_staged(staging_here)
    assert not bucket.objects("fleet/up/")


def test_a_cancel_mid_copy_leaves_nothing_on_the_server(
    bucket: BucketFixture, weighty_artifact: Path, in_process: None, tmp_path: Path, staging_here: Path
) -> None:
    bucket.upload(weighty_artifact, "fleet/tiny")
    source = bucket.objects("fleet/tiny/")
    output = tmp_path / "srv" / "tiny-3"
    cancel = CancelToken()
    sent: list[int] = []

    def progress(done: int, total: int, message: str) -> None:
        if message.startswith("Sending") and done:
            sent.append(done)
            cancel.cancel()  # the first bytes are on their way to the server

    order = ResizeRequest(parse_bucket_prefix(bucket.url("fleet/tiny")), 3, output=parse_location(url(output)))
    with pytest.raises(CancelledError, match=r"Cancelled before .* was written\. Nothing was changed\."):
        dispatch.resize(order, Report(progress=progress, cancel=cancel))
    assert sent, "the cancel came while the files were sent"
    assert not output.exists() and leftovers(output.parent) == []  # the server removed its staging folder
    assert bucket.objects("fleet/tiny/") == source and nothing_staged(staging_here)


def test_a_cancel_mid_fetch_leaves_the_bucket_and_the_server_as_they_were(
    bucket: BucketFixture, weighty_artifact: Path, in_process: None, staging_here: Path
) -> None:
    before = tree_state(weighty_artifact)
    cancel = CancelToken()

    def progress(done: int, total: int, message: str) -> None:
        if message.startswith("Fetching") and done:
            cancel.cancel()

    order = ResizeRequest(
        ServerFolder("npu-test", str(weighty_artifact)), 3, output=parse_bucket_prefix(bucket.url("up"))
    )
    with pytest.raises(CancelledError):
        dispatch.resize(order, Report(progress=progress, cancel=cancel))
    assert not bucket.objects() and nothing_staged(staging_here)
    wait_for(lambda: not (weighty_artifact / ".rbln-studio.lock").exists(), what="the server's lock released")
    assert tree_state(weighty_artifact) == before


def _killed(args: list[str], step: str, server: SshServer, control_dir: Path) -> None:  # noqa: F811
    from conftest import cli_command

    env = fault_env({ENV_STEP: step, "RBLN_STUDIO_SSH_CONFIG": str(server.client_config)})
    env["XDG_RUNTIME_DIR"] = str(control_dir)
    env.update((k, v) for k, v in os.environ.items() if k.startswith("AWS_") or k == "TMPDIR")
    done = subprocess.run([*cli_command(), *args], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == -signal.SIGKILL, done.stderr


def test_a_copy_to_a_server_killed_mid_way_leaves_no_artifact_there(
    bucket: BucketFixture,
    cr13_artifact: Path,
    server: SshServer,  # noqa: F811
    control_dir: Path,  # noqa: F811
    remote_cli: Run,  # noqa: F811
    tmp_path: Path,
    staging_here: Path,
) -> None:
    bucket.upload(cr13_artifact, "fleet/qwen")
    source = bucket.objects("fleet/qwen/")
    output = tmp_path / "srv" / "qwen-12"
    args = ["set-kvcache-num-blocks", bucket.url("fleet/qwen"), "12", "--output-dir", url(output)]
    _killed(args, "transfer.sent.0", server, control_dir)
    assert not output.exists()
    # The server's receive sees its input end and removes the staging folder (a scan never enters it meanwhile).
    wait_for(lambda: leftovers(output.parent) == [], what="the server's staging folder removed")
    assert bucket.objects("fleet/qwen/") == source
    again = remote_cli(*args)  # the staging folder the killed run left here is cleaned by the next copy
    assert again.returncode == 0, again.stderr
    assert read_block_count(output) == 12 and nothing_staged(staging_here)


def test_a_copy_from_a_server_killed_mid_upload_is_incomplete_then_finished(
    bucket: BucketFixture,
    cr13_artifact: Path,
    server: SshServer,  # noqa: F811
    control_dir: Path,  # noqa: F811
    remote_cli: Run,  # noqa: F811
    staging_here: Path,
) -> None:
    before = tree_state(cr13_artifact)
    out = bucket.url("fleet/up")
    args = ["set-kvcache-num-blocks", url(cr13_artifact), "12", "--output-dir", out]
    for step in ("transfer.fetched", "copy.object.0"):
        _killed(args, step, server, control_dir)
        rows = bucket_rows(bucket, "fleet")
        assert rows.get(out, "invalid") == "invalid"  # nothing there, or a prefix scans call incomplete
        assert tree_state(cr13_artifact) == before
    again = remote_cli(*args)
    assert again.returncode == 0, again.stderr
    assert bucket_rows(bucket, "fleet") == {out: "ok"}
    assert not [k for k in bucket.objects() if ".rbln-studio" in k] and nothing_staged(staging_here)


def test_a_multimodal_model_goes_to_a_server_and_back(
    bucket: BucketFixture,
    remote_cli: Run,  # noqa: F811
    tmp_path: Path,
    staging_here: Path,
) -> None:
    from kind_fixtures import simulated_llava

    llava = simulated_llava(tmp_path / "made" / "llava", kvcache_num_blocks=8)
    bucket.upload(llava, "fleet/llava")
    on_server = tmp_path / "srv" / "llava-6"
    down = remote_cli("set-kvcache-num-blocks", bucket.url("fleet/llava"), "6", "--output-dir", url(on_server))
    assert down.returncode == 0, down.stderr
    nested = json.loads((on_server / "rbln_config.json").read_text())["language_model"]["kvcache_num_blocks"]
    assert (read_block_count(on_server / "language_model"), nested) == (6, 6)
    assert open_artifact(on_server).status.value == "ok"
    up = remote_cli("set-kvcache-num-blocks", url(on_server), "7", "--output-dir", bucket.url("fleet/llava-7"))
    assert up.returncode == 0, up.stderr
    back = open_bucket_artifact(parse_bucket_prefix(bucket.url("fleet/llava-7")))
    assert (back.status.value, back.kind.value, back.config.kvcache_num_blocks) == ("ok", "multimodal", 7)
    assert len(bucket.objects("fleet/llava-7/")) == len(bucket.objects("fleet/llava/")) and nothing_staged(staging_here)
