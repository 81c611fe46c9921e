"""Staging folders under I/O faults: one that cannot even be marked is removed, not left half-made."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from faultfs import FaultFS, InjectedFault

from rbln_artifact_studio.core.storage.fsutil import StagingDir


@pytest.mark.parametrize("fail_at", [2, 3], ids=["open-marker", "write-marker"])
def test_staging_folder_that_cannot_be_marked_is_removed(tmp_path: Path, fail_at: int) -> None:
    """Found by test_faults_io: a full disk while writing the incomplete-marker left the new, unmarked
    staging folder behind (the context manager's exit never ran because its entry failed)."""
    with (
        FaultFS(tmp_path, fail_at=fail_at, err=errno.ENOSPC).active() as fs,
        pytest.raises(InjectedFault),
        StagingDir(tmp_path / "out", claim=False),  # the staging folder's own I/O counted (the claim's: faults_io)
    ):
        pass
    assert fs.points[0].startswith("os.mkdir")
    assert list(tmp_path.iterdir()) == []
