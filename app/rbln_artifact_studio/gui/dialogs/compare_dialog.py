"""Compare two artifacts: settings side by side (those that differ highlighted), the differences, both breakdowns."""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QGroupBox,
    QHeaderView,
    QLabel,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rbln_artifact_studio.backends.settings import ToolchainSettings
from rbln_artifact_studio.core.display.compare import Comparison, compare
from rbln_artifact_studio.core.display.presentation import breakdown_caption
from rbln_artifact_studio.core.location import parse_location
from rbln_artifact_studio.gui.app.tones import Tone, style
from rbln_artifact_studio.gui.models.jobs import Job, JobContext, JobFailure, JobManager
from rbln_artifact_studio.gui.models.operations import inspector
from rbln_artifact_studio.gui.widgets.dram_chart import DramChart
from rbln_artifact_studio.gui.widgets.screen_fit import resize_to_fit
from rbln_artifact_studio.places import dispatch


def compare_artifacts(jobs: JobManager, left: str, right: str, toolchain: ToolchainSettings) -> Job:
    """Read two artifacts and compare them, in a job."""

    def work(ctx: JobContext) -> Comparison:
        reader = inspector(ctx.cancel, toolchain)
        return compare(*(dispatch.open_artifact(where, reader, ctx.cancel) for where in pair))

    pair = parse_location(left), parse_location(right)
    return jobs.submit(f"Compare {pair[0].name} and {pair[1].name}", work, visible=False)


def _table(name: str, headers: list[str]) -> QTableWidget:
    table = QTableWidget(0, len(headers))
    table.setObjectName(name)
    table.setHorizontalHeaderLabels(headers)
    table.verticalHeader().setVisible(False)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
    table.setWordWrap(False)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    for column in range(1, len(headers)):  # the values share the width: "B − A" does not take it from A and B
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
    return table


def _fit_height(table: QTableWidget) -> None:
    """Tall enough for every row: the dialog scrolls, not the tables inside it."""
    rows = sum(table.rowHeight(r) for r in range(table.rowCount()))
    table.setFixedHeight(rows + table.horizontalHeader().height() + 2 * table.frameWidth() + 2)


class CompareDialog(QDialog):
    """Reads both artifacts in a job, then shows what rbln_artifact_studio.core.display.compare worked out."""

    ready = Signal()  # the comparison is shown (or its error)

    def __init__(
        self, jobs: JobManager, left: str, right: str, toolchain: ToolchainSettings, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("compareDialog")
        self.setWindowTitle(f"Compare {left} and {right}")  # where each lives, as the CLI names them
        self.comparison: Comparison | None = None
        outer = QVBoxLayout(self)
        outer.addWidget(self._build_body(f"Reading {Path(left).name} and {Path(right).name}…"))
        outer.addWidget(self._build_buttons())
        resize_to_fit(self, 1100, 700)
        job = compare_artifacts(jobs, left, right, toolchain)
        job.succeeded.connect(self._show)
        job.failed.connect(self._failed)

    # ---- construction, step by step ------------------------------------------------------------------

    def _build_charts(self) -> QGroupBox:
        """A and B side by side: a title, the chart and its caption each (both charts on one scale once read)."""
        self.left_chart = DramChart(object_name="compareLeftChart")
        self.right_chart = DramChart(object_name="compareRightChart")
        self.left_caption, self.right_caption = QLabel(), QLabel()
        charts = QGroupBox("DRAM per NPU, on one scale")
        grid = QGridLayout(charts)
        self.left_title, self.right_title = QLabel(), QLabel()
        for column, (title, chart, caption) in enumerate(
            (
                (self.left_title, self.left_chart, self.left_caption),
                (self.right_title, self.right_chart, self.right_caption),
            )
        ):
            caption.setWordWrap(True)
            title.setWordWrap(True)
            grid.addWidget(title, 0, column)
            grid.addWidget(chart, 1, column)
            grid.addWidget(caption, 2, column)
            chart.setMinimumHeight(240)
        return charts

    def _build_body(self, status: str) -> QScrollArea:
        """The status, both tables and the charts, one below the other; the whole body scrolls."""
        self.status = QLabel(status)
        self.status.setObjectName("compareStatus")
        self.status.setWordWrap(True)
        self.differences = _table("compareDifferences", ["", "A", "B", "B − A"])
        self.settings = _table("compareSettings", ["Setting", "A", "B"])
        charts = self._build_charts()
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.addWidget(self.status)
        layout.addWidget(QLabel("<b>Differences</b>"))
        layout.addWidget(self.differences)
        layout.addWidget(QLabel("<b>Settings</b> (those that differ are highlighted)"))
        layout.addWidget(self.settings)
        layout.addWidget(charts)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(body)
        return scroll

    def _build_buttons(self) -> QDialogButtonBox:
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        return buttons

    # ---- the comparison ------------------------------------------------------------------------------

    @Slot(object)
    def _failed(self, failure: JobFailure) -> None:
        self.status.setText(f"<span style='{style(Tone.ERROR)}'>✖ Cannot compare: {html.escape(failure.reason)}</span>")
        self.ready.emit()

    @Slot(object)
    def _show(self, comparison: Comparison) -> None:
        self.comparison = c = comparison
        a, b = c.left, c.right
        self.status.setText(
            f"A: <b>{html.escape(a.name)}</b> ({html.escape(str(a.where))})<br>"
            f"B: <b>{html.escape(b.name)}</b> ({html.escape(str(b.where))})"
        )
        self.differences.setRowCount(len(c.differences))
        for row, d in enumerate(c.differences):
            for column, text in enumerate((d.name, d.text(d.left), d.text(d.right), d.delta_text())):
                item = QTableWidgetItem(text)
                if column:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.differences.setItem(row, column, item)
        highlight = QColor(self.palette().highlight().color())
        highlight.setAlpha(70)  # readable over the base colour of a light or a dark palette
        bold = QFont(self.font())
        bold.setBold(True)
        self.settings.setRowCount(len(c.settings))
        for row, s in enumerate(c.settings):
            for column, text in enumerate((s.name, s.left, s.right)):
                item = QTableWidgetItem(text)
                if s.differs:
                    item.setBackground(highlight)
                    item.setFont(bold)
                    item.setToolTip("Differs between A and B")
                self.settings.setItem(row, column, item)
        for table in (self.differences, self.settings):
            _fit_height(table)
        scale = c.scale_bytes
        for title, chart, caption, artifact, fit in (
            (self.left_title, self.left_chart, self.left_caption, a, c.left_breakdown),
            (self.right_title, self.right_chart, self.right_caption, b, c.right_breakdown),
        ):
            title.setText(f"<b>{'A' if artifact is a else 'B'}: {html.escape(artifact.name)}</b>")
            chart.scale_floor = scale
            unknown = f"Allocations unknown: {artifact.unknown_reason or 'the NPU is unknown'}"
            chart.set_breakdown(fit, artifact.npu.chiplets if artifact.npu else 1, unknown)
            caption.setText(breakdown_caption(fit) if fit else unknown)
        self.ready.emit()
