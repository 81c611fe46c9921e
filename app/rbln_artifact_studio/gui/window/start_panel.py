"""The first start's next steps: a start with no arguments and nothing recent offers what to open or do first,
in the place of the empty table, until something is opened."""

from __future__ import annotations

from PySide6.QtCore import QObject, QSize, Qt, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QCommandLinkButton, QLabel, QScrollArea, QSizePolicy, QSplitter, QVBoxLayout, QWidget

from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.models.artifact_model import ArtifactTableModel
from rbln_artifact_studio.gui.models.jobs import Job, JobManager
from rbln_artifact_studio.gui.models.workspace import Workspace
from rbln_artifact_studio.gui.window.folder_control import recent_buckets

# (button, what it does, the window's action): the order a new user meets them in.
STEPS = (
    ("Open a Folder…", "A folder of compiled artifacts: every one below it joins the table.", "actionOpenFolder"),
    ("Open the Demo Workspace", "Five simulator artifacts to try everything on, no NPU needed.", "actionOpenDemo"),
    ("Connect to a Server…", "The artifacts on an NPU server, over SSH.", "actionConnectServer"),
    ("Open a Bucket…", "The artifacts in an S3-compatible bucket.", "actionOpenBucket"),
    ("Compile a Model…", "A model for an NPU, with a memory budget that leaves headroom.", "actionCompile"),
)


class StepButton(QCommandLinkButton):
    """A command link whose size hint is what it needs at the width it has: Qt's wraps the description at about 200
    pixels whatever the width, so a long description asked for twice the height it takes."""

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        return hint if self.width() <= hint.width() else QSize(hint.width(), self.heightForWidth(self.width()))


class StartPanel(QScrollArea):
    """One button per next step; each triggers the window's own action (so its shortcut and state are the same)."""

    def __init__(self, actions: QWidget) -> None:
        """actions: the widget holding the actions, found by their object names (the main window)."""
        super().__init__()
        self.setObjectName("startPanel")
        self.setWidgetResizable(True)
        self.window_ = actions
        body = QWidget()
        layout = QVBoxLayout(body)
        title = QLabel("<h2>Start here</h2>No folder is open yet. What would you like to look at?")
        title.setObjectName("startTitle")
        title.setWordWrap(True)
        layout.addWidget(title)
        self.buttons: dict[str, QCommandLinkButton] = {}
        for text, description, name in STEPS:
            action = actions.findChild(QAction, name)
            if action is None:
                continue  # an action this window does not have (none today)
            button = StepButton(text, description)
            button.setObjectName(f"start:{name}")
            button.clicked.connect(action.trigger)
            # Each as tall as its description needs at the width it has (its size hint wraps it at ~200 pixels).
            policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
            policy.setHeightForWidth(True)
            button.setSizePolicy(policy)
            layout.addWidget(button)
            self.buttons[name] = button
        hint = QLabel("Help ▸ Getting Started explains the three jobs the studio does.")
        hint.setWordWrap(True)
        layout.addWidget(hint)
        layout.addStretch(1)
        layout.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.setWidget(body)


class FirstSteps(QObject):
    """Shows the StartPanel in the table's place on a first start, and takes it away once something is opened (a
    folder, a server's or a bucket's rows, a job such as a compile)."""

    def __init__(
        self,
        window: QWidget,
        splitter: QSplitter,
        table: QWidget,
        settings: Settings,
        workspace: Workspace,
        model: ArtifactTableModel,
        jobs: JobManager,
    ) -> None:
        """window: holds the actions the buttons trigger; splitter: the table (whose place the panel takes), then
        the details."""
        super().__init__(window)
        self.window, self.splitter, self.table, self.settings = window, splitter, table, settings
        self.workspace, self.model, self.jobs = workspace, model, jobs
        self.panel: StartPanel | None = None  # while shown

    def nothing_recent(self) -> bool:
        """No folder, server or bucket opened before: a first start."""
        s = self.settings
        return not (s.recent_folders() or s.servers() or recent_buckets(s))

    def offer(self) -> StartPanel | None:
        """The next steps, on a first start only (no arguments, nothing recent)."""
        if not self.nothing_recent():
            return None
        panel = self.panel = StartPanel(self.window)
        table, details = self.splitter.sizes()
        self.splitter.insertWidget(0, panel)
        self.table.hide()
        self.splitter.setSizes([table, 0, details])  # the table's room, as the table had it
        self.workspace.rootChanged.connect(self.close)
        self.model.rowsInserted.connect(self.close)
        self.jobs.jobAdded.connect(self._on_job)
        return panel

    @Slot(object)
    def _on_job(self, job: Job) -> None:
        if job.visible:  # a compile, a scan of a server or bucket: its results go to the table
            self.close()

    @Slot()
    def close(self, *_args: object) -> None:
        panel = self.panel
        if panel is None:
            return
        self.panel = None
        self.workspace.rootChanged.disconnect(self.close)
        self.model.rowsInserted.disconnect(self.close)
        self.jobs.jobAdded.disconnect(self._on_job)
        panel.hide()
        panel.deleteLater()
        self.table.show()
