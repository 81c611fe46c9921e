"""The main window: it builds its parts (table, details, jobs dock, status bar), its actions and menus, in steps.

Each part has one job: FolderControl opens folders, SelectionDetails follows the selected artifact,
DialogLauncher opens the dialogs (made with the first one asked for: the dialogs' modules load then, not before the
first paint), StatusLine keeps the status bar, ArtifactActions acts on the selection. Each is
given the few objects it uses (the jobs, the model, the selection, a status bar ...), never this window, so it can be
built alone in a test; what one part hands to another built after it goes through a signal wired here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QApplication, QMainWindow, QSplitter

from rbln_artifact_studio.gui.app.app_paths import app_icon
from rbln_artifact_studio.gui.app.application import DISPLAY_NAME
from rbln_artifact_studio.gui.app.first_paint import AfterFirstPaint
from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.app.stop_signals import stop_requested
from rbln_artifact_studio.gui.app.theme import ThemeControl
from rbln_artifact_studio.gui.models.artifact_model import COLUMNS_VERSION, ArtifactTableModel
from rbln_artifact_studio.gui.models.backend_status import BackendStatus
from rbln_artifact_studio.gui.models.jobs import JobManager
from rbln_artifact_studio.gui.models.row_sources import RowSources
from rbln_artifact_studio.gui.models.workspace import Workspace
from rbln_artifact_studio.gui.widgets.screen_fit import resize_to_fit, restore_if_fits
from rbln_artifact_studio.gui.window.artifact_actions import ArtifactActions, BusyPaths, WindowActions
from rbln_artifact_studio.gui.window.artifact_browser import ArtifactBrowser
from rbln_artifact_studio.gui.window.detail_panel import DetailPanel, preparation_steps
from rbln_artifact_studio.gui.window.folder_control import FolderControl
from rbln_artifact_studio.gui.window.help_menu import HelpMenu
from rbln_artifact_studio.gui.window.jobs_panel import JobsPanel
from rbln_artifact_studio.gui.window.quit_question import ask_to_quit, running_jobs
from rbln_artifact_studio.gui.window.result_notice import ResultNotice
from rbln_artifact_studio.gui.window.selection_details import SelectionDetails
from rbln_artifact_studio.gui.window.server_actions import ServerMenu
from rbln_artifact_studio.gui.window.start_panel import FirstSteps
from rbln_artifact_studio.gui.window.state_notices import StateNotices
from rbln_artifact_studio.gui.window.status_line import StatusLine
from rbln_artifact_studio.gui.window.window_actions import Shortcut, add_action
from rbln_artifact_studio.gui.window.window_layout import restore_header, restore_split

if TYPE_CHECKING:  # types only: none is loaded before the window's first paint
    # PySide builds a class and its enums on its first import (docs/performance.md, row 7)
    from PySide6.QtCore import QUrl

    from rbln_artifact_studio.core.fleet.artifact import Artifact
    from rbln_artifact_studio.gui.window.window_dialogs import DialogLauncher

APP_NAME = DISPLAY_NAME
HEADER_STATE = f"artifactHeader{COLUMNS_VERSION}"  # a new column layout starts from its own defaults
DEFAULT_SIZE = QSize(1280, 800)


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
        self._dialogs: DialogLauncher | None = None  # made when the first dialog is asked for (dialogs)
        self._build_data(debounce_ms)
        self._build_central()
        self._build_parts()
        self._create_actions()
        self._build_artifact_actions()
        self._create_menus()
        self._connect_parts()
        self.server_menu = ServerMenu(  # File ▸ Connect to Server…, the Server menu, servers' rows
            self,
            self.jobs_panel,
            self.selection,
            lambda artifact, blocks: self.dialogs.resize_dialog_for(artifact, blocks),
            self.jobs,
            self.model,
            self.settings,
            self.workspace,
        )
        self.folders.serverChosen.connect(self.server_menu.servers.connect_server)  # Open Recent ▸ a server
        self.sources.servers = self.server_menu.servers  # their folders are row sources too
        self.state_notices = StateNotices(  # settings that cannot be saved, the opened folder gone
            self, self.statusBar(), self.settings, self.workspace, self.jobs, self.detail, self.folders
        )
        self._restore_state()
        self.artifact_actions.update()
        app = QApplication.instance()
        if app is not None:
            app.setProperty("mainWindow", self)
        # What the first paint does not show: the detail panel's sections, a turn at a time after that paint
        self.after_first_paint = AfterFirstPaint(self, preparation_steps(self.detail))

    # ---- construction, step by step -----------------------------------------------------------------

    def _build_data(self, debounce_ms: int) -> None:
        """The jobs, the backends' status, the table's model and the workspace that fills it."""
        self.jobs = JobManager(self)
        self.backend_status = BackendStatus(self.jobs, self.settings.toolchain(), self)
        self.model = ArtifactTableModel(self)
        self.workspace = Workspace(self.jobs, self.model, debounce_ms, self)
        self.sources = RowSources(self.jobs, self.model, self.workspace, self)  # every opened place's rows

    def _build_central(self) -> None:
        """The table and the detail panel side by side; the jobs dock below."""
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

    def _build_parts(self) -> None:
        """The parts that act for the window, each with one job."""
        status = self.statusBar()
        self.status_line = StatusLine(status, self.model, self.browser.proxy, self.workspace, self.jobs, self)
        self.selection = SelectionDetails(
            self.browser, self.model, self.workspace, self.detail, self.jobs, self.settings, self
        )
        self.folders = FolderControl(self, status, self.workspace, self.settings, self.jobs)
        self.results = ResultNotice(status, self.workspace, self.sources, self.selection.select_once_shown, self)
        self.busy = BusyPaths(self, self.sources)  # the folders running jobs use: a compile's, a resize's, a trash's
        self.first_steps = FirstSteps(
            self, self.splitter, self.browser, self.settings, self.workspace, self.model, self.jobs
        )
        self.theme = ThemeControl(self.settings, self)

    def _build_artifact_actions(self) -> None:
        """The context menu, the toolbar, trash and compare: the actions on the selection."""
        self.artifact_actions = ArtifactActions(
            self,
            browser=self.browser,
            selection=self.selection,
            actions=WindowActions(
                self.action_compile, self.action_resize, self.action_plan, self.action_explore, self.action_copy_path
            ),
            open_resize=lambda artifact: self.dialogs.resize_dialog_for(artifact),
            open_compare=lambda left, right: self.dialogs.open_compare(left, right),
            detail=self.detail,
            splitter=self.splitter,
            jobs=self.jobs,
            model=self.model,
            workspace=self.workspace,
            settings=self.settings,
            busy=self.busy,
            offer=self.results.offer,
        )
        self.addToolBar(self.artifact_actions.toolbar)

    def _action(self, name: str, text: str, slot: Callable[..., object], shortcut: Shortcut = None) -> QAction:
        return add_action(self, name, text, slot, shortcut)

    def _create_actions(self) -> None:
        f, a = self.folders, self._action  # the dialogs' launcher is asked for when an action is triggered
        self.action_open = a("actionOpenFolder", "&Open Folder…", f.choose_folder, QKeySequence.StandardKey.Open)
        self.action_add_folder = a("actionAddFolder", "&Add Folder Beside…", f.choose_folder_beside)
        self.action_open_bucket = a("actionOpenBucket", "Open &Bucket…", lambda: self.dialogs.open_bucket_dialog())
        self.action_demo = a("actionOpenDemo", "Open &Demo Workspace", f.open_demo)
        self.action_refresh = a("actionRefresh", "&Refresh", self.sources.refresh, QKeySequence.StandardKey.Refresh)
        self.action_quit = a("actionQuit", "&Quit", self.close, QKeySequence.StandardKey.Quit)
        self.action_compile = a("actionCompile", "&Compile…", lambda: self.dialogs.open_compile_wizard(), "Ctrl+N")
        self.action_resize = a("actionResize", "&Resize KV Cache…", lambda: self.dialogs.open_resize_dialog(), "Ctrl+R")
        self.action_plan = a("actionPlan", "&Plan Co-location…", lambda: self.dialogs.open_planner(), "Ctrl+Shift+P")
        self.action_explore = a(
            "actionExplore", "&Explore Budgets…", lambda: self.dialogs.open_explorer(), "Ctrl+Shift+B"
        )
        self.action_export = a("actionExport", "&Export Report…", lambda: self.dialogs.export_report(), "Ctrl+E")
        self.action_copy_path = a("actionCopyPath", "Copy &Path", self.copy_path, "Ctrl+Shift+C")
        self.action_filter = a("actionFilter", "&Filter…", self.browser.focus_filter, QKeySequence.StandardKey.Find)
        self.action_about = a("actionAbout", "&About", lambda: self.dialogs.show_about())
        self.action_preferences = a(
            "actionPreferences",
            "Pre&ferences…",
            lambda: self.dialogs.show_preferences(),
            QKeySequence.StandardKey.Preferences,
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
        file_menu.addAction(self.action_add_folder)
        file_menu.addAction(self.action_open_bucket)
        file_menu.addMenu(self.folders.recent_menu)
        file_menu.addActions([self.action_demo, self.action_refresh, self.action_export])
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
        self.view_menu = bar.addMenu("&View")
        self.view_menu.addAction(self.action_jobs)
        self.view_menu.addAction(self.artifact_actions.toolbar_action)
        self.view_menu.addSeparator()
        self.view_menu.addMenu(self.theme.menu)
        self.help_menu = bar.addMenu("&Help")
        self.help = HelpMenu(self, self.statusBar(), self.backend_status, lambda: self.dialogs)
        self.help.fill(self.help_menu, self.action_about)

    def _connect_parts(self) -> None:
        self.browser.painted.connect(self.workspace.batch_shown)
        self.selection.connect_to()
        self.selection.changed.connect(self.artifact_actions.update)
        self.folders.connect_to()
        self.folders.bucketChosen.connect(lambda choice: self.dialogs.reopen_bucket(choice))  # Open Recent ▸ a bucket
        self.status_line.connect_to(self.action_refresh)

    def _restore_state(self) -> None:
        s = self.settings
        if not restore_if_fits(self, s.state("geometry")):
            resize_to_fit(self, DEFAULT_SIZE.width(), DEFAULT_SIZE.height())
        window_state = s.state("windowState")
        if window_state is None or not self.restoreState(window_state):
            self.jobs_panel.widget().setMinimumHeight(0)
            self.resizeDocks([self.jobs_panel], [110], Qt.Orientation.Vertical)
        # Repaired where it would hide the details or the table (window_layout.py)
        restore_split(self.splitter, s.state("mainSplitter"), self.width())
        restore_header(self.browser.view.horizontalHeader(), s.state(HEADER_STATE))

    # ---- what the window itself does ---------------------------------------------------------------

    @property
    def dialogs(self) -> DialogLauncher:
        """Opens the window's dialogs (window_dialogs.py); made when the first one is asked for."""
        if self._dialogs is None:
            # deferred: the dialogs, and the compiler, estimator and pydantic they use, load with the first one opened
            from rbln_artifact_studio.gui.window.window_dialogs import DialogLauncher

            self._dialogs = DialogLauncher(
                self,
                browser=self.browser,
                selection=self.selection,
                jobs=self.jobs,
                model=self.model,
                workspace=self.workspace,
                settings=self.settings,
                backend_status=self.backend_status,
                busy=self.busy,
                offer=self.results.offer,
                # run in a job's worker: remote/ given this window's ssh options
                prepare_remote=self.server_menu.servers.configure_remote,
            )
            self._dialogs.preferencesAccepted.connect(self.server_menu.ssh_config_changed)
        return self._dialogs

    @property
    def artifact(self) -> Artifact | None:
        """The selected artifact once its details are read (None while loading, or for a model without KV cache)."""
        return self.selection.artifact

    def save_state(self) -> None:
        s = self.settings
        s.set_state("geometry", self.saveGeometry())
        s.set_state("windowState", self.saveState())
        s.set_state("mainSplitter", self.splitter.saveState())
        s.set_state(HEADER_STATE, self.browser.view.horizontalHeader().saveState())
        s.save()

    def open_folder(self, folder: str | Path) -> None:
        self.folders.open_folder(folder)

    def open_demo(self) -> None:
        self.folders.open_demo()

    def copy_path(self) -> None:
        path = self.browser.current_path()
        if path:
            QGuiApplication.clipboard().setText(path)
            self.statusBar().showMessage(f"Copied {path}", 5_000)

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

    def confirm_quit_with_jobs(self, count: int) -> bool:
        """Ask before cancelling the running jobs (the question follows them while open: quit_question.py)."""
        return ask_to_quit(self, self.jobs, self.workspace)

    def closeEvent(self, event: QCloseEvent) -> None:
        running = running_jobs(self.jobs, self.workspace)
        if running and not stop_requested() and not self.confirm_quit_with_jobs(len(running)):
            event.ignore()
            return
        self.save_state()
        self.workspace.watcher.clear()
        self.state_notices.stop()
        self.jobs.cancel_all()
        self.jobs.wait()
        event.accept()
