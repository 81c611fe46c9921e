"""One writer per artifact: the portable folder lock (core/portable/lock.py), its refusals as the studio's errors."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from rbln_artifact_studio.core.errors import ArtifactLockedError
from rbln_artifact_studio.core.portable.lock import FolderLock, LockContended, LockHeld


class ArtifactLock(FolderLock):
    """Exclusive, non-blocking: a second writer, here or in a server's job, fails at once naming the first."""

    def __init__(self, artifact_dir: Path, purpose: str = "") -> None:
        super().__init__(artifact_dir, purpose or " ".join(os.path.basename(a) for a in sys.argv[:3]))
        self.folder = Path(artifact_dir)

    def acquire(self) -> None:
        try:
            super().acquire()
        except LockHeld as exc:
            raise ArtifactLockedError(
                f"{self.folder} is being changed by {exc.holder}. Wait for it to finish, then try again."
            ) from None
        except LockContended:
            raise ArtifactLockedError(f"{self.folder} is contended by other writers; try again.") from None
