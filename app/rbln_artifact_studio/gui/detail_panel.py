"""The detail panel: the selected artifact's settings, KV blocks, per-NPU DRAM breakdown, files and problems."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rbln_artifact_studio.core.display.kinds_report import description_rows
from rbln_artifact_studio.core.display.presentation import block_facts, breakdown_caption, file_rows, settings_rows
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.sizes import format_bytes, format_bytes_exact
from rbln_artifact_studio.core.status import Problem, Status, worst
from rbln_artifact_studio.gui.artifact_model import STATUS_COLOURS
from rbln_artifact_studio.gui.breakdown_table import BreakdownTable
from rbln_artifact_studio.gui.dram_chart import DramChart
from rbln_artifact_studio.gui.jobs import WORKERS
from rbln_artifact_studio.gui.kv_gauge import KvGauge
from rbln_artifact_studio.gui.serving_view import ServingView
from rbln_artifact_studio.gui.tones import Tone, style, tone

if TYPE_CHECKING:  # types only: the estimator, pydantic and the container reader load after the window shows
    from rbln_artifact_studio.core.estimation.estimator import Breakdown
    from rbln_artifact_studio.core.fleet.artifact import Artifact
    from rbln_artifact_studio.core.model.kinds import ModelDescription


def _label(object_name: str = "", wrap: bool = True) -> QLabel:
    label = QLabel()
    if object_name:
        label.setObjectName(object_name)
    label.setWordWrap(wrap)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


HOLDER = "details"  # this panel's hold on the workers (jobs.WorkerGate)


class DetailPanel(QScrollArea):
    """Lays out what rbln_artifact_studio.core computed for one artifact; computes nothing itself."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("detailPanel")
        self.setWidgetResizable(True)
        self.artifact: Artifact | None = None
        body = QWidget()
        layout = QVBoxLayout(body)

        self.title = _label("detailTitle")
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.problems = _label("detailProblems")
        self.problems.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(self.title)
        layout.addWidget(self.problems)

        self.settings_box = QGroupBox("Settings")
        self.settings_form = QFormLayout(self.settings_box)

        kv_box = self.kv_box = QGroupBox("KV cache")
        kv_layout = QVBoxLayout(kv_box)
        self.kv_label = _label("kvBlocksLabel")
        self.gauge = KvGauge()
        self.kv_meaning = _label("kvMeaningLabel")
        kv_layout.addWidget(self.kv_label)
        kv_layout.addWidget(self.gauge)
        kv_layout.addWidget(self.kv_meaning)
        layout.addWidget(kv_box)

        dram_box = self.dram_box = QGroupBox("DRAM per NPU")
        dram_layout = QVBoxLayout(dram_box)
        self.dram_caption = _label("dramCaption")
        self.what_if_edit = QLineEdit()
        self.what_if_edit.setObjectName("whatIfBudgetEdit")
        self.what_if_edit.setPlaceholderText("0.8, 80% or 10GB; empty = as compiled")
        self.what_if_edit.setClearButtonEnabled(True)
        self.what_if_edit.setToolTip(
            "Draw the breakdown and the kvcache_num_blocks this memory_budget would give (what `explore` prints); "
            "nothing is written."
        )
        self.what_if_result = _label("whatIfResult")
        what_if_row = QHBoxLayout()
        what_if_label = QLabel("What if memory_budget =")
        what_if_label.setBuddy(self.what_if_edit)
        what_if_row.addWidget(what_if_label)
        what_if_row.addWidget(self.what_if_edit, 1)
        dram_layout.addLayout(what_if_row)
        dram_layout.addWidget(self.what_if_result)
        self.what_if_edit.textChanged.connect(self._on_what_if)
        self.chart = DramChart()
        self.chart.setMinimumHeight(260)
        self.breakdown_table = BreakdownTable()
        row = QVBoxLayout()
        row.addWidget(self.chart, 3)
        row.addWidget(self.breakdown_table, 2)
        dram_layout.addWidget(self.dram_caption)
        dram_layout.addLayout(row)
        layout.addWidget(dram_box)
        self.serving = ServingView()
        layout.addWidget(self.serving)
        layout.addWidget(self.settings_box)

        files_box = QGroupBox("Files")
        files_layout = QVBoxLayout(files_box)
        self.files = QTableWidget(0, 2)
        self.files.setObjectName("detailFiles")
        self.files.setHorizontalHeaderLabels(["File", "Size"])
        self.files.verticalHeader().setVisible(False)
        self.files.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.files.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.files.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        files_layout.addWidget(self.files)
        layout.addWidget(files_box)
        layout.addStretch(1)
        self.setWidget(body)
        self._after_paint = QTimer(self)  # fires once the paint that started it is done: the workers go on
        self._after_paint.setSingleShot(True)
        self._after_paint.setInterval(0)
        self._after_paint.timeout.connect(lambda: WORKERS.release(HOLDER))
        body.installEventFilter(self)
        self._sections = [self.settings_box, kv_box, dram_box, files_box, self.serving]
        self.show_message("Open a folder and select an artifact to see its KV cache and DRAM breakdown.")

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and not WORKERS.is_open(HOLDER):
            self._after_paint.start()
        return False

    # ---- states --------------------------------------------------------------------------------------

    def show_message(self, text: str) -> None:
        """No artifact: a line of text and nothing else."""
        self.artifact = None
        self.title.setText(html.escape(text))
        self.problems.clear()
        self.problems.hide()
        for section in self._sections:
            section.hide()
        self.chart.set_breakdown(None, message=text)

    def show_loading(self, name: str) -> None:
        self.show_message(f"Reading {name}…")

    def show_error(self, name: str, reason: str) -> None:
        self.show_message(f"Cannot read {name}: {reason}")

    def show_artifact(self, artifact: Artifact) -> None:
        # Filling and laying out the panel makes hundreds of calls between Python and Qt; a worker running Python
        # (the scan's checks) would take the interpreter lock at each: it parks until the panel is painted.
        WORKERS.hold(HOLDER)
        self.artifact = artifact
        for section in self._sections:
            section.show()
        status = artifact.status
        colour = STATUS_COLOURS[status]
        self.title.setText(
            f"<b>{html.escape(artifact.name)}</b> "
            f"<span style='color:{colour}'>[{status.value}]</span><br><small>{html.escape(str(artifact.where))}</small>"
        )
        self._show_problems(artifact.problems)
        self.gauge.show()
        self._show_settings(artifact)
        facts = block_facts(artifact.config)
        self.kv_label.setText(facts.headline)
        self.kv_meaning.setText(facts.meaning)
        self.gauge.set_facts(facts)
        self._show_breakdown(artifact)
        self.serving.show_config(artifact.loaded, artifact.problems)
        self._show_files(artifact)

    def show_description(self, description: ModelDescription) -> None:
        """A model without a resizable KV cache: its kind, class, target, batch and parts, and why in words."""
        self.artifact = None
        for section in self._sections:
            section.hide()
        status = worst(list(description.problems))
        self.title.setText(
            f"<b>{html.escape(description.path.name)}</b> "
            f"<span style='color:{STATUS_COLOURS[status]}'>[{status.value}]</span>"
            f"<br><small>{html.escape(str(description.path))}</small>"
        )
        self._show_problems(list(description.problems))
        self._fill_settings(description_rows(description))
        self.kv_label.setText("No resizable KV cache")
        self.kv_meaning.setText(description.kv_note or "")
        self.gauge.hide()
        self.settings_box.show()
        self.kv_box.show()

    def _show_problems(self, problems: list[Problem]) -> None:
        if problems:
            items = "".join(
                f"<li><span style='color:{STATUS_COLOURS[p.severity]}'>{p.severity.value}</span>: {html.escape(p.message)}</li>"
                for p in problems
            )
            self.problems.setText(f"<ul style='margin:0'>{items}</ul>")
        else:
            self.problems.setText(f"<span style='color:{STATUS_COLOURS[Status.OK]}'>No problems found.</span>")
        self.problems.show()

    def _show_settings(self, artifact: Artifact) -> None:
        self._fill_settings(settings_rows(artifact))

    def _fill_settings(self, rows: list[tuple[str, str]]) -> None:
        while self.settings_form.rowCount():
            self.settings_form.removeRow(0)
        for name, value in rows:
            label = _label(wrap=False)
            label.setText(value)
            self.settings_form.addRow(name, label)

    @Slot()
    def _on_what_if(self) -> None:
        if self.artifact is not None:
            self._show_breakdown(self.artifact)

    def _what_if(self, artifact: Artifact) -> Breakdown | None:
        """The breakdown under the what-if budget (None: none typed, or it cannot be used; the result says why)."""
        text = self.what_if_edit.text().strip()
        self.what_if_result.setVisible(bool(text))
        if not text:
            return None
        from rbln_artifact_studio.core.planning.explore import what_if

        try:
            result = what_if(artifact, text)
        except StudioError as exc:
            self.what_if_result.setText(f"<span style='{style(Tone.ERROR)}'>✖ {html.escape(exc.one_line())}</span>")
            return None
        colour = tone(Tone.ERROR) if result.blocks < result.floor else tone(Tone.OK)
        self.what_if_result.setText(f"<span style='color:{colour}'>{html.escape(result.summary())}</span>")
        return result.breakdown

    def _show_breakdown(self, artifact: Artifact) -> None:
        breakdown = artifact.breakdown()
        npu = artifact.npu
        self.what_if_edit.setEnabled(breakdown is not None)
        if breakdown is not None:
            breakdown = self._what_if(artifact) or breakdown
        if breakdown is None or npu is None:
            reason = artifact.unknown_reason or "The NPU named in rbln_config.json is unknown."
            message = f"Allocations unknown: {reason}"
            self.dram_caption.setText(message)
            self.chart.set_breakdown(None, message="Allocations unknown; nothing is drawn rather than a guess.")
            self.chart.hide()
            self.breakdown_table.set_breakdown(None)
            self.breakdown_table.hide()
            return
        self.dram_caption.setText(breakdown_caption(breakdown))
        self.chart.set_breakdown(breakdown, npu.chiplets)
        self.breakdown_table.set_breakdown(breakdown, npu.chiplets)
        self.chart.show()
        self.breakdown_table.show()

    def _show_files(self, artifact: Artifact) -> None:
        rows = file_rows(artifact)
        self.files.setRowCount(len(rows))
        for i, (name, size) in enumerate(rows):
            self.files.setItem(i, 0, QTableWidgetItem(name))
            size_item = QTableWidgetItem(format_bytes(size))
            size_item.setToolTip(format_bytes_exact(size))
            size_item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.files.setItem(i, 1, size_item)
        self.files.setMinimumHeight(min(len(rows), 8) * self.files.verticalHeader().defaultSectionSize() + 30)
