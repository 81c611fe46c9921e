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
from rbln_artifact_studio.gui.app.remedies import one_line
from rbln_artifact_studio.gui.models.jobs import JobManager
from rbln_artifact_studio.places.dispatch import capabilities, copy_refusal, default_copy, path_here

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
        remembered: str = "",
        chosen: str = "",
    ) -> None:
        super().__init__(owner)
        self.artifact, self.jobs, self._typed, self._wanted, self._owner = artifact, jobs, typed, wanted, owner
        # A folder here is checked here (on disk, in a worker); a folder elsewhere where the copy is written.
        self._source_here = path_here(artifact.where)
        self.answer: str | None = None  # what the disk check said about _checked
        self._checked: str | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(CHECK_DELAY_MS)
        self._timer.timeout.connect(self._ask)
        self._remembered = remembered  # the folder last chosen for copies (settings), where it stays near
        self._chosen = chosen  # the folder chosen last for copies from this artifact's place, proposed first
        self._proposed: str | None = None
        self._proposal_refused = False  # the disk refused the first proposal: home is proposed instead
        self.checked.connect(self._on_checked)  # before the owner's slots: they propose again

    def problem(self, output: str) -> str | None:
        """The typed place's problem now; for a folder here, the disk's answer once the check of this very text is
        back. What may be written where comes from the kinds' capabilities (dispatch.copy_refusal)."""
        where = self.artifact.where
        if not output.strip():
            return CHOOSE_FOLDER
        try:
            target = parse_beside(output, where)
        except StudioError as exc:
            return one_line(exc)
        refusal = copy_refusal(where, target)
        if refusal is not None:
            return refusal
        here = path_here(target)
        if here is None:  # checked where it is written, by the job
            same = str(target).rstrip("/") == str(where).rstrip("/")
            return "The copy needs a folder of its own, not the artifact's." if same else None
        problem = path_problem(str(here), self._source_path())
        if problem is not None:
            return problem
        if output == self._checked:
            return self.answer
        if self.jobs is not None:
            self._timer.start()  # (re)started by each key: one check once typing pauses
        return None

    def _source_path(self) -> Path | None:
        """The source's folder when it is on this computer (a copy must not go inside it), else None."""
        return self._source_here

    def target(self, output: str) -> Location | None:
        """The typed text as the place the copy goes (None: it names none)."""
        try:
            return parse_beside(output, self.artifact.where)
        except StudioError:
            return None

    def proposal(self, name: str) -> Location:
        """Where a copy named name is proposed: in the folder last chosen for copies, beside the artifact or in the
        home folder (places/dispatch.default_copy); in the home folder once the disk refused that proposal."""
        where = self.artifact.where
        if self._proposal_refused and LocalFolder in capabilities(where).copies_to:
            proposed: Location = LocalFolder(Path.home() / name)
        else:
            proposed = default_copy(where, name, self._remembered, Path.home(), self._chosen)
        self._proposed = str(proposed)
        return proposed

    @Slot(str)
    def _on_checked(self, text: str) -> None:
        if text == self._proposed and self.answer is not None:
            self._proposal_refused = True  # a folder the user cannot write, say: the next proposal is at home

    @Slot()
    def _ask(self) -> None:
        """Ask a worker about the folder typed now (a few stat calls); an answer for older text is dropped."""
        if self.jobs is None or not _top_window(self._owner).isVisible() or not self._wanted():
            return  # the window is closing (its jobs are being stopped), or no copy is asked for
        output, source = self._typed(), self._source_path()
        target = self.target(output)
        here = path_here(target) if target is not None else None
        if here is None:
            return  # checked where it is written, by the job
        folder = str(here)
        job = self.jobs.submit(f"Check {output}", lambda ctx: (output, _disk_problem(folder, source)), visible=False)
        job.succeeded.connect(self._on_answer)

    @Slot(object)
    def _on_answer(self, result: tuple[str, str | None]) -> None:
        text, problem = result
        if text != self._typed():
            return  # typed on meanwhile: a newer check is on its way
        self._checked, self.answer = text, problem
        self.checked.emit(text)
