"""File ▸ Open vLLM Cache… and Server ▸ vLLM Cache on Server ▸ HOST: vllm-rbln's cache here or on a connected
server opened in its own window (gui/dialogs/vllm_cache_dialog.py)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMainWindow, QMenu

from rbln_artifact_studio.core.location import Location, ServerFolder
from rbln_artifact_studio.gui.models.artifact_model import ArtifactTableModel
from rbln_artifact_studio.gui.models.jobs import JobManager
from rbln_artifact_studio.gui.models.place_scan import open_place
from rbln_artifact_studio.gui.window.window_actions import add_action

if TYPE_CHECKING:  # a type only: the cache's window loads when first opened
    from rbln_artifact_studio.gui.dialogs.vllm_cache_dialog import VllmCacheDialog

SERVER_CACHE = "~/.cache/vllm"  # vllm-rbln's default VLLM_CACHE_ROOT, below the login folder there


class VllmCacheActions(QObject):
    """The two ways in, and the windows they opened."""

    def __init__(
        self,
        window: QMainWindow,
        jobs: JobManager,
        model: ArtifactTableModel,
        hosts: Callable[[], list[str]],
        file_menu: QMenu | None,
        server_menu: QMenu,
    ) -> None:
        """hosts: the servers connected now; file_menu takes Open vLLM Cache… after Open Bucket…"""
        super().__init__(window)
        self.window, self.jobs, self.model, self.hosts = window, jobs, model, hosts
        self.action_open = add_action(window, "actionOpenVllmCache", "Open &vLLM Cache…", self.open_local)
        if file_menu is not None:
            bucket = window.findChild(QAction, "actionOpenBucket")
            after = (
                file_menu.actions()[file_menu.actions().index(bucket) + 1] if bucket in file_menu.actions() else None
            )
            file_menu.insertAction(after, self.action_open) if after else file_menu.addAction(self.action_open)
        self.server_caches = QMenu("v&LLM Cache on Server", window)
        self.server_caches.setObjectName("vllmCacheOnServerMenu")
        self.server_caches.aboutToShow.connect(self.fill_server_menu)
        server_menu.addMenu(self.server_caches)
        self.fill_server_menu()

    @Slot()
    def fill_server_menu(self) -> None:
        self.server_caches.clear()
        hosts = self.hosts()
        for host in hosts:
            action = self.server_caches.addAction(host, partial(self.open_on_server, host))
            action.setObjectName(f"vllmCacheOn:{host}")
        if not hosts:
            self.server_caches.addAction("Connect to a server first").setEnabled(False)

    def _open_in_table(self, where: Location) -> object:
        return open_place(self.jobs, self.model, where)

    def open_cache(self, root: Location | None) -> VllmCacheDialog:
        """A window on the cache at root (None: this computer's), read at once."""
        # deferred: the cache's window and core/vllm_cache (hashlib, the model's kinds) load when it is first opened
        from rbln_artifact_studio.gui.dialogs.vllm_cache_dialog import VllmCacheDialog

        dialog = VllmCacheDialog(self.window, self.jobs, root, self._open_in_table)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        dialog.read()
        return dialog

    @Slot()
    def open_local(self) -> VllmCacheDialog:
        """This computer's cache ($VLLM_CACHE_ROOT, else ~/.cache/vllm): another root can be typed in the window."""
        return self.open_cache(None)

    def open_on_server(self, host: str) -> VllmCacheDialog:
        return self.open_cache(ServerFolder(host, SERVER_CACHE))
