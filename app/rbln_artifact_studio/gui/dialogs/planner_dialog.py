"""The co-location planner: opens the selected artifacts in a worker, shows rbln_artifact_studio.core.planning.planner's stacks and the fix."""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QAbstractItemModel, QModelIndex, Qt, Signal, Slot
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rbln_artifact_studio.backends.registry import inspector_for
from rbln_artifact_studio.backends.settings import ToolchainSettings
from rbln_artifact_studio.core.display.commandline import PROG
from rbln_artifact_studio.core.display.plan_display import (
    bar_label,
    chiplet_tooltip,
    family_title,
    fix_summary,
    headroom_short,
    verdict_colour_key,
    verdict_lines,
)
from rbln_artifact_studio.core.fleet.artifact import Artifact
from rbln_artifact_studio.core.location import parse_location
from rbln_artifact_studio.core.planning.planner import ASSUMPTION, FamilyStack, Fix, Plan, fix_for, plan, require_valid
from rbln_artifact_studio.core.sizes import format_bytes, format_bytes_exact
from rbln_artifact_studio.core.status import Status
from rbln_artifact_studio.gui.models.artifact_model import PATH_ROLE, STATUS_COLOURS
from rbln_artifact_studio.gui.models.jobs import Job, JobContext, JobFailure, JobManager
from rbln_artifact_studio.gui.widgets.command_line import CommandLine
from rbln_artifact_studio.gui.widgets.plan_chart import PlanChart, artifact_colour
from rbln_artifact_studio.gui.widgets.screen_fit import resize_to_fit
from rbln_artifact_studio.places import dispatch

EXACT_ROLE = Qt.ItemDataRole.UserRole + 1  # a cell's exact bytes (tests and copy)

OpenResize = Callable[[Artifact, "int | None", "str | None", QWidget], object]


@dataclass(frozen=True)
class PlanResult:
    """A plan and the fix for each of its artifacts, computed together in the worker."""

    plan: Plan
    fixes: dict[str, Fix]


def compute_plan(paths: list[str], ctx: JobContext, toolchain: ToolchainSettings | None = None) -> PlanResult:
    """Worker side: open every artifact (allocations through rebel where installed), plan, size every fix."""
    inspector = inspector_for(cancel=ctx.cancel, toolchain=toolchain)
    artifacts = []
    for i, path in enumerate(paths):
        ctx.progress(i, len(paths), f"Reading {Path(path).name}")
        artifacts.append(dispatch.open_artifact(parse_location(path), inspector, ctx.cancel))  # wherever it lives
    require_valid(artifacts)  # as the CLI's plan: an invalid artifact is named, never planned on
    p = plan(artifacts)
    return PlanResult(p, {m.label: fix_for(p, m.label) for m in p.members})


class FamilyView(QGroupBox):
    """One NPU family: the stacked chart and a table of every (NPU, chiplet) in exact bytes."""

    def __init__(self, stack: FamilyStack, colours: dict[str, QColor], parent: QWidget | None = None) -> None:
        super().__init__(family_title(stack), parent)
        self.setObjectName("plannerFamily")
        npu = (stack.members or stack.unknown)[0].npu
        chiplets = npu.chiplets if npu else 1
        self.chart = PlanChart()
        self.chart.set_stack(stack, chiplets, colours)
        self.chart.setMinimumHeight(300)
        members = [m.label for m in stack.members]
        self.table = QTableWidget(len(stack.chiplets), len(members) + 4)
        self.table.setObjectName("plannerTable")
        self.table.setHorizontalHeaderLabels(["NPU / chiplet", *members, "Used", "Available", "Headroom / overflow"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        tightest = stack.tightest
        for row, ch in enumerate(stack.chiplets):
            mark = "  ◀ tightest" if ch is tightest else ""
            self._set(row, 0, bar_label(ch, chiplets) + mark, None, chiplet_tooltip(ch, ch is tightest))
            used = {s.label: s.used for s in ch.shares}
            for col, label in enumerate(members, start=1):
                self._set(row, col, format_bytes(used[label]) if label in used else "—", used.get(label))
            base = len(members) + 1
            self._set(row, base, format_bytes(ch.used), ch.used)
            self._set(row, base + 1, format_bytes(ch.available), ch.available)
            cell = self._set(row, base + 2, headroom_short(ch.headroom), ch.headroom)
            cell.setForeground(QColor(STATUS_COLOURS[Status.OK if ch.headroom >= 0 else Status.INVALID]))
        rows = min(len(stack.chiplets), 8) * self.table.verticalHeader().defaultSectionSize()
        self.table.setFixedHeight(rows + self.table.horizontalHeader().sizeHint().height() + 6)
        layout = QVBoxLayout(self)
        for note in stack.notes:
            layout.addWidget(QLabel(html.escape(note)))
        layout.addWidget(self.chart, 1)
        layout.addWidget(self.table)

    def _set(self, row: int, col: int, text: str, exact: int | None, tooltip: str = "") -> QTableWidgetItem:
        item = QTableWidgetItem(text)
        if exact is not None:
            item.setData(EXACT_ROLE, exact)
            item.setToolTip(tooltip or format_bytes_exact(exact))
            item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        elif tooltip:
            item.setToolTip(tooltip)
        self.table.setItem(row, col, item)
        return item


class PlannerDialog(QDialog):
    """Shows the plan of two or more artifact folders; Resize… opens the normal resize dialog with the fix."""

    planned = Signal()  # a plan (or the reason there is none) is on screen

    def __init__(
        self,
        jobs: JobManager,
        paths: list[str],
        open_resize: OpenResize,
        toolchain: ToolchainSettings | None = None,
        model: QAbstractItemModel | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("plannerDialog")
        self.setWindowTitle(f"Co-location plan: {len(paths)} artifacts")
        self.jobs, self.paths, self.open_resize, self.toolchain = jobs, list(paths), open_resize, toolchain
        self.plan_result: PlanResult | None = None
        self.family_views: list[FamilyView] = []
        self._job: Job | None = None

        layout = QVBoxLayout(self)
        for part in self._build_verdict():
            layout.addWidget(part)
        layout.addWidget(self._build_families(), 1)
        layout.addWidget(self._build_fix())
        layout.addWidget(self._build_command())
        layout.addWidget(self._build_buttons())
        self._connect(model)
        resize_to_fit(self, 1000, 740)  # fits a 1280x800 screen with its title bar; the families scroll
        self.replan()

    # ---- construction, step by step ------------------------------------------------------------------

    def _build_verdict(self) -> tuple[QLabel, QLabel]:
        """The plan's verdict, and the assumption every plan rests on."""
        self.verdict = QLabel()
        self.verdict.setObjectName("plannerVerdict")
        self.verdict.setWordWrap(True)
        self.verdict.setTextFormat(Qt.TextFormat.RichText)
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        assumption = QLabel(f"<small>Assumption: {html.escape(ASSUMPTION)}</small>")
        assumption.setWordWrap(True)
        return self.verdict, assumption

    def _build_families(self) -> QScrollArea:
        """Where a FamilyView per NPU family goes once planned; they scroll."""
        self.families = QWidget()
        self.families_layout = QVBoxLayout(self.families)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.families)
        return scroll

    def _build_fix(self) -> QGroupBox:
        """The artifact to resize, what its fix is, and Resize… to open the resize dialog with it."""
        fix_box = QGroupBox("Fix: resize one artifact, the others unchanged")
        self.fix_combo = QComboBox()
        self.fix_combo.setObjectName("plannerFixCombo")
        self.fix_label = QLabel()
        self.fix_label.setObjectName("plannerFixLabel")
        self.fix_label.setWordWrap(True)
        self.fix_label.setTextFormat(Qt.TextFormat.PlainText)
        self.fix_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.resize_button = QPushButton("Resize…")
        self.resize_button.setObjectName("plannerResizeButton")
        self.resize_button.setToolTip("Open the resize dialog with this block count: preview, then in place or a copy.")
        row = QHBoxLayout()
        row.addWidget(QLabel("Artifact:"))
        row.addWidget(self.fix_combo, 1)
        row.addWidget(self.resize_button)
        fix_layout = QVBoxLayout(fix_box)
        fix_layout.addLayout(row)
        fix_layout.addWidget(self.fix_label)
        return fix_box

    def _build_command(self) -> CommandLine:
        self.command = CommandLine("plannerCommand")
        self.command.set_argv([PROG, "plan", *self.paths])
        return self.command

    def _build_buttons(self) -> QDialogButtonBox:
        self.replan_button = QPushButton("Plan Again")
        self.replan_button.setObjectName("plannerReplanButton")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.addButton(self.replan_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        return buttons

    def _connect(self, model: QAbstractItemModel | None) -> None:
        self.fix_combo.currentIndexChanged.connect(self._show_fix)
        self.resize_button.clicked.connect(self._open_resize)
        self.replan_button.clicked.connect(self.replan)
        if model is not None:  # the table's model: re-plan when a planned artifact changes on disk
            model.dataChanged.connect(self._on_rows_changed)

    # ---- planning ------------------------------------------------------------------------------------

    @Slot()
    def replan(self) -> None:
        """Read the folders again in a worker and show the new plan."""
        self.verdict.setText(f"Reading {len(self.paths)} artifacts…")
        self.resize_button.setEnabled(False)
        job = self._job = self.jobs.submit(
            f"Plan {len(self.paths)} artifacts",
            lambda ctx: compute_plan(self.paths, ctx, self.toolchain),
            visible=False,
        )
        job.succeeded.connect(self._on_planned)
        job.failed.connect(self._on_failed)

    @Slot(QModelIndex, QModelIndex)
    def _on_rows_changed(self, top: QModelIndex, bottom: QModelIndex) -> None:
        model = top.model()
        changed = {model.index(r, 0).data(PATH_ROLE) for r in range(top.row(), bottom.row() + 1)}
        if changed & set(self.paths):
            self.replan()

    @Slot(object)
    def _on_planned(self, result: PlanResult) -> None:
        if self.sender() is not self._job:
            return  # a newer plan is on its way
        self._job = None
        self.plan_result = result
        p = result.plan
        colours = {m.label: artifact_colour(i) for i, m in enumerate(p.members)}
        self._show_verdict(p)
        self._clear_families()
        self.family_views = [FamilyView(stack, colours) for stack in p.stacks if stack.members]
        for view in self.family_views:
            self.families_layout.addWidget(view, 1)
        chosen = self.fix_combo.currentText()
        self.fix_combo.blockSignals(True)
        self.fix_combo.clear()
        self.fix_combo.addItems([m.label for m in p.members])
        labels = [m.label for m in p.members]
        if chosen in labels:
            self.fix_combo.setCurrentIndex(labels.index(chosen))
        else:
            self.fix_combo.setCurrentIndex(labels.index(_default_choice(p)))
        self.fix_combo.blockSignals(False)
        self._show_fix()
        self.planned.emit()

    @Slot(object)
    def _on_failed(self, failure: JobFailure) -> None:
        if self.sender() is not self._job:
            return
        self._job = None
        self.plan_result = None
        self._clear_families()
        self.verdict.setText(
            f"<span style='color:{STATUS_COLOURS[Status.INVALID]}'>✖ Cannot plan: {html.escape(failure.reason)}</span>"
        )
        self.fix_combo.clear()
        self.fix_label.clear()
        self.planned.emit()

    def _clear_families(self) -> None:
        self.family_views = []
        while self.families_layout.count():
            item = self.families_layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()

    def _show_verdict(self, p: Plan) -> None:
        headline, *rest = verdict_lines(p)
        colour = STATUS_COLOURS[Status(verdict_colour_key(p))]
        lines = [f"<b style='color:{colour}; font-size:large'>{html.escape(headline)}</b>"]
        lines += [html.escape(line) for line in rest]
        self.verdict.setText("<br>".join(lines))

    # ---- the fix -------------------------------------------------------------------------------------

    def chosen_fix(self) -> Fix | None:
        if self.plan_result is None:
            return None
        return self.plan_result.fixes.get(self.fix_combo.currentText())

    @Slot()
    def _show_fix(self) -> None:
        fix = self.chosen_fix()
        self.fix_label.setText(fix_summary(fix) if fix else "")
        self.resize_button.setEnabled(fix is not None and fix.changes)

    @Slot()
    def _open_resize(self) -> None:
        fix = self.chosen_fix()
        if fix is None or fix.target is None or self.plan_result is None:
            return
        artifact = self.plan_result.plan.member(fix.label).artifact
        self.open_resize(artifact, fix.target, None, self)


def _default_choice(p: Plan) -> str:
    """The first artifact of the first family that does not fit (the one the CLI lists first), else the first."""
    for stack in p.stacks:
        if not stack.fits and stack.members:
            return stack.members[0].label
    return p.members[0].label
