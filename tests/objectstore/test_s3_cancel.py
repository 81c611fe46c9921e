"""A copy into a bucket that is cancelled removes what it wrote and says so; one that is killed leaves a prefix scans
call incomplete, and the next run removes it with the multipart uploads the killed run left (a store keeps, and
bills, their parts until they are aborted).

The CLI stops itself at a named step (SIGSTOP, the crash tests' fault hook); the signal is sent while it is stopped
and acts when it continues, so the test knows what was written when the signal came.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from harness import ENV_ACTION, ENV_STEP, cli_command, cli_env

from objectstore.conftest import BucketFixture
from objectstore.test_s3_kills import drive, rows
from rbln_artifact_studio.core.errors import CancelledError
from rbln_artifact_studio.core.location import parse_bucket_prefix
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
from rbln_artifact_studio.core.progress import CancelToken, Progress
from rbln_artifact_studio.objectstore.resize import resize_bucket_in_place, resize_bucket_to_copy


def uploads(bucket: BucketFixture, prefix: str) -> list[str]:
    """The keys of the multipart uploads begun below prefix and neither completed nor aborted."""
    answer = bucket.client.list_multipart_uploads(Bucket=bucket.name, Prefix=prefix)
    return [u["Key"] for u in answer.get("Uploads", [])]


def signalled(args: list[object], step: str, sig: signal.Signals) -> subprocess.CompletedProcess[str]:
    """The CLI run with args, stopped at step, sent sig there, and continued."""
    env = cli_env()
    env.update({ENV_STEP: step, ENV_ACTION: "stop"})
    proc = subprocess.Popen(
        [*cli_command(), *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        _, status = os.waitpid(proc.pid, os.WUNTRACED)
        assert os.WIFSTOPPED(status), f"the CLI did not reach {step}: {proc.communicate()}"
        proc.send_signal(sig)
        os.kill(proc.pid, signal.SIGCONT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_sigint_during_a_bucket_copy_removes_what_it_wrote(bucket: BucketFixture, weighty_artifact: Path) -> None:
    """Ctrl-C while a graph is being rebuilt by a multipart upload: the upload is aborted, the copy's objects and
    marker removed, and the words say so."""
    bucket.upload(weighty_artifact, "fleet/tiny")
    source = bucket.objects("fleet/tiny/")
    src, out = bucket.url("fleet/tiny"), bucket.url("fleet/tiny-12")
    done = signalled(["set-kvcache-num-blocks", src, "12", "--output-dir", out], "multipart.started", signal.SIGINT)
    assert done.returncode == 130, done.stderr
    assert f"cancelled: what this copy had written at {out} was removed" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert bucket.objects("fleet/tiny-12/") == {}
    assert uploads(bucket, "fleet/") == []
    assert bucket.objects("fleet/tiny/") == source


def test_sigterm_during_a_folder_to_bucket_copy_removes_what_it_wrote(
    bucket: BucketFixture, cr13_artifact: Path
) -> None:
    out = bucket.url("fleet/qwen-12")
    done = signalled(
        ["set-kvcache-num-blocks", cr13_artifact, "12", "--output-dir", out], "copy.object.1", signal.SIGTERM
    )
    assert done.returncode == 143, done.stderr
    assert f"cancelled: what this copy had written at {out} was removed" in done.stderr, done.stderr
    assert bucket.objects("fleet/") == {}
    scanned = rows(bucket)
    assert scanned == {}


@pytest.mark.parametrize("mode", ["copy", "in-place"])
def test_uploads_of_a_killed_run_are_aborted_by_the_next(
    bucket: BucketFixture, weighty_artifact: Path, mode: str
) -> None:
    """SIGKILL once a graph's multipart upload has begun: the upload stays listed; the next run on the same prefix
    aborts it and finishes."""
    bucket.upload(weighty_artifact, "fleet/tiny")
    src, out = bucket.url("fleet/tiny"), bucket.url("fleet/tiny-12")
    args = ("copy", src, out, "12") if mode == "copy" else ("in-place", src, "12")
    killed = drive(*args, step="multipart.started")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert uploads(bucket, "fleet/"), "the killed run began no multipart upload"
    again = drive(*args)
    assert again.returncode == 0, again.stderr
    assert uploads(bucket, "fleet/") == []
    status, count, problems = rows(bucket)[out if mode == "copy" else src]
    assert (status, count) == ("warning", 12) and "above the full pool" in problems[0]  # as a local copy at 12


def test_a_copy_whose_source_changes_says_which_and_removes_its_writes(
    bucket: BucketFixture, cr13_artifact: Path
) -> None:
    """A resize in place of the source while a copy of it runs: the copy stops naming the source's object that
    changed (not its own destination), and removes what it wrote instead of leaving an incomplete prefix."""
    bucket.upload(cr13_artifact, "fleet/qwen")
    src, out = bucket.url("fleet/qwen"), bucket.url("fleet/qwen-12")
    env = cli_env()
    env.update({ENV_STEP: "copy.locked", ENV_ACTION: "stop"})
    proc = subprocess.Popen(
        [*cli_command(), "set-kvcache-num-blocks", src, "12", "--output-dir", out],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        _, status = os.waitpid(proc.pid, os.WUNTRACED)
        assert os.WIFSTOPPED(status), proc.communicate()
        resize_bucket_in_place(ResizeRequest(parse_bucket_prefix(src), 14))  # every graph of the source rewritten
        os.kill(proc.pid, signal.SIGCONT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1, err
    assert f"error: {src}/" in err and "was changed by another writer while it was copied" in err, err
    assert f"What this copy had written at {out} was removed." in err
    assert "nothing of this run replaced it" not in err
    assert bucket.objects("fleet/qwen-12/") == {} and uploads(bucket, "fleet/") == []


def test_a_cancel_from_the_desktop_removes_what_the_copy_wrote(bucket: BucketFixture, cr13_artifact: Path) -> None:
    """The desktop's Cancel (the job's token, checked on each object copied): the same clean-up, and the error the
    job ends with says what became of the prefix instead of "nothing was changed"."""
    bucket.upload(cr13_artifact, "fleet/qwen")
    token = CancelToken()
    written: list[int] = []

    def on_progress(done: int, total: int, _message: str) -> None:
        if done:  # an object is copied: the user presses Cancel
            written.append(done)
            token.cancel()

    out = parse_bucket_prefix(bucket.url("fleet/qwen-12"))
    with pytest.raises(CancelledError) as err:
        resize_bucket_to_copy(
            ResizeRequest(parse_bucket_prefix(bucket.url("fleet/qwen")), 12, output=out), Progress(on_progress, token)
        )
    assert written
    assert str(err.value) == f"Cancelled; what this copy had written at {out} was removed."
    assert bucket.objects("fleet/qwen-12/") == {}
