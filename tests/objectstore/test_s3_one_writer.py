"""One writer per output prefix (a real SeaweedFS, the installed CLI): a compile or a copy into a prefix another live
writer holds is refused, and nothing the winner wrote is touched; a dead writer's leftovers are still cleared.

The race is made deterministic with the crash tests' fault hook: the first writer stops itself (SIGSTOP) at a named
step with its marker in the bucket, the second runs to its end, then the first is continued.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from pathlib import Path

import pytest
from harness import ENV_STEP, cli_command, cli_env, continued, stopped_at, tiny_model_config

from objectstore.conftest import BucketFixture
from objectstore.test_s3_cache_and_writers import paused_at  # noqa: F401 (a fixture, used by name)
from objectstore.test_s3_kills import rows
from objectstore.unconditional import unconditional_gateway
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import LocalFolder, parse_bucket_prefix
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
from rbln_artifact_studio.core.storage.fsutil import INCOMPLETE_MARKER
from rbln_artifact_studio.objectstore.resize import resize_bucket_to_copy, resize_folder_to_bucket
from rbln_artifact_studio.objectstore.scan import scan_bucket

SHAPE = ("--batch_size", "2", "--max_seq_len", "8192", "--kvcache_partition_len", "4096")


def cli(*args: object, step: str | None = None) -> subprocess.CompletedProcess[str]:
    env = cli_env({ENV_STEP: step} if step else {})
    return subprocess.run([*cli_command(), *map(str, args)], capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture
def large_model(tmp_path: Path) -> Path:
    """A model whose compile with --materialize_weights writes a graph of about 12 MiB (a multipart upload)."""
    folder = tmp_path / "large-model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(tiny_model_config(12)))
    return folder


def compile_args(model: Path, output: str, *more: str) -> list[object]:
    return ["compile", "--model-id", model, "-o", output, *SHAPE, *more, "--json"]


def one_whole_artifact(bucket: BucketFixture, url: str) -> None:
    """One artifact below race/ (the prefix both wrote into), whole, and no marker left anywhere."""
    scanned = [(r.path, r.status.value) for r in scan_bucket(parse_bucket_prefix(bucket.url("race")), use_cache=False)]
    assert scanned in ([(url, "ok")], [(url, "warning")]), scanned
    assert not [k for k in bucket.objects() if ".rbln-studio" in k]


def test_a_compile_into_a_prefix_a_compile_is_writing_is_refused_before_it_runs(
    bucket: BucketFixture, large_model: Path, tiny_model: Path
) -> None:
    url = bucket.url("race/r1")
    with stopped_at("copy.object.0", *compile_args(large_model, url, "--materialize_weights")) as first:
        held = bucket.objects("race/r1/")
        assert f"race/r1/{INCOMPLETE_MARKER}" in held
        second = cli(*compile_args(tiny_model, url))
        assert second.returncode == 1 and "Traceback" not in second.stderr, second.stderr
        assert f"{url} is being written by a compile (process {first.pid} on " in second.stderr, second.stderr
        assert "Nothing was changed." in second.stderr
        assert bucket.objects("race/r1/") == held  # the winner's keys and ETags, untouched
        done = continued(first)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["path"] == url
    one_whole_artifact(bucket, url)


def test_a_compile_that_finishes_second_leaves_the_first_whole(
    bucket: BucketFixture, large_model: Path, tiny_model: Path
) -> None:
    """The issue's race: the second compile checked the prefix while it was still empty, and comes to write while
    the first is uploading. Before, it took the first's marker for a stopped copy and deleted its objects."""
    url = bucket.url("race/r1")
    with (
        stopped_at("compile.config_written", *compile_args(tiny_model, url)) as late,  # checked, still compiling
        stopped_at("copy.object.0", *compile_args(large_model, url, "--materialize_weights")) as first,
    ):
        held = bucket.objects("race/r1/")
        refused = continued(late)
        assert refused.returncode == 1 and "Traceback" not in refused.stderr, refused.stderr
        assert f"{url} is being written by a compile (process {first.pid} on " in refused.stderr
        assert "Compiled" not in refused.stdout + refused.stderr
        assert bucket.objects("race/r1/") == held
        done = continued(first)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["path"] == url
    one_whole_artifact(bucket, url)


def test_a_resize_to_a_copy_into_a_prefix_being_written_is_refused(
    bucket: BucketFixture, weighty_artifact: Path, cr13_artifact: Path, tiny_model: Path
) -> None:
    bucket.upload(weighty_artifact, "fleet/tiny")
    source = bucket.objects("fleet/tiny/")
    out = bucket.url("race/r1")
    args = ("set-kvcache-num-blocks", bucket.url("fleet/tiny"), "12", "--output-dir", out)
    with stopped_at("multipart.started", *args) as first:
        held = bucket.objects("race/r1/")
        for second in (
            cli("set-kvcache-num-blocks", cr13_artifact, "12", "--output-dir", out),  # a folder here to the bucket
            cli("set-kvcache-num-blocks", bucket.url("fleet/tiny"), "14", "--output-dir", out),  # in the bucket
            cli(*compile_args(tiny_model, out)),
        ):
            assert second.returncode == 1 and "Traceback" not in second.stderr, second.stderr
            assert f"{out} is being written by a resize to a copy (process {first.pid} on " in second.stderr
        assert bucket.objects("race/r1/") == held
        done = continued(first)
    assert done.returncode == 0, done.stderr
    one_whole_artifact(bucket, out)
    assert rows(bucket)[out][1] == 12
    assert bucket.objects("fleet/tiny/") == source


def test_a_killed_compile_is_named_as_one_and_cleared_by_the_next(bucket: BucketFixture, tiny_model: Path) -> None:
    url = bucket.url("race/r1")
    killed = cli(*compile_args(tiny_model, url), step="copy.object.0")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    status, _, problems = rows(bucket)[url]
    assert status == "invalid" and f"{url} is incomplete: a compile (process " in problems[0]
    assert "stopped before it finished" in problems[0]
    assert "resize to a copy" not in problems[0]
    again = cli(*compile_args(tiny_model, url))
    assert again.returncode == 0, again.stderr
    one_whole_artifact(bucket, url)


def test_two_writers_in_one_process_exclude_each_other(
    bucket: BucketFixture,
    cr13_artifact: Path,
    paused_at: tuple[threading.Event, threading.Event, list[str]],  # noqa: F811
) -> None:
    """The desktop runs its jobs in one process: the same pid is no proof of a live writer, the claim's token is."""
    reached, release, step = paused_at
    step[0] = "copy.object.1"
    bucket.upload(cr13_artifact, "fleet/qwen")
    out = parse_bucket_prefix(bucket.url("race/r1"))
    errors: list[BaseException] = []

    def first() -> None:
        try:
            resize_folder_to_bucket(ResizeRequest(LocalFolder(cr13_artifact), 12, output=out))
        except BaseException as exc:
            errors.append(exc)

    writer = threading.Thread(target=first)
    writer.start()
    assert reached.wait(60)
    held = bucket.objects("race/r1/")
    with pytest.raises(StudioError, match=f"is being written by a resize to a copy \\(process {os.getpid()} on"):
        resize_bucket_to_copy(ResizeRequest(parse_bucket_prefix(bucket.url("fleet/qwen")), 14, output=out))
    assert bucket.objects("race/r1/") == held
    release.set()
    writer.join(60)
    assert not errors
    assert rows(bucket)[out.url][:2] == ("ok", 12)


def test_a_marker_this_process_left_is_taken_over(bucket: BucketFixture, cr13_artifact: Path) -> None:
    """A claim of this process that ended (its copy failed and could not clean up) is no live writer."""
    stale = {"host": os.uname().nodename, "pid": os.getpid(), "token": "ended", "since": 0, "what": "compile"}
    bucket.client.put_object(Bucket=bucket.name, Key=f"race/r1/{INCOMPLETE_MARKER}", Body=json.dumps(stale).encode())
    bucket.client.put_object(Bucket=bucket.name, Key="race/r1/prefill.rbln", Body=b"half")
    out = parse_bucket_prefix(bucket.url("race/r1"))
    assert "is incomplete: a compile (process" in rows(bucket)[out.url][2][0]
    resize_folder_to_bucket(ResizeRequest(LocalFolder(cr13_artifact), 12, output=out))
    one_whole_artifact(bucket, out.url)


def test_a_store_ignoring_conditions_still_refuses_a_held_prefix(
    bucket: BucketFixture, cr13_artifact: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Behind a gateway that drops If-None-Match the marker is still read before writing, and read back after."""
    bucket.upload(cr13_artifact, "fleet/qwen")
    out = bucket.url("race/r1")
    with unconditional_gateway(bucket.store) as endpoint:
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        monkeypatch.setenv("AWS_REQUEST_CHECKSUM_CALCULATION", "when_required")
        args = ("set-kvcache-num-blocks", bucket.url("fleet/qwen"), "12", "--output-dir", out)
        with stopped_at("copy.object.1", *args) as first:
            held = bucket.objects("race/r1/")
            second = cli("set-kvcache-num-blocks", cr13_artifact, "14", "--output-dir", out)
            assert second.returncode == 1 and f"is being written by a resize to a copy (process {first.pid}" in (
                second.stderr
            ), second.stderr
            assert bucket.objects("race/r1/") == held
            done = continued(first)
        assert done.returncode == 0, done.stderr
        assert rows(bucket)[out][:2] == ("ok", 12)
