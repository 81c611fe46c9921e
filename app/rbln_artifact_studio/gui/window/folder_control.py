"""Which folder the window shows: Open Folder, the demo workspace, Open Recent (folders, servers and buckets), the
window title."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog, QMenu, QStatusBar, QWidget

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.gui.app.app_paths import demo_folder
from rbln_artifact_studio.gui.app.application import DISPLAY_NAME
from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.dialogs.bucket_dialog import bucket_location
from rbln_artifact_studio.gui.models import operations
from rbln_artifact_studio.gui.models.jobs import JobManager
from rbln_artifact_studio.gui.models.workspace import Workspace


def recent_buckets(settings: Settings) -> list[dict[str, str]]:
    """The buckets opened before, most recent first, as the bucket dialog remembered them."""
    recent = settings.choices.get("recentBuckets")
    return [b for b in recent if isinstance(b, dict)] if isinstance(recent, list) else []


class FolderControl(QObject):
    """Opens folders in the workspace and keeps the Open Recent menu and the title in step with it."""

    serverChosen = Signal(object)  # Open Recent ▸ a server: its ServerEntry, to connect
    bucketChosen = Signal(object)  # Open Recent ▸ a bucket: its remembered choice (dict), to open again

    def __init__(
        self, window: QWidget, status: QStatusBar, workspace: Workspace, settings: Settings, jobs: JobManager
    ) -> None:
        """window: whose title names the folder, and the parent of the folder dialogs and the menu."""
        super().__init__(window)
        self.window, self.status, self.workspace, self.settings, self.jobs = window, status, workspace, settings, jobs
        self.recent_menu = QMenu("Open &Recent", window)
        self.recent_menu.setObjectName("recentMenu")
        self.recent_menu.aboutToShow.connect(self.fill_recent_menu)  # servers and buckets remembered meanwhile
        self.fill_recent_menu()

    def connect_to(self) -> None:
        self.workspace.rootChanged.connect(self._on_root_changed)
        self.workspace.rootsChanged.connect(self._on_roots_changed)

    def show_folder_title(self, root: str) -> None:
        """The folder in the title; the platform adds the application's display name after it where it is set."""
        named = QGuiApplication.applicationDisplayName() == DISPLAY_NAME
        self.window.setWindowTitle(root if named else f"{DISPLAY_NAME} — {root}")

    def show_no_folder_title(self) -> None:
        """The title of a window with no folder open."""
        self.window.setWindowTitle(DISPLAY_NAME)

    @Slot()
    def choose_folder(self) -> None:
        start = self.workspace.root or os.path.expanduser("~")
        folder = QFileDialog.getExistingDirectory(self.window, "Open a folder of compiled artifacts", start)
        if folder:
            self.open_folder(folder)

    def open_folder(self, folder: str | Path) -> None:
        self.workspace.open(folder)

    def reopen_workspace(self) -> bool:
        """The folders shown when the studio last quit, opened again (a start with no arguments)."""
        roots = self.settings.choices.get("workspace")
        roots = [r for r in roots if isinstance(r, str) and r] if isinstance(roots, list) else []
        if not roots:
            return False
        self.open_folder(roots[0])
        for folder in roots[1:]:
            self.workspace.add(folder)
        return True

    @Slot()
    def choose_folder_beside(self) -> None:
        """File ▸ Add Folder Beside…: another folder's artifacts join those shown."""
        start = self.workspace.root or os.path.expanduser("~")
        folder = QFileDialog.getExistingDirectory(self.window, "Add a folder beside those shown", start)
        if folder:
            self.workspace.add(folder)

    @Slot(list)
    def _on_roots_changed(self, roots: list[str]) -> None:
        """The title names the opened folder and how many beside it; the next start opens them all again."""
        if roots:
            more = f" + {len(roots) - 1} more" if len(roots) > 1 else ""
            self.show_folder_title(roots[0] + more)
            for folder in roots[1:]:
                self.settings.add_recent_folder(folder)
        self.settings.choices.set("workspace", roots)

    @Slot()
    def open_demo(self) -> None:
        folder = demo_folder()
        self.status.showMessage(f"Preparing the demo workspace in {folder}…")
        job = operations.build_demo_workspace(self.jobs, folder)
        job.succeeded.connect(self._on_demo_ready)

    @Slot(object)
    def _on_demo_ready(self, folder: str) -> None:
        self.status.showMessage(f"Demo workspace: {folder}", 10_000)
        self.open_folder(folder)

    @Slot(str)
    def _on_root_changed(self, root: str) -> None:
        self.show_folder_title(root)
        self.settings.add_recent_folder(root)
        self.fill_recent_menu()

    def recent_buckets(self) -> list[dict[str, str]]:
        return recent_buckets(self.settings)

    @Slot()
    def fill_recent_menu(self) -> None:
        """Folders, then servers, then buckets, most recent first in each."""
        menu, settings = self.recent_menu, self.settings
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
            action.triggered.connect(lambda _checked=False, e=entry: self.serverChosen.emit(e))
        buckets = self.recent_buckets()
        if buckets:
            menu.addSection("Buckets")
        for choice in buckets:
            try:  # the bucket with its store, as the CLI takes it (s3+http://HOST:PORT/BUCKET for an endpoint)
                where = bucket_location(choice).url
            except StudioError:  # an edited settings file: shown as it is, refused again when chosen
                where = " ".join(str(choice.get(k) or "") for k in ("endpoint", "profile", "bucket", "prefix"))
            action = menu.addAction(where)
            action.triggered.connect(lambda _checked=False, c=choice: self.bucketChosen.emit(c))
        if recent:
            menu.addSeparator()
            clear = menu.addAction("Clear Recent Folders")
            clear.triggered.connect(self._clear_recent)
        menu.setEnabled(bool(recent or servers or buckets))

    @Slot()
    def _clear_recent(self) -> None:
        self.settings.clear_recent_folders()
        self.fill_recent_menu()
