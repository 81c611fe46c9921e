"""A scan process whose full checks wait for a file to appear, and which writes its pid: lets a GUI test act while a
scan runs (cancel it, kill it) without timing anything."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rbln_artifact_studio.gui.models import folder_scan

_HELD = """
import os, sys, time
from rbln_artifact_studio.core.fleet import verify
pid_file, release = sys.argv[1], sys.argv[2]
with open(pid_file + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.replace(pid_file + ".tmp", pid_file)
real = verify.verify_rows
def held(root, rows, inspector=None, cancel=None, **kwargs):
    while not os.path.exists(release):  # the test's release, or a cancel (SIGTERM sets the token)
        if cancel is not None:
            cancel.raise_if_cancelled()
        time.sleep(0.01)
    yield from real(root, rows, inspector, cancel, **kwargs)
verify.verify_rows = held
from rbln_artifact_studio.gui.models.folder_scan import main
sys.exit(main())
"""


class HeldScan:
    """Scan processes started from now on hold their full checks until release()."""

    def __init__(self, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.pid_file, self.release_file = folder / "scan.pid", folder / "release"
        monkeypatch.setattr(
            folder_scan, "command", lambda: [sys.executable, "-c", _HELD, str(self.pid_file), str(self.release_file)]
        )

    def started(self) -> bool:
        return self.pid_file.exists()

    @property
    def pid(self) -> int:
        return int(self.pid_file.read_text())

    def release(self) -> None:
        self.release_file.touch()
