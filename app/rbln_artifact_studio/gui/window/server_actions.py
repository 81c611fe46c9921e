"""The main window's server commands: File ▸ Connect to Server…, and the Server menu (devices, plan now, the fleet
console, disconnect); the servers connected when the studio last quit are connected again."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu, QMessageBox, QTabWidget

from rbln_artifact_studio.core.location import server_url
from rbln_artifact_studio.gui.app.errors import show_error
from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.dialogs.bucket_dialog import reopen_buckets
from rbln_artifact_studio.gui.models.artifact_model import ArtifactTableModel
from rbln_artifact_studio.gui.models.jobs import JobManager
from rbln_artifact_studio.gui.models.servers import HostKeyQuestion, ServerSources
from rbln_artifact_studio.gui.models.workspace import Workspace
from rbln_artifact_studio.gui.window.selection_details import Selection
from rbln_artifact_studio.gui.window.vllm_cache_action import VllmCacheActions
from rbln_artifact_studio.gui.window.window_actions import add_action
from rbln_artifact_studio.remote.ssh_config import chosen_config

if TYPE_CHECKING:  # types only: the menu's dialogs, the console and remote/ load when first used
    from rbln_artifact_studio.core.fleet.artifact import Artifact
    from rbln_artifact_studio.gui.dialogs.connect_dialog import ConnectDialog
    from rbln_artifact_studio.gui.dialogs.devices_dialog import DevicesDialog
    from rbln_artifact_studio.gui.dialogs.host_key_dialog import HostKeyDialog
    from rbln_artifact_studio.gui.dialogs.resize_dialog import ResizeDialog
    from rbln_artifact_studio.gui.dialogs.server_plan_dialog import ServerPlanDialog
    from rbln_artifact_studio.gui.window.fleet_console import FleetConsole
    from rbln_artifact_studio.gui.window.server_dialogs import ServerDialogs
    from rbln_artifact_studio.remote.remote_jobs import JobOutcome


def _menu(window: QMainWindow, title: str) -> QMenu | None:
    for action in window.menuBar().actions():
        if action.text() == title and action.menu() is not None:
            menu = action.menu()
            return menu if isinstance(menu, QMenu) else None
    return None


class ServerMenu(QObject):
    """Owns the ServerSources of a window and the actions that drive it."""

    def __init__(
        self,
        window: QMainWindow,
        jobs_panel: QDockWidget,
        selection: Selection,
        open_resize: Callable[[Artifact, int], ResizeDialog],
        jobs: JobManager,
        model: ArtifactTableModel,
        settings: Settings,
        workspace: Workspace,
    ) -> None:
        """window: its menus take the actions, its main area the console's tab (jobs_panel keeps its height);
        open_resize: the resize dialog for an artifact at a block count (the console's Resize to a Copy…)."""
        super().__init__(window)
        self.window, self.jobs_panel, self.selection, self.open_resize = window, jobs_panel, selection, open_resize
        self.jobs, self.model, self.settings = jobs, model, settings
        # RBLN_STUDIO_SSH_CONFIG first, as the CLI, then the file chosen in Preferences, else ssh's own
        self.servers = ServerSources(jobs, model, settings, chosen_config(settings.ssh_config()), parent=self)
        self.console: FleetConsole | None = None
        self._server_dialogs: ServerDialogs | None = None
        self.tabs: QTabWidget | None = None
        self._jobs_height = 0
        self._build_actions()
        self._build_menus()
        self.servers.hostKeyQuestion.connect(self._ask_host_key)
        self.servers.failed.connect(self._on_failed)
        self.servers.jobsReadBack.connect(self._show_outcomes)
        self.servers.changed.connect(self._fill_disconnect_menu)
        workspace.rootChanged.connect(self.servers.show_again)
        self._fill_disconnect_menu()
        self._reconnect()

    def _build_actions(self) -> None:
        a = partial(add_action, self.window)
        self.action_connect = a("actionConnectServer", "Connect to &Server…", self.open_connect_dialog, "Ctrl+Shift+O")
        self.action_devices = a("actionServerDevices", "NPU &Devices…", self.open_devices, "Ctrl+Shift+D")
        self.action_plan_now = a("actionPlanOnServer", "Plan on Server &Now…", self.open_server_plan)
        self.action_servers_view = a(
            "actionServersView", "Fleet &Console", lambda: self.open_servers_view(), "Ctrl+Shift+V"
        )

    def _build_menus(self) -> None:
        """Connect to Server… in the File menu; the Server menu before the View menu."""
        window = self.window
        self.disconnect_menu = QMenu("&Disconnect", window)
        self.disconnect_menu.setObjectName("disconnectMenu")
        file_menu, demo = _menu(window, "&File"), window.findChild(QAction, "actionOpenDemo")
        if file_menu is not None and demo is not None:  # before Open Demo Workspace, the end of what File opens
            file_menu.insertAction(demo, self.action_connect)
        server_menu = QMenu("&Server", window)
        server_menu.setObjectName("serverMenu")
        server_menu.addActions([self.action_connect, self.action_devices, self.action_plan_now])
        server_menu.addAction(self.action_servers_view)
        server_menu.addSeparator()
        server_menu.addMenu(self.disconnect_menu)
        self.vllm_cache = VllmCacheActions(window, self.jobs, self.model, self.servers.hosts, file_menu, server_menu)
        view = _menu(window, "&View")
        if view is not None:
            window.menuBar().insertMenu(view.menuAction(), server_menu)
        else:
            window.menuBar().addMenu(server_menu)

    def _reconnect(self) -> None:
        """The servers connected and the buckets open when the studio last quit, and the console if it was in use (in
        jobs: never waited on)."""
        settings = self.settings
        self.servers.changed.connect(self._remember_connected)
        remembered = {e.host: e for e in settings.servers()}
        for host in settings.session.connected_hosts():
            entry = remembered.get(host)
            if entry is not None:
                self.servers.connect_server(entry)
        if settings.session.opened_buckets():
            reopen_buckets(self.jobs, self.model, settings.session.opened_buckets())
        if settings.session.console_sources() or settings.session.console_current():
            self.open_servers_view(focus=settings.session.console_current())

    @Slot()
    def _remember_connected(self) -> None:
        self.settings.session.set_connected_hosts(self.servers.hosts())

    def ssh_config_changed(self) -> None:
        """Preferences chose another ssh config: servers reached from now on use it."""
        self.servers.set_ssh_config(chosen_config(self.settings.ssh_config()))

    def _dialogs(self) -> ServerDialogs:
        """The menu's dialogs (server_dialogs.py), made when the first one is asked for."""
        if self._server_dialogs is None:
            # deferred: the Server menu's dialogs (and the devices' and the planner's readers) load with the first one
            from rbln_artifact_studio.gui.window.server_dialogs import ServerDialogs

            self._server_dialogs = ServerDialogs(self.window, self.jobs, self.settings, self.servers)
        return self._server_dialogs

    @Slot()
    def open_connect_dialog(self) -> ConnectDialog:
        dialog, self.config_hosts_job = self._dialogs().connect()
        return dialog

    @Slot(object)
    def _ask_host_key(self, question: HostKeyQuestion) -> HostKeyDialog:
        self.last_host_key_dialog = self._dialogs().host_key(question)
        return self.last_host_key_dialog

    @Slot(str, list)
    def _show_outcomes(self, host: str, outcomes: list[JobOutcome]) -> QMessageBox:
        """Jobs on a server that ended while the app was not watching (a dropped connection, a closed app)."""
        lines = []
        for o in outcomes:
            if o.ok:
                lines.append(f"Job {o.job.id}: kvcache_num_blocks {o.previous} → {o.kvcache_num_blocks} at {o.path}")
            else:
                lines.append(f"Job {o.job.id} {o.state}: {o.error}")
        box = QMessageBox(self.window)
        box.setObjectName("jobsReadBackDialog")
        box.setIcon(QMessageBox.Icon.Information)
        box.setWindowTitle(f"Jobs on {host}")
        box.setText(f"{len(outcomes)} job(s) on {host} ended while the studio was not watching:\n" + "\n".join(lines))
        box.setDetailedText(f"Their logs: rbln-studio-cli jobs {server_url(host)} JOB")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.window.statusBar().showMessage(lines[-1], 10_000)
        for o in outcomes:
            if o.ok and o.path:
                self.servers.rescan_path(host, o.path)
        self.last_outcomes_box = box
        return box

    @Slot(str, str)
    def _on_failed(self, host: str, reason: str) -> QMessageBox:
        return show_error(self.window, f"Server {host}", reason)

    @Slot()
    def open_devices(self) -> DevicesDialog:
        return self._dialogs().devices()

    @Slot()
    def open_server_plan(self) -> ServerPlanDialog | None:
        paths = self.selection.selected_paths()
        if not paths:
            self.window.statusBar().showMessage("Select the artifacts to plan on a server first.", 5_000)
            return None
        return self._dialogs().server_plan(paths)

    def open_servers_view(self, focus: bool = True) -> FleetConsole:
        """The fleet console, in a tab of the main area beside the artifacts; "Where does this fit?" for the
        selection. Reading starts when it opens."""
        # deferred: the fleet console (its model, its reader of places) loads when it is first opened
        from rbln_artifact_studio.gui.window.fleet_console import (
            DEFAULT_PERIOD,
            SETTING_PERIOD,
            FleetConsole,
            period_setting,
        )

        window = self.window
        if self.console is None or self.tabs is None:
            settings, store = self.settings, self.settings.store
            console = FleetConsole(
                self.jobs,
                self.servers.hosts,
                lambda: self.selection.artifact,
                settings.session.console_sources(),
                period_setting(store.value(SETTING_PERIOD, DEFAULT_PERIOD)),
                settings.session.short_free_bytes(),
                prepare=self.servers.configure_remote,
                http_config=settings.session.prometheus_http_config,
            )
            console.period.valueChanged.connect(lambda seconds: store.setValue(SETTING_PERIOD, seconds))
            console.sources.changed.connect(settings.session.set_console_sources)
            console.shortChanged.connect(settings.session.set_short_free_bytes)
            console.resizeCopyRequested.connect(self._resize_copy)
            self.servers.changed.connect(console.connected_changed)
            self.tabs = QTabWidget()
            self.tabs.setObjectName("mainTabs")
            self.tabs.setDocumentMode(True)
            jobs_height = self.jobs_panel.height()  # a new central widget lets the docks grow: keep theirs
            central = window.takeCentralWidget()  # the artifacts' table and details: the first tab
            if central is not None:
                self.tabs.addTab(central, "&Artifacts")
            self.tabs.addTab(console, "Fleet &Console")
            window.setCentralWidget(self.tabs)
            self._jobs_height = jobs_height
            QTimer.singleShot(0, self._keep_jobs_height)
            self.tabs.currentChanged.connect(self._remember_open)
            self.console = console
            console.sources.load_names(str(chosen_config(settings.ssh_config()) or ""))
            console.refresh_when_seen()  # a console restored behind the artifacts reads once its tab is shown
        if focus:
            self.tabs.setCurrentWidget(self.console)
            self.console.refresh()
        return self.console

    @Slot()
    def _keep_jobs_height(self) -> None:
        """The jobs dock as high as before the tabs: with no central widget between take and set, the docks took
        its room (set once the new one is laid out)."""
        self.window.resizeDocks([self.jobs_panel], [self._jobs_height], Qt.Orientation.Vertical)

    @Slot(int)
    def _remember_open(self, _index: int) -> None:
        shown = self.tabs is not None and self.tabs.currentWidget() is self.console
        self.settings.session.set_console_current(shown)

    def _resize_copy(self, artifact: Artifact, blocks: int) -> None:
        """Resize to a Copy… at the count the fleet console found to fit."""
        dialog = self.open_resize(artifact, blocks)
        dialog.mode_copy.setChecked(True)

    @Slot()
    def _fill_disconnect_menu(self) -> None:
        self.disconnect_menu.clear()
        hosts = self.servers.hosts()
        self.disconnect_menu.setEnabled(bool(hosts))
        for host in hosts:
            action = QAction(host, self.disconnect_menu)
            action.triggered.connect(lambda _checked=False, h=host: self.servers.disconnect_server(h))
            self.disconnect_menu.addAction(action)
        self.action_devices.setEnabled(bool(hosts))
        self.action_plan_now.setEnabled(bool(hosts))
