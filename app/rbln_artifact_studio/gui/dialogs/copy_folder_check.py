"""The resize dialog's check of the copy's folder: the typed path at once, the disk in a worker once typing pauses."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtWidgets import QWidget

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.artifact import Artifact
from rbln_artifact_studio.core.location import ServerFolder, host_of, parse_beside, server_url
from rbln_artifact_studio.core.storage.output_check import CHOOSE_FOLDER, folder_problem, path_problem
from rbln_artifact_studio.gui.models.jobs import JobManager
from rbln_artifact_studio.places.dispatch import copy_refusal

CHECK_DELAY_MS = 150  # the folder is checked on disk once typing pauses, not once per key


def _disk_problem(text: str, source: Path) -> str | None:
    """folder_problem in a worker; a check that fails blocks Apply with its reason instead of vanishing."""
    try:
        return folder_problem(text, source)
    except Exception as exc:  # any failure must reach the user: here, as the reason Apply is off
        return f"Cannot check {text}: {exc}"


def _top_window(widget: QWidget) -> QWidget:
    while (parent := widget.parentWidget()) is not None:
        widget = parent
    return widget


class CopyFolderCheck(QObject):
    """problem(text) answers from the text alone, or with the disk's answer once the check of that very text is back.

    `typed` gives the folder as typed now and `wanted` whether a copy is still asked for; checked(text) is emitted
    when the disk's answer for the text typed now is in `answer`.
    """

    checked = Signal(str)

    def __init__(
        self,
        artifact: Artifact,
        jobs: JobManager | None,
        typed: Callable[[], str],
        wanted: Callable[[], bool],
        owner: QWidget,
    ) -> None:
        super().__init__(owner)
        self.artifact, self.jobs, self._typed, self._wanted, self._owner = artifact, jobs, typed, wanted, owner
        self.host = host_of(artifact.where)  # on a server: the copy is written there, its folder checked there
        self.answer: str | None = None  # what the disk check said about _checked
        self._checked: str | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(CHECK_DELAY_MS)
        self._timer.timeout.connect(self._ask)

    def problem(self, output: str) -> str | None:
        """The typed path's problem now; the disk's answer once the check of this very text is back."""
        if self.host:
            return self._remote_problem(output)
        problem = path_problem(output, self.artifact.path)
        if problem is not None:
            return problem
        if output == self._checked:
            return self.answer
        if self.jobs is not None:
            self._timer.start()  # (re)started by each key: one check once typing pauses
        return None

    def _remote_problem(self, output: str) -> str | None:
        """A copy of an artifact on a server or in a bucket: a new place that a Kind can write the copy to (the
        job checks that it is new when it starts, where the copy is written)."""
        where = self.artifact.where
        if not output.strip():
            return CHOOSE_FOLDER
        try:
            target = parse_beside(output, where)
        except StudioError as exc:
            return exc.one_line()
        if isinstance(target, ServerFolder):
            host = where.host if isinstance(where, ServerFolder) else target.host  # a server's copy stays there
            if target.host != host or not target.path.startswith("/"):  # say what to type, not only what is wrong
                return f"Give the copy's folder on {host}: {server_url(host)}/PATH or an absolute /PATH there."
        refusal = copy_refusal(where, target)
        if refusal is not None:
            return refusal
        if type(target) is type(where) and str(target).rstrip("/") == str(where).rstrip("/"):
            return "The copy needs a folder of its own, not the artifact's."
        return None

    @Slot()
    def _ask(self) -> None:
        """Ask a worker about the folder typed now (a few stat calls); an answer for older text is dropped."""
        if self.jobs is None or not _top_window(self._owner).isVisible() or not self._wanted() or self.host:
            return  # the window is closing (its jobs are being stopped), or no copy is asked for
        output, source = self._typed(), self.artifact.path
        job = self.jobs.submit(f"Check {output}", lambda ctx: (output, _disk_problem(output, source)), visible=False)
        job.succeeded.connect(self._on_answer)

    @Slot(object)
    def _on_answer(self, result: tuple[str, str | None]) -> None:
        text, problem = result
        if text != self._typed():
            return  # typed on meanwhile: a newer check is on its way
        self._checked, self.answer = text, problem
        self.checked.emit(text)
