"""The budget explorer: one artifact's blocks-versus-budget curve; a click fills the resize dialog with that budget."""

from __future__ import annotations

import html
import math
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from rbln_artifact_studio.core.display.commandline import PROG
from rbln_artifact_studio.core.display.explore_display import pick_text, summary_lines
from rbln_artifact_studio.core.fleet.artifact import Artifact
from rbln_artifact_studio.core.model.budget import parse_budget
from rbln_artifact_studio.core.planning.explore import ClickTarget, Exploration, explore, target_at
from rbln_artifact_studio.gui.app.tones import Tone, style
from rbln_artifact_studio.gui.dialogs.resize_dialog import ResizeDialog
from rbln_artifact_studio.gui.models.jobs import Job, JobFailure, JobManager
from rbln_artifact_studio.gui.widgets.command_line import CommandLine
from rbln_artifact_studio.gui.widgets.explorer_chart import ExplorerChart
from rbln_artifact_studio.gui.widgets.screen_fit import resize_to_fit

OpenResize = Callable[[Artifact, "int | None", "str | None", QWidget], "ResizeDialog | None"]


class ExplorerDialog(QDialog):
    """Computes the curve in a worker; the chart shows it, a click resolves the budget through rbln_artifact_studio.core.planning.explore."""

    explored = Signal()  # the curve (or the reason there is none) is on screen
    picked = Signal(object)  # ClickTarget

    def __init__(self, jobs: JobManager, artifact: Artifact, open_resize: OpenResize, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("explorerDialog")
        self.setWindowTitle(f"Explore budgets: {artifact.where}")
        self.artifact, self.open_resize = artifact, open_resize
        self.exploration: Exploration | None = None
        self.resize_dialog: ResizeDialog | None = None

        chart = self._build_chart()  # before the zoom buttons, which act on it
        layout = QVBoxLayout(self)
        layout.addWidget(self._build_summary())
        layout.addLayout(self._build_zoom())
        layout.addWidget(chart, 1)
        layout.addWidget(self._build_pick_label())
        layout.addWidget(self._build_command())
        layout.addWidget(self._build_buttons())
        resize_to_fit(self, 900, 600)

        self._job: Job | None = jobs.submit(f"Explore {artifact.name}", lambda ctx: explore(artifact), visible=False)
        self._job.succeeded.connect(self._on_explored)
        self._job.failed.connect(self._on_failed)

    # ---- construction, step by step ------------------------------------------------------------------

    def _build_summary(self) -> QLabel:
        self.summary = QLabel("Computing the curve…")
        self.summary.setObjectName("explorerSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return self.summary

    def _build_chart(self) -> ExplorerChart:
        self.chart = ExplorerChart()
        self.chart.budgetPicked.connect(self.pick)
        return self.chart

    def _build_zoom(self) -> QHBoxLayout:
        """A row of buttons that zoom the chart (the wheel zooms too)."""
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
        return zoom

    def _build_pick_label(self) -> QLabel:
        self.pick_label = QLabel("Click the curve to resize the artifact to what that budget fits.")
        self.pick_label.setObjectName("explorerPick")
        self.pick_label.setWordWrap(True)
        self.pick_label.setTextFormat(Qt.TextFormat.RichText)
        return self.pick_label

    def _build_command(self) -> CommandLine:
        self.command = CommandLine("explorerCommand")
        self.command.set_argv([PROG, "explore", str(self.artifact.where)])
        return self.command

    def _build_buttons(self) -> QDialogButtonBox:
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        return buttons

    # ---- the curve and the pick ----------------------------------------------------------------------

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
        click, budget_text = self._as_fraction(target_at(self.artifact, budget_per_npu))
        self.chart.set_pick(click.budget_bytes, click.blocks)
        text = html.escape(pick_text(click))
        self.pick_label.setText(f"<span style='{style(Tone.ERROR)}'>✖ {text}</span>" if click.error else text)
        if self.resize_dialog is not None:
            self.resize_dialog.prefill(budget_text=budget_text)
        else:
            self.resize_dialog = self.open_resize(self.artifact, None, budget_text, self)
            if self.resize_dialog is not None:
                self.resize_dialog.finished.connect(self._forget_resize_dialog)
        self.picked.emit(click)
        return click

    def _as_fraction(self, picked: ClickTarget) -> tuple[ClickTarget, str]:
        """The pick as a fraction a user could have typed ("0.3602"), not raw bytes ("54140076032"): the fewest
        digits (rounded up, so a pick on a breakpoint stays on its count) that resolve to the same count."""
        npu = self.artifact.npu
        if npu is not None:
            for digits in range(4, 9):
                scale = 10**digits
                text = f"{math.ceil(picked.fraction * scale) / scale:.{digits}f}".rstrip("0")
                budget = parse_budget(text)
                if budget.fraction is None or budget.fraction > 1:
                    break
                click = target_at(self.artifact, budget.bytes_per_npu(npu))
                if click.blocks == picked.blocks and click.error == picked.error:
                    return click, text
        return picked, str(picked.budget_bytes)

    @Slot()
    def _forget_resize_dialog(self) -> None:
        self.resize_dialog = None
