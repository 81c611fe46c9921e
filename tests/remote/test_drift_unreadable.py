"""Drift's reason when the login that reads a server cannot see a process's working folder: said, not "no folder"."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rbln_artifact_studio.remote.fleet import _named_folders
from rbln_artifact_studio.remote.server import PROGRAMS

UNSHARE = shutil.which("unshare")


def _unprivileged_can_run() -> bool:
    if UNSHARE is None:
        return False
    return subprocess.run([UNSHARE, "-U", sys.executable, "-c", "pass"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _unprivileged_can_run(), reason="needs `unshare -U` (an unprivileged user namespace)")
def test_a_working_folder_this_login_cannot_read_is_named_as_the_reason(cr13_artifact: Path) -> None:
    # A server process (root's) serving `--model ./qwen3-8b-cr13` from the artifact's parent folder, as vllm runs.
    served = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()", "--model", f"./{cr13_artifact.name}"],
        cwd=cr13_artifact.parent,
        stdin=subprocess.PIPE,
    )
    try:
        # The server's processes.py as a login of another user reads it (a user namespace: no rights on root's).
        assert UNSHARE is not None
        done = subprocess.run(
            [UNSHARE, "-U", sys.executable, str(PROGRAMS / "processes.py"), "rbln_config.json", str(served.pid)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        served.communicate(b"", timeout=10)
    records = [json.loads(line) for line in done.stdout.splitlines()]
    unmatched, paths = _named_folders(records)
    assert paths == {}
    assert unmatched[served.pid].reason == (
        "this login cannot read its working folder (Permission denied), which its command line's "
        f"./{cr13_artifact.name} is relative to"
    )


@pytest.mark.skipif(not _unprivileged_can_run(), reason="needs `unshare -U` (an unprivileged user namespace)")
def test_an_artifact_folder_this_login_cannot_enter_is_named_as_the_reason(tmp_path: Path) -> None:
    # Another user's private home holds the artifact the process serves by its absolute path.
    home = tmp_path / "alice"
    model = home / "qwen3-8b"
    model.mkdir(parents=True)
    (model / "rbln_config.json").write_text("{}", encoding="utf-8")
    home.chmod(0o700)
    shutil.chown(home, user=12345, group=12345)
    served = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()", "--model", str(model)], stdin=subprocess.PIPE
    )
    try:
        assert UNSHARE is not None
        done = subprocess.run(
            [UNSHARE, "-U", sys.executable, str(PROGRAMS / "processes.py"), "rbln_config.json", str(served.pid)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        served.communicate(b"", timeout=10)
    records = [json.loads(line) for line in done.stdout.splitlines()]
    unmatched, paths = _named_folders(records)
    assert paths == {}
    reason = unmatched[served.pid].reason
    assert reason == f"this login cannot read {model} (Permission denied), which its command line names"
    assert "names no artifact folder" not in reason


def _can_mount_proc() -> bool:
    """A mount and PID namespace of our own where /proc can be remounted with hidepid (root, or its capabilities)."""
    if UNSHARE is None or shutil.which("setpriv") is None or not Path("/usr/bin/python3").exists():
        return False
    probe = [UNSHARE, "--mount", "--pid", "--fork", "--mount-proc", "sh", "-c", "mount -o remount,hidepid=2 /proc"]
    return subprocess.run(probe, capture_output=True).returncode == 0


@pytest.mark.skipif(not _can_mount_proc(), reason="needs a mount namespace where /proc takes hidepid (root)")
def test_a_process_hidden_by_hidepid_is_named_as_the_reason() -> None:
    """/proc mounted hidepid=2 hides root's process from another login: drift says so and what to do, instead of
    "No such file or directory"."""
    assert UNSHARE is not None
    program = (PROGRAMS / "processes.py").read_bytes()  # on stdin: the other login need not read this checkout
    hidden = (
        "mount -o remount,hidepid=2 /proc || exit 1; sleep 60 & "
        "exec setpriv --reuid 65534 --regid 65534 --clear-groups /usr/bin/python3 - rbln_config.json $!"
    )
    done = subprocess.run(
        [UNSHARE, "--mount", "--pid", "--fork", "--mount-proc", "sh", "-c", hidden],
        input=program,
        capture_output=True,
        timeout=60,
    )
    [record] = [json.loads(line) for line in done.stdout.splitlines()]
    unmatched, _ = _named_folders([record])
    reason = unmatched[record["pid"]].reason
    shown = "invisible" if "hidepid=invisible" in reason else "2"  # the kernel's spelling (5.8 and later: a name)
    assert reason == (
        f"the process cannot be read there: /proc is mounted with hidepid={shown}, which hides other users' "
        "processes from this login; connect as root or as the process's user to see its artifact"
    ), done.stderr


def test_a_process_that_is_not_there_is_said_to_have_ended() -> None:
    done = subprocess.run(
        [sys.executable, str(PROGRAMS / "processes.py"), "rbln_config.json", "999999999"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    [record] = [json.loads(line) for line in done.stdout.splitlines()]
    assert record["error"] == "no such process here: it has ended, or it runs in another PID namespace (a container)"
