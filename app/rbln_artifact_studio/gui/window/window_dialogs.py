"""The dialogs and windows the main window opens (the guide too), and the jobs they start (compile, resize, export).

The one module that opens the window's dialogs: the main window makes its DialogLauncher when the first dialog is
asked for, so these modules (and the compiler, the estimator and pydantic they use) load then, never before the
window's first paint; the window's parts reach a dialog through the launcher, not with an import of their own.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import QMainWindow, QWidget

from rbln_artifact_studio.backends.choice import BackendChoice
from rbln_artifact_studio.core.display.commandline import compile_argv
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.artifact import Artifact
from rbln_artifact_studio.core.location import Location
from rbln_artifact_studio.core.simulator.compiler import CompileRequest
from rbln_artifact_studio.gui.app.app_paths import demo_folder
from rbln_artifact_studio.gui.app.remedies import one_line
from rbln_artifact_studio.gui.app.settings import MAX_RECENT, Settings
from rbln_artifact_studio.gui.dialogs import bucket_dialog  # its functions looked up when called (tests stand in)
from rbln_artifact_studio.gui.dialogs.about_dialog import AboutDialog, Locations, about_text
from rbln_artifact_studio.gui.dialogs.compare_dialog import CompareDialog
from rbln_artifact_studio.gui.dialogs.compile_wizard import CompileWizard, remember_of
from rbln_artifact_studio.gui.dialogs.explorer_dialog import ExplorerDialog
from rbln_artifact_studio.gui.dialogs.planner_dialog import PlannerDialog
from rbln_artifact_studio.gui.dialogs.preferences_dialog import PreferencesDialog
from rbln_artifact_studio.gui.dialogs.resize_dialog import ResizeDialog
from rbln_artifact_studio.gui.models import operations
from rbln_artifact_studio.gui.models.artifact_model import ArtifactTableModel
from rbln_artifact_studio.gui.models.backend_status import BackendStatus
from rbln_artifact_studio.gui.models.copy_memory import chosen_for, remember
from rbln_artifact_studio.gui.models.export import choose_report_file, export_rows
from rbln_artifact_studio.gui.models.jobs import Job, JobManager
from rbln_artifact_studio.gui.models.workspace import Workspace
from rbln_artifact_studio.gui.window.artifact_actions import BusyPaths
from rbln_artifact_studio.gui.window.artifact_browser import ArtifactBrowser
from rbln_artifact_studio.gui.window.help_page import GuideViewer
from rbln_artifact_studio.gui.window.selection_details import Selection
from rbln_artifact_studio.places.dispatch import capabilities


class DialogLauncher(QObject):
    """Opens each dialog on what the window has selected; a compile's or resize's output is selected when shown."""

    preferencesAccepted = Signal()  # Preferences ▸ OK: the ssh config chosen there applies from now on

    def __init__(
        self,
        window: QMainWindow,
        *,
        browser: ArtifactBrowser,
        selection: Selection,
        jobs: JobManager,
        model: ArtifactTableModel,
        workspace: Workspace,
        settings: Settings,
        backend_status: BackendStatus,
        busy: BusyPaths,
        offer: Callable[[Location], None],
        prepare_remote: Callable[[], None],
    ) -> None:
        """window: parents the dialogs, its status bar says what started; busy: where each job's folders are told;
        offer: shows a written result (ResultNotice.offer); prepare_remote: run in a job's worker before it writes
        to a place elsewhere (remote/ given the window's ssh options)."""
        super().__init__(window)
        self.window, self.browser, self.selection, self.busy = window, browser, selection, busy
        self.jobs, self.model, self.workspace, self.settings = jobs, model, workspace, settings
        self.backend_status, self.offer, self.prepare_remote = backend_status, offer, prepare_remote

    @Slot()
    def open_compile_wizard(self) -> CompileWizard:
        parent = self.workspace.root or os.path.expanduser("~")
        last = self.settings.choices.get("wizard")
        wizard = CompileWizard(
            self.jobs, parent, self.window, backends=self.backend_status, last=last if isinstance(last, dict) else None
        )
        wizard.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        wizard.compileRequested.connect(self.start_compile)
        wizard.compileRequested.connect(lambda *chosen: self.settings.choices.set("wizard", remember_of(*chosen)))
        wizard.open()
        return wizard

    @Slot(object, object, object)
    def start_compile(self, request: CompileRequest, output: Location, backend: BackendChoice) -> Job:
        toolchain = self.settings.toolchain().settings()
        job = operations.compile_artifact(self.jobs, request, output, backend, toolchain, self._reach(output))
        self.busy.track(job, writes=(str(output),))
        job.command, job.output = compile_argv(request, str(output)), str(output)
        job.succeeded.connect(self._on_written)
        self.window.statusBar().showMessage(f"Compiling {request.model_id} into {output}…")
        return job

    def _reach(self, output: Location) -> Callable[[], None] | None:
        """What a job writing to a place elsewhere runs first (in its worker): remote/ given this window's ssh
        options, so a server it has not connected to is reached as a connection from the window would be."""
        return None if capabilities(output).on_this_computer else self.prepare_remote

    @Slot()
    def open_bucket_dialog(self) -> bucket_dialog.BucketDialog:
        """File ▸ Open Bucket…: the bucket's artifacts join the table (gui/dialogs/bucket_dialog.py)."""
        last = self.settings.choices.get("bucket")
        dialog = bucket_dialog.BucketDialog(self.window, last if isinstance(last, dict) else None)
        dialog.accepted.connect(lambda: self._bucket_opened(dialog.choice()))
        dialog.accepted.connect(lambda: bucket_dialog.open_bucket(self.jobs, self.model, dialog.location()))
        dialog.accepted.connect(
            lambda: self.settings.session.add_opened_bucket(dialog.entry())
        )  # opened again on next start
        dialog.open()
        return dialog

    def _bucket_opened(self, choice: dict[str, str]) -> None:
        """Remembered for the dialog next time, and first in Open Recent."""
        settings = self.settings
        settings.choices.set("bucket", choice)
        recent = settings.choices.get("recentBuckets")
        others = [b for b in recent if isinstance(b, dict) and b != choice] if isinstance(recent, list) else []
        settings.choices.set("recentBuckets", [choice, *others][:MAX_RECENT])

    def reopen_bucket(self, choice: dict[str, str]) -> Job | None:
        """Open Recent ▸ a bucket: through its endpoint and profile, as when it was opened."""
        try:
            root = bucket_dialog.bucket_location(choice)
        except StudioError as exc:
            self.window.statusBar().showMessage(f"Cannot open that bucket: {one_line(exc)}", 10_000)
            return None
        self._bucket_opened(choice)
        return bucket_dialog.open_bucket(self.jobs, self.model, root)

    def open_resize_dialog(self) -> ResizeDialog | None:
        artifact = self.selection.artifact
        return None if artifact is None else self.resize_dialog_for(artifact)

    def resize_dialog_for(
        self,
        artifact: Artifact,
        target: int | None = None,
        budget_text: str | None = None,
        parent: QWidget | None = None,
    ) -> ResizeDialog:
        """The resize dialog for an artifact, optionally starting from a count or a budget (planner, explorer)."""
        dialog = ResizeDialog(
            artifact,
            parent or self.window,
            self.jobs,
            target,
            budget_text,
            self.settings.copy_folder.get(),
            chosen_for(self.settings, artifact.where),
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(self._on_resize_accepted)
        dialog.open()
        return dialog

    @Slot()
    def _on_resize_accepted(self) -> None:
        dialog = self.sender()
        if not isinstance(dialog, ResizeDialog) or dialog.request is None:
            return
        request = dialog.request
        reach = self._reach(request.output) if request.output is not None else None
        job = operations.resize(self.jobs, request, self.settings.toolchain().settings(), reach, dialog.blocks)
        self.busy.track(job, str(request.source), writes=(str(request.output or request.source),))
        job.command = dialog.argv
        job.output = str(request.output or request.source)
        job.succeeded.connect(self._on_written)
        if request.output is not None:  # proposed first for the next copy from the same place
            remember(self.settings, request.source, request.output)

    @Slot()
    def open_planner(self) -> QWidget | None:
        paths = self.browser.selected_paths()
        if len(paths) < 2:
            return None
        dialog = PlannerDialog(
            self.jobs, paths, self.resize_dialog_for, self.settings.toolchain().settings(), self.model, self.window
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    @Slot()
    def open_explorer(self) -> QWidget | None:
        if self.selection.artifact is None:
            return None
        dialog = ExplorerDialog(self.jobs, self.selection.artifact, self.resize_dialog_for, self.window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def open_compare(self, left: str, right: str) -> CompareDialog:
        """Two artifacts side by side (Compare…)."""
        toolchain = self.settings.toolchain().settings()
        dialog = CompareDialog(self.jobs, left, right, toolchain, self.window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    @Slot()
    def export_report(self) -> Job | None:
        chosen = choose_report_file(self.window, self.workspace.root or os.path.expanduser("~"))
        if chosen is None:
            return None
        path, fmt = chosen
        job = export_rows(self.jobs, self.browser.shown_rows(), path, fmt)
        job.succeeded.connect(
            lambda written: self.window.statusBar().showMessage(f"Saved the report to {written}", 10_000)
        )
        return job

    @Slot(object)
    def _on_written(self, result: object) -> None:
        """A compile or resize finished: show it in the table now rather than waiting for the watcher."""
        where: Location | None = getattr(result, "where", None)  # a result elsewhere names its place there
        if where is not None:
            self.offer(where)  # in the table, or one click to open it beside the shown folders

    def _locations(self) -> Locations:
        return Locations(self.settings.file_name(), demo_folder())

    @Slot()
    def show_about(self) -> AboutDialog:
        """Versions, backends (detected in a job), where settings and the demo workspace live."""
        dialog = AboutDialog(self._locations(), self.backend_status, self.window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def version_text(self) -> str:
        """The About box's text (Help ▸ Copy Version Information), with the backends as last detected."""
        return about_text(self._locations(), self.backend_status)

    def open_guide(self, page: Path) -> GuideViewer:
        """Help ▸ Documentation: the guide's page, inside the app."""
        viewer = GuideViewer(page, self.window)
        viewer.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        viewer.show()
        return viewer

    @Slot()
    def show_preferences(self) -> PreferencesDialog:
        dialog = PreferencesDialog(self.settings, self.backend_status, self.window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(self.preferencesAccepted)  # the ssh config chosen there, from now on
        dialog.open()
        return dialog
