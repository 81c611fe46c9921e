"""Which folder the window shows: Open Folder, the demo workspace, Open Recent (folders, servers and buckets), the
window title."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Slot
from PySide6.QtWidgets import QFileDialog, QMenu

from rbln_artifact_studio.core.location import BucketPrefix
from rbln_artifact_studio.gui.app.app_paths import demo_folder

if TYPE_CHECKING:
    from rbln_artifact_studio.gui.window.main_window import MainWindow


class FolderControl(QObject):
    """Opens folders in the workspace and keeps the Open Recent menu and the title in step with it."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.recent_menu = QMenu("Open &Recent", window)
        self.recent_menu.setObjectName("recentMenu")
        self.recent_menu.aboutToShow.connect(self.fill_recent_menu)  # servers and buckets remembered meanwhile
        self.fill_recent_menu()

    def connect_to(self) -> None:
        self.window.workspace.rootChanged.connect(self._on_root_changed)
        self.window.workspace.rootsChanged.connect(self._on_roots_changed)

    @Slot()
    def choose_folder(self) -> None:
        start = self.window.workspace.root or os.path.expanduser("~")
        folder = QFileDialog.getExistingDirectory(self.window, "Open a folder of compiled artifacts", start)
        if folder:
            self.open_folder(folder)

    def open_folder(self, folder: str | Path) -> None:
        self.window.workspace.open(folder)

    def reopen_workspace(self) -> bool:
        """The folders shown when the studio last quit, opened again (a start with no arguments)."""
        roots = self.window.settings.choices.get("workspace")
        roots = [r for r in roots if isinstance(r, str) and r] if isinstance(roots, list) else []
        if not roots:
            return False
        self.open_folder(roots[0])
        for folder in roots[1:]:
            self.window.workspace.add(folder)
        return True

    @Slot()
    def choose_folder_beside(self) -> None:
        """File ▸ Add Folder Beside…: another folder's artifacts join those shown."""
        start = self.window.workspace.root or os.path.expanduser("~")
        folder = QFileDialog.getExistingDirectory(self.window, "Add a folder beside those shown", start)
        if folder:
            self.window.workspace.add(folder)

    @Slot(list)
    def _on_roots_changed(self, roots: list[str]) -> None:
        """The title names the opened folder and how many beside it; the next start opens them all again."""
        if roots:
            more = f" + {len(roots) - 1} more" if len(roots) > 1 else ""
            self.window.show_folder_title(roots[0] + more)
            for folder in roots[1:]:
                self.window.settings.add_recent_folder(folder)
        self.window.settings.choices.set("workspace", roots)

    @Slot()
    def open_demo(self) -> None:
        folder = demo_folder()
        self.window.statusBar().showMessage(f"Preparing the demo workspace in {folder}…")
        from rbln_artifact_studio.gui.models import operations

        job = operations.build_demo_workspace(self.window.jobs, folder)
        job.succeeded.connect(self._on_demo_ready)

    @Slot(object)
    def _on_demo_ready(self, folder: str) -> None:
        self.window.statusBar().showMessage(f"Demo workspace: {folder}", 10_000)
        self.open_folder(folder)

    @Slot(str)
    def _on_root_changed(self, root: str) -> None:
        self.window.show_folder_title(root)
        self.window.settings.add_recent_folder(root)
        self.fill_recent_menu()

    def recent_buckets(self) -> list[dict[str, str]]:
        recent = self.window.settings.choices.get("recentBuckets")
        return [b for b in recent if isinstance(b, dict)] if isinstance(recent, list) else []

    @Slot()
    def fill_recent_menu(self) -> None:
        """Folders, then servers, then buckets, most recent first in each."""
        menu, settings = self.recent_menu, self.window.settings
        menu.clear()
        recent = settings.recent_folders()
        for folder in recent:
            action = menu.addAction(folder)
            action.triggered.connect(lambda _checked=False, f=folder: self.open_folder(f))
        servers = settings.servers()
        if servers:
            menu.addSection("Servers")
        for entry in servers:
            action = menu.addAction(f"{entry.host}: {', '.join(entry.folders)}")
            action.setObjectName(f"recentServer:{entry.host}")
            action.triggered.connect(lambda _checked=False, e=entry: self.window.server_menu.servers.connect_server(e))
        buckets = self.recent_buckets()
        if buckets:
            menu.addSection("Buckets")
        for choice in buckets:
            where = BucketPrefix(str(choice.get("bucket", "")), str(choice.get("prefix", "")).strip("/")).url
            endpoint = choice.get("endpoint")
            action = menu.addAction(f"{where} ({endpoint})" if endpoint else where)
            action.triggered.connect(lambda _checked=False, c=choice: self.window.dialogs.reopen_bucket(c))
        if recent:
            menu.addSeparator()
            clear = menu.addAction("Clear Recent Folders")
            clear.triggered.connect(self._clear_recent)
        menu.setEnabled(bool(recent or servers or buckets))

    @Slot()
    def _clear_recent(self) -> None:
        self.window.settings.clear_recent_folders()
        self.fill_recent_menu()
