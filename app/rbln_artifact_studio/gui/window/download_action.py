"""Download to This Computer…: the selected server's or bucket's artifact copied, as it is, into a folder here.

The folder is asked for (proposed: the folder last chosen for copies when it is on this computer, else home), the
copy runs in a job with progress and cancel (places/download.py: all of it or nothing), its refusal is the job's
reason, and the result is offered in the window as a compile's is: selected in the table inside a shown folder,
else one click opens its folder beside them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QWidget

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import LocalFolder, Location, parse_location
from rbln_artifact_studio.core.progress import Progress
from rbln_artifact_studio.gui.app.remedies import one_line
from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.models.jobs import Job, JobContext, JobManager
from rbln_artifact_studio.places.dispatch import path_here

if TYPE_CHECKING:  # a type only: places.download loads with the first single selection
    from rbln_artifact_studio.places.download import Downloaded


def _refusal(where: Location) -> str | None:
    """Why where cannot be downloaded here (None: it can), as places/download.py says."""
    # deferred: places.download (fsutil, subprocess: ~5 ms) loads with the first single selection, after the first paint
    from rbln_artifact_studio.places.download import download_refusal

    return download_refusal(where)


def _source(path: str) -> Location | None:
    """The row's place when it can be downloaded here (a server's folder, a bucket's prefix), else None."""
    try:
        where = parse_location(path)
    except StudioError:
        return None
    return where if _refusal(where) is None else None


BASE_TIP = "Copy the selected server or bucket artifact, as it is, into a folder here"


class DownloadAction(QObject):
    """The action, its folder question and its job; the window puts the action in its menus."""

    def __init__(
        self,
        parent: QWidget,
        jobs: JobManager,
        settings: Settings,
        selected: Callable[[], list[str]],
        offer: Callable[[Location], None],
    ) -> None:
        super().__init__(parent)
        self.parent_widget, self.jobs, self.settings = parent, jobs, settings
        self.selected, self.offer = selected, offer
        self.action = QAction("Do&wnload to This Computer…", parent)
        self.action.setObjectName("actionDownload")
        self.action.setStatusTip(BASE_TIP)
        self.action.triggered.connect(self.choose_folder)
        self.action.setEnabled(False)
        self.last_dialog: QFileDialog | None = None

    def update(self) -> None:
        """Enabled for one selected artifact on a server or in a bucket; otherwise its tips say why not."""
        paths = self.selected()
        self.action.setEnabled(len(paths) == 1 and _source(paths[0]) is not None)
        reason = None
        if len(paths) == 1 and not self.action.isEnabled():
            try:
                reason = _refusal(parse_location(paths[0]))
            except StudioError as exc:
                reason = one_line(exc)
        tip = f"{BASE_TIP}: not offered. {reason}" if reason else BASE_TIP
        self.action.setToolTip(tip)
        self.action.setStatusTip(tip)

    def default_folder(self) -> str:
        """The folder last chosen for copies when it is a folder here, else the home folder."""
        remembered = self.settings.copy_folder.get()
        try:
            where = parse_location(remembered) if remembered else None
        except StudioError:
            where = None  # a stored text that no longer parses: as if none were stored
        here = path_here(where) if where is not None else None
        if here is not None and os.path.isdir(here):
            return str(here)
        return os.path.expanduser("~")

    @Slot()
    def choose_folder(self) -> QFileDialog | None:
        """Ask which folder here receives the artifact (a folder of its name is made in it), then download."""
        paths = self.selected()
        source = _source(paths[0]) if len(paths) == 1 else None
        if source is None:
            return None
        dialog = QFileDialog(self.parent_widget, f"Download {source.name} into", self.default_folder())
        dialog.setObjectName("downloadFolderDialog")
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dialog.setLabelText(QFileDialog.DialogLabel.Accept, "Download Here")
        dialog.fileSelected.connect(lambda folder: self.start(source, Path(folder) / source.name))
        dialog.open()
        self.last_dialog = dialog
        return dialog

    def start(self, source: Location, output: Path) -> Job:
        """Download source into the new folder output in a job (cancel in the jobs panel: nothing is left)."""
        output = Path(os.path.abspath(output))
        self.settings.copy_folder.set(str(output.parent))  # proposed first next time, here and for copies

        def work(ctx: JobContext) -> Downloaded:
            # deferred: as _refusal's (loaded by now: the action was enabled by it)
            from rbln_artifact_studio.places.download import download

            ctx.log(f"download {source} -> {output}")
            result = download(source, LocalFolder(output), Progress(ctx.progress, ctx.cancel))
            ctx.log(f"wrote {result.where} ({result.size:,} bytes)")
            return result

        job = self.jobs.submit(f"Download {source} to {output.parent}", work, writes=True)
        job.succeeded.connect(lambda result: self.offer(result.where))
        return job
