"""The artifact lock under I/O faults: a lock that cannot record its holder is given back at once."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from faultfs import FaultFS, InjectedFault

from rbln_artifact_studio.core.storage.fsutil import LOCK_NAME
from rbln_artifact_studio.core.storage.lock import ArtifactLock


@pytest.mark.parametrize("fail_at", [2, 3], ids=["ftruncate", "pwrite"])
def test_failed_holder_write_releases_the_lock(tmp_path: Path, fail_at: int) -> None:
    """Found by test_faults_io: a full disk while writing the holder's identity leaked the locked descriptor,
    so this process (a GUI session) kept the artifact locked against itself until it exited."""
    with FaultFS(tmp_path, fail_at=fail_at, err=errno.ENOSPC).active() as fs, pytest.raises(InjectedFault):
        ArtifactLock(tmp_path).acquire()
    assert fs.points[0].startswith("os.open")
    assert not (tmp_path / LOCK_NAME).exists()
    with ArtifactLock(tmp_path, "second writer"):  # not blocked by the first attempt
        assert f'"pid": {os.getpid()}' in (tmp_path / LOCK_NAME).read_text()
