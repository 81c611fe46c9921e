"""Is there room beside a real artifact for the staged copy an in-place resize writes? Asked once, in a worker."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot

from rbln_artifact_studio.backends.toolchain import CLI_NAME
from rbln_artifact_studio.core.storage.swap import staging_room_problem
from rbln_artifact_studio.gui.app.remedies import said
from rbln_artifact_studio.gui.models.jobs import JobFailure, JobManager


def _room_problem(folder: Path) -> str | None:
    """Worker side: the refusal, its remedy naming the dialog's controls (never a CLI flag)."""
    refusal = staging_room_problem(folder, CLI_NAME)
    return None if refusal is None else said(refusal)


ASKING = "Checking the disk has room for the staged copy an in-place resize writes…"


class StagingCheck(QObject):
    """problem() asks the first time (answering ASKING until the worker is back), then gives the answer."""

    answered = Signal()

    def __init__(self, jobs: JobManager | None, folder: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.jobs = jobs
        self.folder = folder
        self._asked = False
        self._answer: str | None = ASKING

    def problem(self) -> str | None:
        if self.jobs is None:
            return None  # no worker to ask: the engine checks before it writes anything
        if not self._asked:
            self._asked = True
            folder = self.folder
            job = self.jobs.submit(f"Check room beside {folder.name}", lambda ctx: _room_problem(folder), visible=False)
            job.succeeded.connect(self._on_checked)
            job.failed.connect(self._on_failed)
        return self._answer

    @Slot(object)
    def _on_checked(self, problem: str | None) -> None:
        self._answer = problem
        self.answered.emit()

    @Slot(object)
    def _on_failed(self, failure: JobFailure) -> None:
        self._answer = f"Cannot check the room for the staged copy: {failure.reason}"
        self.answered.emit()
