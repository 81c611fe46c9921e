"""The budget explorer: one artifact's blocks-versus-budget curve; a click fills the resize dialog with that budget."""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from rbln_artifact_studio.core.display.commandline import PROG
from rbln_artifact_studio.core.display.explore_display import pick_text, summary_lines
from rbln_artifact_studio.core.fleet.artifact import Artifact
from rbln_artifact_studio.core.planning.explore import ClickTarget, Exploration, explore, target_at
from rbln_artifact_studio.gui.command_line import CommandLine
from rbln_artifact_studio.gui.explorer_chart import ExplorerChart
from rbln_artifact_studio.gui.jobs import Job, JobFailure, JobManager
from rbln_artifact_studio.gui.resize_dialog import ResizeDialog
from rbln_artifact_studio.gui.tones import Tone, style

OpenResize = Callable[[Artifact, "int | None", "str | None", QWidget], "ResizeDialog | None"]


class ExplorerDialog(QDialog):
    """Computes the curve in a worker; the chart shows it, a click resolves the budget through rbln_artifact_studio.core.planning.explore."""

    explored = Signal()  # the curve (or the reason there is none) is on screen
    picked = Signal(object)  # ClickTarget

    def __init__(self, jobs: JobManager, artifact: Artifact, open_resize: OpenResize, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("explorerDialog")
        self.setWindowTitle(f"Explore budgets: {artifact.name}")
        self.artifact, self.open_resize = artifact, open_resize
        self.exploration: Exploration | None = None
        self.resize_dialog: ResizeDialog | None = None

        self.summary = QLabel("Computing the curve…")
        self.summary.setObjectName("explorerSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.chart = ExplorerChart()
        self.chart.budgetPicked.connect(self.pick)
        self.pick_label = QLabel("Click the curve to resize the artifact to what that budget fits.")
        self.pick_label.setObjectName("explorerPick")
        self.pick_label.setWordWrap(True)
        self.pick_label.setTextFormat(Qt.TextFormat.RichText)

        zoom = QHBoxLayout()
        for name, text, slot in (
            ("explorerZoomIn", "Zoom In", lambda: self.chart.zoom(0.5)),
            ("explorerZoomOut", "Zoom Out", lambda: self.chart.zoom(2.0)),
            ("explorerZoomFloorFull", "Floor to Full Pool", self.chart.zoom_floor_to_full),
            ("explorerZoomReset", "Whole NPU", self.chart.reset_view),
        ):
            button = QPushButton(text)
            button.setObjectName(name)
            button.clicked.connect(slot)
            zoom.addWidget(button)
        zoom.addStretch(1)
        self.command = CommandLine("explorerCommand")
        self.command.set_argv([PROG, "explore", str(artifact.where)])
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addLayout(zoom)
        layout.addWidget(self.chart, 1)
        layout.addWidget(self.pick_label)
        layout.addWidget(self.command)
        layout.addWidget(buttons)
        self.resize(900, 600)

        self._job: Job | None = jobs.submit(f"Explore {artifact.name}", lambda ctx: explore(artifact), visible=False)
        self._job.succeeded.connect(self._on_explored)
        self._job.failed.connect(self._on_failed)

    @Slot(object)
    def _on_explored(self, exploration: Exploration) -> None:
        self._job = None
        self.exploration = exploration
        self.summary.setText("\n".join(summary_lines(exploration)))
        self.chart.set_exploration(exploration)
        self.explored.emit()

    @Slot(object)
    def _on_failed(self, failure: JobFailure) -> None:
        self._job = None
        self.summary.setText(failure.reason)
        self.chart.hide()
        self.explored.emit()

    @Slot(object)
    def pick(self, budget_per_npu: int) -> ClickTarget:
        """Resolve a picked budget as 'fit to budget' would, show it, and fill the resize dialog with it."""
        click = target_at(self.artifact, budget_per_npu)
        self.chart.set_pick(click.budget_bytes, click.blocks)
        text = html.escape(pick_text(click))
        self.pick_label.setText(f"<span style='{style(Tone.ERROR)}'>✖ {text}</span>" if click.error else text)
        budget_text = str(click.budget_bytes)
        if self.resize_dialog is not None:
            self.resize_dialog.prefill(budget_text=budget_text)
        else:
            self.resize_dialog = self.open_resize(self.artifact, None, budget_text, self)
            if self.resize_dialog is not None:
                self.resize_dialog.finished.connect(self._forget_resize_dialog)
        self.picked.emit(click)
        return click

    @Slot()
    def _forget_resize_dialog(self) -> None:
        self.resize_dialog = None
