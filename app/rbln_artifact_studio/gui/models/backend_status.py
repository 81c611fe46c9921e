"""Which backends this machine has, detected in a background job and shared by the About box, wizard and preferences.

Detection runs `optimum-rbln-cli --version` and an `import rebel` check, so it never runs on the GUI thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot

from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.gui.app.settings import ToolchainPaths
from rbln_artifact_studio.gui.models.jobs import Job, JobFailure, JobManager

if TYPE_CHECKING:  # a type only: the backends load in the detection's worker
    from rbln_artifact_studio.backends.base import BackendInfo

DETECTING = "detecting…"


def _detect(refresh: bool, cancel: CancelToken, toolchain: ToolchainPaths) -> list[BackendInfo]:
    # deferred: the backends (pydantic, ~300 ms) load in the detection's worker, never on the GUI thread
    from rbln_artifact_studio.backends.registry import detect_backends

    # cancelled when the window closes: no wait
    return detect_backends(refresh=refresh, cancel=cancel, toolchain=toolchain.settings())


class BackendStatus(QObject):
    """The last detection result; `changed` fires when detection starts and when its answer arrives."""

    changed = Signal()

    def __init__(self, jobs: JobManager, toolchain: ToolchainPaths, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.jobs = jobs
        self.toolchain = toolchain  # the paths the last detection was asked with
        self.backends: list[BackendInfo] | None = None
        self.error: str | None = None
        self.detecting = False
        self._job: Job | None = None

    def detect(self, refresh: bool = False, toolchain: ToolchainPaths | None = None) -> None:
        """Detect in a worker (refresh: run the checks again, e.g. with other toolchain paths).

        Without refresh, a result already known or on its way is kept. Only the latest request's answer is shown.
        """
        if not refresh and (self.detecting or self.backends is not None):
            return
        if toolchain is not None:
            self.toolchain = toolchain
        self.detecting, self.error = True, None
        paths = self.toolchain
        job = self._job = self.jobs.submit(
            "Detect backends", lambda ctx: _detect(refresh, ctx.cancel, paths), visible=False
        )
        job.succeeded.connect(self._on_detected)
        job.failed.connect(self._on_failed)
        self.changed.emit()

    @Slot(object)
    def _on_detected(self, found: list[BackendInfo]) -> None:
        if self.sender() is self._job:  # else a newer request is on its way
            self._finish(found, None)

    @Slot(object)
    def _on_failed(self, failure: JobFailure) -> None:
        if self.sender() is self._job:
            self._finish(None, failure.reason)

    def _finish(self, found: list[BackendInfo] | None, error: str | None) -> None:
        self._job = None
        self.detecting, self.backends, self.error = False, found, error
        self.changed.emit()

    def info(self, name: str) -> BackendInfo | None:
        return next((b for b in self.backends or () if b.name == name), None)

    def lines(self) -> list[str]:
        """One line per backend, as `rbln-studio-cli backends` prints them, or what is happening instead."""
        if self.detecting:
            return [DETECTING]
        if self.error is not None:
            return [f"detection failed: {self.error}"]
        if self.backends is None:
            return ["not detected yet"]
        return [b.line() for b in self.backends]
