"""What the app's own state needs the user to know: settings that cannot be saved, the opened folder gone or moved.

The main window makes one StateNotices; it listens to the settings' writer and to the disk watcher, and says
each thing once, in a box that does not block the window.
"""

from __future__ import annotations

import os
from typing import Protocol

from PySide6.QtCore import QFileSystemWatcher, QObject, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import QMessageBox, QStatusBar, QWidget

from rbln_artifact_studio.core.portable.walk import DATA_LINK
from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.models.jobs import JobContext, JobManager
from rbln_artifact_studio.gui.models.workspace import Workspace
from rbln_artifact_studio.gui.window.detail_panel import DetailPanel

SETTLE_MS = 100
Identity = tuple[int, int]  # (st_dev, st_ino) of the opened folder


def folder_identity(root: str) -> Identity | None:
    """The folder's device and inode, or None when root is no folder (gone, or replaced by a file).

    A Kubernetes volume's `..data` (DATA_LINK) is the volume's: each update links it to a new folder, and the
    folder opened through it is still the one the user chose."""
    try:
        is_volume_view = os.path.basename(root) == DATA_LINK and os.path.islink(root) and os.path.isdir(root)
        st = os.stat(os.path.dirname(root) if is_volume_view else root)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if os.path.isdir(root) else None


def gone_reason(root: str, opened: Identity | None) -> str | None:
    """Why root is no longer the folder that was opened, in words; None while it still is."""
    if os.path.lexists(root) and not os.path.isdir(root):
        return f"{root} is no longer a folder (a file took its place)."
    now = folder_identity(root)
    if now is None:
        return f"{root} was moved, renamed or deleted."
    if opened is not None and now != opened:
        return f"{root} was replaced by another folder of the same name."
    return None


class Folders(Protocol):
    """What a gone folder asks of the window's folder control (FolderControl)."""

    def show_no_folder_title(self) -> None: ...

    def choose_folder(self) -> None: ...


class StateNotices(QObject):
    """Shows the settings' notices, and watches the opened folder itself: moved, renamed, deleted or replaced."""

    folderGone = Signal(str, str)  # root, reason (the table is cleared; the box offers to open another)

    def __init__(
        self,
        window: QWidget,
        status: QStatusBar,
        settings: Settings,
        workspace: Workspace,
        jobs: JobManager,
        detail: DetailPanel,
        folders: Folders,
    ) -> None:
        """window: the parent of the notices' boxes; detail: says why the table emptied."""
        super().__init__(window)
        self.window, self.status, self.settings, self.workspace, self.jobs = window, status, settings, workspace, jobs
        self.detail, self.folders = detail, folders
        self._opened: dict[str, Identity | None] = {}
        self._checking = False
        self._again = False  # a change came while a check ran: check once more after it
        # The folder above the root: a rename of the root shows only there (inotify follows the renamed folder,
        # and Qt reports nothing for it). One watch; its changes are checked after a quiet spell.
        self._parent_watch = QFileSystemWatcher(self)
        self._parent_watch.directoryChanged.connect(self._on_parent_changed)
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle.timeout.connect(self._check_root)
        settings.notices.notice.connect(self.say_settings)
        workspace.rootChanged.connect(self._remember_root)
        workspace.watcher.changed.connect(self._on_changed)
        notice = settings.take_notice()
        if notice is not None:
            QTimer.singleShot(0, lambda: self.say_settings(notice))  # once the window is up

    @Slot(str)
    def say_settings(self, text: str) -> QMessageBox:
        self.status.showMessage(text, 30_000)
        return self._box("settingsNotice", "Settings", text, QMessageBox.StandardButton.Ok)

    def _box(self, name: str, title: str, text: str, buttons: QMessageBox.StandardButton) -> QMessageBox:
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, buttons, self.window)
        box.setObjectName(name)
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        return box

    # ---- the opened folder ---------------------------------------------------------------------------

    @Slot(str)
    def _remember_root(self, root: str) -> None:
        job = self.jobs.submit(f"Identify {root}", lambda _ctx: folder_identity(root), visible=False)
        job.succeeded.connect(lambda identity: self._opened.__setitem__(root, identity))
        if self._parent_watch.directories():
            self._parent_watch.removePaths(self._parent_watch.directories())
        parent = os.path.dirname(root)
        if parent and parent != root:
            self._parent_watch.addPath(parent)

    @Slot(list)
    def _on_changed(self, folders: list[str]) -> None:
        """The watcher reports the root itself when it is deleted (its watch ends)."""
        if self.workspace.root in folders:
            self._check_root()

    def stop(self) -> None:
        """The window closes: watch the folder above the root no more. Left on, every change there (a sibling
        folder made) started a check in the closed window's job pool, for as long as the process lived."""
        self._settle.stop()
        if self._parent_watch.directories():
            self._parent_watch.removePaths(self._parent_watch.directories())

    @Slot(str)
    def _on_parent_changed(self, _parent: str) -> None:
        self._settle.start()

    @Slot()
    def _check_root(self) -> None:
        """Check in a job (a stat may wait on a slow disk) that the root is still the folder that was opened."""
        root = self.workspace.root
        if root is None:
            return
        if self._checking:
            self._again = True
            return
        self._checking = True
        opened = self._opened.get(root)

        def check(_ctx: JobContext) -> str | None:
            return gone_reason(root, opened)

        job = self.jobs.submit(f"Check {root}", check, visible=False)
        job.succeeded.connect(lambda reason: self._on_checked(root, reason))
        job.finished.connect(self._checked)

    @Slot()
    def _checked(self) -> None:
        self._checking = False
        if self._again:
            self._again = False
            self._check_root()

    def _on_checked(self, root: str, reason: str | None) -> None:
        workspace = self.workspace
        if reason is None or workspace.root != root:
            return
        workspace.close_root()
        if self._parent_watch.directories():
            self._parent_watch.removePaths(self._parent_watch.directories())
        self.folders.show_no_folder_title()
        self.detail.show_message(f"{reason} Open a folder to see its artifacts.")
        self.folderGone.emit(root, reason)
        box = self._box(
            "folderGone",
            "Folder gone",
            f"{reason} Its artifacts are no longer shown.",
            QMessageBox.StandardButton.Open | QMessageBox.StandardButton.Close,
        )
        box.button(QMessageBox.StandardButton.Open).setText("Open Another Folder…")
        box.button(QMessageBox.StandardButton.Open).clicked.connect(self.folders.choose_folder)
