"""The resize dialog's check of the copy's folder: the typed path at once, the disk in a worker once typing pauses."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtWidgets import QWidget

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.artifact import Artifact
from rbln_artifact_studio.core.location import LocalFolder, Location, parse_beside
from rbln_artifact_studio.core.storage.output_check import CHOOSE_FOLDER, folder_problem, path_problem
from rbln_artifact_studio.gui.models.jobs import JobManager
from rbln_artifact_studio.places.dispatch import capabilities, copy_refusal

CHECK_DELAY_MS = 150  # the folder is checked on disk once typing pauses, not once per key


def _disk_problem(text: str, source: Path | None) -> str | None:
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
        # A folder here is checked here (on disk, in a worker); a folder elsewhere where the copy is written.
        self._source_here = capabilities(artifact.where).on_this_computer
        self.answer: str | None = None  # what the disk check said about _checked
        self._checked: str | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(CHECK_DELAY_MS)
        self._timer.timeout.connect(self._ask)

    def problem(self, output: str) -> str | None:
        """The typed place's problem now; for a folder here, the disk's answer once the check of this very text is
        back. What may be written where comes from the kinds' capabilities (dispatch.copy_refusal)."""
        where = self.artifact.where
        if not output.strip():
            return CHOOSE_FOLDER
        try:
            target = parse_beside(output, where)
        except StudioError as exc:
            return exc.one_line()
        refusal = copy_refusal(where, target)
        if refusal is not None:
            return refusal
        if not isinstance(target, LocalFolder):
            same = str(target).rstrip("/") == str(where).rstrip("/")
            return "The copy needs a folder of its own, not the artifact's." if same else None
        problem = path_problem(str(target.path), self._source_path())
        if problem is not None:
            return problem
        if output == self._checked:
            return self.answer
        if self.jobs is not None:
            self._timer.start()  # (re)started by each key: one check once typing pauses
        return None

    def _source_path(self) -> Path | None:
        """The source's folder when it is on this computer (a copy must not go inside it), else None."""
        return self.artifact.path if self._source_here else None

    def target(self, output: str) -> Location | None:
        """The typed text as the place the copy goes (None: it names none)."""
        try:
            return parse_beside(output, self.artifact.where)
        except StudioError:
            return None

    @Slot()
    def _ask(self) -> None:
        """Ask a worker about the folder typed now (a few stat calls); an answer for older text is dropped."""
        if self.jobs is None or not _top_window(self._owner).isVisible() or not self._wanted():
            return  # the window is closing (its jobs are being stopped), or no copy is asked for
        output, source = self._typed(), self._source_path()
        target = self.target(output)
        if not isinstance(target, LocalFolder):
            return  # checked where it is written, by the job
        folder = str(target.path)
        job = self.jobs.submit(f"Check {output}", lambda ctx: (output, _disk_problem(folder, source)), visible=False)
        job.succeeded.connect(self._on_answer)

    @Slot(object)
    def _on_answer(self, result: tuple[str, str | None]) -> None:
        text, problem = result
        if text != self._typed():
            return  # typed on meanwhile: a newer check is on its way
        self._checked, self.answer = text, problem
        self.checked.emit(text)
