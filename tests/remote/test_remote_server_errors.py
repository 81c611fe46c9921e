"""A server program's failure is one line that says what happened and what to do: never a traceback's
`File "<rbln-studio>", line …` fragments (a link loop in a downloaded artifact, a full disk on the server)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from remote.conftest import url

Run = Callable[..., subprocess.CompletedProcess[str]]


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1, done.stderr
    assert 'File "<rbln-studio>"' not in done.stderr and "Traceback" not in done.stderr, done.stderr
    [line] = done.stderr.splitlines()
    return line


def test_a_link_loop_in_a_downloaded_artifact_is_one_line(remote_cli: Run, cr13_artifact: Path, tmp_path: Path) -> None:
    os.symlink("loop", cr13_artifact / "loop")
    line = _one_line(remote_cli("download", url(cr13_artifact), tmp_path / "dest"))
    assert f"Too many levels of symbolic links ({cr13_artifact / 'loop'}); a symbolic link there leads back to " in line
    assert line.endswith("remove the link, or point it at a file, and try again. Nothing was changed.")
    assert not (tmp_path / "dest").exists()


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A real file system too small for an artifact: a 64 KiB tmpfs (needs the right to mount, as root has)."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mount], capture_output=True, timeout=30)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", mount], capture_output=True, timeout=30)


def test_a_full_disk_on_the_server_is_one_line(remote_cli: Run, cr13_artifact: Path, full_disk: Path) -> None:
    line = _one_line(remote_cli("set-kvcache-num-blocks", cr13_artifact, "20", "--output-dir", url(full_disk / "copy")))
    assert line.endswith(
        "No space left on device; the server's disk is full; free space there (df -h on the server) and try again. "
        "Nothing was changed."
    ), line
    assert list(full_disk.iterdir()) == [], "nothing of the copy left"


def test_an_unforeseen_failure_of_a_job_on_the_server_reads_in_words() -> None:
    """The job program's own unforeseen exception (not a refusal it words itself) reaches the user as what happened
    and what to do, as the server's other programs' failures do."""
    from rbln_artifact_studio.remote.remote_jobs import JobOutcome, RemoteJob

    job = RemoteJob("npu-test", "20261207-000000-abcdef")
    said = {"ok": False, "unexpected": True, "error": "OSError: [Errno 28] No space left on device: '/srv/a/x.tmp'"}
    outcome = JobOutcome.from_json(job, "failed", said)
    assert outcome.error == (
        "No space left on device (/srv/a/x.tmp); the server's disk is full; free space there (df -h on the server) "
        "and try again"
    )
    refused = {"ok": False, "error": "art is locked by a test holding it."}  # its own words: kept as they are
    assert JobOutcome.from_json(job, "failed", refused).error == refused["error"]
