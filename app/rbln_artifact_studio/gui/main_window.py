"""The main window: artifact table and detail panel, menus and shortcuts, jobs dock, status bar."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, Qt, QUrl, Slot
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QApplication, QFileDialog, QLabel, QMainWindow, QMenu, QMessageBox, QSplitter, QWidget

from rbln_artifact_studio.gui import disk_watcher
from rbln_artifact_studio.gui.app_paths import app_icon, demo_folder
from rbln_artifact_studio.gui.artifact_actions import ArtifactActions
from rbln_artifact_studio.gui.artifact_browser import ArtifactBrowser
from rbln_artifact_studio.gui.artifact_model import COLUMNS_VERSION, ArtifactTableModel
from rbln_artifact_studio.gui.backend_status import BackendStatus
from rbln_artifact_studio.gui.detail_panel import DetailPanel
from rbln_artifact_studio.gui.errors import show_error
from rbln_artifact_studio.gui.jobs import Job, JobFailure, JobManager
from rbln_artifact_studio.gui.jobs_panel import JobsPanel
from rbln_artifact_studio.gui.server_actions import ServerMenu
from rbln_artifact_studio.gui.settings import Settings
from rbln_artifact_studio.gui.workspace import Workspace

if TYPE_CHECKING:  # the backends, the compiler and the dialogs load when first used, not before the window shows
    from rbln_artifact_studio.backends.choice import BackendChoice
    from rbln_artifact_studio.core.fleet.artifact import Artifact
    from rbln_artifact_studio.core.model.kinds import ModelDescription
    from rbln_artifact_studio.core.simulator.compiler import CompileRequest
    from rbln_artifact_studio.gui.about_dialog import AboutDialog
    from rbln_artifact_studio.gui.compile_wizard import CompileWizard
    from rbln_artifact_studio.gui.preferences_dialog import PreferencesDialog
    from rbln_artifact_studio.gui.resize_dialog import ResizeDialog

APP_NAME = "RBLN Artifact Studio"
HEADER_STATE = f"artifactHeader{COLUMNS_VERSION}"  # a new column layout starts from its own defaults


def main_window() -> MainWindow | None:
    """The application's main window (also the QApplication property 'mainWindow')."""
    app = QApplication.instance()
    window = app.property("mainWindow") if app is not None else None
    return window if isinstance(window, MainWindow) else None


class MainWindow(QMainWindow):
    def __init__(self, settings: Settings | None = None, debounce_ms: int = 300) -> None:
        super().__init__()
        self.setObjectName("mainWindow")
        self.setWindowTitle(APP_NAME)
        self.setWindowIcon(app_icon())
        self.setAcceptDrops(True)
        self.settings = settings or Settings()
        self.jobs = JobManager(self)
        self.backend_status = BackendStatus(self.jobs, self.settings.toolchain(), self)
        self.model = ArtifactTableModel(self)
        self.workspace = Workspace(self.jobs, self.model, debounce_ms, self)
        self.browser = ArtifactBrowser(self.model)
        self.detail = DetailPanel()
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.addWidget(self.browser)
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.setCentralWidget(self.splitter)
        self.jobs_panel = JobsPanel(self.jobs, self)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.jobs_panel)
        self.count_label = QLabel()
        self.count_label.setObjectName("artifactCount")
        self.statusBar().addPermanentWidget(self.count_label)
        self.watch_label = QLabel()  # shown only when the disk watcher had to leave artifact folders out
        self.watch_label.setObjectName("watchLimit")
        self.watch_label.hide()
        self.statusBar().addPermanentWidget(self.watch_label)

        self.artifact: Artifact | None = None
        self._no_resize_reason: str | None = None  # why the selected model offers no resize (no KV cache)
        self._base_tips: dict[QAction, str] = {}  # the KV actions' own tooltips, before a reason is added
        self._detail_job: Job | None = None
        self._select_when_shown: str | None = None
        self._create_actions()
        self.artifact_actions = ArtifactActions(self)  # context menu, toolbar, trash, compare
        self.addToolBar(self.artifact_actions.toolbar)
        self._create_menus()
        self._connect()
        self.server_menu = ServerMenu(self)  # File ▸ Connect to Server…, the Server menu, servers' rows
        self._restore_state()
        self._update_actions()
        self._update_count()
        app = QApplication.instance()
        if app is not None:
            app.setProperty("mainWindow", self)

    # ---- construction --------------------------------------------------------------------------------

    def _action(
        self, name: str, text: str, slot: object, shortcut: QKeySequence | QKeySequence.StandardKey | str | None = None
    ) -> QAction:
        action = QAction(text, self)
        action.setObjectName(name)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        self.addAction(action)
        return action

    def _create_actions(self) -> None:
        self.action_open = self._action(
            "actionOpenFolder", "&Open Folder…", self.choose_folder, QKeySequence.StandardKey.Open
        )
        self.action_open_bucket = self._action("actionOpenBucket", "Open &Bucket…", self.open_bucket_dialog)
        self.action_demo = self._action("actionOpenDemo", "Open &Demo Workspace", self.open_demo)
        self.action_refresh = self._action(
            "actionRefresh", "&Refresh", self.workspace.refresh, QKeySequence.StandardKey.Refresh
        )
        self.action_quit = self._action("actionQuit", "&Quit", self.close, QKeySequence.StandardKey.Quit)
        self.action_compile = self._action("actionCompile", "&Compile…", self.open_compile_wizard, "Ctrl+N")
        self.action_resize = self._action("actionResize", "&Resize KV Cache…", self.open_resize_dialog, "Ctrl+R")
        self.action_plan = self._action("actionPlan", "&Plan Co-location…", self.open_planner, "Ctrl+Shift+P")
        self.action_explore = self._action("actionExplore", "&Explore Budgets…", self.open_explorer, "Ctrl+Shift+B")
        self.action_export = self._action("actionExport", "&Export Report…", self.export_report, "Ctrl+E")
        self.action_copy_path = self._action("actionCopyPath", "Copy &Path", self.copy_path, "Ctrl+Shift+C")
        self.action_filter = self._action("actionFilter", "&Filter…", self.focus_filter, QKeySequence.StandardKey.Find)
        self.action_about = self._action("actionAbout", "&About", self.show_about)
        self.action_preferences = self._action(
            "actionPreferences", "Pre&ferences…", self.show_preferences, QKeySequence.StandardKey.Preferences
        )
        self.action_preferences.setMenuRole(QAction.MenuRole.PreferencesRole)
        if self.action_preferences.shortcut().isEmpty():  # no platform convention (e.g. some X11 desktops)
            self.action_preferences.setShortcut(QKeySequence("Ctrl+,"))
        self.action_jobs = self.jobs_panel.toggleViewAction()
        self.action_jobs.setObjectName("actionShowJobs")
        self.action_jobs.setShortcut(QKeySequence("Ctrl+J"))

    def _create_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addAction(self.action_open)
        file_menu.addAction(self.action_open_bucket)
        self.recent_menu = QMenu("Open &Recent", self)
        self.recent_menu.setObjectName("recentMenu")
        file_menu.addMenu(self.recent_menu)
        file_menu.addAction(self.action_demo)
        file_menu.addAction(self.action_refresh)
        file_menu.addAction(self.action_export)
        file_menu.addSeparator()
        file_menu.addAction(self.action_preferences)
        file_menu.addSeparator()
        file_menu.addAction(self.action_quit)
        artifact_menu = bar.addMenu("&Artifact")
        artifact_menu.addAction(self.action_compile)
        artifact_menu.addSeparator()
        self.artifact_actions.fill_menu(artifact_menu)
        artifact_menu.addSeparator()
        artifact_menu.addAction(self.action_filter)
        view_menu = bar.addMenu("&View")
        view_menu.addAction(self.action_jobs)
        view_menu.addAction(self.artifact_actions.toolbar_action)
        help_menu = bar.addMenu("&Help")
        help_menu.addAction(self.action_about)
        self._fill_recent_menu()

    def _connect(self) -> None:
        self.browser.currentPathChanged.connect(self._on_current_path)
        self.browser.painted.connect(self.workspace.batch_shown)
        self.model.dataChanged.connect(self._on_rows_changed)
        self.model.rowsInserted.connect(self._on_rows_inserted)
        self.model.rowsInserted.connect(self._update_count)
        self.model.rowsRemoved.connect(self._update_count)
        self.model.modelReset.connect(self._update_count)
        self.browser.proxy.rowsInserted.connect(self._update_count)
        self.browser.proxy.rowsRemoved.connect(self._update_count)
        self.browser.proxy.layoutChanged.connect(self._update_count)
        self.workspace.rootChanged.connect(self._on_root_changed)
        self.workspace.scanFinished.connect(self._on_scan_finished)
        # The first row is shown once every row is read, not after the full checks (seconds on a large fleet).
        self.workspace.rowsRead.connect(self._select_first_row)
        self.workspace.watcher.limited.connect(self._on_watch_limit)
        self.jobs.jobFailed.connect(self._on_job_failed)
        self.browser.view.selectionModel().selectionChanged.connect(self._update_actions)

    def _restore_state(self) -> None:
        s = self.settings
        geometry = s.state("geometry")
        if geometry is None or not self.restoreGeometry(geometry):
            self.resize(1280, 800)
        window_state = s.state("windowState")
        if window_state is None or not self.restoreState(window_state):
            self.jobs_panel.widget().setMinimumHeight(0)
            self.resizeDocks([self.jobs_panel], [110], Qt.Orientation.Vertical)
        splitter = s.state("mainSplitter")
        if splitter is None or not self.splitter.restoreState(splitter):
            self.splitter.setSizes([700, 580])
        header = s.state(HEADER_STATE)
        if header is not None:
            self.browser.view.horizontalHeader().restoreState(header)

    def save_state(self) -> None:
        s = self.settings
        s.set_state("geometry", self.saveGeometry())
        s.set_state("windowState", self.saveState())
        s.set_state("mainSplitter", self.splitter.saveState())
        s.set_state(HEADER_STATE, self.browser.view.horizontalHeader().saveState())
        s.save()

    # ---- folders -------------------------------------------------------------------------------------

    @Slot()
    def choose_folder(self) -> None:
        start = self.workspace.root or os.path.expanduser("~")
        folder = QFileDialog.getExistingDirectory(self, "Open a folder of compiled artifacts", start)
        if folder:
            self.open_folder(folder)

    def open_folder(self, folder: str | Path) -> None:
        self.workspace.open(folder)

    @Slot()
    def open_bucket_dialog(self) -> QWidget:
        """File ▸ Open Bucket…: the bucket's artifacts join the table (gui/bucket_dialog.py)."""
        from rbln_artifact_studio.gui.bucket_dialog import BucketDialog, open_bucket

        dialog = BucketDialog(self)
        dialog.accepted.connect(lambda: open_bucket(self.jobs, self.model, dialog.location()))
        dialog.open()
        return dialog

    @Slot()
    def open_demo(self) -> None:
        folder = demo_folder()
        self.statusBar().showMessage(f"Preparing the demo workspace in {folder}…")
        from rbln_artifact_studio.gui import operations

        job = operations.build_demo_workspace(self.jobs, folder)
        job.succeeded.connect(self._on_demo_ready)

    @Slot(object)
    def _on_demo_ready(self, folder: str) -> None:
        self.statusBar().showMessage(f"Demo workspace: {folder}", 10_000)
        self.open_folder(folder)

    @Slot(str)
    def _on_root_changed(self, root: str) -> None:
        self.setWindowTitle(f"{APP_NAME} — {root}")
        self.settings.add_recent_folder(root)
        self._fill_recent_menu()
        self.detail.show_message("Select an artifact to see its KV cache and DRAM breakdown.")
        self.artifact = None
        self._update_actions()

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        recent = self.settings.recent_folders()
        for folder in recent:
            action = self.recent_menu.addAction(folder)
            action.triggered.connect(lambda _checked=False, f=folder: self.open_folder(f))
        if recent:
            self.recent_menu.addSeparator()
            clear = self.recent_menu.addAction("Clear Recent Folders")
            clear.triggered.connect(self._clear_recent)
        self.recent_menu.setEnabled(bool(recent))

    @Slot()
    def _clear_recent(self) -> None:
        self.settings.clear_recent_folders()
        self._fill_recent_menu()

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        urls = event.mimeData().urls()
        if len(urls) == 1 and urls[0].isLocalFile():
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:
        urls: list[QUrl] = event.mimeData().urls()
        if len(urls) == 1 and urls[0].isLocalFile():
            event.acceptProposedAction()
            self.open_folder(urls[0].toLocalFile())

    # ---- selection and details -----------------------------------------------------------------------

    @Slot(str)
    def _on_current_path(self, path: str) -> None:
        self.artifact, self._no_resize_reason = None, None
        self._update_actions()
        if not path:
            self._detail_job = None
            self.detail.show_message("Select an artifact to see its KV cache and DRAM breakdown.")
            return
        self.detail.show_loading(Path(path).name)
        self._load_details(path)

    def _load_details(self, path: str) -> None:
        from rbln_artifact_studio.gui import operations

        job = self._detail_job = operations.read_artifact(self.jobs, path, self.settings.toolchain().settings())
        job.succeeded.connect(self._on_details)
        job.failed.connect(self._on_details_failed)

    @Slot(object)
    def _on_details(self, artifact: Artifact | ModelDescription) -> None:
        from rbln_artifact_studio.core.model.kinds import ModelDescription

        if self.sender() is not self._detail_job or str(artifact.where) != self.browser.current_path():
            return  # the selection moved on while it was read
        self._detail_job = None
        if isinstance(artifact, ModelDescription):  # no resizable KV cache: describe it, offer no resize
            self.artifact, self._no_resize_reason = None, artifact.kv_note
            self.detail.show_description(artifact)
        else:
            self.artifact, self._no_resize_reason = artifact, None
            self.detail.show_artifact(artifact)
        self._update_actions()

    @Slot(object)
    def _on_details_failed(self, failure: JobFailure) -> None:
        if self.sender() is not self._detail_job:
            return
        self._detail_job = None
        self.detail.show_error(Path(self.browser.current_path()).name, failure.reason)

    @Slot(QModelIndex, QModelIndex)
    def _on_rows_changed(self, top: QModelIndex, bottom: QModelIndex) -> None:
        current = self.browser.current_path()
        row = self.model.row_of(current) if current else None
        if row is not None and top.row() <= row <= bottom.row():
            self._load_details(current)  # changed on disk (e.g. resized from a terminal): read it again

    @Slot()
    def _on_rows_inserted(self) -> None:
        wanted = self._select_when_shown
        if wanted and self.browser.select_path(wanted):
            self._select_when_shown = None

    @Slot()
    def _on_scan_finished(self) -> None:
        self._update_count()
        self._select_first_row()

    def _select_first_row(self) -> None:
        current = self.browser.current_path()
        if not current and self.model.rowCount() and self._select_when_shown is None:
            self.browser.view.selectRow(0)

    def _update_actions(self) -> None:
        self.action_resize.setEnabled(self.artifact is not None)
        self.action_explore.setEnabled(self.artifact is not None)
        self.action_plan.setEnabled(len(self.browser.selected_paths()) >= 2)
        self.action_copy_path.setEnabled(bool(self.browser.current_path()))
        self.artifact_actions.update()
        # A model without a resizable KV cache: the KV actions stay off and their tooltips say why.
        reason = self._no_resize_reason if self.artifact is None else None
        kv_actions = (
            self.action_resize,
            self.action_explore,
            self.artifact_actions.resize_copy,
            self.artifact_actions.serving,
        )
        for action in kv_actions:
            base = self._base_tips.setdefault(action, action.toolTip())
            tip = f"{base}: not offered. {reason}" if reason else base
            action.setToolTip(tip)
            action.setStatusTip(tip)

    @Slot(int)
    def _on_watch_limit(self, left_out: int) -> None:
        self.watch_label.setVisible(left_out > 0)
        refresh = self.action_refresh.shortcut().toString(QKeySequence.SequenceFormat.NativeText) or "Refresh"
        self.watch_label.setText(f"Changes inside {left_out:,} artifact(s) show after {refresh}")
        self.watch_label.setToolTip(
            f"Only {disk_watcher.MAX_ARTIFACT_WATCHES:,} artifact folders are watched for changes made outside the app (each "
            "watch slows the next). Artifacts created or deleted anywhere still show up on their own; a resize or "
            f"edit inside one of the other {left_out:,} shows after File ▸ Refresh."
        )

    @Slot()
    def _update_count(self) -> None:
        total, shown = self.model.rowCount(), self.browser.proxy.rowCount()
        text = f"{total:,} artifact(s)" if shown == total else f"{shown:,} of {total:,} artifact(s) shown"
        self.count_label.setText(text)

    # ---- actions -------------------------------------------------------------------------------------

    @Slot()
    def open_compile_wizard(self) -> CompileWizard:
        parent = self.workspace.root or os.path.expanduser("~")
        from rbln_artifact_studio.gui.compile_wizard import CompileWizard

        wizard = CompileWizard(self.jobs, parent, self, backends=self.backend_status)
        wizard.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        wizard.compileRequested.connect(self.start_compile)
        wizard.open()
        return wizard

    @Slot(object, str, object)
    def start_compile(self, request: CompileRequest, output_dir: str, backend: BackendChoice) -> Job:
        from rbln_artifact_studio.gui import operations

        job = operations.compile_artifact(self.jobs, request, output_dir, backend, self.settings.toolchain().settings())
        self.artifact_actions.busy.track(job, output_dir)
        job.succeeded.connect(self._on_written)
        self.statusBar().showMessage(f"Compiling {request.model_id} into {output_dir}…")
        return job

    @Slot()
    def open_resize_dialog(self) -> ResizeDialog | None:
        if self.artifact is None:
            return None
        return self.resize_dialog_for(self.artifact)

    def resize_dialog_for(
        self,
        artifact: Artifact,
        target: int | None = None,
        budget_text: str | None = None,
        parent: QWidget | None = None,
    ) -> ResizeDialog:
        """The resize dialog for an artifact, optionally starting from a count or a budget (planner, explorer)."""
        from rbln_artifact_studio.gui.resize_dialog import ResizeDialog

        dialog = ResizeDialog(artifact, parent or self, self.jobs, target, budget_text)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(self._on_resize_accepted)
        dialog.open()
        return dialog

    @Slot()
    def _on_resize_accepted(self) -> None:
        dialog = self.sender()
        from rbln_artifact_studio.gui import operations
        from rbln_artifact_studio.gui.resize_dialog import ResizeDialog

        if isinstance(dialog, ResizeDialog) and dialog.choice is not None:
            job = operations.resize(self.jobs, dialog.choice, self.settings.toolchain().settings())
            outputs = [dialog.choice.output_dir] if dialog.choice.output_dir else []
            self.artifact_actions.busy.track(job, str(dialog.choice.artifact_dir), *map(str, outputs))
            job.succeeded.connect(self._on_written)

    # ---- planning, exploring, exporting --------------------------------------------------------------

    @Slot()
    def open_planner(self) -> QWidget | None:
        from rbln_artifact_studio.gui.planner_dialog import (
            PlannerDialog,
        )  # loaded when first used, like the other dialogs

        paths = self.browser.selected_paths()
        if len(paths) < 2:
            return None
        dialog = PlannerDialog(
            self.jobs, paths, self.resize_dialog_for, self.settings.toolchain().settings(), self.model, self
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    @Slot()
    def open_explorer(self) -> QWidget | None:
        from rbln_artifact_studio.gui.explorer_dialog import ExplorerDialog

        if self.artifact is None:
            return None
        dialog = ExplorerDialog(self.jobs, self.artifact, self.resize_dialog_for, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    @Slot()
    def export_report(self) -> Job | None:
        from rbln_artifact_studio.gui.export import choose_report_file, export_rows

        chosen = choose_report_file(self, self.workspace.root or os.path.expanduser("~"))
        if chosen is None:
            return None
        path, fmt = chosen
        job = export_rows(self.jobs, self.browser.shown_summaries(), path, fmt)
        job.succeeded.connect(lambda written: self.statusBar().showMessage(f"Saved the report to {written}", 10_000))
        return job

    @Slot(object)
    def _on_written(self, result: object) -> None:
        """A compile or resize finished: show it in the table now rather than waiting for the watcher."""
        path = str(getattr(result, "path", ""))
        if not path:
            return
        self.statusBar().showMessage(f"Wrote {path}", 10_000)
        self._select_when_shown = path
        self.workspace.rescan([path, os.path.dirname(path)])
        self._on_rows_inserted()

    @Slot()
    def copy_path(self) -> None:
        path = self.browser.current_path()
        if path:
            QGuiApplication.clipboard().setText(path)
            self.statusBar().showMessage(f"Copied {path}", 5_000)

    @Slot()
    def focus_filter(self) -> None:
        self.browser.filter_edit.setFocus()
        self.browser.filter_edit.selectAll()

    @Slot()
    def show_about(self) -> AboutDialog:
        """Versions, backends (detected in a job), where settings and the demo workspace live."""
        from rbln_artifact_studio.gui.about_dialog import AboutDialog, Locations

        locations = Locations(self.settings.file_name(), demo_folder())
        dialog = AboutDialog(locations, self.backend_status, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    @Slot()
    def show_preferences(self) -> PreferencesDialog:
        from rbln_artifact_studio.gui.preferences_dialog import PreferencesDialog

        dialog = PreferencesDialog(self.settings, self.backend_status, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    @Slot(object, object)
    def _on_job_failed(self, job: Job, failure: JobFailure) -> QWidget | None:
        if not job.visible:
            return None
        self.statusBar().showMessage(f"{job.title} failed: {failure.reason}", 10_000)
        if job.surfaced:
            return None  # background work the user did not start: the jobs panel lists it, no modal box
        return show_error(self, f"{job.title} failed", failure.reason, failure.details)

    # ---- closing -------------------------------------------------------------------------------------

    def confirm_quit_with_jobs(self, count: int) -> bool:
        answer = QMessageBox.question(
            self,
            "Jobs are running",
            f"{count} job(s) are still running. Cancel them and quit? Cancelled work leaves nothing half-done.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes

    def closeEvent(self, event: QCloseEvent) -> None:
        # A scan only reads (its full checks can run for a while on a large fleet): cancelling it loses nothing.
        running = [job for job in self.jobs.active_visible() if job is not self.workspace.scan_job]
        if running and not self.confirm_quit_with_jobs(len(running)):
            event.ignore()
            return
        self.save_state()
        self.workspace.watcher.clear()
        self.jobs.cancel_all()
        self.jobs.wait()
        event.accept()
