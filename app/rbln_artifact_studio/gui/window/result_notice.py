"""What the app wrote, offered where the user looks: a result inside a shown folder is selected in the table; one
written elsewhere gets a notice in the status bar with one click to open its folder beside the shown ones."""

from __future__ import annotations

import os
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QStatusBar, QWidget

from rbln_artifact_studio.core.location import Location
from rbln_artifact_studio.gui.models.row_sources import RowSources
from rbln_artifact_studio.gui.models.workspace import Workspace
from rbln_artifact_studio.places.dispatch import capabilities


class ResultNotice(QObject):
    """Shows each written result in the window: in the table, or a notice offering Open Beside."""

    def __init__(
        self,
        status: QStatusBar,
        workspace: Workspace,
        sources: RowSources,
        select_once_shown: Callable[[str], None],
        parent: QObject,
    ) -> None:
        """status: the bar the notice sits in; sources: the opened places' rows, read again where a result lands;
        select_once_shown: selects a path once the table has its row."""
        super().__init__(parent)
        self.status, self.workspace, self.sources = status, workspace, sources
        self.select_once_shown = select_once_shown
        self.bar = QWidget()
        self.bar.setObjectName("resultNotice")
        layout = QHBoxLayout(self.bar)
        layout.setContentsMargins(0, 0, 0, 0)
        self.label = QLabel()
        self.label.setObjectName("resultNoticeText")
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.open_button = QPushButton("Open Beside")
        self.open_button.setObjectName("resultOpenBeside")
        self.open_button.setToolTip("Show the folder it was written to beside the folders shown now")
        self.open_button.clicked.connect(self.open_beside)
        dismiss = QPushButton("Dismiss")
        dismiss.setObjectName("resultDismiss")
        dismiss.clicked.connect(self.bar.hide)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.open_button)
        layout.addWidget(dismiss)
        status.addWidget(self.bar, 1)
        self.bar.hide()
        self.path: str | None = None

    def offer(self, where: Location) -> None:
        """A result just written: read again and selected in the table when an opened place (a folder, a server's
        folder, a bucket's prefix) holds it; one here outside them is offered, one elsewhere is named."""
        path = str(where)
        if self.sources.shows(path):
            self.bar.hide()
            self.status.showMessage(f"Wrote {path}", 10_000)
            self.sources.reread([path])  # what the place holds now, not what the job meant to write
            self.select_once_shown(path)
            return
        if not capabilities(where).on_this_computer:  # no place shown holds it: nothing to open beside
            self.status.showMessage(f"Wrote {path}", 10_000)
            return
        self.path = path
        self.label.setText(f"Wrote {path}: outside the folders shown.")
        self.label.setToolTip(path)
        self.bar.show()

    @Slot()
    def open_beside(self) -> None:
        """The result's folder beside the shown ones, and the result selected once its row is read."""
        if self.path is None:
            return
        path, self.path = self.path, None
        self.bar.hide()
        self.workspace.add(os.path.dirname(path))
        self.select_once_shown(path)
